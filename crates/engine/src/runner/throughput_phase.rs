//! The throughput phase: one pass of one version, a fresh probe per GPU (all GPUs at once, each
//! timing every scenario), restarted past any scenario that kills it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nppbench_analysis::compare::Thresholds;
use nppbench_analysis::settle::passes_settled;
use nppbench_model::{Matrix, RepeatAuto, ThroughputRecord, ThroughputResult, ThroughputScenario};

use super::child::{Child, Exit};
use super::{Progress, RunError, RunOptions, Version};
use crate::protocol::Request;

/// What one GPU's probes of a pass finished, and whether they were interrupted.
struct GpuPass {
    records: Vec<ThroughputRecord>,
    interrupted: bool,
}

/// Runs `pass` of version `v` on every GPU. Returns whether the run was interrupted.
pub(super) fn run_pass(
    opts: &RunOptions,
    matrix: &Matrix,
    v: &mut Version,
    pass: u32,
    progress: &dyn Progress,
    stop: &AtomicBool,
) -> Result<bool, RunError> {
    let gpus = v.gpus();
    let done: BTreeSet<(String, Option<String>)> = v
        .throughput
        .iter()
        .filter(|r| r.pass == pass)
        .map(|r| (r.scenario.id.clone(), r.gpu.clone()))
        .collect();
    let work_dir = opts.work_dir(v.index);
    let npp_dir = v.npp_dir.clone();
    let results: Vec<Result<GpuPass, RunError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = gpus
            .iter()
            .map(|(device, uuid)| {
                let todo: Vec<ThroughputScenario> = matrix
                    .throughput
                    .iter()
                    .filter(|s| !done.contains(&(s.id.clone(), Some(uuid.clone()))))
                    .cloned()
                    .collect();
                let (work_dir, npp_dir) = (work_dir.clone(), npp_dir.clone());
                let device = *device;
                scope.spawn(move || {
                    let child_for = |attempt: usize| Child {
                        work_dir: work_dir.clone(),
                        probe_exe: &opts.probe_exe,
                        stop,
                        name: format!("throughput-p{pass}-gpu{device}-{attempt}"),
                        pids_file: opts.probe_pids_path(),
                        env: &[],
                    };
                    one_gpu(&todo, pass, uuid, |attempt, remaining| {
                        let child = child_for(attempt);
                        let request = Request::Throughput {
                            npp_dir: npp_dir.clone(),
                            device,
                            pass,
                            scenarios: remaining.to_vec(),
                            settings: matrix.settings.clone(),
                            criterion_dir: work_dir.join(format!("criterion-p{pass}-gpu{device}")),
                            parent_pid: std::process::id(),
                        };
                        // Every answer in place: the next pass need not wait for this probe's
                        // CUDA context to be torn down; a thread reaps it.
                        let (exit, exiting) = child.run_until_lines(
                            &request,
                            Duration::from_secs(matrix.settings.scenario_timeout_s),
                            remaining.len(),
                        )?;
                        if let Some(mut exiting) = exiting {
                            std::thread::spawn(move || {
                                let _ = exiting.wait();
                            });
                        }
                        let answers: Vec<ThroughputRecord> = child
                            .answer()
                            .unwrap_or_default()
                            .lines()
                            .map_while(|l| serde_json::from_str(l).ok())
                            .collect();
                        let interrupted = matches!(exit, Exit::Interrupted) || stop.load(Ordering::SeqCst);
                        let failure = (!interrupted).then(|| child.failure(&exit));
                        Ok((answers, failure, interrupted))
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(RunError::Environment("a throughput supervisor panicked".into())))
            })
            .collect()
    });
    let mut interrupted = false;
    for r in results {
        let r = r?;
        interrupted |= r.interrupted;
        for record in r.records {
            v.finish_throughput(progress, record)?;
        }
    }
    Ok(interrupted)
}

/// One probe's answers, why it ended without finishing (if it did), and whether it was
/// interrupted.
type Attempt = (Vec<ThroughputRecord>, Option<crate::error::ProbeError>, bool);

/// Runs `todo` on one GPU through `attempt(n, remaining)`, restarting past a scenario that
/// kills its probe (recorded as failed).
fn one_gpu(
    todo: &[ThroughputScenario],
    pass: u32,
    uuid: &str,
    mut attempt: impl FnMut(usize, &[ThroughputScenario]) -> Result<Attempt, RunError>,
) -> Result<GpuPass, RunError> {
    let mut remaining = todo;
    let mut records = Vec::new();
    let mut n = 0;
    while !remaining.is_empty() {
        let (answers, failure, interrupted) = attempt(n, remaining)?;
        n += 1;
        for record in answers.into_iter().take(remaining.len()) {
            records.push(record);
            remaining = &remaining[1..];
        }
        if interrupted {
            return Ok(GpuPass {
                records,
                interrupted: true,
            });
        }
        if let (Some(next), Some(failure)) = (remaining.first(), failure) {
            records.push(ThroughputRecord {
                scenario: next.clone(),
                outcome: failure.outcome(),
                result: None,
                pass,
                gpu: Some(uuid.to_owned()),
                wall_ms: None,
            });
            remaining = &remaining[1..];
        }
    }
    Ok(GpuPass {
        records,
        interrupted: false,
    })
}

/// `--repeat auto`: passes beyond the first `passes`, each timing only the scenarios whose passes
/// so far are not settled ([`passes_settled`]), until every scenario is settled or has
/// `auto.max_passes` passes, or the added passes have taken `auto.budget_s` (a pass under way is
/// finished). Returns whether the run was interrupted.
pub(super) fn more_passes(
    opts: &RunOptions,
    matrix: &Matrix,
    versions: &mut [Version],
    passes: u32,
    auto: RepeatAuto,
    progress: &dyn Progress,
    stop: &AtomicBool,
) -> Result<bool, RunError> {
    let clock = Instant::now();
    for pass in passes + 1..=auto.max_passes {
        if clock.elapsed() >= Duration::from_secs(auto.budget_s) {
            progress.note(&format!(
                "--repeat auto: the added passes took their {} s; scenarios still unsettled keep {} passes",
                auto.budget_s,
                pass - 1
            ));
            break;
        }
        let mut any = false;
        for v in versions.iter_mut() {
            let todo = unsettled(matrix, v, pass);
            if todo.is_empty() {
                continue;
            }
            any = true;
            progress.extend(todo.len() * v.gpus().len());
            progress.note(&format!(
                "pass {pass}: {} scenario(s) whose passes disagree too much for a comparison to settle",
                todo.len()
            ));
            let mut some = matrix.clone();
            some.throughput = todo;
            if run_pass(opts, &some, v, pass, progress, stop)? {
                return Ok(true);
            }
        }
        if !any {
            break;
        }
    }
    Ok(false)
}

/// The scenarios of `matrix` whose passes before `pass` are not settled on some GPU; a scenario
/// with a failed pass is not chased.
fn unsettled(matrix: &Matrix, v: &Version, pass: u32) -> Vec<ThroughputScenario> {
    matrix
        .throughput
        .iter()
        .filter(|s| {
            let records: Vec<&ThroughputRecord> = v
                .throughput
                .iter()
                .filter(|r| r.scenario.id == s.id && r.pass < pass)
                .collect();
            if records.is_empty() || records.iter().any(|r| r.result.is_none()) {
                return false;
            }
            let mut by_gpu: BTreeMap<Option<&str>, Vec<&ThroughputResult>> = BTreeMap::new();
            for r in &records {
                by_gpu.entry(r.gpu.as_deref()).or_default().extend(r.result.as_ref());
            }
            by_gpu
                .values()
                .any(|results| !passes_settled(results, Thresholds::default()))
        })
        .cloned()
        .collect()
}
