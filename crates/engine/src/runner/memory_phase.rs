//! The memory phase: memory scenarios in batches, one fresh probe process a batch, `jobs` of
//! them at once, spread over the GPUs. Each scenario runs on host threads made for it, which
//! have never met NPP, so that it finds NPP as a fresh process would (NPP keeps its hidden streams
//! per thread, until the process exits); a fault in a process costs only the scenario at fault,
//! measured again alone, and the rest of the batch goes to a fresh process. A scenario whose
//! growth depends on what the process held is measured again alone, unless it headed its batch
//! (`queue.rs`: the scenarios likeliest to be, first in a process).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use nppbench_analysis::evidence::conclusive;
use nppbench_analysis::memory::analyse_memory;
use nppbench_model::{
    BatchPlace, Jobs, Matrix, MemoryReadings, MemoryRecord, MemoryScenario, ProbeConnections, Settings,
};
use nppbench_stats::LeakClass;

use super::child::{Child, Exit};

mod listings;
mod plan;
mod queue;
#[cfg(test)]
mod tests;

use super::{Progress, RunError, RunOptions, Version, supervise};
use crate::protocol::{MemoryLine, Request};
pub(super) use plan::batch_size;
pub(super) use plan::{MAX_CONNECTIONS_ENV, layout};
#[cfg(test)]
pub(super) use plan::{batching, jobs};
pub use queue::planned_batches;

/// What one worker hands back: a scenario's record, or the run's end.
type Done = supervise::Done<Box<MemoryRecord>>;

/// Why a scenario measured in a batch is measured again in a process of its own, if it is: one
/// whose growth depends on what earlier scenarios left in the process. Device memory grows in
/// 2 MiB pages:
/// - a pool (two threads or more) that kept NPP streams and grew by one page or less: pages that earlier scenarios' kept streams half filled may have
///   held them, where a fresh process needs a page per thread (bounded there, flat here);
/// - any scenario that grew without keeping a stream, and past one page (not flat): memory a
///   thread holds while it lives (a per-thread default stream's), which a fresh process may
///   serve from what it has and a batch's process, after other scenarios' threads, may not (flat
///   there, bounded here). One that stayed flat in its batch is flat alone too: all 90 of an
///   atlas run on one H100 (`reports/performance/h100-GPU-f5e58df3-reading-time/`,
///   `batch.class_in_batch`; the analysis test `grown_without_a_stream_and_flat_in_the_batch_is_flat_alone`);
///   the 3 bounded in their batch were flat alone;
/// - a pool too large to be judged inside a batch on the per-thread default stream
///   (`queue::must_head`), which the queue puts at the head of a batch: where it was not first
///   in its process after all, whether it grew or not.
///
/// A pool with too few calls to tell its class is left as it is.
/// Measured on the atlas of NPP 13.0.1 (`reports/batches/`, docs/performance.md).
fn page_bound(record: &MemoryRecord) -> Option<&'static str> {
    // Judged as the pages judge it: this process's memory (NVML), else the device's.
    let m = analyse_memory(record);
    let (lo, hi) = m.growth_mib.iter().fold(None, |range: Option<(f64, f64)>, &g| {
        Some(range.map_or((g, g), |(lo, hi)| (lo.min(g), hi.max(g))))
    })?;
    let grown = hi - lo;
    let kept = m.streams_never_destroyed.is_some_and(|k| k > 0);
    // A pool of n tells its class only past 2n calls: one that stopped sooner is left undecided
    // wherever it runs.
    let pool = record.scenario.threading.thread_bound().is_some_and(|n| n >= 2);
    if !conclusive(&m) {
        None
    } else if queue::must_head(&record.scenario) {
        Some(
            "a pool on the per-thread default stream too large to be judged inside a batch (its threads' default streams may fit in what earlier scenarios left), not first in its process: measured again in a fresh process",
        )
    } else if pool && kept && grown <= nppbench_stats::GRANULE_MIB {
        Some(
            "a pool that kept streams and grew by one 2 MiB page or less in its batch, where pages earlier scenarios half filled may hold them: measured again in a fresh process",
        )
    } else if !kept && grown > 0.0 && m.streams_never_destroyed.is_some() && m.class != Some(LeakClass::Flat) {
        Some(
            "a scenario that grew without keeping a stream in its batch, where earlier scenarios' threads decide what a thread's memory costs: measured again in a fresh process",
        )
    } else {
        None
    }
}

use queue::{Queue, Queued};

/// Why a scenario measured in a batch is measured again alone ([`page_bound`]), and the leak
/// class its batch gave.
struct Again {
    why: &'static str,
    in_batch: Option<&'static str>,
}

/// How one probe process ended.
enum Ending<'a> {
    /// Every scenario answered.
    Answered,
    /// The process stopped cleanly before these (the memory its scenarios kept).
    Stopped(Vec<Queued<'a>>),
    /// A fault: the first of these is the scenario at fault, with why the process gave no answer
    /// for it.
    Fault(Vec<Queued<'a>>, crate::error::ProbeError),
    Interrupted,
}

/// What every worker of the memory phase shares: the queue of scenarios and how to start a
/// probe for some.
struct Workers<'a> {
    opts: &'a RunOptions,
    settings: &'a Settings,
    queue: Mutex<Queue<'a>>,
    jobs: u32,
    max_per_process: u32,
    /// Shuffles each batch's scenarios (with this seed plus the matrix index of the batch's
    /// first); `None` keeps them in matrix order.
    seed: Option<u64>,
    /// Probe processes started so far, which numbers the next.
    started: AtomicU32,
    work_dir: PathBuf,
    npp_dir: Option<PathBuf>,
    /// Variables set for each probe beyond nppbench's own environment.
    env: Vec<(&'static str, String)>,
    stop: &'a AtomicBool,
}

impl<'a> Workers<'a> {
    /// The next process's scenarios ([`Queue::take`]).
    fn take(&self) -> Vec<Queued<'a>> {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.take(self.jobs, self.max_per_process, self.seed)
    }

    /// Puts `rest` back at the front of the queue, in order.
    fn give_back(&self, rest: Vec<Queued<'a>>) {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.give_back(rest);
    }

    /// One worker: takes scenarios from the queue and runs them in fresh probes on GPU
    /// `device`, sending each record to `tx`, until the queue is empty, the run is interrupted
    /// or the parent fails. A probe that ends at a fault has its scenario at fault measured
    /// again alone, and the rest of its scenarios go back to the queue.
    fn work(&self, (device, uuid): (u32, String), tx: &mpsc::Sender<Done>) {
        let stop = self.stop;
        // Probes that answered and are still exiting; reaped as they finish, and at most two
        // left behind before this worker waits for the oldest.
        let mut exiting: Vec<std::process::Child> = Vec::new();
        loop {
            reap(&mut exiting, 2);
            let batch = self.take();
            if batch.is_empty() {
                break;
            }
            if stop.load(Ordering::SeqCst) {
                let _ = tx.send(Done::Interrupted);
                break;
            }
            let finished = self.run_batch(&batch, device, &uuid, &mut exiting);
            let (records, interrupted) = match finished {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Done::Error(e));
                    break;
                }
            };
            let sent = records.into_iter().all(|r| tx.send(Done::Item(Box::new(r))).is_ok());
            if interrupted {
                let _ = tx.send(Done::Interrupted);
            }
            if !sent || interrupted {
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

    /// Runs `batch` in a fresh probe; returns the records of what it finished, and whether the
    /// run was interrupted. A scenario whose growth depends on what the process held is measured
    /// again alone ([`page_bound`]), unless it came first (then it met the process as it would
    /// alone: `queue.rs`); at a fault, the scenario at fault is measured again alone and
    /// the rest of the batch goes back to the queue; after a clean early stop the rest goes back.
    fn run_batch(
        &self,
        batch: &[Queued<'a>],
        device: u32,
        uuid: &str,
        exiting: &mut Vec<std::process::Child>,
    ) -> Result<(Vec<MemoryRecord>, bool), RunError> {
        let (answered, ending) = self.run_process(batch, device, uuid, exiting)?;
        let mut records = Vec::new();
        for (i, record) in answered.into_iter().enumerate() {
            match page_bound(&record).filter(|_| i > 0) {
                Some(why) => {
                    let in_batch = analyse_memory(&record).class.map(|c| c.as_str());
                    let again = Again { why, in_batch };
                    let (again, interrupted) = self.alone(batch[i], Some(again), device, uuid, exiting)?;
                    records.extend(again);
                    if interrupted {
                        return Ok((records, true));
                    }
                }
                None => records.push(record),
            }
        }
        match ending {
            Ending::Answered => Ok((records, false)),
            Ending::Interrupted => Ok((records, true)),
            Ending::Stopped(rest) => {
                self.give_back(rest);
                Ok((records, false))
            }
            Ending::Fault(mut rest, why) => {
                let at_fault = rest.remove(0);
                self.give_back(rest);
                if batch.len() == 1 {
                    records.push(self.failed(at_fault, uuid, why));
                    return Ok((records, false));
                }
                let (again, interrupted) = self.alone(at_fault, None, device, uuid, exiting)?;
                records.extend(again);
                Ok((records, interrupted))
            }
        }
    }

    /// Measures `one` in a process of its own, saying in its record why and what its batch
    /// measured (a fault's scenario says nothing: its record is its fault). Returns its record
    /// and whether the run was interrupted.
    fn alone(
        &self,
        one: Queued<'a>,
        again: Option<Again>,
        device: u32,
        uuid: &str,
        exiting: &mut Vec<std::process::Child>,
    ) -> Result<(Vec<MemoryRecord>, bool), RunError> {
        let (mut records, ending) = self.run_process(&[one], device, uuid, exiting)?;
        for r in &mut records {
            if let (Some(place), Some(again)) = (&mut r.batch, &again) {
                place.alone_because = Some(again.why.to_owned());
                place.class_in_batch = again.in_batch.map(str::to_owned);
            }
        }
        Ok(match ending {
            Ending::Fault(_, fault) if records.is_empty() => (vec![self.failed(one, uuid, fault)], false),
            Ending::Interrupted => (records, true),
            _ => (records, false),
        })
    }

    /// The record of a scenario whose process gave no answer for it.
    fn failed(&self, (_, scenario): Queued<'_>, uuid: &str, why: crate::error::ProbeError) -> MemoryRecord {
        MemoryRecord {
            scenario: scenario.clone(),
            outcome: why.outcome(),
            result: None,
            gpu: Some(uuid.to_owned()),
            wall_ms: None,
            batch: None,
        }
    }

    /// Runs `batch` in one fresh probe on GPU `device` (UUID `uuid`); returns the records of
    /// the scenarios it answered and how it ended. A probe still exiting after its answers joins
    /// `exiting`.
    fn run_process(
        &self,
        batch: &[Queued<'a>],
        device: u32,
        uuid: &str,
        exiting: &mut Vec<std::process::Child>,
    ) -> Result<(Vec<MemoryRecord>, Ending<'a>), RunError> {
        let stop = self.stop;
        let process = self.started.fetch_add(1, Ordering::SeqCst);
        let child = Child {
            work_dir: self.work_dir.clone(),
            probe_exe: &self.opts.probe_exe,
            stop,
            name: format!("memory-{process}"),
            pids_file: self.opts.probe_pids_path(),
            env: &self.env,
        };
        let request = Request::Memory {
            npp_dir: self.npp_dir.clone(),
            device,
            scenarios: batch.iter().map(|(_, s)| (*s).clone()).collect(),
            memory_budget_mib: self.settings.memory_budget_mib,
            min_calls: self.settings.min_calls,
            parent_pid: std::process::id(),
        };
        let started = Instant::now();
        let timeout = Duration::from_secs(self.settings.scenario_timeout_s);
        let (exit, still_exiting) = child.run_until_lines(&request, timeout, batch.len())?;
        exiting.extend(still_exiting);
        let mut records = Vec::new();
        let mut stopped = false;
        for line in child.answer().unwrap_or_default().lines() {
            match serde_json::from_str::<MemoryLine>(line) {
                Ok(MemoryLine::Scenario { id, reply, wall_ms }) => {
                    let Some(&(_, scenario)) = batch.get(records.len()).filter(|(_, s)| s.id == id) else {
                        break;
                    };
                    records.push(MemoryRecord {
                        scenario: scenario.clone(),
                        outcome: reply.outcome,
                        result: reply.result,
                        gpu: Some(uuid.to_owned()),
                        wall_ms: Some(if batch.len() == 1 {
                            started.elapsed().as_secs_f64() * 1e3
                        } else {
                            wall_ms
                        }),
                        batch: Some(BatchPlace {
                            process,
                            position: records.len() as u32,
                            size: batch.len() as u32,
                            alone_because: None,
                            class_in_batch: None,
                        }),
                    });
                }
                Ok(MemoryLine::Stopped { .. }) => stopped = true,
                Err(_) => break,
            }
        }
        let rest = batch[records.len()..].to_vec();
        let ending = if matches!(exit, Exit::Interrupted) || stop.load(Ordering::SeqCst) {
            Ending::Interrupted
        } else if rest.is_empty() {
            Ending::Answered
        } else if stopped {
            Ending::Stopped(rest)
        } else {
            Ending::Fault(rest, child.failure(&exit))
        };
        Ok((records, ending))
    }
}

/// Reaps the probes of `exiting` that have exited, then waits for the oldest until at most
/// `keep` are left.
pub(super) fn reap(exiting: &mut Vec<std::process::Child>, keep: usize) {
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
    let batching = jobs.batching.as_ref();
    // Kept until the phase ends: the probes ask these servers for every reading.
    let listings = match jobs.memory_readings {
        MemoryReadings::Shared => Some(listings::Listings::start(&gpus)?),
        MemoryReadings::Own => None,
    };
    let workers = Workers {
        opts,
        settings: &matrix.settings,
        queue: Mutex::new(Queue::new(todo)),
        jobs: jobs.jobs,
        max_per_process: batching.map_or(1, |b| b.max_per_process),
        seed: batching.map(|b| b.seed),
        started: AtomicU32::new(0),
        work_dir: opts.work_dir(v.index),
        npp_dir: v.npp_dir.clone(),
        // Set only where nppbench sets it; an inherited value is already in the environment.
        env: match &jobs.connections {
            Some(ProbeConnections {
                value: Some(n),
                set_by_nppbench: true,
            }) => vec![(MAX_CONNECTIONS_ENV, n.to_string())],
            _ => Vec::new(),
        }
        .into_iter()
        .chain(listings.as_ref().map(listings::Listings::env))
        .collect(),
        stop,
    };
    supervise::supervise(
        jobs.jobs as usize,
        stop,
        |w, tx| workers.work(gpus[w % gpus.len()].clone(), tx),
        |record| v.finish_memory(progress, *record),
    )
}
