//! The one throughput rule, on what it reads of each side: a scenario's per-pass figures on one
//! GPU and its size. `compare` pairs two runs' scenarios and judges each pair with
//! [`judge_throughput`]; the history keeps the same figures per result and judges two points of a
//! series with the same function, so the two never disagree on the same two runs.

use nppbench_stats::tests_of_passes::{compare_passes, compare_passes_within};

use super::older::{NotJudged, layouts_apart, older_side};
use super::{Change, Metric, PassTest, Thresholds};
use crate::figure::ByLayout;
use crate::figure::CallLayoutKind;
use crate::thresholds::LAUNCH_BOUND_PIXELS;
use crate::throughput::ThroughputPasses;

/// One scenario, base against candidate, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputJudgement {
    /// What the time per call was (see [`Metric`]).
    pub metric: Metric,
    /// The time per call, tested on the per-pass figures.
    pub kernel: PassTest,
    /// Where the scenario's calls ran their kernels at once in some passes and in turn in others
    /// (on either side), `kernel` is the change with the layout held fixed (see
    /// [`judge_throughput`]) and these are each layout's own tests, for the reader (a layout with
    /// fewer than [`super::MIN_PASSES`] passes a side is not judged on its own).
    pub by_layout: Vec<LayoutTest>,
    /// Host latency per call, tested on the per-pass figures for launch-bound images: shown,
    /// never part of the verdict (it moves with the host between processes: docs/calibration.md).
    pub latency: Option<PassTest>,
    /// Faster or slower when the time per call is (with the layout held fixed, where they mix);
    /// unsettled where the scenario is not judged for want of a figure (`not_judged`).
    pub verdict: Change,
    /// Why the scenario is not judged though each side has passes: a side made by an older
    /// nppbench lacks the per-layout figures the layouts' mix needs, or the two runs share no
    /// layout. `kernel` is still the test over all calls, for the reader.
    pub not_judged: Option<NotJudged>,
    /// Whether this scenario can fail the regression gate (see [`Thresholds::gate_min_pixels`]).
    pub gated: bool,
    /// The passes each side had, of the figure tested.
    pub base_passes: usize,
    pub cand_passes: usize,
}

/// The time per call over the calls of one layout, base against candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayoutTest {
    pub layout: CallLayoutKind,
    pub test: PassTest,
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
/// like with like), else CUDA events; tested on the passes by Welch's test beyond the noise band
/// ([`Thresholds::kernel_band_pct`] for kernel times). Where both sides know each pass's layouts
/// apart and the calls ran their kernels at once in some passes and in turn in others, the
/// layouts' own times are tested with the layout held fixed instead
/// ([`compare_passes_within`]): which layout a process draws is the host's doing, so one run
/// drawing one layout more often is no change. Host latency is tested beside for
/// images under [`LAUNCH_BOUND_PIXELS`], and shown: it is not part of the verdict. Fewer than
/// [`super::MIN_PASSES`] passes a side: not judged. Where a side lacks the per-layout figures
/// (made by an older nppbench) and the layouts weigh differently in the two runs, or both time
/// the layouts apart but share none, the scenario is unsettled with the reason
/// ([`NotJudged`]): never slower or faster. `None` where the two sides share no figure.
pub fn judge_throughput(
    base: &ThroughputPasses,
    cand: &ThroughputPasses,
    t: Thresholds,
) -> Option<ThroughputJudgement> {
    let (metric, base_ns, cand_ns) = tested_figures(base, cand)?;
    let band = |values: &[f64]| match metric {
        Metric::KernelRecords => t.kernel_band_pct(nppbench_stats::median(values)),
        Metric::Events => t.noise_pct,
    };
    let mut kernel = compare_passes(base_ns, cand_ns, t.alpha, band(base_ns));
    let mut by_layout = Vec::new();
    let mut not_judged = None;
    if let (Metric::KernelRecords, true, Some(b), Some(c)) = (
        metric,
        base.busy_time_known && cand.busy_time_known,
        &base.by_layout,
        &cand.by_layout,
    ) && b.mixed_with(c)
    {
        // The change with the layout held fixed; each layout's own test beside it, for the reader.
        let groups: Vec<(&[f64], &[f64])> = CallLayoutKind::ALL.iter().map(|&k| (b.get(k), c.get(k))).collect();
        kernel = compare_passes_within(&groups, t.alpha, band(base_ns));
        by_layout = judge_by_layout(b, c, t);
        let enough = base_ns.len() >= super::MIN_PASSES && cand_ns.len() >= super::MIN_PASSES;
        not_judged = (enough && layouts_apart(b, c)).then_some(NotJudged::LayoutsApart);
    } else if metric == Metric::KernelRecords && kernel.verdict != Change::NotEnoughPasses {
        not_judged = older_side(base, cand, (base_ns, cand_ns), band(base_ns));
    }
    let verdict = if not_judged.is_some() {
        Change::Unsettled
    } else {
        kernel.verdict
    };
    let pixels = base.pixels;
    let latency = (pixels < LAUNCH_BOUND_PIXELS && !base.latency_us.is_empty() && !cand.latency_us.is_empty())
        .then(|| compare_passes(&base.latency_us, &cand.latency_us, t.alpha, t.latency_noise_pct));
    Some(ThroughputJudgement {
        metric,
        kernel,
        by_layout,
        latency,
        verdict,
        not_judged,
        gated: pixels >= t.gate_min_pixels,
        base_passes: base_ns.len(),
        cand_passes: cand_ns.len(),
    })
}

/// The figure the rule tests over all calls, and each side's passes of it: the kernel time per
/// call where both sides have CUPTI's records (the busy time where both know it, else the
/// kernels summed on both sides), else CUDA events; `None` where the two share no figure.
pub fn tested_figures<'a>(
    base: &'a ThroughputPasses,
    cand: &'a ThroughputPasses,
) -> Option<(Metric, &'a [f64], &'a [f64])> {
    if !base.kernel_ns.is_empty() && !cand.kernel_ns.is_empty() {
        if base.busy_time_known == cand.busy_time_known {
            Some((Metric::KernelRecords, &base.kernel_ns, &cand.kernel_ns))
        } else {
            Some((Metric::KernelRecords, &base.kernel_summed_ns, &cand.kernel_summed_ns))
        }
    } else if !base.event_ns.is_empty() && !cand.event_ns.is_empty() {
        Some((Metric::Events, &base.event_ns, &cand.event_ns))
    } else {
        None
    }
}

/// Each layout's time per call tested apart (those with too few passes a side as such).
fn judge_by_layout(base: &ByLayout, cand: &ByLayout, t: Thresholds) -> Vec<LayoutTest> {
    CallLayoutKind::ALL
        .iter()
        .filter(|&&k| !base.get(k).is_empty() || !cand.get(k).is_empty())
        .map(|&k| {
            let (b, c) = (base.get(k), cand.get(k));
            LayoutTest {
                layout: k,
                test: compare_passes(b, c, t.alpha, t.kernel_band_pct(nppbench_stats::median(b))),
                base_passes: b.len(),
                cand_passes: c.len(),
            }
        })
        .collect()
}
