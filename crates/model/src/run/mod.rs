//! The run.json schema: the environment, the matrix, and per scenario its outcome, results and
//! raw samples. Written by the engine, read by the report.

mod environment;
mod label;
mod memory;
mod merge;
mod read;
mod throughput;

use serde::{Deserialize, Serialize};

pub use environment::{
    CpuInfo, Environment, GpuEnvironment, GpuInfo, GpuProcess, HostInfo, MissingLibrary, NppInfo, ToolInfo,
};
pub use memory::{
    BatchPlace, CallStreams, MemoryReading, MemoryRecord, MemoryResult, MemorySeries, OrderingRounds, StreamCounts,
};
pub use merge::merge_shards;
pub use read::{gunzip, is_gzip, read_text};
pub use throughput::{
    CallLayout, CallTiming, DeviceSample, DeviceState, Estimate, HostLatency, KernelRecords, KernelStat, KernelTiming,
    ReferenceResult, ThroughputRecord, ThroughputResult,
};

use crate::Matrix;

/// The version of the layout below. Bump it on any change a reader of an older file would misread.
pub const SCHEMA_VERSION: u32 = 4;

/// The versions this nppbench reads: version 1 (before the primitive and context axes) is
/// migrated on reading; version 2 (a memory sample's device-wide figure read after every call,
/// `MemorySeries::device_used_bytes`) reads as it is; version 3 (an output that differs from the
/// reference ends the scenario as a failure of kind `mismatch`, where version 4 measures on and
/// records [`WrongOutput`]) reads as it is, its failures judged as wrong output by the analysis.
pub const READABLE_SCHEMA_VERSIONS: [u32; 4] = [1, 2, 3, 4];

/// One run of `nppbench run`: everything needed to render a report without the GPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFile {
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// The command line that made this run, for the report's "reproduce" section.
    pub command: Vec<String>,
    /// RFC 3339 times.
    pub started_at: String,
    pub finished_at: String,
    pub wall_s: f64,
    /// Set when the run was stopped (Ctrl-C, SIGTERM) before every scenario ran; `nppbench run
    /// --resume` continues it.
    #[serde(default)]
    pub interrupted: bool,
    pub environment: Environment,
    pub matrix: Matrix,
    pub memory: Vec<MemoryRecord>,
    /// One record per throughput scenario, GPU and pass.
    pub throughput: Vec<ThroughputRecord>,
    /// Where the run's wall time went, phase by phase.
    #[serde(default)]
    pub phases: Vec<PhaseTime>,
    /// How many memory probes ran at once, and why that many.
    #[serde(default)]
    pub jobs: Option<Jobs>,
    /// Test hooks that were active (`NPPBENCH_DELAY_CYCLES=…`, `NPPBENCH_FAULT=…`): a run made
    /// with one measures nppbench, not NPP as it is, and every page says so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_hooks: Vec<String>,
}

/// The wall time of one phase of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseTime {
    /// `environment`, `throughput`, `memory`, `writing`.
    pub phase: String,
    pub wall_s: f64,
}

/// The concurrency of the memory phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Jobs {
    pub jobs: u32,
    /// Why that many: given with `--jobs`, or chosen from the machine (cores, device memory).
    pub reason: String,
    /// `CUDA_DEVICE_MAX_CONNECTIONS` as the memory probes had it (absent in runs made before it
    /// was recorded, whose probes inherited nppbench's environment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<ProbeConnections>,
    /// How memory scenarios were spread over probe processes (absent in runs made before a
    /// process could measure several: one fresh process each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batching: Option<Batching>,
    /// How the memory probes read their own memory (absent: each listed for itself, as every run
    /// did before `--memory-readings`).
    #[serde(default, skip_serializing_if = "MemoryReadings::is_own")]
    pub memory_readings: MemoryReadings,
    /// Where the ordering rounds were made (absent in runs made before `--race-rounds`, which
    /// made them for every configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race_rounds: Option<RaceRounds>,
    /// Ordering probes at once beside the memory probes, on one GPU (absent in runs made before
    /// it was recorded: half the memory probes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering_jobs: Option<u32>,
}

impl Jobs {
    /// Ordering probes at once beside the memory probes on one GPU: as recorded, else half the
    /// memory probes (the default, and what runs made before it was recorded had).
    pub fn ordering_beside(&self) -> u32 {
        self.ordering_jobs.unwrap_or(self.jobs / 2).max(1)
    }
}

/// Where a run makes the ordering rounds (`--race-rounds`). A race needs NPP's work on a stream
/// that does not wait for the caller's: where CUPTI saw every kernel, copy and fill of the
/// configuration's first call on the caller's stream, that stream orders the call after the late
/// write, and the rounds would only confirm it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RaceRounds {
    /// Only where the first call put work off the caller's stream, or where CUPTI could not say.
    #[default]
    WhereSplit,
    /// For every configuration, as every run did before.
    Always,
}

impl RaceRounds {
    /// As the command line and run.json name it.
    pub fn name(self) -> &'static str {
        match self {
            RaceRounds::WhereSplit => "where-split",
            RaceRounds::Always => "always",
        }
    }
}

impl std::str::FromStr for RaceRounds {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "where-split" => Ok(RaceRounds::WhereSplit),
            "always" => Ok(RaceRounds::Always),
            _ => Err(format!(
                "`{s}` is not where to make the race rounds: give `where-split` or `always`"
            )),
        }
    }
}

/// How a memory probe reads its own memory after each call: NVML's listing of the device's
/// compute processes, made by the probe itself or by the run's parent for all of a GPU's probes
/// (`--memory-readings`). Listings made by many processes at once slow one another down
/// (`reports/performance/h100-GPU-49d9c044-nvml/`); either way the figure is the probe's own
/// memory, from a listing begun after its call returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryReadings {
    /// Each probe lists for itself.
    #[default]
    Own,
    /// The run's parent lists for every probe of a GPU, one listing for all that asked before
    /// it began.
    Shared,
}

impl MemoryReadings {
    pub fn is_own(&self) -> bool {
        *self == MemoryReadings::Own
    }

    /// As the command line and run.json name it.
    pub fn name(self) -> &'static str {
        match self {
            MemoryReadings::Own => "own",
            MemoryReadings::Shared => "shared",
        }
    }
}

impl std::str::FromStr for MemoryReadings {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "own" => Ok(MemoryReadings::Own),
            "shared" => Ok(MemoryReadings::Shared),
            _ => Err(format!("`{s}` is not a way to read memory: give `own` or `shared`")),
        }
    }
}

/// How the memory phase puts scenarios into probe processes. Each scenario runs on host threads
/// of its own, made for it, so that NPP's per-thread streams of one scenario never meet
/// another's; a fault in a batch sends its unfinished scenarios to fresh processes, the one at
/// fault alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Batching {
    /// The most scenarios one probe process measures (1: a fresh process per scenario).
    pub max_per_process: u32,
    /// Why that many: given with `--batch`, or the default.
    pub reason: String,
    /// The seed that shuffled the scenarios before they were put into batches (`--seed`).
    pub seed: u64,
}

/// `CUDA_DEVICE_MAX_CONNECTIONS` in the memory probes. Creating a CUDA context is serialised
/// host-wide by the driver, and a context with one hardware connection is created in about half
/// the time of the default eight; the memory probes' classes, slopes and NPP stream counts are the
/// same either way (`reports/concurrency/`). Throughput probes always inherit the environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeConnections {
    /// The value the probes had; `None`: unset, the driver's default (8).
    pub value: Option<u32>,
    /// Set by nppbench (`--probe-connections N`), not inherited from the environment.
    pub set_by_nppbench: bool,
}

/// The check of NPP's output against the CPU reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Correctness {
    pub pixels_checked: u64,
    /// Padding bytes (between the row's end and the stride) checked to be untouched.
    pub padding_bytes_checked: u64,
    /// The largest error among the samples within the tolerance.
    pub max_abs_error: f64,
    /// Where the output differed from the reference beyond the tolerance, or wrote outside its
    /// ROI; `None`: right (and in every run before schema version 4, whose wrong outputs are
    /// failures of kind `mismatch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrong: Option<WrongOutput>,
    /// The same output checked against the aligned twin (the same call on the same pixels at
    /// strides aligned to 512 bytes): an oracle that needs no CPU reference. `None` in runs made
    /// before it (schema version 4 without it) and where the geometry is its own twin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aligned_twin: Option<TwinCheck>,
}

/// The check of a scenario's output against its aligned twin's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TwinCheck {
    /// The twin's strides.
    pub src_stride: u32,
    pub dst_stride: u32,
    /// Where the scenario's output differs from the twin's beyond the function's tolerance;
    /// `None`: they agree (or the twin was not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrong: Option<WrongOutput>,
    /// Why the twin was not measured (an NPP error at the aligned strides), where it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
}

impl Correctness {
    pub fn is_right(&self) -> bool {
        self.wrong.is_none()
    }
}

/// An output that differs from its reference, counted and located (schema version 4).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WrongOutput {
    /// Pixels (values, for a reduction) with a sample beyond the tolerance.
    pub pixels: u64,
    /// The first of them, in row order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<WrongSample>,
    /// The first and last row, and column, among them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<[u32; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<[u32; 2]>,
    /// Bytes outside the ROI (a row's stride padding; between a reduction's values) changed.
    #[serde(default)]
    pub outside_bytes: u64,
}

/// One wrong sample: where, what the reference expects, and what the call wrote.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WrongSample {
    pub row: u32,
    pub pixel: u32,
    pub channel: u32,
    pub expected: f64,
    pub actual: f64,
}

/// What the calls' `NppStreamContext` declared, beside what the stream really is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextRecord {
    /// `nStreamFlags` as passed to NPP.
    pub declared_flags: u32,
    /// The stream's own flags (`cuStreamGetFlags`): 1 for non-blocking, else 0.
    pub stream_flags: u32,
    /// `nCudaDeviceId` and `nMultiProcessorCount` as passed (0 where the context was zeroed).
    pub declared_device: i32,
    pub declared_sm_count: i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs made before `--memory-readings` read as `own`, and an `own` run writes nothing new, so
    /// that its file is what an earlier build wrote; `shared` is written and read back.
    #[test]
    fn memory_readings_are_own_unless_a_run_says_shared() {
        let old = r#"{"jobs": 8, "reason": "given with --jobs"}"#;
        let jobs: Jobs = serde_json::from_str(old).unwrap();
        assert_eq!(jobs.memory_readings, MemoryReadings::Own);
        assert!(!serde_json::to_string(&jobs).unwrap().contains("memory_readings"));
        let shared = Jobs {
            memory_readings: MemoryReadings::Shared,
            ..jobs
        };
        let text = serde_json::to_string(&shared).unwrap();
        assert!(text.contains(r#""memory_readings":"shared""#), "{text}");
        assert_eq!(serde_json::from_str::<Jobs>(&text).unwrap(), shared);
        assert_eq!("shared".parse::<MemoryReadings>(), Ok(MemoryReadings::Shared));
        assert!(
            "both"
                .parse::<MemoryReadings>()
                .unwrap_err()
                .contains("give `own` or `shared`")
        );
    }
}
