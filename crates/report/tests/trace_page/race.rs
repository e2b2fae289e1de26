//! The trace page's race (#29 item 5): the call sites called with work pending on their stream,
//! each with what the atlas says of its configuration. The traces are generated, not
//! measurements; the atlas run is real (the H100 atlas of NPP 13.0.1 with the race measured,
//! `reports/h100-atlas-bisected-npp-13.0.1/run-1-npp-13.0.1.json.gz`).

use std::path::Path;

use nppbench_model::{RunFile, TraceFile};

use super::{generated_trace, render, site};

/// Generated, not a measurement: 20 new threads each converting 1918x1080 (strides 1920/7680) on
/// a blocking stream with work pending at every call; the same at 1920x1080 (whole chunks); and
/// 1918x1080 declared non-blocking (never asked).
fn racing_trace() -> TraceFile {
    let mut t = generated_trace();
    t.streams.clear();
    let mut a = site((1918, 1080, 1920, 7680), 0, 20, 20, 0);
    a.calls_pending_asked = 20;
    a.calls_with_work_pending = 20;
    let mut b = site((1920, 1080, 1920, 7680), 0, 20, 20, 0);
    b.calls_pending_asked = 20;
    b.calls_with_work_pending = 17;
    let mut c = site((1918, 1080, 1920, 7680), 0, 20, 20, 0);
    c.declared_flags = 1;
    t.call_sites = vec![a, b, c];
    t
}

fn race_atlas() -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/h100-atlas-bisected-npp-13.0.1/run-1-npp-13.0.1.json.gz");
    RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_sites_called_with_work_pending_where_the_atlas_says_they_race_are_named_and_no_other() {
    let page = render(&racing_trace(), &[race_atlas()]);
    let html = &page.index_html;
    assert!(
        html.contains("Call sites called with work pending on their stream"),
        "no race section"
    );
    let table = &html[html.find("<table class=\"compact race\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr><td class=\"fn\">").count(), 1, "{table}");
    assert!(table.contains("on 1918x1080 s1920/7680"), "{table}");
    assert!(table.contains("20 of 20 calls asked (20 in all)"), "{table}");
    assert!(table.contains("races (measured in the atlas)"), "{table}");
    assert!(
        html.contains("1 call site(s) were called while their stream still had work queued, 1 of them in configurations the atlas says race"),
        "no verdict sentence"
    );
    let csv = &page.call_sites_csv;
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",calls_pending_asked,calls_with_work_pending,atlas_races")
    );
    assert!(
        csv.lines()
            .any(|l| l.contains(",1920,1080,") && l.ends_with(",20,17,false")),
        "{csv}"
    );
}

#[test]
fn without_an_atlas_every_site_with_work_pending_is_named_as_unanswered() {
    let page = render(&racing_trace(), &[]);
    let html = &page.index_html;
    let table = &html[html.find("<table class=\"compact race\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr><td class=\"fn\">").count(), 2, "{table}");
    assert!(table.contains("no answer from the atlas"), "{table}");
}

/// The interposer asks within a budget (#32): a site asked in only some of its calls counts its
/// pending calls among those asked, and the page says that the question was sampled; asked in
/// every call, it says nothing of it.
#[test]
fn a_site_asked_in_part_counts_the_calls_asked_and_the_page_says_so() {
    let sampled = "was asked of some calls only, at 1 call site(s)";
    let mut t = racing_trace();
    t.call_sites[0].calls_pending_asked = 5;
    t.call_sites[0].calls_with_work_pending = 5;
    let page = render(&t, &[race_atlas()]);
    assert!(page.index_html.contains("5 of 5 calls asked (20 in all)"));
    assert!(page.index_html.contains(sampled), "the notice");
    assert!(!render(&racing_trace(), &[race_atlas()]).index_html.contains(sampled));
}

#[test]
fn a_trace_without_work_pending_has_no_race_section() {
    let page = render(&generated_trace(), &[]);
    assert!(!page.index_html.contains("called with work pending"));
}

/// Our upload-then-convert program traced on an H200 with NPP 13.0.1 (`reports/trace/race-program/`,
/// its own output in trace.log: the first phase's output was wrong in 18 of 20 frames, the others
/// in none), with an H100's atlas of the same NPP: of its five call sites, the one called with work pending in a
/// configuration that races is named, and no other (not the one synchronised first, not the one
/// declared non-blocking, not the legacy stream's, not 1920 px wide with work pending, which the
/// atlas says is ordered).
#[test]
fn the_real_race_program_names_the_racing_call_site_and_no_other() {
    names_only_the_racing_site("race-program", &ordering_atlas(), "20 of 20 calls asked (20 in all)");
}

/// An atlas of NPP 13.0.1 with the race measured that the race program's traces are rendered
/// with (`reports/h100-atlas-bisected-npp-13.0.1/`, an H100).
pub(super) fn ordering_atlas() -> RunFile {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    RunFile::read(&root.join("h100-atlas-bisected-npp-13.0.1/run-1-npp-13.0.1.json.gz")).unwrap()
}

/// `race_program 20`'s trace in `dir` under reports/trace/, rendered with `atlas`: of its five
/// call sites only the racing one (1918x1080 on a created blocking stream) is named, with
/// `asked` (how many of its calls were asked), and the program's own log says its first phase's
/// output was wrong. Returns the trace.
pub(super) fn names_only_the_racing_site(dir: &str, atlas: &RunFile, asked: &str) -> TraceFile {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/trace")
        .join(dir);
    let trace: TraceFile = serde_json::from_str(&std::fs::read_to_string(dir.join("trace.json")).unwrap()).unwrap();
    assert_eq!(trace.call_sites.len(), 5);
    let page = render(&trace, std::slice::from_ref(atlas));
    let html = &page.index_html;
    let table = &html[html.find("<table class=\"compact race\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr><td class=\"fn\">").count(), 1, "{table}");
    assert!(
        table.contains("on 1918x1080 s1920/7680</a></td><td>created, blocking"),
        "{table}"
    );
    assert!(table.contains(asked), "{table}");
    let log = std::fs::read_to_string(dir.join("trace.log")).unwrap();
    assert!(
        log.contains("P1 blocking, from the stream, 1918x1080: 18 of 20 frames wrong"),
        "{log}"
    );
    assert!(log.contains("race: 1 call site(s) called with work pending"), "{log}");
    trace
}
