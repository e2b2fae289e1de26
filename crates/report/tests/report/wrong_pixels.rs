//! The wrong-pixel hazard leads every view: the committed bisected H100 atlases (the same draw on
//! NPP 12.2.3 and 13.0.1), whose 13.0.1 run filed wrong outputs as failed scenarios.

use super::load;
use nppbench_analysis::RunAnalysis;
use nppbench_model::{FailureKind, RunFile};
use std::path::Path;

fn bisected(version: &str) -> RunFile {
    load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports")
            .join(format!("h100-atlas-bisected-npp-{version}/run-1-npp-{version}.json.gz")),
    )
}

/// The versions page of 12.2.3 and 13.0.1 says the regression in its first five lines, with a
/// rule and a measured example, before leaks and races.
#[test]
fn the_versions_page_opens_with_the_wrong_pixel_regression() {
    let r = nppbench_report::render(&[bisected("12.2.3"), bisected("13.0.1")]).unwrap();
    let head: Vec<&str> = r.summary_md.lines().take(5).collect();
    let lead = head
        .iter()
        .find(|l| l.contains("computes wrong pixels where NPP 12.2.3 computed them right"))
        .unwrap_or_else(|| panic!("{head:#?}"));
    assert!(lead.contains("computes wrong pixels when"), "a rule: {lead}");
    assert!(
        lead.contains("For example") && lead.contains("is expected"),
        "an example: {lead}"
    );
    assert!(
        r.summary_md.contains("**WRONG PIXELS · LEAKS**"),
        "the status leads with the pixels"
    );
    let html = r.index_html;
    let lead_at = html.find("computes wrong pixels where").unwrap();
    assert!(lead_at < html.find("new leaks").unwrap(), "before the leaks");
}

/// A run's verdict counts a wrong output as a class, never as a failed scenario, and its page
/// leads with it; a miss of nppbench's own reference is never called NPP's wrong pixels.
/// Issue #44's three versions: the wrong-pixel study of NPP 12.2.3.2, 13.0.1.2 and 13.2.0.58
/// measured side by side on an H200 (`reports/wrong-pixels/`). The first five lines say each newer
/// version's regression against 12.2.3, with the exact rule the search found (a source row
/// starting 9 to 11 bytes past a 16-byte boundary) and a measured first wrong pixel.
#[test]
fn the_three_versions_page_says_each_regression_with_its_rule_first() {
    let run = |v: &str| {
        load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "../../reports/wrong-pixels/h200-GPU-fd1537c9/wrong-npp-{v}.json.gz"
        )))
    };
    let r = nppbench_report::render(&[run("12.2.3"), run("13.0.1"), run("13.2.0")]).unwrap();
    let head: Vec<&str> = r.summary_md.lines().take(5).collect();
    for newer in ["13.0.1.2", "13.2.0.58"] {
        let said = format!("NPP {newer} computes wrong pixels where NPP 12.2.3.2 computed them right");
        let lead = head
            .iter()
            .find(|l| l.contains(&said))
            .unwrap_or_else(|| panic!("{newer}: {head:#?}"));
        assert!(
            lead.contains("some source row starts 9 to 11 bytes past a 16-byte boundary"),
            "{lead}"
        );
        assert!(
            lead.contains("For example") && lead.contains("where") && lead.contains("is expected"),
            "{lead}"
        );
    }
}

#[test]
fn a_wrong_output_is_a_class_of_the_verdict_not_a_failure() {
    let run = bisected("13.0.1");
    let a = RunAnalysis::new(&run);
    let v = nppbench_analysis::verdict::verdict(&a);
    assert!(v.output.wrong > 0 && v.output.judged > v.output.wrong, "{:?}", v.output);
    assert!(
        !v.failed_by_kind.contains_key(&FailureKind::Mismatch),
        "{:?}",
        v.failed_by_kind
    );
    assert!(v.output.reference_misses > 0, "Resize_32f_C1R's tolerance misses");
    assert!(
        v.output.functions.iter().all(|p| p.to_string() != "Resize_32f_C1R"),
        "{:?}",
        v.output.functions
    );
    let html = nppbench_report::render(std::slice::from_ref(&run)).unwrap().index_html;
    let wrong = html
        .find("NPP 13.0.1.2 computes wrong pixels on")
        .expect("the headline");
    assert!(wrong < html.find("leak GPU memory").unwrap(), "before the leaks");
    assert!(html.contains("WRONG PIXELS · LEAKS"));
    // 12.2.3: the same draw, right pixels, and its reference misses said as nppbench's own.
    let old = bisected("12.2.3");
    let v = nppbench_analysis::verdict::verdict(&RunAnalysis::new(&old));
    assert_eq!((v.output.wrong, v.output.faults), (0, 0), "{:?}", v.output);
    let html = nppbench_report::render(std::slice::from_ref(&old)).unwrap().index_html;
    assert!(!html.contains("computes wrong pixels on"));
    assert!(
        html.contains("missed nppbench&#x27;s own CPU reference")
            || html.contains("missed nppbench's own CPU reference")
    );
}
