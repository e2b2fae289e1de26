//! One throughput scenario on one GPU judged over its passes: time per call (events, kernels warm
//! and cold), GB/s against the copy ceiling, host latency, kernels per call and the clocks.

use nppbench_model::{Outcome, ThroughputRecord, ThroughputResult};
use nppbench_stats::{median, median_interval};

use crate::figure::{ByLayout, CallLayoutKind, PassFigure, at_once_shares, gbps, over_passes};

/// One throughput scenario on one GPU, over its passes (each a fresh process).
#[derive(Debug, Clone)]
pub struct ThroughputAnalysis<'a> {
    /// The first pass's record: the scenario, and the first pass's detail.
    pub record: &'a ThroughputRecord,
    /// Every pass's record, in pass order.
    pub passes: Vec<&'a ThroughputRecord>,
    /// The GPU it ran on (`None` in runs made before runs could use several).
    pub gpu: Option<&'a str>,
    /// `ok` when every pass measured; else the first pass's outcome that did not.
    pub outcome: &'a Outcome,
    /// Each measured pass's median time per call from CUDA events around batches, ns.
    pub pass_event_ns: Vec<f64>,
    /// Each measured pass's kernel time per call ([`PassFigure::KernelTimePerCallWarm`]: the
    /// time the call's kernels kept the GPU busy), ns.
    pub pass_kernel_ns: Vec<f64>,
    /// Each measured pass's kernel durations of a call summed, ns: what compare reads on both
    /// sides where one run lacks the layout of a call's kernels.
    pub pass_kernel_summed_ns: Vec<f64>,
    /// Whether every pass knew its calls' busy time ([`PassFigure::busy_time_known`]).
    pub busy_time_known: bool,
    /// Each measured pass's kernel time per call over the calls of each layout apart
    /// ([`PassFigure::KernelTimePerCallWarmIn`]), where every pass knows its layouts apart.
    pub pass_kernel_by_layout: Option<ByLayout>,
    /// How a call's kernels lay in time, over the passes that recorded it (calls of several
    /// kernels only).
    pub layout: Option<LayoutSummary>,
    /// Each measured pass's median host latency per call, µs.
    pub pass_latency_us: Vec<f64>,
    /// Each measured pass's cold kernel time per call (L2 flushed before each call), ns.
    pub pass_cold_ns: Vec<f64>,
    /// GB/s (10⁹ bytes read plus written per second) at the median over passes of the event
    /// time per call.
    pub gbps: Option<f64>,
    /// GB/s at the ends of the first pass's 95% interval of its median (slow end first).
    pub gbps_ci: Option<(f64, f64)>,
    pub pct_of_ceiling: Option<f64>,
    /// The cold kernel GB/s in percent of the copy ceiling (of the GPU it ran on).
    pub cold_pct_of_ceiling: Option<f64>,
    pub reference_gbps: Option<f64>,
    /// Event time per call, median over passes, µs.
    pub median_us: Option<f64>,
    /// Kernel time per call (CUPTI), median over passes, µs; with the first pass's 95% interval
    /// of its median over calls.
    pub kernel_per_call_us: Option<f64>,
    pub kernel_per_call_ci_us: Option<(f64, f64)>,
    /// GB/s at the kernel time per call: what the kernels alone achieve.
    pub kernel_gbps: Option<f64>,
    /// Cold kernel time per call, median over passes, µs.
    pub cold_per_call_us: Option<f64>,
    /// GB/s at the cold kernel time per call: what the kernels achieve from DRAM, comparable with
    /// the copy ceiling (measured on buffers far larger than L2).
    pub cold_gbps: Option<f64>,
    /// Host latency per call, median over passes, µs.
    pub host_latency_us: Option<f64>,
    /// The median of single kernels' durations (not of calls): what runs before per-call
    /// grouping reported as "kernel alone"; kept for scenarios.csv's old column.
    pub kernel_only_us: Option<f64>,
    /// Kernels NPP launched per call (CUPTI's records over the calls).
    pub kernels_per_call: Option<f64>,
    /// Each kernel of a call and its median duration (first pass), µs.
    pub kernels: Vec<(String, f64)>,
    /// Criterion samples read while the GPU throttled, and samples read, over every pass.
    pub throttled_samples: u32,
    pub device_samples: u32,
    /// The median SM clock over the samples, MHz.
    pub sm_mhz: Option<f64>,
}

impl ThroughputAnalysis<'_> {
    /// Kernel GB/s (warm) and its interval: over the passes' medians where there are three or
    /// more, else the first pass's interval over calls (slow end first).
    pub fn kernel_gbps_interval(&self) -> Option<(f64, Option<(f64, f64)>)> {
        let gbps = self.kernel_gbps?;
        let per_call = self.kernel_per_call_us?;
        let bytes_per_us = gbps * per_call;
        let mut passes: Vec<f64> = self.pass_kernel_ns.iter().map(|ns| ns / 1e3).collect();
        passes.sort_by(f64::total_cmp);
        let ci_us = if passes.len() >= 3 {
            median_interval(&passes, 0.95)
        } else {
            self.kernel_per_call_ci_us
        };
        Some((gbps, ci_us.map(|(lo, hi)| (bytes_per_us / hi, bytes_per_us / lo))))
    }

    /// Percent of the copy ceiling at the cold kernel time (L2 flushed before each call, as the
    /// ceiling's own buffers are far larger than L2), with `true`; else at the warm kernel time,
    /// with `false` (runs made before cold timing).
    pub fn ceiling_pct(&self, ceiling_gbps: Option<f64>) -> Option<(f64, bool)> {
        let c = ceiling_gbps?;
        match (self.cold_gbps, self.kernel_gbps) {
            (Some(g), _) => Some((100.0 * g / c, true)),
            (None, Some(g)) => Some((100.0 * g / c, false)),
            _ => None,
        }
    }
}

/// How the kernels of a call lay in time over a scenario's passes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayoutSummary {
    /// The most distinct streams a call's kernels ran on in any pass (2: NPP put one on a stream
    /// of its own).
    pub streams: u32,
    /// The share of calls, over every pass, in which two of the call's kernels ran at once.
    pub overlapped_share: f64,
    /// Passes in which most calls overlapped, of the passes recorded.
    pub mostly_overlapped_passes: usize,
    pub passes: usize,
    /// The kernels' durations summed, median over passes, µs (beside the busy time, which is
    /// the kernel time per call).
    pub summed_us: Option<f64>,
}

fn layout_summary(results: &[&ThroughputResult], pass_kernel_summed_ns: &[f64]) -> Option<LayoutSummary> {
    let layouts: Vec<(&nppbench_model::CallLayout, u32)> = results
        .iter()
        .filter_map(|r| r.per_call.as_ref())
        .filter_map(|c| c.layout.as_ref().map(|l| (l, c.calls)))
        .collect();
    if layouts.is_empty() {
        return None;
    }
    let calls: u32 = layouts.iter().map(|(_, n)| n).sum();
    let overlapped: u32 = layouts.iter().map(|(l, _)| l.overlapped_calls).sum();
    Some(LayoutSummary {
        streams: layouts.iter().map(|(l, _)| l.streams).max().unwrap_or(1),
        overlapped_share: f64::from(overlapped) / f64::from(calls.max(1)),
        mostly_overlapped_passes: layouts.iter().filter(|(l, n)| 2 * l.overlapped_calls > *n).count(),
        passes: layouts.len(),
        summed_us: over_passes(pass_kernel_summed_ns).map(|ns| ns / 1e3),
    })
}

/// Each pass's kernel time per call over the calls of each layout apart, where every pass knows
/// its layouts apart. A call of one kernel runs it in turn: its passes' figures are the in-turn
/// ones.
pub(crate) fn by_layout(results: &[&ThroughputResult]) -> Option<ByLayout> {
    if results.is_empty() || !results.iter().all(|r| PassFigure::layouts_known(r)) {
        return None;
    }
    let of = |kind| {
        results
            .iter()
            .filter_map(|r| {
                let single = r.per_call.as_ref().is_some_and(|c| c.kernels_per_call <= 1);
                match (single, kind) {
                    (true, CallLayoutKind::InTurn) => PassFigure::KernelTimePerCallWarm.of(r),
                    (true, CallLayoutKind::AtOnce) => None,
                    (false, _) => PassFigure::KernelTimePerCallWarmIn(kind).of(r),
                }
            })
            .collect()
    };
    Some(ByLayout {
        at_once_ns: of(CallLayoutKind::AtOnce),
        in_turn_ns: of(CallLayoutKind::InTurn),
    })
}

pub(crate) fn analyse_throughput<'a>(
    passes: Vec<&'a ThroughputRecord>,
    gpu: Option<&'a str>,
    ceiling_gbps: Option<f64>,
) -> ThroughputAnalysis<'a> {
    let record = passes[0];
    let outcome = passes
        .iter()
        .map(|t| &t.outcome)
        .find(|o| !matches!(o, Outcome::Ok))
        .unwrap_or(&record.outcome);
    let results: Vec<&ThroughputResult> = passes.iter().filter_map(|t| t.result.as_ref()).collect();
    let pass_event_ns = PassFigure::EventTimePerCall.of_passes(results.iter().copied());
    let pass_kernel_ns = PassFigure::KernelTimePerCallWarm.of_passes(results.iter().copied());
    let pass_kernel_summed_ns = PassFigure::KernelTimeSummedPerCallWarm.of_passes(results.iter().copied());
    let busy_time_known = !results.is_empty() && results.iter().all(|r| PassFigure::busy_time_known(r));
    let pass_kernel_by_layout = by_layout(&results);
    let pass_latency_us = PassFigure::HostLatencyPerCall.of_passes(results.iter().copied());
    let pass_cold_ns = PassFigure::KernelTimePerCallCold.of_passes(results.iter().copied());
    let first = results.first().copied();
    let bytes = first.map_or(0.0, |r| r.bytes_per_call as f64);
    let gbps_at = |ns: f64| gbps(bytes, ns);
    let event_ns = over_passes(&pass_event_ns);
    let kernel_ns = over_passes(&pass_kernel_ns);
    let cold_ns = over_passes(&pass_cold_ns);
    let gbps = event_ns.and_then(gbps_at);
    let samples: Vec<&nppbench_model::DeviceSample> = results
        .iter()
        .filter_map(|r| r.device.as_ref())
        .flat_map(|d| &d.samples)
        .collect();
    let clocks: Vec<f64> = samples.iter().map(|s| f64::from(s.sm_mhz)).collect();
    ThroughputAnalysis {
        record,
        gpu,
        outcome,
        gbps,
        gbps_ci: first.and_then(|r| gbps_at(r.kernel.median.upper_ns).zip(gbps_at(r.kernel.median.lower_ns))),
        pct_of_ceiling: gbps.zip(ceiling_gbps).map(|(g, c)| 100.0 * g / c),
        cold_pct_of_ceiling: cold_ns.and_then(gbps_at).zip(ceiling_gbps).map(|(g, c)| 100.0 * g / c),
        reference_gbps: results
            .iter()
            .find_map(|r| r.reference.as_ref())
            .and_then(|x| gbps_at(x.kernel.median.point_ns)),
        median_us: event_ns.map(|ns| ns / 1e3),
        kernel_per_call_us: kernel_ns.map(|ns| ns / 1e3),
        kernel_per_call_ci_us: first
            .and_then(|r| r.per_call.as_ref())
            .map(|c| (c.lower_ns / 1e3, c.upper_ns / 1e3)),
        kernel_gbps: kernel_ns.and_then(gbps_at),
        cold_per_call_us: cold_ns.map(|ns| ns / 1e3),
        cold_gbps: cold_ns.and_then(gbps_at),
        host_latency_us: over_passes(&pass_latency_us),
        kernel_only_us: first.and_then(|r| r.kernel_records).map(|k| k.median_ns / 1e3),
        kernels_per_call: first.and_then(|r| {
            r.per_call.as_ref().map(|c| f64::from(c.kernels_per_call)).or_else(|| {
                r.kernel_records
                    .map(|k| f64::from(k.kernels) / f64::from(k.launches.max(1)))
            })
        }),
        kernels: first
            .and_then(|r| r.per_call.as_ref())
            .map(|c| c.kernels.iter().map(|k| (k.name.clone(), k.median_ns / 1e3)).collect())
            .unwrap_or_default(),
        throttled_samples: results
            .iter()
            .filter_map(|r| r.device.as_ref())
            .map(|d| d.throttled_samples)
            .sum(),
        device_samples: samples.len() as u32,
        sm_mhz: median(&clocks),
        passes,
        pass_event_ns,
        pass_kernel_ns,
        layout: layout_summary(&results, &pass_kernel_summed_ns),
        pass_kernel_summed_ns,
        busy_time_known,
        pass_kernel_by_layout,
        pass_latency_us,
        pass_cold_ns,
    }
}

/// A throughput scenario on one GPU as the comparison rule reads it: each measured pass's
/// figures (as [`ThroughputAnalysis`] derives them) and the image's size.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ThroughputPasses {
    /// Pixels of the image: under [`crate::thresholds::LAUNCH_BOUND_PIXELS`], host latency is judged too.
    pub pixels: u64,
    /// Each pass's median time per call from CUDA events, ns.
    pub event_ns: Vec<f64>,
    /// Each pass's kernel time per call (warm, the time the call's kernels kept the GPU busy), ns.
    pub kernel_ns: Vec<f64>,
    /// Each pass's kernel durations of a call summed, ns.
    pub kernel_summed_ns: Vec<f64>,
    /// Whether every pass knew its calls' busy time.
    pub busy_time_known: bool,
    /// Each pass's kernel time per call over the calls of each layout apart (at once, in turn),
    /// where every pass knows its layouts apart; `None` where one does not (runs made before
    /// 2026-11-27, or without CUPTI).
    pub by_layout: Option<ByLayout>,
    /// Each pass's share of its calls whose kernels ran at once, where the pass recorded the
    /// layout of calls of several kernels (runs made from 2026-11-26); empty where none did.
    #[serde(default)]
    pub at_once_share: Vec<f64>,
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
            by_layout: t.pass_kernel_by_layout.clone(),
            at_once_share: at_once_shares(t.passes.iter().filter_map(|p| p.result.as_ref())),
            latency_us: t.pass_latency_us.clone(),
        }
    }

    /// Passes with a result (every such pass has an event time).
    pub fn passes(&self) -> usize {
        self.event_ns.len()
    }
}
