//! The ordering rounds beside the memory phase, on one GPU: one scenario of each configuration
//! measured while the memory probes run, the rounds filed on every scenario that shares it once
//! the memory phase is done (the module above says why that is sound).

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use nppbench_model::{Jobs, Matrix, MemoryScenario, OrderingRounds, Outcome};

use super::{Queued, Workers, supervise};
use crate::runner::{Progress, RunError, RunOptions, Version};

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
pub(super) fn by_configuration<'a>(
    scenarios: impl Iterator<Item = &'a MemoryScenario>,
) -> Vec<(MemoryScenario, Vec<String>)> {
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
struct Early {
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
        let workers = Workers::new(
            opts,
            matrix,
            vec![(self.gpu.clone(), queue)],
            jobs,
            self.work_dir.clone(),
            self.npp_dir.clone(),
            stop,
        );
        let mut measured = Vec::new();
        let interrupted = supervise::supervise(
            workers.jobs,
            stop,
            |w, tx| workers.work(w, tx),
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
/// where the version runs on one GPU (`jobs.ordering_jobs` processes at once, by default half as
/// many as the memory probes: nothing in either is timed,
/// and a memory probe reads its own process's memory), filed on the records once the memory phase
/// is done. Returns whether the run was interrupted, and how long the rounds took beside it.
pub(in crate::runner) fn memory_with_rounds_beside(
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
                    (e.measure(opts, matrix, jobs.ordering_beside(), stop), t.elapsed())
                })
            });
            let memory = crate::runner::memory_phase::run(opts, matrix, v, jobs, progress, stop);
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
