//! What run.json records of a throughput scenario: criterion's estimates, CUPTI's kernel
//! records, warm and cold kernel time per call, host latency and the device's state.

use serde::{Deserialize, Serialize};

use super::{ContextRecord, Correctness, PhaseTime};
use crate::{GpuProcess, Outcome, ThroughputScenario};

/// One pass of one throughput scenario on one GPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThroughputRecord {
    pub scenario: ThroughputScenario,
    pub outcome: Outcome,
    pub result: Option<ThroughputResult>,
    /// Which pass (1 to `settings.repeat`): each pass ran in a fresh process.
    #[serde(default = "first_pass")]
    pub pass: u32,
    /// The UUID of the GPU it ran on; `None` in runs made before runs could use several.
    #[serde(default)]
    pub gpu: Option<String>,
    /// The scenario's wall time in its probe (set-up, timing, checks), milliseconds.
    #[serde(default)]
    pub wall_ms: Option<f64>,
}

fn first_pass() -> u32 {
    1
}

/// A criterion estimate of GPU time per call, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub point_ns: f64,
    pub lower_ns: f64,
    pub upper_ns: f64,
    pub standard_error_ns: f64,
    pub confidence_level: f64,
}

/// Criterion's statistics of per-call GPU time, timed with CUDA events around batches of calls.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelTiming {
    pub mean: Estimate,
    pub median: Estimate,
    pub median_abs_dev: Estimate,
    pub std_dev: Estimate,
    /// The slope of batch time against batch size: per-call time with launch latency amortised.
    pub slope: Option<Estimate>,
    /// Criterion's raw samples: calls per batch and the batch's GPU time (ns).
    pub sample_iters: Vec<f64>,
    pub sample_times_ns: Vec<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThroughputResult {
    /// Bytes one call reads plus writes.
    pub bytes_per_call: u64,
    pub kernel: KernelTiming,
    pub correctness: Correctness,
    /// Kernel durations from CUPTI's activity records over a batch of calls: the kernel alone,
    /// without the gap between launches that events around a batch include.
    #[serde(default)]
    pub kernel_records: Option<KernelRecords>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_records_not_measured: Option<String>,
    /// nppbench's own reference kernel on the same buffers and stream, timed the same way.
    #[serde(default)]
    pub reference: Option<ReferenceResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_not_measured: Option<String>,
    /// The kernels of each call summed, from CUPTI's records, warm caches (back to back).
    #[serde(default)]
    pub per_call: Option<CallTiming>,
    /// The same with the L2 cache flushed before every call (`settings.cold`).
    #[serde(default)]
    pub cold: Option<CallTiming>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_not_measured: Option<String>,
    /// Host latency of a call: launch plus stream synchronisation, one call at a time.
    #[serde(default)]
    pub host_latency: Option<HostLatency>,
    /// The GPU's clocks, power, temperature and throttling while it was timed.
    #[serde(default)]
    pub device: Option<DeviceState>,
    #[serde(default)]
    pub context: Option<ContextRecord>,
    /// Other processes seen on the GPU before or after the timing.
    #[serde(default)]
    pub other_processes: Vec<GpuProcess>,
    /// Where the scenario's time went in its probe, step by step (`setup`, `warm_up`,
    /// `criterion`, `records`, `cold`, `latency`, `check`, `reference`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<PhaseTime>,
}

/// Kernel time per call: the kernels one call launches, grouped by launch order and summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallTiming {
    pub calls: u32,
    pub kernels_per_call: u32,
    pub median_ns: f64,
    /// A 95% interval of the median (order statistics: no assumption on the distribution).
    pub lower_ns: f64,
    pub upper_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// Each kernel of a call, in launch order, with its median duration.
    pub kernels: Vec<KernelStat>,
    /// Where a call launches several kernels: how they lay on the GPU's clock (runs made before
    /// this was recorded have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<CallLayout>,
}

/// How the kernels of a call lay in time, from CUPTI's start and end stamps: whether they ran one
/// after the other or at once, on which streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallLayout {
    /// Median, over the calls, of the time from the first kernel's start to the last one's end.
    pub span_median_ns: f64,
    /// Median of the time at least one of the call's kernels ran (the union of their intervals).
    pub busy_median_ns: f64,
    /// Calls in which two of the call's kernels ran at the same time.
    pub overlapped_calls: u32,
    /// Calls whose first kernel started before the previous call's last kernel ended.
    pub overlapped_next_calls: u32,
    /// How many distinct CUPTI stream ids the call's kernels ran on.
    pub streams: u32,
    /// Median busy time of the calls in which two kernels ran at once (the
    /// `overlapped_calls`), ns; `None` where none did. Whether a call's kernels overlap is
    /// decided by when the host launches them, and moves between processes: the busy time of
    /// each layout apart is what `compare` tests where the layouts mix (runs made before
    /// 2026-11-27 have neither).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_at_once_median_ns: Option<f64>,
    /// Median busy time of the calls whose kernels ran one after another, ns; `None` where
    /// every call's kernels overlapped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_in_turn_median_ns: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelStat {
    pub name: String,
    pub median_ns: f64,
    /// CUPTI's id of the stream the kernel ran on in the first recorded call (ids are per
    /// process: compare them within a call, not between runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<u32>,
    /// Median start relative to the call's first kernel start, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_median_ns: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HostLatency {
    pub calls: u32,
    pub median_us: f64,
    pub p90_us: f64,
}

/// The device as NVML saw it around the timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceState {
    /// How long the probe worked the GPU before timing, until its clocks settled.
    pub warmup_ms: f64,
    /// Whether the clocks settled before the warm-up's time limit.
    pub settled: bool,
    /// One reading after each of criterion's samples.
    pub samples: Vec<DeviceSample>,
    /// Samples read while the GPU throttled (power or thermal slowdown).
    pub throttled_samples: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeviceSample {
    pub sm_mhz: u32,
    pub memory_mhz: u32,
    pub power_mw: u32,
    pub temperature_c: u32,
    /// NVML's clock event (throttle) reasons, as its bit mask.
    pub throttle_reasons: u64,
}

/// CUPTI kernel records over a batch of back-to-back calls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KernelRecords {
    pub launches: u32,
    /// Kernels recorded: one per call for a one-kernel primitive.
    pub kernels: u32,
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// All recorded kernel time divided by the calls.
    pub per_call_ns: f64,
}

/// The NVRTC-compiled reference kernel's timing and check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReferenceResult {
    /// `vector` (4-byte loads, 16-byte stores) or `plain` (one pixel a thread).
    pub path: String,
    pub kernel: KernelTiming,
    pub correctness: Correctness,
    #[serde(default)]
    pub kernel_records: Option<KernelRecords>,
    /// The scenario whose run measured this reference, where one measurement serves every
    /// scenario of the same geometry in a pass (the reference kernel does not depend on the
    /// scenario's stream or context); absent where this scenario measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_in: Option<String>,
}
