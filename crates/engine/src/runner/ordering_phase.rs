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

impl Workers<'_> {
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
    let workers = Workers {
        probe_exe: &opts.probe_exe,
        pids_file: opts.probe_pids_path(),
        timeout: Duration::from_secs(matrix.settings.scenario_timeout_s),
        queues: queues.into_iter().map(|(k, q)| (k, Mutex::new(q))).collect(),
        jobs: jobs.jobs,
        max_per_process: MAX_PER_PROCESS,
        started: AtomicU32::new(0),
        work_dir: opts.work_dir(v.index),
        npp_dir: v.npp_dir.clone(),
        stop,
    };
    // As many as the memory phase ran: on an H200, the atlas's rounds took 30 s with eight at
    // once, 37 s with four and 56 s with two (development runs; docs/performance.md).
    supervise::supervise(
        jobs.jobs.max(1) as usize,
        stop,
        |w, tx| workers.work(gpus[w % gpus.len()].clone(), tx),
        |(i, rounds)| v.finish_rounds(progress, i, rounds),
    )
}

/// The configuration an ordering round measures: what differs between two scenarios whose rounds
/// differ (the function, geometry, the stream kind it runs on, the context filling).
fn configuration(s: &MemoryScenario) -> String {
    format!(
        "{:?}/{:?}/{}/{}",
        s.primitive,
        s.geometry,
        crate::probe::shared_stream_kind(s).as_str(),
        s.context.as_str()
    )
}

/// One scenario of each configuration among `scenarios` (the first), with the ids of every
/// scenario that shares it (its own first), in the order they come.
fn by_configuration<'a>(scenarios: impl Iterator<Item = &'a MemoryScenario>) -> Vec<(MemoryScenario, Vec<String>)> {
    let mut firsts: Vec<(MemoryScenario, Vec<String>)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for s in scenarios {
        match index.get(&configuration(s)) {
            Some(&k) => firsts[k].1.push(s.id.clone()),
            None => {
                index.insert(configuration(s), firsts.len());
                firsts.push((s.clone(), vec![s.id.clone()]));
            }
        }
    }
    firsts
}

/// The rounds of a version's memory scenarios, started beside its memory phase on its one GPU:
/// one scenario of each configuration that has no rounds yet, and every scenario that shares it.
pub(super) struct Early {
    gpu: (u32, String),
    npp_dir: Option<PathBuf>,
    work_dir: PathBuf,
    /// One scenario per configuration, and the ids of every scenario of the matrix that shares
    /// its configuration (its own first).
    firsts: Vec<(MemoryScenario, Vec<String>)>,
}

impl Early {
    /// What `v`'s memory scenarios in `matrix` will need, where `v` runs on one GPU (else `None`:
    /// which GPU measures a scenario is known only once it has).
    pub(super) fn plan(opts: &RunOptions, matrix: &Matrix, v: &Version) -> Option<Early> {
        let gpus = v.gpus();
        let [gpu] = gpus.as_slice() else {
            return None;
        };
        let has_rounds: std::collections::HashSet<&str> = v
            .memory
            .iter()
            .filter(|r| r.result.as_ref().is_some_and(|x| x.ordering.is_some()))
            .map(|r| r.scenario.id.as_str())
            .collect();
        let firsts = by_configuration(matrix.memory.iter().filter(|s| !has_rounds.contains(s.id.as_str())));
        (!firsts.is_empty()).then(|| Early {
            gpu: gpu.clone(),
            npp_dir: v.npp_dir.clone(),
            work_dir: opts.work_dir(v.index),
            firsts,
        })
    }

    /// Measures the rounds of each configuration, `jobs` processes at once; returns them (by
    /// index among the configurations) and whether the run was interrupted. Touches nothing of
    /// the version: [`Early::keep`] files the rounds once the memory phase is done.
    pub(super) fn measure(
        &self,
        opts: &RunOptions,
        matrix: &Matrix,
        jobs: u32,
        stop: &AtomicBool,
    ) -> Result<(Vec<(usize, OrderingRounds)>, bool), RunError> {
        let queue: VecDeque<Queued> = self.firsts.iter().map(|(s, _)| s.clone()).enumerate().collect();
        let workers = Workers {
            probe_exe: &opts.probe_exe,
            pids_file: opts.probe_pids_path(),
            timeout: Duration::from_secs(matrix.settings.scenario_timeout_s),
            queues: BTreeMap::from([(self.gpu.1.clone(), Mutex::new(queue))]),
            jobs,
            max_per_process: MAX_PER_PROCESS,
            started: AtomicU32::new(0),
            work_dir: self.work_dir.clone(),
            npp_dir: self.npp_dir.clone(),
            stop,
        };
        let mut measured = Vec::new();
        let interrupted = supervise::supervise(
            jobs.max(1) as usize,
            stop,
            |_, tx| workers.work(self.gpu.clone(), tx),
            |item| {
                measured.push(item);
                Ok(())
            },
        )?;
        Ok((measured, interrupted))
    }

    /// Files `measured` on the version's memory records that measured and have no rounds: each
    /// configuration's rounds on every scenario that shares it, naming whose they are on the
    /// others. A scenario that did not measure its memory keeps none.
    pub(super) fn keep(
        &self,
        v: &mut Version,
        measured: Vec<(usize, OrderingRounds)>,
        progress: &dyn Progress,
    ) -> Result<(), RunError> {
        for (k, rounds) in measured {
            let Some((first, ids)) = self.firsts.get(k) else {
                continue;
            };
            for id in ids {
                let Some(i) = v.memory.iter().position(|r| {
                    &r.scenario.id == id
                        && matches!(r.outcome, Outcome::Ok | Outcome::StoppedAtBudget { .. })
                        && r.result.as_ref().is_some_and(|x| x.ordering.is_none())
                }) else {
                    continue;
                };
                let mut rounds = rounds.clone();
                if *id != first.id {
                    rounds.shared_from = Some(first.id.clone());
                }
                progress.extend(1);
                v.finish_rounds(progress, i, rounds)?;
            }
        }
        Ok(())
    }
}

/// The memory phase of each version, with the ordering rounds of each configuration beside it
/// where the version runs on one GPU (half as many processes at once: nothing in either is timed,
/// and a memory probe reads its own process's memory), filed on the records once the memory phase
/// is done. Returns whether the run was interrupted, and how long the rounds took beside it.
pub(super) fn memory_with_rounds_beside(
    opts: &RunOptions,
    matrix: &Matrix,
    versions: &mut [Version],
    jobs: &Jobs,
    progress: &dyn Progress,
    stop: &AtomicBool,
) -> Result<(bool, f64), RunError> {
    let mut took = 0.0;
    for v in versions {
        let early = Early::plan(opts, matrix, v);
        let (memory, rounds) = std::thread::scope(|scope| {
            let rounds = early.as_ref().map(|e| {
                scope.spawn(|| {
                    let t = std::time::Instant::now();
                    (e.measure(opts, matrix, (jobs.jobs / 2).max(1), stop), t.elapsed())
                })
            });
            let memory = super::memory_phase::run(opts, matrix, v, jobs, progress, stop);
            (memory, rounds.map(|h| h.join()))
        });
        let mut interrupted = memory?;
        if let (Some(early), Some(joined)) = (&early, rounds) {
            let (measured, elapsed) =
                joined.map_err(|_| RunError::Environment("the ordering rounds' supervisor panicked".into()))?;
            let (measured, rounds_interrupted) = measured?;
            took += elapsed.as_secs_f64();
            early.keep(v, measured, progress)?;
            interrupted |= rounds_interrupted;
        }
        if interrupted {
            return Ok((true, took));
        }
    }
    Ok((false, took))
}

/// The journal line of a scenario's rounds.
pub(super) fn journal_entry(id: &str, rounds: &OrderingRounds) -> JournalEntry {
    JournalEntry::Ordering {
        id: id.to_owned(),
        rounds: Box::new(rounds.clone()),
    }
}

#[cfg(test)]
mod tests;
