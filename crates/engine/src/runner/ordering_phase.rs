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

use nppbench_model::{Jobs, Matrix, MemoryScenario, OrderingRounds, Outcome, RaceRounds};

use super::child::{Child, Exit};
use super::journal::JournalEntry;
use super::{Progress, RunError, RunOptions, Version, supervise};
use crate::protocol::{OrderingLine, Request};

/// The most scenarios one ordering probe takes. A probe keeps its memory bounded however many it
/// takes (`probe/rounds.rs`), and each worker starts one probe for its whole share, where its
/// share is no larger than this: the parent reads a probe's whole answer again at each new line,
/// so a probe's scenarios cost the parent their square.
pub(super) const MAX_PER_PROCESS: u32 = 4096;

/// The fewest scenarios one ordering probe takes where there are as many: a probe's start (CUDA
/// context, NPP, the delay kernel compiled) takes about a second, a scenario's rounds 10 to 200 ms
/// (`wall_ms`, quick preset, H100): a probe of one or two scenarios is mostly its start.
pub(super) const MIN_PER_PROCESS: u32 = 8;

/// How long the stretches of the queue that shares are dealt in ([`deal`]) are at least, where a
/// share is long enough: a worker's share is its part of each stretch, so the costly geometries
/// are not all one worker's (the rounds beside the memory phase last as long as the slowest
/// worker's), while scenarios of one function and geometry, next to each other in matrix order,
/// stay in one probe, which prepares their patterns and buffers once.
const DEAL_BLOCK: usize = 16;

/// A scenario waiting for its rounds: its index (among the version's memory records, or among
/// [`Early`]'s configurations), and the scenario.
type Queued = (usize, MemoryScenario);

/// What one worker hands back: a scenario's rounds (by index), or the run's end.
type Done = supervise::Done<(usize, OrderingRounds)>;

/// A GPU's scenarios waiting for their rounds, and how many of its workers have yet to take their
/// share.
struct Queue {
    waiting: VecDeque<Queued>,
    shares_left: u32,
}

/// What every worker shares.
struct Workers<'a> {
    probe_exe: &'a std::path::Path,
    pids_file: PathBuf,
    timeout: Duration,
    /// Each GPU's queue, by UUID.
    queues: BTreeMap<String, Mutex<Queue>>,
    /// The GPU of each worker (by ordinal and UUID): worker `w` works on `gpus[w % gpus.len()]`.
    gpus: Vec<(u32, String)>,
    /// How many workers run at once.
    jobs: usize,
    max_per_process: u32,
    started: AtomicU32,
    work_dir: PathBuf,
    npp_dir: Option<PathBuf>,
    /// Where the probes make rounds (`--race-rounds`).
    race_rounds: RaceRounds,
    stop: &'a AtomicBool,
}

impl<'a> Workers<'a> {
    /// `jobs` workers of a run's ordering probes on `queues` (each GPU, by ordinal and UUID, with
    /// its scenarios), the workers spread over the GPUs in turn, in `work_dir` with NPP from
    /// `npp_dir`.
    fn new(
        opts: &'a RunOptions,
        matrix: &Matrix,
        queues: Vec<((u32, String), VecDeque<Queued>)>,
        jobs: u32,
        work_dir: PathBuf,
        npp_dir: Option<PathBuf>,
        stop: &'a AtomicBool,
    ) -> Workers<'a> {
        Workers {
            probe_exe: &opts.probe_exe,
            pids_file: opts.probe_pids_path(),
            timeout: Duration::from_secs(matrix.settings.scenario_timeout_s),
            gpus: queues.iter().map(|(gpu, _)| gpu.clone()).collect(),
            queues: shared_out(queues, jobs.max(1)),
            jobs: jobs.max(1) as usize,
            max_per_process: MAX_PER_PROCESS,
            started: AtomicU32::new(0),
            work_dir,
            npp_dir,
            race_rounds: opts.race_rounds,
            stop,
        }
    }

    /// The next process's scenarios on GPU `uuid`. A worker's first take is its share: an equal
    /// part of what is left among the workers that have not taken theirs, dealt a stretch at a
    /// time ([`deal`]), so that each worker starts one probe. What comes back after a fault, the
    /// rest of the probe at fault, goes whole to the next take (the same worker's): a fresh probe.
    /// A share is no larger than [`MAX_PER_PROCESS`], nor smaller than [`MIN_PER_PROCESS`] where
    /// there are as many.
    fn take(&self, uuid: &str) -> Vec<Queued> {
        let Some(queue) = self.queues.get(uuid) else {
            return Vec::new();
        };
        let mut queue = queue.lock().unwrap_or_else(|p| p.into_inner());
        let len = queue.waiting.len();
        let workers = queue.shares_left.max(1);
        queue.shares_left = queue.shares_left.saturating_sub(1);
        let share = super::memory_phase::batch_size(len, workers, self.max_per_process)
            .max(MIN_PER_PROCESS.min(self.max_per_process) as usize)
            .min(len);
        let parts = len.div_ceil(share.max(1)).max(1);
        let (taken, left) = deal(std::mem::take(&mut queue.waiting), parts, self.max_per_process as usize);
        queue.waiting = left;
        taken
    }

    /// Puts `rest` (the scenarios after one at fault) back at the front of GPU `uuid`'s queue.
    fn give_back(&self, uuid: &str, rest: Vec<Queued>) {
        if let Some(queue) = self.queues.get(uuid) {
            let mut queue = queue.lock().unwrap_or_else(|p| p.into_inner());
            for q in rest.into_iter().rev() {
                queue.waiting.push_front(q);
            }
        }
    }

    /// Worker `w`: runs processes on its GPU until the GPU's queue is empty.
    fn work(&self, w: usize, tx: &mpsc::Sender<Done>) {
        let Some((device, uuid)) = self.gpus.get(w % self.gpus.len().max(1)) else {
            return;
        };
        let mut exiting = Vec::new();
        self.work_on(*device, uuid, tx, &mut exiting);
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
            race_rounds: self.race_rounds,
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

/// The queues of `jobs` workers spread over the GPUs of `queues` in turn (worker `w` on the
/// `w % queues.len()`-th): each GPU's queue with the number of workers that will take a share of it.
fn shared_out(queues: Vec<((u32, String), VecDeque<Queued>)>, jobs: u32) -> BTreeMap<String, Mutex<Queue>> {
    let gpus = queues.len().max(1) as u32;
    queues
        .into_iter()
        .zip(0..)
        .map(|(((_, uuid), waiting), k)| {
            let shares_left = (0..jobs).filter(|w| w % gpus == k).count() as u32;
            (uuid, Mutex::new(Queue { waiting, shares_left }))
        })
        .collect()
}

/// One part of `waiting` among `parts`, and the rest, both in queue order. The queue is cut into
/// stretches of at least [`DEAL_BLOCK`] scenarios (fewer where a part would have fewer than eight
/// stretches), each ending where the function or geometry changes, or at twice that length inside
/// one long run; the part is every `parts`-th stretch from the first, at most `max` scenarios.
fn deal(waiting: VecDeque<Queued>, parts: usize, max: usize) -> (Vec<Queued>, VecDeque<Queued>) {
    let parts = parts.max(1);
    let block = (waiting.len() / parts / 8).clamp(1, DEAL_BLOCK);
    let (mut taken, mut left) = (Vec::new(), VecDeque::new());
    let (mut stretch, mut in_block) = (0, 0);
    let mut previous = None;
    for (i, s) in waiting {
        let key = (s.primitive, s.geometry);
        if in_block >= 2 * block || (in_block >= block && previous != Some(key)) {
            stretch += 1;
            in_block = 0;
        }
        previous = Some(key);
        in_block += 1;
        if stretch % parts == 0 && taken.len() < max.max(1) {
            taken.push((i, s));
        } else {
            left.push_back((i, s));
        }
    }
    (taken, left)
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
    let mut by_gpu = waiting(v);
    if by_gpu.is_empty() {
        return Ok(false);
    }
    let queues: Vec<((u32, String), VecDeque<Queued>)> = v
        .gpus()
        .into_iter()
        .filter_map(|gpu| by_gpu.remove(&gpu.1).map(|q| (gpu, q)))
        .collect();
    if queues.is_empty() {
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
        workers.jobs,
        stop,
        |w, tx| workers.work(w, tx),
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
