//! The one throughput rule, on what it reads of each side: a scenario's per-pass figures on one
//! GPU and its size. `compare` pairs two runs' scenarios and judges each pair with
//! [`judge_throughput`]; the history keeps the same figures per result and judges two points of a
//! series with the same function, so the two never disagree on the same two runs.

use nppbench_stats::tests_of_passes::compare_passes;

use super::{Change, Metric, PassTest, Thresholds};
use crate::ThroughputAnalysis;
use crate::thresholds::LAUNCH_BOUND_PIXELS;

/// A throughput scenario on one GPU as the comparison rule reads it: each measured pass's
/// figures (as [`ThroughputAnalysis`] derives them) and the image's size.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ThroughputPasses {
    /// Pixels of the image: under [`LAUNCH_BOUND_PIXELS`], host latency is judged too.
    pub pixels: u64,
    /// Each pass's median time per call from CUDA events, ns.
    pub event_ns: Vec<f64>,
    /// Each pass's kernel time per call (warm, the time the call's kernels kept the GPU busy), ns.
    pub kernel_ns: Vec<f64>,
    /// Each pass's kernel durations of a call summed, ns.
    pub kernel_summed_ns: Vec<f64>,
    /// Whether every pass knew its calls' busy time.
    pub busy_time_known: bool,
    /// Each pass's median host latency per call, µs.
    pub latency_us: Vec<f64>,
}

impl ThroughputPasses {
    pub fn of(t: &ThroughputAnalysis<'_>) -> ThroughputPasses {
        ThroughputPasses {
            pixels: t.record.scenario.geometry.pixels(),
            event_ns: t.pass_event_ns.clone(),
            kernel_ns: t.pass_kernel_ns.clone(),
            kernel_summed_ns: t.pass_kernel_summed_ns.clone(),
            busy_time_known: t.busy_time_known,
            latency_us: t.pass_latency_us.clone(),
        }
    }

    /// Passes with a result (every such pass has an event time).
    pub fn passes(&self) -> usize {
        self.event_ns.len()
    }
}

/// One scenario, base against candidate, judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThroughputJudgement {
    /// What the time per call was (see [`Metric`]).
    pub metric: Metric,
    /// The time per call, tested on the per-pass figures.
    pub kernel: PassTest,
    /// Host latency per call, tested on the per-pass figures: judged for launch-bound images.
    pub latency: Option<PassTest>,
    /// Faster or slower when the time per call is, or (launch-bound) the host latency is.
    pub verdict: Change,
    /// Whether this scenario can fail the regression gate (see [`Thresholds::gate_min_pixels`]).
    pub gated: bool,
    /// The passes each side had, of the figure tested.
    pub base_passes: usize,
    pub cand_passes: usize,
}

impl ThroughputJudgement {
    /// Whether the regression gate counts this scenario.
    pub fn fails_regression(&self) -> bool {
        self.gated && self.verdict == Change::Slower
    }
}

/// The comparison rule for one throughput scenario: the kernel time per call where both sides
/// have CUPTI's records (the busy time where both know it, else the kernels summed on both sides:
/// like with like), else CUDA events; tested on the passes by Welch's test beyond the noise band,
/// with host latency beside it for images under [`LAUNCH_BOUND_PIXELS`]. Fewer than
/// [`super::MIN_PASSES`] passes a side: not judged. `None` where the two sides share no figure.
pub fn judge_throughput(
    base: &ThroughputPasses,
    cand: &ThroughputPasses,
    t: Thresholds,
) -> Option<ThroughputJudgement> {
    let (metric, base_ns, cand_ns) = if !base.kernel_ns.is_empty() && !cand.kernel_ns.is_empty() {
        if base.busy_time_known == cand.busy_time_known {
            (Metric::KernelRecords, &base.kernel_ns, &cand.kernel_ns)
        } else {
            (Metric::KernelRecords, &base.kernel_summed_ns, &cand.kernel_summed_ns)
        }
    } else if !base.event_ns.is_empty() && !cand.event_ns.is_empty() {
        (Metric::Events, &base.event_ns, &cand.event_ns)
    } else {
        return None;
    };
    let kernel = compare_passes(base_ns, cand_ns, t.alpha, t.noise_pct);
    let pixels = base.pixels;
    let latency = (pixels < LAUNCH_BOUND_PIXELS && !base.latency_us.is_empty() && !cand.latency_us.is_empty())
        .then(|| compare_passes(&base.latency_us, &cand.latency_us, t.alpha, t.latency_noise_pct));
    let verdict = match (kernel.verdict, latency.map(|l| l.verdict)) {
        (Change::Slower, _) | (_, Some(Change::Slower)) => Change::Slower,
        (Change::NotEnoughPasses, _) => Change::NotEnoughPasses,
        (Change::Faster, _) | (_, Some(Change::Faster)) => Change::Faster,
        (Change::Unsettled, _) => Change::Unsettled,
        _ => Change::Same,
    };
    Some(ThroughputJudgement {
        metric,
        kernel,
        latency,
        verdict,
        gated: pixels >= t.gate_min_pixels,
        base_passes: base_ns.len(),
        cand_passes: cand_ns.len(),
    })
}
