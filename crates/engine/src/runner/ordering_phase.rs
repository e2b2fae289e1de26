//! The ordering phase: the ordering rounds of every memory scenario that measured, in probe
//! processes of their own (`probe/rounds.rs` says why), each scenario on the GPU that measured
//! its memory. A fault costs one scenario's rounds, recorded as not measured with the fault; the
//! rest of its process's scenarios go to a fresh process.
//!
//! On one GPU the rounds start with the memory phase, beside it ([`memory_with_rounds_beside`]),
//! once per configuration (function, geometry, stream kind, context filling): rounds run from the
//! probe's own thread, so scenarios that differ only in their threading model share them
//! (`shared_from` names whose). What is still missing after the memory phase (a configuration
//! whose first scenario failed there, several GPUs, an interrupted start) is measured after it,
//! one scenario each ([`run`]).

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use nppbench_model::{Jobs, Matrix, MemoryScenario, OrderingRounds, Outcome};

use super::child::{Child, Exit};
use super::journal::JournalEntry;
use super::{Progress, RunError, RunOptions, Version, supervise};
use crate::protocol::{OrderingLine, Request};

/// The most scenarios one ordering probe takes: enough that its CUDA context's start is a small
/// part of its time, few enough that the reference images it keeps stay small and a fault sends
/// little work to a fresh process.
pub(super) const MAX_PER_PROCESS: u32 = 256;

/// The fewest scenarios one ordering probe takes where there are as many: a probe's start (CUDA
/// context, NPP, the delay kernel compiled) takes about a second, a scenario's rounds 10 to 200 ms
/// (`wall_ms`, quick preset, H100): a probe of one or two scenarios is mostly its start.
pub(super) const MIN_PER_PROCESS: u32 = 8;

/// A scenario waiting for its rounds: its index (among the version's memory records, or among
/// [`Early`]'s configurations), and the scenario.
type Queued = (usize, MemoryScenario);

/// What one worker hands back: a scenario's rounds (by index), or the run's end.
type Done = supervise::Done<(usize, OrderingRounds)>;

/// What every worker shares.
struct Workers<'a> {
    probe_exe: &'a std::path::Path,
    pids_file: PathBuf,
    timeout: Duration,
    /// Each GPU's queue, by UUID.
    queues: BTreeMap<String, Mutex<VecDeque<Queued>>>,
    jobs: u32,
    max_per_process: u32,
    started: AtomicU32,
    work_dir: PathBuf,
    npp_dir: Option<PathBuf>,
    stop: &'a AtomicBool,
}

impl<'a> Workers<'a> {
    /// Workers of a run's ordering probes on `queues` (by GPU UUID), `jobs` at once, in
    /// `work_dir` with NPP from `npp_dir`.
    fn new(
        opts: &'a RunOptions,
        matrix: &Matrix,
        queues: BTreeMap<String, VecDeque<Queued>>,
        jobs: u32,
        work_dir: PathBuf,
        npp_dir: Option<PathBuf>,
        stop: &'a AtomicBool,
    ) -> Workers<'a> {
        Workers {
            probe_exe: &opts.probe_exe,
            pids_file: opts.probe_pids_path(),
            timeout: Duration::from_secs(matrix.settings.scenario_timeout_s),
            queues: queues.into_iter().map(|(k, q)| (k, Mutex::new(q))).collect(),
            jobs,
            max_per_process: MAX_PER_PROCESS,
            started: AtomicU32::new(0),
            work_dir,
            npp_dir,
            stop,
        }
    }

    /// The next process's scenarios on GPU `uuid`: an equal share of what is left among the
    /// workers, in matrix order.
    fn take(&self, uuid: &str) -> Vec<Queued> {
        let Some(queue) = self.queues.get(uuid) else {
            return Vec::new();
        };
        let mut queue = queue.lock().unwrap_or_else(|p| p.into_inner());
        let n = super::memory_phase::batch_size(queue.len(), self.jobs, self.max_per_process)
            .max(MIN_PER_PROCESS.min(self.max_per_process) as usize)
            .min(queue.len());
        queue.drain(..n).collect()
    }

    fn give_back(&self, uuid: &str, rest: Vec<Queued>) {
        if let Some(queue) = self.queues.get(uuid) {
            let mut queue = queue.lock().unwrap_or_else(|p| p.into_inner());
            for q in rest.into_iter().rev() {
                queue.push_front(q);
            }
        }
    }

    /// One worker on GPU `device` (`uuid`): runs processes until its GPU's queue is empty.
    fn work(&self, (device, uuid): (u32, String), tx: &mpsc::Sender<Done>) {
        let mut exiting = Vec::new();
        self.work_on(device, &uuid, tx, &mut exiting);
        if self.stop.load(Ordering::SeqCst) {
            for c in &mut exiting {
                let _ = c.kill();
            }
        }
        super::memory_phase::reap(&mut exiting, 0);
    }

    fn work_on(&self, device: u32, uuid: &str, tx: &mpsc::Sender<Done>, exiting: &mut Vec<std::process::Child>) {
        loop {
            super::memory_phase::reap(exiting, 2);
            let batch = self.take(uuid);
            if batch.is_empty() {
                return;
            }
            if self.stop.load(Ordering::SeqCst) {
                let _ = tx.send(Done::Interrupted);
                return;
            }
            match self.run_process(&batch, device, exiting) {
                Ok((answered, ending)) => {
                    for (i, rounds) in answered {
                        if tx.send(Done::Item((i, rounds))).is_err() {
                            return;
                        }
                    }
                    match ending {
                        Ending::Answered => {}
                        Ending::Interrupted => {
                            let _ = tx.send(Done::Interrupted);
                            return;
                        }
                        Ending::Fault(mut rest, why) => {
                            let (at_fault, _) = rest.remove(0);
                            let rounds = OrderingRounds::not_measured(
                                crate::probe::ORDERING_DELAY_CYCLES,
                                format!(
                                    "the ordering probe stopped at this scenario: {} ({})",
                                    why.message,
                                    why.kind.as_str()
                                ),
                            );
                            self.give_back(uuid, rest);
                            if tx.send(Done::Item((at_fault, rounds))).is_err() {
                                return;
                            }
                        }
                    }
                }
                Err(e) => {
                    let _ = tx.send(Done::Error(e));
                    return;
                }
            }
        }
    }

    /// Runs `batch` in one fresh ordering probe on GPU `device`; returns the rounds it answered
    /// (by record index) and how it ended.
    fn run_process(
        &self,
        batch: &[Queued],
        device: u32,
        exiting: &mut Vec<std::process::Child>,
    ) -> Result<(Vec<(usize, OrderingRounds)>, Ending), RunError> {
        let process = self.started.fetch_add(1, Ordering::SeqCst);
        let child = Child {
            work_dir: self.work_dir.clone(),
            probe_exe: self.probe_exe,
            stop: self.stop,
            name: format!("ordering-{process}"),
            pids_file: self.pids_file.clone(),
            // The connections the user's programs have: one would hide the race.
            env: &[],
        };
        let request = Request::Ordering {
            npp_dir: self.npp_dir.clone(),
            device,
            scenarios: batch.iter().map(|(_, s)| s.clone()).collect(),
        };
        let (exit, still_exiting) = child.run_until_lines(&request, self.timeout, batch.len())?;
        // Its answers are in; it tears its context down on its own time.
        exiting.extend(still_exiting);
        let mut answered = Vec::new();
        for line in child.answer().unwrap_or_default().lines() {
            let Ok(OrderingLine {
                id,
                mut rounds,
                wall_ms,
            }) = serde_json::from_str::<OrderingLine>(line)
            else {
                break;
            };
            rounds.wall_ms = Some(wall_ms);
            match batch.get(answered.len()) {
                Some((i, s)) if s.id == id => answered.push((*i, rounds)),
                _ => break,
            }
        }
        let rest = batch[answered.len()..].to_vec();
        let ending = if matches!(exit, Exit::Interrupted) || self.stop.load(Ordering::SeqCst) {
            Ending::Interrupted
        } else if rest.is_empty() {
            Ending::Answered
        } else {
            Ending::Fault(rest, child.failure(&exit))
        };
        Ok((answered, ending))
    }
}

/// How an ordering probe ended.
enum Ending {
    Answered,
    /// A fault: the first of these is the scenario at fault.
    Fault(Vec<Queued>, crate::error::ProbeError),
    Interrupted,
}

/// The memory records of `v` that measured and have no rounds yet: their indices and scenarios,
/// by GPU.
fn waiting(v: &Version) -> BTreeMap<String, VecDeque<Queued>> {
    let mut queues: BTreeMap<String, VecDeque<Queued>> = BTreeMap::new();
    for (i, r) in v.memory.iter().enumerate() {
        let measured = matches!(r.outcome, Outcome::Ok | Outcome::StoppedAtBudget { .. });
        if let (true, Some(result), Some(gpu)) = (measured, &r.result, &r.gpu)
            && result.ordering.is_none()
        {
            queues
                .entry(gpu.clone())
                .or_default()
                .push_back((i, r.scenario.clone()));
        }
    }
    queues
}

/// How many of `v`'s memory scenarios still wait for their rounds.
pub(super) fn remaining(v: &Version) -> usize {
    waiting(v).values().map(VecDeque::len).sum()
}

/// Makes the rounds of every measured memory scenario of `v` that has none, `jobs` processes at
/// once. Returns whether the run was interrupted.
pub(super) fn run(
    opts: &RunOptions,
    matrix: &Matrix,
    v: &mut Version,
    jobs: &Jobs,
    progress: &dyn Progress,
    stop: &AtomicBool,
) -> Result<bool, RunError> {
    let queues = waiting(v);
    if queues.is_empty() {
        return Ok(false);
    }
    let gpus: Vec<(u32, String)> = v.gpus().into_iter().filter(|(_, u)| queues.contains_key(u)).collect();
    if gpus.is_empty() {
        // Records of GPUs this run's environment does not list: no worker can take them.
        return Ok(false);
    }
    let workers = Workers::new(
        opts,
        matrix,
        queues,
        jobs.jobs,
        opts.work_dir(v.index),
        v.npp_dir.clone(),
        stop,
    );
    // As many as the memory phase ran: on an H200, the atlas's rounds took 30 s with eight at
    // once, 37 s with four and 56 s with two (development runs; docs/performance.md).
    supervise::supervise(
        jobs.jobs.max(1) as usize,
        stop,
        |w, tx| workers.work(gpus[w % gpus.len()].clone(), tx),
        |(i, rounds)| v.finish_rounds(progress, i, rounds),
    )
}

/// The journal line of a scenario's rounds.
pub(super) fn journal_entry(id: &str, rounds: &OrderingRounds) -> JournalEntry {
    JournalEntry::Ordering {
        id: id.to_owned(),
        rounds: Box::new(rounds.clone()),
    }
}

mod beside;

#[cfg(test)]
use beside::by_configuration;
pub(super) use beside::memory_with_rounds_beside;

#[cfg(test)]
mod tests;
