//! What the layout of a call's kernels says about a run: where NPP ran a call's kernels at once
//! on two streams (its own beside the caller's), the note that explains why the summed kernel
//! time moves between processes and which figure the page shows instead.

use nppbench_analysis::RunAnalysis;

use super::format::fmt;

/// One note per scenario whose call's kernels ran at once on two streams in some of its calls.
pub(super) fn layout_notes(a: &RunAnalysis<'_>) -> Vec<String> {
    a.throughput
        .iter()
        .filter_map(|t| {
            let l = t.layout.as_ref()?;
            if l.streams < 2 || l.overlapped_share < 0.05 {
                return None;
            }
            let s = &t.record.scenario;
            Some(format!(
                "{} {} on the {} stream: NPP launches {} kernels a call, the last columns on a stream of its own beside the caller's. They ran at once in {}% of calls (most calls in {} of {} passes), and both run slower while they share the GPU, so the kernels' durations summed ({} µs here) move between processes. The kernel time per call shown is the call's GPU busy time ({} µs): the time at least one of its kernels ran (docs/calibration.md).",
                s.primitive,
                s.geometry.label(),
                s.stream,
                t.kernels.len(),
                fmt(100.0 * l.overlapped_share, 0),
                l.mostly_overlapped_passes,
                l.passes,
                l.summed_us.map_or_else(|| "—".into(), |us| fmt(us, 2)),
                t.kernel_per_call_us.map_or_else(|| "—".into(), |us| fmt(us, 2)),
            ))
        })
        .collect()
}
