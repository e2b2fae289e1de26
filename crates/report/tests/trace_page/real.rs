//! The pages of the traces committed under reports/trace/ (real: made on an H100 with NPP 13.0.1
//! by `nppbench trace`), with the H100 atlas of that NPP where the page asks the atlas.

use std::path::Path;

use nppbench_model::{RunFile, TraceFile};

use super::{position, render};

/// A trace committed under reports/trace/, by its folder's name.
fn committed_trace(name: &str) -> TraceFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../reports/trace/{name}/trace.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The H100 atlas of NPP 13.0.1, the traces' NPP.
fn committed_atlas() -> Vec<RunFile> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-atlas-npp-13.0.1");
    let runs = nppbench_model::find_run_files(&dir).unwrap();
    runs.iter().map(|p| RunFile::read(p).unwrap()).collect()
}

/// The committed real trace of the seed report's program (H100, NPP 13.0.1), with the H100
/// atlas: the page leads with GROWS and its figure, names the 31x31 convert with its strides as
/// the site that kept streams, with the atlas's answer agreeing, and its CSV has both call sites.
#[test]
fn the_real_seed_trace_page_names_the_growing_call_site() {
    let page = render(&committed_trace("seed-repro"), &committed_atlas());
    let md = &page.summary_md;
    assert!(md.starts_with("## GROWS"), "{}", &md[..80]);
    assert!(md.contains("100 threads each kept 3 NPP streams"), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| `nppiConvert_8u32f_C1R_Ctx` | 31x31 s32/128 |"))
        .expect("the growing site's row");
    assert!(
        row.contains("| 300 |") && row.contains("| leak |") && row.ends_with("| yes |"),
        "{row}"
    );
    assert!(
        !md.contains("| `nppiConvert_8u32f_C1R_Ctx` | 32x35"),
        "the 32x35 site kept nothing"
    );
    assert!(position(&page.index_html, "GROWS") < position(&page.index_html, "31x31 s32/128"));
    assert_eq!(
        page.call_sites_csv.lines().count(),
        3,
        "a header and the two call sites"
    );
}

/// The real overhead check (eight threads, 20,000 calls each, on an H100 machine): the recording
/// cost of a call in a loop, where the stream's flags come from and what CUPTI's callbacks cost
/// outside NPP's calls are all said.
#[test]
fn the_real_overhead_check_says_what_recording_cost_and_where_flags_came_from() {
    let trace = committed_trace("overhead-check");
    assert_eq!(trace.capture.flags_asked, Some(0));
    let page = render(&trace, &[]);
    // The page names the build that rendered it apart from the interposer that recorded the trace
    // (it said "Rendered by nppbench-trace").
    let builds = format!(
        "Rendered by nppbench {}; recorded by nppbench-trace {}.",
        env!("CARGO_PKG_VERSION"),
        trace.tool_version
    );
    assert!(page.index_html.contains(&builds), "{builds}");
    let md = &page.summary_md;
    assert!(md.starts_with("## NO GROWTH"), "{}", &md[..80]);
    let later = trace
        .overhead
        .less(&trace.capture.first_call_overhead)
        .per_call_ns()
        .unwrap();
    assert!(later < 1000.0, "{later} ns a call in a loop");
    assert!(md.contains(&format!("over {} calls", trace.overhead.calls)), "{md}");
    assert!(md.contains("No call asked the driver for its stream's flags"), "{md}");
    let callbacks = trace.capture.callback_overhead.unwrap();
    assert!(
        md.contains(&format!("the interposer's {} CUPTI callbacks", callbacks.calls)),
        "{md}"
    );
    assert!(md.contains("CUPTI's own cost is in none of these figures"), "{md}");
}

/// The committed trace of our own program saw NPP for 0.17 s, and its page projected "out of
/// memory in 1 minutes" at 4 million threads an hour: a burst is not a rate. Now it says the threads it saw
/// in the seconds it saw them, that this is a burst, and projects nothing over time.
#[test]
fn a_short_real_trace_is_a_burst_and_projects_nothing_over_time() {
    let trace = committed_trace("own-program");
    assert!(trace.wall_s < nppbench_report::analysis::thresholds::MIN_TRACE_S_FOR_A_RATE);
    let page = render(&trace, &committed_atlas());
    let html = &page.index_html;
    let cost = &html[position(html, "id=\"cost\"")..position(html, "id=\"sites\"")];
    assert!(cost.contains("204 threads in 0.173 s"), "{cost}");
    assert!(cost.contains("a burst, not a rate"), "{cost}");
    for projection in ["per hour", "Growth per day", "runs out of memory in"] {
        assert!(!cost.contains(projection), "{projection}: {cost}");
        assert!(!page.summary_md.contains(projection), "{projection} in summary.md");
    }
    assert!(cost.contains("more such threads"), "{cost}");
    assert!(!html.contains("per hour"), "a rate on the page");
}

/// Every committed trace's page uses each HTML id once.
#[test]
fn every_committed_trace_page_uses_each_id_once() {
    for name in ["first-calls", "overhead-check", "own-program", "seed-repro"] {
        let html = render(&committed_trace(name), &committed_atlas()).index_html;
        let mut seen = std::collections::BTreeSet::new();
        for id in html.split(" id=\"").skip(1).filter_map(|rest| rest.split('"').next()) {
            assert!(seen.insert(id), "{name}: id {id:?} twice");
        }
    }
}
