//! Memory scenarios measured many to a process, on a real GPU: each judged as a fresh process
//! judges it, whatever its place in the batch, and a crash in the middle of a batch costs only
//! its scenario. Each test skips (saying why) where there is no GPU.

use std::path::{Path, PathBuf};
use std::process::Command;

use nppbench_analysis::RunAnalysis;
use nppbench_model::{Outcome, RunFile};

fn bin() -> String {
    std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned())
}

/// Convert on a leaking and an aligned geometry, every stream kind and threading model: 32
/// memory scenarios, no throughput.
const MATRIX: &str = r#"
name = "batches"
streams = ["legacy_default", "per_thread_default", "blocking", "non_blocking"]
threading = ["single", "thread_per_call", "pool:2", "thread_per_call_own_stream"]
[settings]
calls = 12
min_calls = 12
warm_up_ms = 10
measurement_ms = 30
samples = 10
resamples = 1000
scenario_timeout_s = 20
memory_budget_mib = 1024
[[geometry]]
width = 31
height = 31
src_stride = 32
throughput = false
[[geometry]]
width = 32
height = 32
src_stride = 32
throughput = false
"#;

fn run(dir: &Path, name: &str, args: &[&str], fault: Option<&str>) -> RunFile {
    let matrix = dir.join("m.toml");
    std::fs::write(&matrix, MATRIX).unwrap();
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
    let dir = tempfile::tempdir().unwrap();
    // The first batch's order is known from the seed: the scenario fourth in it (or the first
    // after it whose id names no other) crashes.
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
        "crash",
        &["--jobs", "1", "--batch", "64", "--seed", "5"],
        Some(&format!("crash@{target}")),
    );
    for m in &r.memory {
        if &m.scenario.id == target {
            assert!(
                matches!(&m.outcome, Outcome::Failed { reason, .. } if reason.contains("SIGABRT")),
                "{:?}",
                m.outcome
            );
        } else {
            assert_eq!(m.outcome, Outcome::Ok, "{}", m.scenario.id);
            let place = m.batch.clone().unwrap();
            // Measured in the first process: before the crash in the first batch.
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
