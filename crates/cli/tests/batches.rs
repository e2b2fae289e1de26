//! Memory scenarios measured many to a process, on a real GPU: each judged as a fresh process
//! judges it, whatever its place in the batch; a crash or a poisoned context in the middle of a
//! batch costs only its scenario, and an NPP error that leaves the context working is answered
//! where it happens. Each test skips (saying why) where there is no GPU.

use std::path::{Path, PathBuf};
use std::process::Command;

use nppbench_analysis::RunAnalysis;
use nppbench_model::{ContextFill, FailureKind, Outcome, RunFile};

fn bin() -> String {
    std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned())
}

/// The settings of both matrices here: short, with the calls a class needs.
macro_rules! settings {
    () => {
        r#"
[settings]
calls = 12
min_calls = 12
warm_up_ms = 10
measurement_ms = 30
samples = 10
resamples = 1000
scenario_timeout_s = 20
memory_budget_mib = 1024
"#
    };
}

/// Convert on a leaking and an aligned geometry, every stream kind and threading model: 32
/// memory scenarios, no throughput.
const MATRIX: &str = concat!(
    r#"
name = "batches"
streams = ["legacy_default", "per_thread_default", "blocking", "non_blocking"]
threading = ["single", "thread_per_call", "pool:2", "thread_per_call_own_stream"]"#,
    settings!(),
    r#"[[geometry]]
width = 31
height = 31
src_stride = 32
throughput = false
[[geometry]]
width = 32
height = 32
src_stride = 32
throughput = false
"#
);

fn run(dir: &Path, name: &str, args: &[&str], fault: Option<&str>) -> RunFile {
    run_matrix(dir, MATRIX, name, args, fault)
}

fn run_matrix(dir: &Path, text: &str, name: &str, args: &[&str], fault: Option<&str>) -> RunFile {
    let matrix = dir.join(format!("{name}.toml"));
    std::fs::write(&matrix, text).unwrap();
    let out: PathBuf = dir.join(name);
    let mut cmd = Command::new(bin());
    cmd.args([
        "run",
        "--matrix",
        matrix.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .args(args);
    if let Some(f) = fault {
        cmd.env("NPPBENCH_FAULT", f);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    RunFile::read(&out.join("run.json")).unwrap()
}

#[test]
fn a_batch_judges_every_scenario_as_a_fresh_process_does_whatever_its_place() {
    if !nppbench_engine::gpu_available("a_batch_judges_every_scenario_as_a_fresh_process_does_whatever_its_place") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let alone = run(dir.path(), "alone", &["--batch", "1"], None);
    let batched: Vec<RunFile> = [1, 2]
        .iter()
        .map(|seed| {
            let seed = seed.to_string();
            run(
                dir.path(),
                &format!("seed-{seed}"),
                &["--jobs", "1", "--batch", "64", "--seed", &seed],
                None,
            )
        })
        .collect();
    let a = RunAnalysis::new(&alone);
    assert!(
        a.memory
            .iter()
            .all(|m| m.record.batch.as_ref().is_some_and(|b| b.size == 1))
    );
    let leaks = a
        .memory
        .iter()
        .filter(|m| m.class == Some(nppbench_analysis::LeakClass::Leak))
        .count();
    assert!(leaks > 0, "the matrix holds a leak");
    for (b, seed) in batched.iter().zip([1, 2]) {
        // Each scenario where the queue put it (pools on the per-thread default stream at the
        // heads of batches, the rest in one batch), but those measured again alone.
        let plan = nppbench_engine::planned_batches(&b.matrix.memory, 1, 64, Some(seed));
        assert_eq!(plan.len(), 2, "two pools on the per-thread default stream, two heads");
        let planned = |id: &str| {
            plan.iter()
                .find_map(|batch| batch.iter().position(|x| x == id).map(|i| (batch.len(), i)))
                .unwrap()
        };
        let b = RunAnalysis::new(b);
        let places: Vec<String> = b
            .memory
            .iter()
            .map(|m| format!("{} {:?} {:?}", m.record.scenario.id, m.record.batch, m.record.outcome))
            .collect();
        assert!(
            b.memory
                .iter()
                .all(|m| m.record.batch.as_ref().is_some_and(|p| p.alone_because.is_some()
                    || (p.size as usize, p.position as usize) == planned(&m.record.scenario.id))),
            "where the queue put them, but pools measured again alone: {places:#?}"
        );
        for m in &a.memory {
            let id = &m.record.scenario.id;
            let n = b.memory.iter().find(|x| &x.record.scenario.id == id).unwrap();
            assert_eq!(n.record.outcome, Outcome::Ok, "{id}");
            let place = n.record.batch.as_ref().unwrap().position;
            assert_eq!(m.class, n.class, "{id} at position {place}");
            assert_eq!(
                m.streams_never_destroyed, n.streams_never_destroyed,
                "{id} at position {place}"
            );
        }
    }
    let places = |r: &RunFile, i: usize| r.memory[i].batch.as_ref().unwrap().position;
    assert!(
        (0..alone.memory.len()).any(|i| places(&batched[0], i) != places(&batched[1], i)),
        "the seeds put scenarios in different places"
    );
}

#[test]
fn a_crash_in_the_middle_of_a_batch_costs_only_its_scenario() {
    if !nppbench_engine::gpu_available("a_crash_in_the_middle_of_a_batch_costs_only_its_scenario") {
        return;
    }
    a_fault_in_the_middle_of_a_batch_costs_only_its_scenario(
        "crash",
        |o| matches!(o, Outcome::Failed { reason, .. } if reason.contains("SIGABRT")),
    );
}

/// A kernel that traps poisons the context: the process ends at that scenario, as at a crash,
/// and the scenarios after it are measured in a fresh one.
#[test]
fn a_poisoned_context_in_the_middle_of_a_batch_costs_only_its_scenario() {
    if !nppbench_engine::gpu_available("a_poisoned_context_in_the_middle_of_a_batch_costs_only_its_scenario") {
        return;
    }
    a_fault_in_the_middle_of_a_batch_costs_only_its_scenario(
        "trap",
        |o| matches!(o, Outcome::Failed { kind: FailureKind::Gpu, reason } if reason.contains("cuCtxSynchronize")),
    );
}

/// The fault `kind` injected into the scenario fourth in the first batch (or the first after it
/// whose id names no other): that scenario fails as `failed` says, every other is measured, those
/// after it in another process.
fn a_fault_in_the_middle_of_a_batch_costs_only_its_scenario(kind: &str, failed: impl Fn(&Outcome) -> bool) {
    let dir = tempfile::tempdir().unwrap();
    // The first batch's order is known from the seed.
    let plain = run(
        dir.path(),
        "plain",
        &["--jobs", "1", "--batch", "64", "--seed", "5"],
        None,
    );
    let ids: Vec<String> = plain.matrix.memory.iter().map(|s| s.id.clone()).collect();
    let order = nppbench_engine::planned_batches(&plain.matrix.memory, 1, 64, Some(5)).remove(0);
    let unique = |id: &String| ids.iter().filter(|other| other.contains(id.as_str())).count() == 1;
    let (position, target) = order.iter().enumerate().skip(3).find(|(_, id)| unique(id)).unwrap();
    let r = run(
        dir.path(),
        kind,
        &["--jobs", "1", "--batch", "64", "--seed", "5"],
        Some(&format!("{kind}@{target}")),
    );
    for m in &r.memory {
        if &m.scenario.id == target {
            assert!(failed(&m.outcome), "{:?}", m.outcome);
            // Measured again alone (a probe that died answered nothing: the parent has no place).
            assert!(m.batch.as_ref().is_none_or(|b| b.size == 1), "{:?}", m.batch);
        } else {
            assert_eq!(m.outcome, Outcome::Ok, "{}", m.scenario.id);
            let place = m.batch.clone().unwrap();
            // Measured in the first process: before the fault in the first batch.
            let before = order
                .iter()
                .position(|id| *id == m.scenario.id)
                .is_some_and(|i| i < position);
            // A pool measured again alone (its growth within a page) has a process of its own.
            if place.alone_because.is_none() {
                assert_eq!(place.process == 0, before, "{} {place:?}", m.scenario.id);
            }
        }
    }
}

/// MinMax with a context filled with zeros: NPP returns NPP_CUDA_KERNEL_EXECUTION_ERROR (in
/// a fresh process too) and the context still works, so the scenario is answered in its batch
/// and the batch goes on: one process measures every scenario.
#[test]
fn an_npp_error_that_leaves_the_context_working_is_answered_in_its_batch() {
    if !nppbench_engine::gpu_available("an_npp_error_that_leaves_the_context_working_is_answered_in_its_batch") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let matrix = concat!(
        r#"
name = "npp-error"
primitive = "MinMax_8u_C1R"
streams = ["blocking", "non_blocking"]
context = ["from_stream", "zeroed"]
threading = ["single", "thread_per_call"]"#,
        settings!(),
        r#"[[geometry]]
width = 255
height = 64
src_stride = 256
throughput = false
"#
    );
    let r = run_matrix(
        dir.path(),
        matrix,
        "npp-error",
        &["--jobs", "1", "--batch", "64", "--seed", "3"],
        None,
    );
    assert_eq!(r.memory.len(), 8);
    for m in &r.memory {
        let place = m.batch.clone().unwrap();
        if m.scenario.context == ContextFill::Zeroed {
            assert!(
                matches!(&m.outcome, Outcome::Failed { kind: FailureKind::Npp, reason } if reason.contains("NPP_CUDA_KERNEL_EXECUTION_ERROR")),
                "{} {:?}",
                m.scenario.id,
                m.outcome
            );
        } else {
            assert_eq!(m.outcome, Outcome::Ok, "{}", m.scenario.id);
        }
        if place.alone_because.is_none() {
            assert_eq!((place.process, place.size), (0, 8), "{} {place:?}", m.scenario.id);
        }
    }
}

#[test]
fn readings_shared_through_the_parent_judge_every_scenario_as_own_readings_do() {
    if !nppbench_engine::gpu_available("readings_shared_through_the_parent_judge_every_scenario_as_own_readings_do") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let args = |how| ["--jobs", "4", "--seed", "1", "--memory-readings", how];
    let own = run(dir.path(), "own", &args("own"), None);
    let shared = run(dir.path(), "shared", &args("shared"), None);
    let readings = |r: &RunFile| r.jobs.as_ref().map(|j| j.memory_readings);
    assert_eq!(readings(&own), Some(nppbench_model::MemoryReadings::Own));
    assert_eq!(readings(&shared), Some(nppbench_model::MemoryReadings::Shared));
    // Each scenario's class, and whether its memory was this process's figure (NVML) throughout,
    // as it is either way; and whether the parent read it, as the run says it did (a probe that
    // could not reach the parent would list for itself).
    let judged = |r: &RunFile| {
        let a = RunAnalysis::new(r);
        let mut c: Vec<_> = a
            .memory
            .iter()
            .map(|m| {
                let result = m.record.result.as_ref();
                let per_process = m.probe == nppbench_analysis::Probe::Process;
                let by_parent = result.map(|x| x.readings_shared);
                ((m.record.scenario.id.clone(), m.class, per_process), by_parent)
            })
            .collect();
        c.sort_by(|a, b| a.0.0.cmp(&b.0.0));
        c.into_iter().unzip::<_, _, Vec<_>, Vec<_>>()
    };
    let ((own, own_by_parent), (shared, shared_by_parent)) = (judged(&own), judged(&shared));
    assert!(
        own.iter().any(|c| c.1 == Some(nppbench_analysis::LeakClass::Leak)),
        "the matrix holds a leak"
    );
    assert!(own_by_parent.iter().all(|b| *b == Some(false)), "{own_by_parent:?}");
    assert!(
        shared_by_parent.iter().all(|b| *b == Some(true)),
        "{shared_by_parent:?}"
    );
    assert_eq!(own, shared);
}
