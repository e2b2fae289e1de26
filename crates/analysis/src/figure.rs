//! Every figure a page, CSV, history row or gate reads, under one typed name with one derivation
//! from a pass's record: nvbench's tags, criterion's formatter. A throughput figure of a scenario
//! is the median over its passes of the per-pass figure derived here; nothing else derives it.

use nppbench_model::ThroughputResult;
use nppbench_stats::median;

use crate::thresholds::{AT_ONCE_MIN_SHARE, IN_TURN_MIN_SHARE};

/// A figure measured once per throughput pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PassFigure {
    /// Time per call from CUDA events around batches of calls (criterion's median), ns.
    EventTimePerCall,
    /// Kernel time per call, warm: the time the call's kernels kept the GPU busy (CUPTI: the union
    /// of their intervals, median over calls), ns. For kernels that run one after another, as
    /// one kernel always does, that is their durations summed. Where a call's kernels run at
    /// once on two streams (NPP's own beside the caller's: the 1918×1080 convert), the sum would
    /// count the time they share twice, and it swings with how much they overlap in a process.
    /// Runs made before the layout of a call's kernels was recorded stand in with
    /// [`PassFigure::KernelTimeSummedPerCallWarm`]; compare falls back to that on both sides
    /// where one side lacks the layout.
    KernelTimePerCallWarm,
    /// The kernels of one call, their durations summed (median over calls), warm, ns. Runs made
    /// before per-call grouping recorded the kernel time over all calls divided by the calls;
    /// that mean stands in for them.
    KernelTimeSummedPerCallWarm,
    /// [`PassFigure::KernelTimePerCallWarm`] over the calls of one layout only: those whose
    /// kernels ran at once, or those whose kernels ran one after another. Whether a call's
    /// kernels overlap is decided by when the host launches them, and the share that do moves
    /// between processes (the 1918×1080 convert on a blocking stream: most calls of one process,
    /// few of the next), so the busy time over all calls falls into modes between processes
    /// while each layout's own is steady. A pass has the figure where at least
    /// [`IN_TURN_MIN_SHARE`] of its calls ran in turn, or [`AT_ONCE_MIN_SHARE`] at once.
    KernelTimePerCallWarmIn(CallLayoutKind),
    /// Kernel time per call, cold (L2 flushed before each call), ns.
    KernelTimePerCallCold,
    /// Host latency of a call (launch plus synchronise), median over calls, µs.
    HostLatencyPerCall,
}

impl PassFigure {
    /// The stable name, as CSVs and compare.json spell it.
    pub fn name(self) -> &'static str {
        match self {
            PassFigure::EventTimePerCall => "event_time_per_call_ns",
            PassFigure::KernelTimePerCallWarm => "kernel_time_per_call_warm_ns",
            PassFigure::KernelTimeSummedPerCallWarm => "kernel_time_summed_per_call_warm_ns",
            PassFigure::KernelTimePerCallWarmIn(CallLayoutKind::AtOnce) => "kernel_time_per_call_warm_at_once_ns",
            PassFigure::KernelTimePerCallWarmIn(CallLayoutKind::InTurn) => "kernel_time_per_call_warm_in_turn_ns",
            PassFigure::KernelTimePerCallCold => "kernel_time_per_call_cold_ns",
            PassFigure::HostLatencyPerCall => "host_latency_per_call_us",
        }
    }

    /// The figure of one pass, where that pass measured it.
    pub fn of(self, r: &ThroughputResult) -> Option<f64> {
        match self {
            PassFigure::EventTimePerCall => Some(r.kernel.median.point_ns),
            PassFigure::KernelTimePerCallWarm => r
                .per_call
                .as_ref()
                .and_then(|c| c.layout.as_ref().map(|l| l.busy_median_ns))
                .or_else(|| PassFigure::KernelTimeSummedPerCallWarm.of(r)),
            PassFigure::KernelTimeSummedPerCallWarm => r
                .per_call
                .as_ref()
                .map(|c| c.median_ns)
                .or_else(|| r.kernel_records.map(|k| k.per_call_ns)),
            PassFigure::KernelTimePerCallWarmIn(kind) => {
                let c = r.per_call.as_ref()?;
                let l = c.layout.as_ref()?;
                let (calls, median, min_share) = match kind {
                    CallLayoutKind::AtOnce => (l.overlapped_calls, l.busy_at_once_median_ns, AT_ONCE_MIN_SHARE),
                    CallLayoutKind::InTurn => (
                        c.calls.saturating_sub(l.overlapped_calls),
                        l.busy_in_turn_median_ns,
                        IN_TURN_MIN_SHARE,
                    ),
                };
                median.filter(|_| f64::from(calls) >= min_share * f64::from(c.calls.max(1)))
            }
            PassFigure::KernelTimePerCallCold => r.cold.as_ref().map(|c| c.median_ns),
            PassFigure::HostLatencyPerCall => r.host_latency.map(|h| h.median_us),
        }
    }

    /// Whether a pass knows the busy time of each layout of its calls apart: one kernel a call
    /// (one layout, trivially), or the layout recorded with each layout's median.
    pub fn layouts_known(r: &ThroughputResult) -> bool {
        r.per_call.as_ref().is_some_and(|c| {
            c.kernels_per_call <= 1
                || c.layout
                    .as_ref()
                    .is_some_and(|l| l.busy_at_once_median_ns.is_some() || l.busy_in_turn_median_ns.is_some())
        })
    }

    /// Whether a pass knows its calls' busy time: one kernel a call, or the layout recorded.
    pub fn busy_time_known(r: &ThroughputResult) -> bool {
        r.per_call
            .as_ref()
            .is_some_and(|c| c.kernels_per_call <= 1 || c.layout.is_some())
    }

    /// The figure of each pass that measured it, in pass order.
    pub fn of_passes<'r>(self, passes: impl IntoIterator<Item = &'r ThroughputResult>) -> Vec<f64> {
        passes.into_iter().filter_map(|r| self.of(r)).collect()
    }
}

/// How the kernels of one call lay on the GPU's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallLayoutKind {
    /// Two of the call's kernels ran at the same time (NPP's own stream beside the caller's).
    AtOnce,
    /// The call's kernels ran one after another (as one kernel always does).
    InTurn,
}

impl CallLayoutKind {
    pub const ALL: [CallLayoutKind; 2] = [CallLayoutKind::AtOnce, CallLayoutKind::InTurn];

    /// In words: `kernels at once`.
    pub fn words(self) -> &'static str {
        match self {
            CallLayoutKind::AtOnce => "kernels at once",
            CallLayoutKind::InTurn => "kernels in turn",
        }
    }
}

/// A scenario's figure over its passes: the median of the passes' figures.
pub fn over_passes(pass_values: &[f64]) -> Option<f64> {
    median(pass_values)
}

/// GB/s (10⁹ bytes read plus written per second) of `bytes_per_call` moved in `ns_per_call`;
/// `None` where either is not positive.
pub fn gbps(bytes_per_call: f64, ns_per_call: f64) -> Option<f64> {
    (ns_per_call > 0.0 && bytes_per_call > 0.0).then(|| bytes_per_call / ns_per_call)
}

/// Each pass's kernel time per call over the calls of one layout, per layout: the passes that
/// had enough such calls ([`crate::thresholds::IN_TURN_MIN_SHARE`],
/// [`crate::thresholds::AT_ONCE_MIN_SHARE`]), in pass order.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ByLayout {
    pub at_once_ns: Vec<f64>,
    pub in_turn_ns: Vec<f64>,
}

impl ByLayout {
    pub fn get(&self, kind: CallLayoutKind) -> &[f64] {
        match kind {
            CallLayoutKind::AtOnce => &self.at_once_ns,
            CallLayoutKind::InTurn => &self.in_turn_ns,
        }
    }

    /// Whether passes of both layouts are here: the scenario's calls ran at once in some passes
    /// and in turn in some.
    pub fn mixed_with(&self, other: &ByLayout) -> bool {
        CallLayoutKind::ALL
            .iter()
            .all(|&k| !self.get(k).is_empty() || !other.get(k).is_empty())
    }
}

/// Each pass's share of its recorded calls whose kernels ran at once, where the pass recorded
/// the layout of calls of several kernels; in pass order.
pub(crate) fn at_once_shares<'r>(results: impl IntoIterator<Item = &'r ThroughputResult>) -> Vec<f64> {
    results
        .into_iter()
        .filter_map(|r| r.per_call.as_ref())
        .filter(|c| c.kernels_per_call > 1)
        .filter_map(|c| {
            let l = c.layout.as_ref()?;
            Some(f64::from(l.overlapped_calls) / f64::from(c.calls.max(1)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gbps_is_bytes_per_nanosecond_and_refuses_zero() {
        assert_eq!(gbps(2e9, 1e9), Some(2.0));
        assert_eq!(gbps(0.0, 5.0), None);
        assert_eq!(gbps(5.0, 0.0), None);
    }

    #[test]
    fn names_are_distinct() {
        let all = [
            PassFigure::EventTimePerCall,
            PassFigure::KernelTimePerCallWarm,
            PassFigure::KernelTimeSummedPerCallWarm,
            PassFigure::KernelTimePerCallWarmIn(CallLayoutKind::AtOnce),
            PassFigure::KernelTimePerCallWarmIn(CallLayoutKind::InTurn),
            PassFigure::KernelTimePerCallCold,
            PassFigure::HostLatencyPerCall,
        ];
        let mut names: Vec<&str> = all.iter().map(|f| f.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
    }
}
