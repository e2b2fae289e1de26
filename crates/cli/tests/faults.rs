//! Faults injected into real runs on a GPU: a probe that crashes, hangs or runs out of memory,
//! a leak stopped at its budget, and a run interrupted then resumed. In every case the other
//! scenarios' results are kept. Each test skips (saying why) where there is no GPU.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use nppbench_model::{Outcome, RunFile};

fn bin() -> String {
    std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned())
}

const MATRIX: &str = r#"
name = "faults"
streams = ["blocking", "non_blocking"]
threading = ["thread_per_call"]
[settings]
calls = 8
warm_up_ms = 10
measurement_ms = 30
samples = 10
resamples = 1000
scenario_timeout_s = 3
[[geometry]]
width = 31
height = 31
src_stride = 32
"#;

struct Case {
    _dir: tempfile::TempDir,
    matrix: PathBuf,
    out: PathBuf,
}

fn case(matrix: &str) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.toml");
    std::fs::write(&path, matrix).unwrap();
    Case {
        out: dir.path().join("out"),
        matrix: path,
        _dir: dir,
    }
}

fn run(c: &Case, fault: Option<&str>, extra: &[&str]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args([
        "run",
        "--matrix",
        c.matrix.to_str().unwrap(),
        "--out",
        c.out.to_str().unwrap(),
    ])
    .args(extra);
    if let Some(f) = fault {
        cmd.env("NPPBENCH_FAULT", f);
    }
    cmd.output().unwrap()
}

fn read(out: &Path) -> RunFile {
    RunFile::read(&out.join("run.json")).unwrap()
}

fn reason(o: &Outcome) -> &str {
    match o {
        Outcome::Failed { reason, .. } => reason,
        _ => "",
    }
}

#[test]
fn a_crashing_memory_probe_is_recorded_and_the_rest_complete() {
    if !nppbench_engine::gpu_available("a_crashing_memory_probe_is_recorded_and_the_rest_complete") {
        return;
    }
    let c = case(MATRIX);
    let o = run(
        &c,
        Some("crash@/31x31-s32-d128/blocking/from_stream/thread_per_call"),
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = read(&c.out);
    let crashed = r
        .memory
        .iter()
        .find(|m| m.scenario.stream == nppbench_model::StreamKind::Blocking)
        .unwrap();
    assert!(
        reason(&crashed.outcome).contains("signal 6 (SIGABRT)"),
        "{:?}",
        crashed.outcome
    );
    assert_eq!(r.memory.iter().filter(|m| m.outcome == Outcome::Ok).count(), 1);
    assert!(r.throughput.iter().all(|t| t.outcome == Outcome::Ok));
}

#[test]
fn a_crashing_throughput_probe_loses_only_its_scenario() {
    if !nppbench_engine::gpu_available("a_crashing_throughput_probe_loses_only_its_scenario") {
        return;
    }
    let c = case(MATRIX);
    let o = run(&c, Some("crash@tp/Convert_8u32f_C1R/31x31-s32-d128/blocking/"), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = read(&c.out);
    assert_eq!(r.throughput.len(), 2);
    assert!(
        reason(&r.throughput[0].outcome).contains("SIGABRT"),
        "{:?}",
        r.throughput[0].outcome
    );
    assert_eq!(
        r.throughput[1].outcome,
        Outcome::Ok,
        "the scenario after the crash ran in a new probe"
    );
}

#[test]
fn a_hanging_probe_times_out_and_the_rest_complete() {
    if !nppbench_engine::gpu_available("a_hanging_probe_times_out_and_the_rest_complete") {
        return;
    }
    let c = case(MATRIX);
    let o = run(
        &c,
        Some("hang@/31x31-s32-d128/non_blocking/from_stream/thread_per_call"),
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = read(&c.out);
    let hung = r
        .memory
        .iter()
        .find(|m| m.scenario.stream == nppbench_model::StreamKind::NonBlocking)
        .unwrap();
    assert!(
        reason(&hung.outcome).contains("timed out after 3 s"),
        "{:?}",
        hung.outcome
    );
    assert_eq!(r.memory.iter().filter(|m| m.outcome == Outcome::Ok).count(), 1);
}

#[test]
fn out_of_memory_is_a_failed_scenario_not_a_crash() {
    if !nppbench_engine::gpu_available("out_of_memory_is_a_failed_scenario_not_a_crash") {
        return;
    }
    let c = case(MATRIX);
    let o = run(&c, Some("oom@/blocking/"), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = read(&c.out);
    let failed = r.memory.iter().find(|m| m.outcome.is_failed()).unwrap();
    assert!(
        reason(&failed.outcome).contains("OUT_OF_MEMORY"),
        "{:?}",
        failed.outcome
    );
    assert_eq!(r.memory.iter().filter(|m| m.outcome == Outcome::Ok).count(), 1);
}

#[test]
fn a_leak_stops_at_its_memory_budget() {
    if !nppbench_engine::gpu_available("a_leak_stops_at_its_memory_budget") {
        return;
    }
    let matrix = MATRIX
        .replace("calls = 8", "calls = 64\nmemory_budget_mib = 8")
        .replace("\"blocking\", \"non_blocking\"", "\"blocking\"");
    let c = case(&matrix);
    let o = run(&c, None, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = read(&c.out);
    let m = &r.memory[0];
    assert_eq!(m.outcome, Outcome::StoppedAtBudget { budget_mib: 8 });
    let samples = &m.result.as_ref().unwrap().samples;
    assert!(samples.len() < 65, "stopped early: {} samples", samples.len());
    let grown = samples.process_used_bytes.last().unwrap().unwrap()
        - m.result.as_ref().unwrap().baseline.process_used_bytes.unwrap();
    assert!(grown > 8 << 20 && grown < 32 << 20, "{grown}");
}

#[test]
fn an_interrupted_run_keeps_what_finished_and_resumes() {
    if !nppbench_engine::gpu_available("an_interrupted_run_keeps_what_finished_and_resumes") {
        return;
    }
    let matrix = MATRIX
        .replace(
            "threading = [\"thread_per_call\"]",
            "threading = [\"single\", \"thread_per_call\", \"pool:2\", \"pool:3\", \"thread_per_call_own_stream\"]",
        )
        .replace(
            "\"blocking\", \"non_blocking\"",
            "\"legacy_default\", \"per_thread_default\", \"blocking\", \"non_blocking\"",
        );
    let c = case(&matrix);
    let child = Command::new(bin())
        .args([
            "run",
            "--matrix",
            c.matrix.to_str().unwrap(),
            "--out",
            c.out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until a few memory scenarios are in the journal, then stop the run.
    let journal = c.out.join("run.journal.jsonl");
    for _ in 0..600 {
        let lines = std::fs::read_to_string(&journal)
            .map_or(0, |j| j.lines().filter(|l| l.starts_with("{\"memory\":")).count());
        if lines >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    let partial = read(&c.out);
    assert!(partial.interrupted);
    let total = partial.matrix.memory.len();
    assert!(
        partial.memory.len() >= 3 && partial.memory.len() < total,
        "{} of {total}",
        partial.memory.len()
    );
    assert!(
        partial.memory.iter().all(|m| !m.outcome.is_failed()),
        "no scenario is blamed for the interruption"
    );

    let o = run(&c, None, &["--resume"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let done = read(&c.out);
    assert!(!done.interrupted);
    assert_eq!(done.memory.len(), total);
    assert_eq!(done.throughput.len(), partial.matrix.throughput.len());
    for kept in &partial.memory {
        let again = done.memory.iter().find(|m| m.scenario.id == kept.scenario.id).unwrap();
        assert_eq!(
            again.result.as_ref().unwrap().wall_ms,
            kept.result.as_ref().unwrap().wall_ms,
            "kept, not re-run"
        );
    }
    assert!(!journal.exists(), "the journal is removed once the run is complete");
}

#[test]
fn resume_without_a_journal_is_bad_input() {
    let c = case(MATRIX);
    let o = run(&c, None, &["--resume"]);
    // Without a GPU the journal check still comes first: nothing to resume is bad input.
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot resume"));
}
