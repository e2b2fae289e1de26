//! Pages of several runs and the builds a page names: the H100 versions page numbers each run
//! once and leads with another version; every page names the nppbench that rendered it apart from
//! the one that measured each run.

use std::path::Path;

use nppbench_model::RunFile;

use super::{assert_every_page_ids_unique, committed_runs, load};

/// The H100 versions page (reports/h100-atlas-versions: three runs of NPP 12.2.3, the third a
/// further round, then three of 13.0.1) said "atlas · run 4" in its table and "run 3" in its
/// headings for the same run, and led with 12.2.3 run 2 against 12.2.3 run 1. A run keeps one
/// number everywhere, and the comparisons between versions come first.
#[test]
fn the_versions_page_numbers_each_run_once_and_leads_with_another_version() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-atlas-versions");
    let runs: Vec<RunFile> = nppbench_model::find_run_files(&dir)
        .unwrap()
        .iter()
        .map(|p| load(p))
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
    assert_every_page_ids_unique(&r, "reports/h100-atlas-versions");
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
            "Rendered by {this}; measured by nppbench 9.9.9 (0123456789ab-elsewhere)."
        )),
        "{}",
        &html[html.find("Rendered by").unwrap()..][..200]
    );
    assert!(!html.contains("Rendered by nppbench 9.9.9"));
    // A page of two NPP versions, the second measured by that other build.
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let other = load(&reports.join("h100-npp-13.0.1/run.json"));
    assert_ne!(other.environment.npp.version, run.environment.npp.version);
    let several = nppbench_report::render(&[other, run.clone()]).unwrap().index_html;
    assert!(several.contains(&format!("Rendered by {this};")));
    assert!(several.contains("<td>nppbench 9.9.9 (0123456789ab-elsewhere)</td>"));
    let compare = nppbench_report::render_compare(&[base, run], Default::default(), &[]).unwrap();
    assert!(
        compare
            .compare_html
            .contains("<td>nppbench 9.9.9 (0123456789ab-elsewhere)</td>")
    );
}
