//! `--repeat auto`: whether a throughput scenario's passes agree well enough that comparing two
//! runs like this one can settle, or the scenario needs more passes.
//!
//! Compare calls a scenario "unsettled" when the 95% interval of its change reaches beyond twice
//! the noise band. Two runs whose passes each pin their level to within `h` (the half-width of
//! the interval of their mean, [`mean_half_width_pct`]) compare to within about `√2 · h`, around a
//! difference that is itself noise of that size. So a scenario is settled when `√2 · h` is at most
//! one noise band: then the interval of a same-against-same change stays inside two bands unless
//! the runs differ by more than a band, which the test on passes would call a change.

use nppbench_model::ThroughputResult;
use nppbench_stats::tests_of_passes::{MIN_PASSES, mean_half_width_pct};

use nppbench_stats::median;

use crate::compare::Thresholds;
use crate::figure::{ByLayout, CallLayoutKind, PassFigure};
use crate::thresholds::KERNEL_TIME_RESOLUTION_NS;
use crate::throughput::by_layout;

/// Whether the passes of one scenario (one GPU) are settled: the figure compare judges it on
/// pinned to within its noise band over √2. That is the kernel time per call (CUDA events where
/// CUPTI gave none) with the kernel time's band ([`Thresholds::kernel_band_pct`]). Where the
/// scenario's calls ran their kernels at once in some passes and in turn in others, compare tests
/// each layout's own time instead: then a layout needs [`MIN_PASSES`] passes, and each layout
/// that has them must be pinned (a layout seen in fewer passes is tested where the other run has
/// it in as many, or not at all). Host latency is not judged, so it needs no passes.
pub fn passes_settled(passes: &[&ThroughputResult], t: Thresholds) -> bool {
    let pinned = |values: &[f64], band_pct: f64| {
        values.len() >= MIN_PASSES
            && mean_half_width_pct(values).is_some_and(|h| h * std::f64::consts::SQRT_2 <= band_pct)
    };
    let kernel = PassFigure::KernelTimePerCallWarm.of_passes(passes.iter().copied());
    if kernel.len() != passes.len() {
        let events = PassFigure::EventTimePerCall.of_passes(passes.iter().copied());
        return pinned(&events, t.noise_pct);
    }
    // Kernel times whose passes agree to within what the GPU's clock resolves are as pinned as
    // more passes can make them: a 1 µs kernel's passes read 1056 or 1088 ns, a tick apart, and
    // their interval over three passes stays wider than the band however they fall.
    let pinned = |values: &[f64], band_pct: f64| {
        pinned(values, band_pct)
            || (values.len() >= MIN_PASSES && {
                let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(*v), hi.max(*v))
                });
                hi - lo <= KERNEL_TIME_RESOLUTION_NS
            })
    };
    if let Some(layouts) = by_layout(passes)
        && layouts.mixed_with(&ByLayout::default())
    {
        let enough: Vec<&[f64]> = CallLayoutKind::ALL
            .iter()
            .map(|&k| layouts.get(k))
            .filter(|v| v.len() >= MIN_PASSES)
            .collect();
        return !enough.is_empty() && enough.iter().all(|v| pinned(v, t.kernel_band_pct(median(v))));
    }
    pinned(&kernel, t.kernel_band_pct(median(&kernel)))
}
