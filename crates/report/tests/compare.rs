//! Run against run, on the committed real runs. Where a test needs a regression, a new leak or
//! new streams, it alters a copy of a real run (labelled at each place): the comparison's logic is
//! under test, not the data.

use std::path::Path;

use nppbench_model::RunFile;
use nppbench_report::compare::{Change, Gate, Thresholds, compare};

const ALL: [Gate; 3] = [Gate::Regression, Gate::Leak, Gate::Streams];

fn run(name: &str) -> RunFile {
    RunFile::read(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports")
            .join(name)
            .join("run.json"),
    )
    .unwrap()
}

#[test]
fn a_run_against_itself_changes_nothing() {
    let r = run("h100-npp-13.0.1");
    let c = compare(&r, &r, Thresholds::default());
    assert!(c.environment_changes.is_empty());
    assert!(
        c.throughput
            .iter()
            .all(|t| t.verdict == Change::Same && t.change_pct.abs() < 1e-9)
    );
    assert!(c.tripped(&ALL).is_empty());
    assert!(c.only_in_base.is_empty() && c.only_in_candidate.is_empty());
}

#[test]
fn real_versions_differ_only_in_npp_and_share_every_leak() {
    let (base, cand) = (run("h100-npp-12.2.3.2"), run("h100-npp-13.2.0.93"));
    let c = compare(&base, &cand, Thresholds::default());
    assert_eq!(c.environment_changes.len(), 1, "{:?}", c.environment_changes);
    assert!(c.environment_changes[0].starts_with("NPP: 12.2.3"));
    assert!(
        c.memory.iter().all(|m| !m.new_leak && !m.fixed_leak),
        "the leak is the same in both versions"
    );
}

#[test]
fn a_slower_4k_convert_trips_the_regression_gate() {
    let base = run("h100-npp-13.0.1");
    // Altered copy: one 4K scenario's sample times made 30% longer.
    let mut cand = base.clone();
    let t = cand
        .throughput
        .iter_mut()
        .find(|t| t.scenario.geometry.width == 3840 && t.result.is_some())
        .unwrap();
    let id = t.scenario.id.clone();
    for x in &mut t.result.as_mut().unwrap().kernel.sample_times_ns {
        *x *= 1.3;
    }
    let c = compare(&base, &cand, Thresholds::default());
    let change = c.throughput.iter().find(|x| x.id == id).unwrap();
    assert_eq!(change.verdict, Change::Slower);
    assert!((change.change_pct + 23.1).abs() < 0.5, "{}", change.change_pct);
    assert_eq!(c.tripped(&ALL), vec![Gate::Regression]);
    assert!(c.tripped(&[Gate::Leak]).is_empty(), "only the gates asked for");
}

#[test]
fn a_launch_bound_slowdown_is_reported_but_not_gated() {
    let base = run("h100-npp-13.0.1");
    // Altered copy: the 31×31 scenarios made 30% slower.
    let mut cand = base.clone();
    for t in cand.throughput.iter_mut().filter(|t| t.scenario.geometry.width == 31) {
        for x in &mut t.result.as_mut().unwrap().kernel.sample_times_ns {
            *x *= 1.3;
        }
    }
    let c = compare(&base, &cand, Thresholds::default());
    assert!(c.throughput.iter().any(|t| t.verdict == Change::Slower && !t.gated));
    assert!(c.tripped(&ALL).is_empty());
}

#[test]
fn a_new_leak_and_new_streams_trip_their_gates() {
    let base = run("h100-npp-13.0.1");
    let mut cand = base.clone();
    let leaking = base
        .memory
        .iter()
        .find(|m| m.scenario.id.contains("31x31-s32-d128/blocking/thread_per_call"))
        .unwrap()
        .clone();
    // Altered copy: the non-blocking scenario given the blocking one's samples and streams.
    let target = cand
        .memory
        .iter_mut()
        .find(|m| m.scenario.id.contains("31x31-s32-d128/non_blocking/thread_per_call"))
        .unwrap();
    target.result = leaking.result.clone();
    let c = compare(&base, &cand, Thresholds::default());
    let m = c.memory.iter().find(|m| m.id == target_id(&cand)).unwrap();
    assert!(m.new_leak && m.more_streams);
    assert_eq!(c.tripped(&ALL), vec![Gate::Leak, Gate::Streams]);
}

fn target_id(r: &RunFile) -> String {
    r.memory
        .iter()
        .find(|m| m.scenario.id.contains("31x31-s32-d128/non_blocking/thread_per_call"))
        .unwrap()
        .scenario
        .id
        .clone()
}

#[test]
fn runs_from_another_machine_are_labelled_not_mixed() {
    let base = run("h100-npp-13.0.1");
    // Altered copy: as if it ran on another GPU with another driver.
    let mut cand = base.clone();
    cand.environment.gpu.name = "NVIDIA H200".into();
    cand.environment.gpu.uuid = "GPU-00000000-0000-0000-0000-000000000000".into();
    cand.environment.driver_version = Some("590.1".into());
    let c = compare(&base, &cand, Thresholds::default());
    assert!(!c.same_machine);
    assert_eq!(c.environment_changes.len(), 2);
    let page = nppbench_report::render_compare(&[base, cand], Thresholds::default(), &[]).unwrap();
    assert!(
        page.compare_html
            .contains("Different environments: GPU: NVIDIA H100 80GB HBM3 → NVIDIA H200; driver: 580.159.04 → 590.1")
    );
    assert!(page.compare_html.contains("(group B)"));
    assert!(!page.failed);
}
