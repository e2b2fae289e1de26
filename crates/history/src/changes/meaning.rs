//! What a throughput point's kernel time means, which changed between nppbench builds: CUPTI's
//! kernel records or CUDA events (a run without CUPTI), and of CUPTI's, the kernels of a call
//! summed (runs made before the layout of a call's kernels was recorded) or the time they kept
//! the GPU busy. A change point is never drawn across a point where the meaning changed: each
//! stretch of one meaning is segmented on its own.

use std::ops::Range;

use crate::rows::Timing;
use crate::series::Point;

/// What a point's kernel time per call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FigureMeaning {
    /// CUDA events around batches of calls (no kernel records).
    Events,
    /// CUPTI's records, the durations of a call's kernels summed: kernels that run at once count
    /// the time they share twice.
    KernelsSummed,
    /// CUPTI's records, the time a call's kernels kept the GPU busy.
    BusyTime,
}

impl FigureMeaning {
    /// The meaning of `point`'s figure, from its first GPU with a throughput figure; `None`
    /// where that result was added before the history kept per-pass figures (not known).
    pub fn of(point: &Point) -> Option<FigureMeaning> {
        let t = point.gpus.iter().find_map(|g| g.throughput.as_ref())?;
        match t.timing {
            Timing::Events => Some(FigureMeaning::Events),
            Timing::Cupti => t.per_pass.as_ref().map(|p| {
                if p.busy_time_known {
                    FigureMeaning::BusyTime
                } else {
                    FigureMeaning::KernelsSummed
                }
            }),
        }
    }

    /// In words: `kernels summed`.
    pub fn words(self) -> &'static str {
        match self {
            FigureMeaning::Events => "CUDA events",
            FigureMeaning::KernelsSummed => "kernels summed",
            FigureMeaning::BusyTime => "GPU busy time",
        }
    }
}

/// The stretches of `at` (indices of a series' points with a figure, in order) whose figures
/// mean the same, as ranges into `at`, and the points at which the meaning changed. A point of
/// unknown meaning belongs to the stretch it is in.
pub(super) fn same_meaning(points: &[Point], at: &[usize]) -> (Vec<Range<usize>>, Vec<usize>) {
    let mut ranges = Vec::new();
    let mut changed = Vec::new();
    let (mut start, mut current) = (0, None);
    for (k, &i) in at.iter().enumerate() {
        let Some(m) = FigureMeaning::of(&points[i]) else {
            continue;
        };
        if current.is_some_and(|c| c != m) {
            ranges.push(start..k);
            changed.push(i);
            start = k;
        }
        current = Some(m);
    }
    ranges.push(start..at.len());
    (ranges, changed)
}
