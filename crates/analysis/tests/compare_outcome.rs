//! The outcome of a comparison (PARTIAL, FAIL, PASS, CHANGED, NO CHANGE) is decided in the
//! analysis, from the comparisons and the gates; the page and the exit status only show it. It
//! was decided in the report's view code, so nothing but a rendering could tell it.

use std::path::Path;

use nppbench_analysis::compare::{Gate, Status, Thresholds, compare, outcome};
use nppbench_model::RunFile;

fn run(name: &str) -> RunFile {
    RunFile::read(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports")
            .join(name)
            .join("run.json.gz"),
    )
    .unwrap()
}

const LEAKING: &str = "Convert_8u32f_C1R/31x31-s32-d128/blocking/from_stream/thread_per_call";
const FLAT: &str = "Convert_8u32f_C1R/31x31-s32-d128/non_blocking/from_stream/thread_per_call";

/// A copy of `base` whose flat non-blocking Convert scenario was given the leaking one's
/// samples: a new leak with new streams.
fn with_a_new_leak(base: &RunFile) -> RunFile {
    let mut cand = base.clone();
    let leaking = base
        .memory
        .iter()
        .find(|m| m.scenario.id.ends_with(LEAKING))
        .unwrap()
        .clone();
    let target = cand.memory.iter_mut().find(|m| m.scenario.id.ends_with(FLAT)).unwrap();
    target.result = leaking.result;
    cand
}

#[test]
fn a_new_leak_fails_the_leak_gate_and_passes_the_others() {
    let base = run("h200-full-npp-13.0.1");
    let c = [compare(&base, &with_a_new_leak(&base), Thresholds::default())];
    assert_eq!(outcome(&c, &[Gate::Leak], false), Status::Fail);
    assert_eq!(outcome(&c, &[Gate::Race, Gate::Failed], false), Status::Pass);
    assert_eq!(outcome(&c, &[], false), Status::Changed);
    assert!(c[0].changed());
}

#[test]
fn a_run_against_itself_changes_nothing_and_passes() {
    let base = run("h200-full-npp-13.0.1");
    let c = [compare(&base, &base, Thresholds::default())];
    assert_eq!(outcome(&c, &[], false), Status::NoChange);
    assert_eq!(
        outcome(&c, &[Gate::Leak, Gate::Streams, Gate::Race], false),
        Status::Pass
    );
}

/// A candidate that does not compare is PARTIAL whatever it trips, unless judging what pairs
/// was asked for; then its gates decide.
#[test]
fn a_run_that_does_not_compare_is_partial_unless_allowed() {
    let (quick, atlas) = (run("h100-quick-npp-13.0.1"), run("h200-atlas-npp-13.0.1"));
    let c = [compare(&quick, &atlas, Thresholds::default())];
    assert!(!c[0].compares());
    assert_eq!(outcome(&c, &[Gate::AnyLeak], false), Status::Partial);
    assert_eq!(outcome(&c, &[], false), Status::Partial);
    let any_leak = outcome(&c, &[Gate::AnyLeak], true);
    let leaks = !c[0].cand_leaking.is_empty();
    assert_eq!(any_leak, if leaks { Status::Fail } else { Status::Pass });
}
