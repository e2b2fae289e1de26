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

use crate::compare::Thresholds;
use crate::figure::PassFigure;
use crate::thresholds::LAUNCH_BOUND_PIXELS;

/// Whether the passes of one scenario (one GPU) are settled: each figure compare judges it on
/// pinned to within a noise band over √2. The kernel time per call (CUDA events where CUPTI gave
/// none), and for a launch-bound image its host latency too.
pub fn passes_settled(passes: &[&ThroughputResult], pixels: u64, t: Thresholds) -> bool {
    let pinned = |values: Vec<f64>, band_pct: f64| {
        values.len() >= MIN_PASSES
            && mean_half_width_pct(&values).is_some_and(|h| h * std::f64::consts::SQRT_2 <= band_pct)
    };
    let kernel = PassFigure::KernelTimePerCallWarm.of_passes(passes.iter().copied());
    let kernel = if kernel.len() == passes.len() {
        kernel
    } else {
        PassFigure::EventTimePerCall.of_passes(passes.iter().copied())
    };
    if !pinned(kernel, t.noise_pct) {
        return false;
    }
    pixels >= LAUNCH_BOUND_PIXELS
        || pinned(
            PassFigure::HostLatencyPerCall.of_passes(passes.iter().copied()),
            t.latency_noise_pct,
        )
}
