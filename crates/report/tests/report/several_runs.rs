//! Pages of several runs and the builds a page names: the H100 versions page numbers each run
//! once and leads with another version; every page names the nppbench that rendered it apart from
//! the one that measured each run.

use std::path::Path;

use nppbench_model::RunFile;

use super::{assert_every_page_ids_unique, committed_runs, load};

/// The H100 versions page (the three runs of reports/h100-atlas-npp-12.2.3, the third a further
/// round, then the three of 13.0.1) said "atlas · run 4" in its table and "run 3" in its headings
/// for the same run, and led with 12.2.3 run 2 against 12.2.3 run 1. A run keeps one number
/// everywhere, and the comparisons between versions come first.
#[test]
fn the_versions_page_numbers_each_run_once_and_leads_with_another_version() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let runs: Vec<RunFile> = ["h100-atlas-npp-12.2.3", "h100-atlas-npp-13.0.1"]
        .iter()
        .flat_map(|d| nppbench_model::find_run_files(&reports.join(d)).unwrap())
        .map(|p| load(&p))
        .collect();
    assert_eq!(runs.len(), 6);
    let page = nppbench_report::page(&runs).unwrap();
    let upgrade = page.upgrade.as_ref().expect("a page of several versions");
    let labels: Vec<&str> = upgrade.versions.iter().map(|v| v.label.as_str()).collect();
    // Every comparison is a run of the table against the base, under the table's labels.
    let headings: Vec<&str> = upgrade.compare.comparisons.iter().map(|c| c.heading.as_str()).collect();
    // The two further rounds (atlas-next) are pooled, not compared.
    assert_eq!(headings.len(), 3, "{headings:?}");
    for h in &headings {
        let (cand, base) = h.split_once(" against ").unwrap();
        assert_eq!(base, labels[0], "{h}");
        assert!(labels[1..].contains(&cand), "{cand:?} is not in the table: {labels:?}");
    }
    let env_labels: Vec<&str> = upgrade.compare.environments.iter().map(|e| e.label.as_str()).collect();
    assert!(env_labels.iter().all(|l| labels.contains(l)), "{env_labels:?}");
    // Between versions first, then 12.2.3 against 12.2.3; so the verdict leads with a version.
    let other_version = |h: &str| h.starts_with("NPP 13.0.1.2");
    assert!(other_version(headings[0]) && other_version(headings[1]), "{headings:?}");
    assert!(headings[2].starts_with("NPP 12.2.3"), "{headings:?}");
    // The verdict too: every line on another version before any line on 12.2.3 against itself.
    let verdict = &upgrade.compare.verdict;
    let same = |l: &String| !l.contains("NPP 13.0.1.2");
    let first_same = verdict.iter().position(same).expect("12.2.3 against itself is there");
    assert!(first_same > 0 && verdict[first_same..].iter().all(same), "{verdict:#?}");
    // Each version once in the title (it listed every run's).
    assert_eq!(page.title, "nppbench: NPP 12.2.3 vs 13.0.1.2 on NVIDIA H100 80GB HBM3");
    let r = nppbench_report::render(&runs).unwrap();
    assert_every_page_ids_unique(&r, "the H100 atlases of two versions");
    for (i, label) in labels.iter().enumerate() {
        if let Some(n) = label.split(" · run ").nth(1) {
            assert_eq!(n, (i + 1).to_string(), "{label} is on run-{}.html", i + 1);
        }
    }
}

/// Pages said "Rendered by" the build that measured the run. Altered copy of a real run, as if
/// measured by another build: the page names this build as the renderer and that one as the
/// measurer, on the run's page, a page of several runs and the compare page.
#[test]
fn pages_name_the_build_that_rendered_them_apart_from_the_one_that_measured() {
    let base = load(&committed_runs()[0]);
    let mut run = base.clone();
    run.tool.version = "9.9.9".into();
    run.tool.git_commit = "0123456789ab-elsewhere".into();
    let this = format!("nppbench {}", env!("CARGO_PKG_VERSION"));
    let html = nppbench_report::render(std::slice::from_ref(&run)).unwrap().index_html;
    assert!(
        html.contains(&format!(
            "Rendered by {this}; measured by nppbench 9.9.9, built from commit 0123456789ab-elsewhere."
        )),
        "{}",
        &html[html.find("Rendered by").unwrap()..][..200]
    );
    assert!(!html.contains("Rendered by nppbench 9.9.9"));
    // A page of two NPP versions, the second measured by that other build.
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let other = load(&reports.join("h100-npp-13.0.1/run.json.gz"));
    assert_ne!(other.environment.npp.version, run.environment.npp.version);
    let several = nppbench_report::render(&[other, run.clone()]).unwrap().index_html;
    assert!(several.contains(&format!("Rendered by {this};")));
    assert!(several.contains("<td>nppbench 9.9.9, built from commit 0123456789ab-elsewhere</td>"));
    let compare = nppbench_report::render_compare(&[base, run], Default::default(), &[]).unwrap();
    assert!(
        compare
            .compare_html
            .contains("<td>nppbench 9.9.9, built from commit 0123456789ab-elsewhere</td>")
    );
}

/// #29: a page of several versions gives each function's race rule run by run, as it gives the
/// leak rule, with the scenario that shows a difference. The H100 atlases of NPP 12.2.3 and
/// 13.0.1 with the race measured (`reports/h100-atlas-bisected-npp-*/run-1-*.json.gz`): 16 of 61
/// functions race under another rule in 13.0.1. Copy_8u_C1R races where a source row is not a
/// multiple of 32 bytes in 12.2.3 and of 128 in 13.0.1: 3392x256 (3392 bytes, 32 x 106) races in
/// 13.0.1 only.
#[test]
fn the_versions_page_gives_each_functions_race_run_by_run() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let runs: Vec<RunFile> = [
        "h100-atlas-bisected-npp-12.2.3/run-1-npp-12.2.3.json.gz",
        "h100-atlas-bisected-npp-13.0.1/run-1-npp-13.0.1.json.gz",
    ]
    .iter()
    .map(|p| load(&reports.join(p)))
    .collect();
    let page = nppbench_report::page(&runs).unwrap();
    let upgrade = page.upgrade.as_ref().expect("a page of several versions");
    assert_eq!((upgrade.race_rules_differ, upgrade.race_rules.len()), (16, 61));
    let copy = upgrade
        .race_rules
        .iter()
        .find(|r| r.primitive == "Copy_8u_C1R")
        .unwrap();
    assert!(copy.differs);
    assert!(
        copy.cells[0].contains("not a multiple of 32") && copy.cells[1].contains("not a multiple of 128"),
        "{:?}",
        copy.cells
    );
    assert_eq!(
        copy.shown_by,
        "mem/Copy_8u_C1R/3392x256-s3456-d3584/blocking/from_stream/thread_per_call: ordered in run 1, races in run 2"
    );
    let html = nppbench_report::render(&runs).unwrap().index_html;
    assert!(html.contains("16 function(s) race under a different rule from one run to another"));
    assert!(html.contains("<h2 id=\"race-rules\">Each function's race, run by run</h2>"));
    // A page of runs that measured no race (the three full H100 runs) has no such table.
    let old: Vec<RunFile> = ["h100-npp-12.2.3.2", "h100-npp-13.0.1", "h100-npp-13.2.0.93"]
        .iter()
        .map(|d| load(&reports.join(d).join("run.json.gz")))
        .collect();
    let page = nppbench_report::page(&old).unwrap();
    assert!(page.upgrade.as_ref().unwrap().race_rules.is_empty());
}
