//! Verdicts between two runs of a series (its latest run against the one before, a change
//! point's run against the one before), by the one comparison rule every page uses:
//! `nppbench_analysis::compare::judge_throughput` on each result's per-pass figures, so that the
//! history says slower or faster exactly where `nppbench compare` does on the same two runs, and
//! "not judged" where it does (fewer than `MIN_PASSES` passes a side).

use nppbench_analysis::compare::{Change, Thresholds, ThroughputJudgement, judge_throughput};

use crate::rows::RunRow;
use crate::series::{History, Series};

/// A throughput series' point judged against an earlier point of it, on one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The later point, and its run (index into `History::runs`).
    pub point: usize,
    pub run: usize,
    /// The earlier point, and its run.
    pub before_point: usize,
    pub before_run: usize,
    /// The later run's GPU (GPUs pair by their position in their run, as compare pairs them).
    pub gpu_uuid: String,
    /// compare's judgement; `None` where either result was added before the history kept
    /// per-pass figures.
    pub judged: Option<ThroughputJudgement>,
}

impl Step {
    /// compare's verdict; not judged where the history has no per-pass figures of a side.
    pub fn verdict(&self) -> Change {
        self.judged.as_ref().map_or(Change::NotEnoughPasses, |j| j.verdict)
    }

    /// Whether the regression gate counts this step (as compare's `fails_regression`).
    pub fn fails_regression(&self) -> bool {
        self.judged.as_ref().is_some_and(|j| j.fails_regression())
    }
}

/// The latest point of `s` and the point before it with a throughput figure: what "new since the
/// run before" judges. `None` where the latest point has no figure or none came before.
pub fn latest_pair(s: &Series) -> Option<(usize, usize)> {
    let last = s.points.len().checked_sub(1)?;
    let has_figure = |i: usize| s.points[i].gpus.iter().any(|g| g.throughput.is_some());
    if !has_figure(last) {
        return None;
    }
    let before = (0..last).rev().find(|&i| has_figure(i))?;
    Some((before, last))
}

/// Point `point` of `s` against point `before`, one step per GPU of the earlier point that has a
/// counterpart (the GPU at the same position in the later run), judged by compare's rule.
pub fn judge_points(history: &History, s: &Series, before: usize, point: usize, t: Thresholds) -> Vec<Step> {
    let (b, c) = (&s.points[before], &s.points[point]);
    let (b_run, c_run) = (&history.runs[b.run].run, &history.runs[c.run].run);
    let mut out = Vec::new();
    for bg in &b.gpus {
        let Some(bt) = &bg.throughput else { continue };
        let index = gpu_index(b_run, &bg.gpu_uuid);
        let Some(cg) = c.gpus.iter().find(|g| gpu_index(c_run, &g.gpu_uuid) == index) else {
            continue;
        };
        let Some(ct) = &cg.throughput else { continue };
        let judged = match (&bt.per_pass, &ct.per_pass) {
            (Some(x), Some(y)) => match judge_throughput(x, y, t) {
                Some(j) => Some(j),
                // No figure both sides have: compare leaves the pair out too.
                None => continue,
            },
            _ => None,
        };
        out.push(Step {
            point,
            run: c.run,
            before_point: before,
            before_run: b.run,
            gpu_uuid: cg.gpu_uuid.clone(),
            judged,
        });
    }
    out
}

/// A GPU's position in its run (the first for a UUID the run does not list), as compare pairs
/// GPUs.
fn gpu_index(run: &RunRow, uuid: &str) -> usize {
    run.gpu_uuids.iter().position(|u| u == uuid).unwrap_or(0)
}
