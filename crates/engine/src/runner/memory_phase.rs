//! The memory phase: one fresh probe per memory scenario, `jobs` of them at once, spread over
//! the GPUs. Each keeps a process of its own (the streams NPP hides live until their process
//! exits); a crash in one loses only its scenario.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use nppbench_model::{Environment, Jobs, Matrix, MemoryRecord, MemoryScenario, ProbeConnections, Settings};

use super::child::{Child, Exit};
use super::{Progress, RunError, RunOptions, Version};
use crate::protocol::{MemoryReply, Request};

/// Device memory one memory probe may take besides its buffers: a CUDA context, NPP's static
/// runtime, CUPTI's and NVML's own.
const PROBE_OVERHEAD_MIB: u64 = 768;
/// The most probes a GPU takes at once by default: past this, their CUDA contexts time-slice the
/// GPU and start-up contends in the driver for no gain.
const DEFAULT_PER_GPU: u32 = 8;

/// How many memory probes run at once: `given` (checked against device memory), or chosen from
/// the machine, with the reason.
pub(super) fn jobs(given: Option<u32>, matrix: &Matrix, env: &Environment) -> Result<Jobs, RunError> {
    let gpus = env.all_gpus();
    let largest = matrix
        .memory
        .iter()
        .map(|s| s.geometry.buffer_bytes(s.primitive))
        .max()
        .unwrap_or(0);
    let per_probe = (PROBE_OVERHEAD_MIB << 20) + largest + (matrix.settings.memory_budget_mib << 20);
    let fit: u64 = gpus
        .iter()
        .map(|g| g.gpu.memory_free_bytes_at_start / per_probe.max(1))
        .sum();
    let fit = u32::try_from(fit).unwrap_or(u32::MAX).max(1);
    let per_probe_mib = per_probe >> 20;
    if let Some(n) = given {
        if n > fit {
            return Err(RunError::Input(format!(
                "--jobs {n}: each memory probe may take up to {per_probe_mib} MiB of device memory (a CUDA context, its buffers and the {} MiB memory budget), so the free memory of {} GPU(s) holds at most {fit}; use --jobs {fit} or fewer, or lower memory_budget_mib",
                matrix.settings.memory_budget_mib,
                gpus.len()
            )));
        }
        return Ok(Jobs {
            jobs: n,
            reason: "given with --jobs".into(),
            connections: None,
        });
    }
    if !env.process_memory_probe {
        return Ok(Jobs {
            jobs: 1,
            reason: "NVML gives no per-process memory here, and the device-wide figure a leak would be judged on is shared by concurrent probes".into(),
            connections: None,
        });
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let by_cores = (cores / 2).max(1);
    let by_gpus = DEFAULT_PER_GPU * gpus.len() as u32;
    let jobs = by_cores.min(by_gpus).min(fit).max(1);
    let limit = if jobs == fit {
        format!("device memory holds {fit} probes of up to {per_probe_mib} MiB")
    } else if jobs == by_gpus {
        format!("{DEFAULT_PER_GPU} per GPU on {} GPU(s)", gpus.len())
    } else {
        format!("half of the {cores} logical cores")
    };
    Ok(Jobs {
        jobs,
        reason: format!("chosen from the machine: {limit}"),
        connections: None,
    })
}

/// The variable that caps a CUDA context's hardware connections (work queues).
pub(super) const MAX_CONNECTIONS_ENV: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// What the memory probes will have for `CUDA_DEVICE_MAX_CONNECTIONS`: `given` (set by
/// nppbench), else this process's own value, inherited.
pub(super) fn connections(given: Option<u32>) -> ProbeConnections {
    match given {
        Some(n) => ProbeConnections {
            value: Some(n),
            set_by_nppbench: true,
        },
        None => ProbeConnections {
            value: std::env::var(MAX_CONNECTIONS_ENV)
                .ok()
                .and_then(|v| v.trim().parse().ok()),
            set_by_nppbench: false,
        },
    }
}

/// What one worker hands back.
enum Done {
    Record(Box<MemoryRecord>),
    Interrupted,
    Error(RunError),
}

/// What every worker of the memory phase shares: the queue of scenarios and how to start a
/// probe for one.
struct Workers<'a> {
    opts: &'a RunOptions,
    settings: &'a Settings,
    queue: Mutex<std::vec::IntoIter<(usize, &'a MemoryScenario)>>,
    work_dir: PathBuf,
    npp_dir: Option<PathBuf>,
    /// Variables set for each probe beyond nppbench's own environment.
    env: Vec<(&'static str, String)>,
    stop: &'a AtomicBool,
}

impl Workers<'_> {
    /// One worker: takes scenarios from the queue and runs each in a fresh probe on GPU
    /// `device`, sending each record to `tx`, until the queue is empty, the run is interrupted
    /// or the parent fails.
    fn work(&self, (device, uuid): (u32, String), tx: &mpsc::Sender<Done>) {
        let stop = self.stop;
        // Probes that answered and are still exiting; reaped as they finish, and at most two
        // left behind before this worker waits for the oldest.
        let mut exiting: Vec<std::process::Child> = Vec::new();
        loop {
            reap(&mut exiting, 2);
            let next = self.queue.lock().unwrap_or_else(|p| p.into_inner()).next();
            let Some((i, scenario)) = next else { break };
            if stop.load(Ordering::SeqCst) {
                let _ = tx.send(Done::Interrupted);
                break;
            }
            let done = self.run_one(i, scenario, device, &uuid, &mut exiting);
            let go_on = matches!(done, Done::Record(_));
            if tx.send(done).is_err() || !go_on {
                break;
            }
        }
        if stop.load(Ordering::SeqCst) {
            for c in &mut exiting {
                let _ = c.kill();
            }
        }
        reap(&mut exiting, 0);
    }

    /// Runs scenario `i` in a fresh probe on GPU `device` (UUID `uuid`); a probe still exiting
    /// after its answer joins `exiting`.
    fn run_one(
        &self,
        i: usize,
        scenario: &MemoryScenario,
        device: u32,
        uuid: &str,
        exiting: &mut Vec<std::process::Child>,
    ) -> Done {
        let stop = self.stop;
        let child = Child {
            work_dir: self.work_dir.clone(),
            probe_exe: &self.opts.probe_exe,
            stop,
            name: format!("memory-{i}"),
            pids_file: self.opts.probe_pids_path(),
            env: &self.env,
        };
        let request = Request::Memory {
            npp_dir: self.npp_dir.clone(),
            device,
            scenario: scenario.clone(),
            memory_budget_mib: self.settings.memory_budget_mib,
            min_calls: self.settings.min_calls,
            parent_pid: std::process::id(),
        };
        let started = Instant::now();
        let exit = match child.run_until_answered(&request, Duration::from_secs(self.settings.scenario_timeout_s)) {
            Ok((exit, still_exiting)) => {
                exiting.extend(still_exiting);
                exit
            }
            Err(e) => return Done::Error(e),
        };
        if matches!(exit, Exit::Interrupted) || stop.load(Ordering::SeqCst) {
            return Done::Interrupted;
        }
        let reply = child
            .answer()
            .and_then(|a| serde_json::from_str::<MemoryReply>(&a).ok())
            .unwrap_or_else(|| MemoryReply {
                outcome: child.failure(&exit).outcome(),
                result: None,
            });
        Done::Record(Box::new(MemoryRecord {
            scenario: scenario.clone(),
            outcome: reply.outcome,
            result: reply.result,
            gpu: Some(uuid.to_owned()),
            wall_ms: Some(started.elapsed().as_secs_f64() * 1e3),
        }))
    }
}

/// Reaps the probes of `exiting` that have exited, then waits for the oldest until at most
/// `keep` are left.
fn reap(exiting: &mut Vec<std::process::Child>, keep: usize) {
    exiting.retain_mut(|c| !matches!(c.try_wait(), Ok(Some(_))));
    while exiting.len() > keep {
        let mut oldest = exiting.remove(0);
        let _ = oldest.wait();
    }
}

/// Runs version `v`'s memory scenarios not yet done, `jobs` at once. Returns whether the run was
/// interrupted.
pub(super) fn run(
    opts: &RunOptions,
    matrix: &Matrix,
    v: &mut Version,
    jobs: &Jobs,
    progress: &dyn Progress,
    stop: &AtomicBool,
) -> Result<bool, RunError> {
    let done: BTreeSet<String> = v.memory.iter().map(|r| r.scenario.id.clone()).collect();
    let todo: Vec<(usize, &MemoryScenario)> = matrix
        .memory
        .iter()
        .enumerate()
        .filter(|(_, s)| !done.contains(&s.id))
        .collect();
    if todo.is_empty() {
        return Ok(false);
    }
    let gpus = v.gpus();
    let workers = Workers {
        opts,
        settings: &matrix.settings,
        queue: Mutex::new(todo.into_iter()),
        work_dir: opts.work_dir(v.index),
        npp_dir: v.npp_dir.clone(),
        // Set only where nppbench sets it; an inherited value is already in the environment.
        env: match &jobs.connections {
            Some(ProbeConnections {
                value: Some(n),
                set_by_nppbench: true,
            }) => vec![(MAX_CONNECTIONS_ENV, n.to_string())],
            _ => Vec::new(),
        },
        stop,
    };
    let (tx, rx) = mpsc::channel::<Done>();
    let mut interrupted = false;
    let mut first_error = None;
    std::thread::scope(|scope| {
        for w in 0..jobs.jobs as usize {
            let (gpu, tx, workers) = (gpus[w % gpus.len()].clone(), tx.clone(), &workers);
            scope.spawn(move || workers.work(gpu, &tx));
        }
        drop(tx);
        for done in rx {
            match done {
                Done::Record(record) => {
                    if let Err(e) = v.finish_memory(progress, *record) {
                        first_error.get_or_insert(e);
                        stop.store(true, Ordering::SeqCst);
                    }
                }
                Done::Interrupted => interrupted = true,
                Done::Error(e) => {
                    first_error.get_or_insert(e);
                    stop.store(true, Ordering::SeqCst);
                }
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(interrupted || stop.load(Ordering::SeqCst))
}
