//! A comparison against a baseline made by an older nppbench (issue #49), as a reader and a CI
//! system see it: the page and summary.md say how many scenarios were not judged and which run
//! is the older; compare.json gives each scenario's reason and the count. The runs are today's
//! (`reports/calibration/GPU-159df63b/quick/`), the base altered here as a build before
//! 2026-11-27 would have written it (each layout's busy time removed); nothing altered is
//! committed.

use std::path::Path;

use nppbench_model::RunFile;
use nppbench_report::compare::{Gate, Thresholds};
use nppbench_report::compare_view::render;

fn quick(n: usize) -> RunFile {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/calibration/GPU-159df63b/quick")
        .join(format!("quick-{n}.json.gz"));
    RunFile::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn as_an_older_build_wrote_it(mut run: RunFile) -> RunFile {
    for t in &mut run.throughput {
        if let Some(l) = t
            .result
            .as_mut()
            .and_then(|r| r.per_call.as_mut())
            .and_then(|c| c.layout.as_mut())
        {
            l.busy_at_once_median_ns = None;
            l.busy_in_turn_median_ns = None;
        }
    }
    run
}

/// Quick runs 3 and 5 of GPU-159df63b drew the 1918×1080 convert's layouts 72 points of their
/// calls apart on the per-thread stream: with the base's per-layout figures removed, that
/// scenario was called 8.6% slower and failed the regression gate before #49.
#[test]
fn an_older_base_is_named_and_its_unjudged_scenarios_counted_not_failed() {
    let runs = [as_an_older_build_wrote_it(quick(3)), quick(5)];
    let r = render(&runs, &[], Thresholds::default(), &[Gate::Regression], false).unwrap();
    assert!(r.summary_md.starts_with("## PASS"), "{}", r.summary_md);
    let c = &r.json.comparisons[0];
    assert!(c.tripped.is_empty());
    assert_eq!(c.older, Some(nppbench_report::compare::Older::Base));
    assert_eq!((c.counts.slower, c.counts.faster), (0, 0));
    assert!(c.counts.unsettled_older >= 1);
    let not_judged: Vec<&str> = c
        .throughput
        .iter()
        .filter(|t| t.not_judged.as_ref().is_some_and(|n| n.reason == "older"))
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(not_judged.len(), c.counts.unsettled_older);
    assert!(
        not_judged.contains(&"tp/Convert_8u32f_C1R/1918x1080-s1920-d7680/per_thread_default/from_stream"),
        "{not_judged:?}"
    );
    let json = serde_json::to_value(c).unwrap();
    let row = json["throughput"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["not_judged"]["reason"] == "older")
        .unwrap();
    assert_eq!(row["not_judged"]["older"], "base");
    assert_eq!(row["verdict"], "unsettled");
    assert_eq!(json["older"], "base");
    assert_eq!(
        json["counts"]["unsettled_older"].as_u64(),
        Some(c.counts.unsettled_older as u64)
    );
    // The page and summary.md say so, naming the older run.
    for text in [&r.summary_md, &r.compare_html] {
        assert!(
            text.contains(&format!(
                "Not judged (older run): {} scenario(s)",
                c.counts.unsettled_older
            )),
            "{text}"
        );
        assert!(
            text.contains("The base (2026-11-27 01:08 UTC · run 1)"),
            "the older run named"
        );
        assert!(text.contains("made by an older nppbench"));
    }
    assert!(
        r.summary_md
            .contains("not judged: the base was made by an older nppbench")
    );
}

/// The same two runs, the candidate altered instead: the candidate is named the older.
#[test]
fn an_older_candidate_is_named() {
    let runs = [quick(3), as_an_older_build_wrote_it(quick(5))];
    let r = render(&runs, &[], Thresholds::default(), &[Gate::Regression], false).unwrap();
    let c = &r.json.comparisons[0];
    assert!(c.tripped.is_empty());
    assert_eq!(c.older, Some(nppbench_report::compare::Older::Candidate));
    assert!(
        r.summary_md.contains("The candidate (2026-11-27 01:08 UTC · run 2)"),
        "{}",
        r.summary_md
    );
}

/// Today's runs, unaltered: every scenario judged, nothing said of older runs.
#[test]
fn runs_of_today_say_nothing_of_older_runs() {
    let r = render(
        &[quick(3), quick(5)],
        &[],
        Thresholds::default(),
        &[Gate::Regression],
        false,
    )
    .unwrap();
    let c = &r.json.comparisons[0];
    assert_eq!((c.older, c.counts.unsettled_older), (None, 0));
    assert!(!r.summary_md.contains("Not judged"));
}

/// The history page of the same two runs, the older base added first: its latest step says the
/// scenario was not judged and why, and no gate trips.
#[test]
fn the_history_page_says_the_run_before_was_older() {
    use nppbench_history::changes::analyse;
    use nppbench_history::gates::Gate as HistoryGate;
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("older-quick-3.json");
    std::fs::write(
        &base,
        serde_json::to_string(&as_an_older_build_wrote_it(quick(3))).unwrap(),
    )
    .unwrap();
    let cand =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/calibration/GPU-159df63b/quick/quick-5.json.gz");
    let mut db = nppbench_history::Db::open(&dir.path().join("history.db")).unwrap();
    nppbench_history::ingest::add_paths(&mut db, &[base, cand], true).unwrap();
    let h = nppbench_history::History::load(&db).unwrap();
    let f = analyse(&h, &nppbench_history::Settings::default());
    let r = nppbench_report::history_view::render(&h, &f, &[HistoryGate::Regression]).unwrap();
    assert!(r.tripped.is_empty(), "{:?}", r.tripped);
    assert!(
        r.index_html
            .contains("not judged: the run before was made by an older nppbench, the layouts drawn apart"),
        "{}",
        r.summary_md
    );
}
