//! The run.json schema: the environment, the matrix, and per scenario its outcome, results and
//! raw samples. Written by the engine, read by the report.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Matrix, MemoryScenario, ModelError, ThroughputScenario};

/// The version of the layout below. Bump it on any change a reader of an older file would misread.
pub const SCHEMA_VERSION: u32 = 2;

/// The versions this nppbench reads: version 1 (before the primitive and context axes) is
/// migrated on reading.
pub const READABLE_SCHEMA_VERSIONS: [u32; 2] = [1, 2];

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

impl ProbeConnections {
    /// The value as a sentence fragment: `CUDA_DEVICE_MAX_CONNECTIONS=1 (set by nppbench)`.
    pub fn describe(&self) -> String {
        match (self.value, self.set_by_nppbench) {
            (Some(v), true) => format!("CUDA_DEVICE_MAX_CONNECTIONS={v} (set by nppbench, --probe-connections)"),
            (Some(v), false) => format!("CUDA_DEVICE_MAX_CONNECTIONS={v} (from the environment)"),
            (None, _) => "CUDA_DEVICE_MAX_CONNECTIONS unset (the driver's default, 8)".to_owned(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    pub git_commit: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Environment {
    pub gpu: GpuInfo,
    /// The kernel driver's version as NVML reports it, e.g. `580.159.04`; `None` without NVML.
    pub driver_version: Option<String>,
    /// `cuDriverGetVersion`, e.g. 13000 for CUDA 13.0.
    pub cuda_driver_api_version: i32,
    pub npp: NppInfo,
    pub host: HostInfo,
    /// Whether NVML's per-process memory figures were available.
    pub process_memory_probe: bool,
    /// Device-to-device copy throughput, bytes read plus written per second: the ceiling for a
    /// memory-bound kernel. `None` where it could not be measured.
    pub copy_ceiling_bytes_per_s: Option<f64>,
    /// Every GPU the run measured (the first is `gpu`); empty in runs of one GPU made before
    /// runs could use several.
    #[serde(default)]
    pub gpus: Vec<GpuEnvironment>,
    /// Other processes using the GPUs when the run started.
    #[serde(default)]
    pub other_processes: Vec<GpuProcess>,
}

impl Environment {
    /// Every GPU measured, the first (`gpu`) included, with its copy ceiling.
    pub fn all_gpus(&self) -> Vec<GpuEnvironment> {
        if self.gpus.is_empty() {
            vec![GpuEnvironment {
                gpu: self.gpu.clone(),
                copy_ceiling_bytes_per_s: self.copy_ceiling_bytes_per_s,
            }]
        } else {
            self.gpus.clone()
        }
    }
}

/// One GPU of the run and what was measured of it alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuEnvironment {
    pub gpu: GpuInfo,
    pub copy_ceiling_bytes_per_s: Option<f64>,
}

/// A process other than nppbench's own probes found on a GPU (NVML's running compute and
/// graphics processes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuProcess {
    pub pid: u32,
    /// From `/proc/PID/comm` where readable, else empty.
    pub name: String,
    /// The GPU it was found on.
    pub gpu_uuid: String,
    /// Its GPU memory, where NVML gives it.
    pub used_bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    pub ordinal: u32,
    pub name: String,
    pub uuid: String,
    pub sm_count: u32,
    pub memory_total_bytes: u64,
    pub memory_free_bytes_at_start: u64,
    pub compute_capability: String,
    /// The L2 cache: a cold measurement flushes a buffer larger than this between calls.
    #[serde(default)]
    pub l2_cache_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NppInfo {
    /// `nppGetLibVersion`, as `major.minor.build`.
    pub version: String,
    /// The file each library was loaded from, in load order.
    pub libraries: Vec<String>,
    /// Libraries this NPP lacks, with why: their primitives are 'not measured'.
    #[serde(default)]
    pub missing: Vec<MissingLibrary>,
}

impl NppInfo {
    /// The version as fetched: `nppGetLibVersion`'s three numbers, with the fourth where a
    /// library's file or folder name carries it (`libnppc.so.13.0.1.2`, `.npp/12.2.3.2/`,
    /// `npp-13.2.0.93/`); the three alone where nothing does.
    pub fn full_version(&self) -> String {
        let prefix = format!("{}.", self.version);
        for path in &self.libraries {
            for part in path.split(['/', '-']) {
                let part = part.trim_start_matches("libnppc.so.");
                if let Some(build) = part.strip_prefix(&prefix)
                    && !build.is_empty()
                    && build.chars().all(|c| c.is_ascii_digit())
                {
                    return format!("{}{build}", prefix);
                }
            }
        }
        self.version.clone()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingLibrary {
    pub library: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub cpu: CpuInfo,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuInfo {
    pub model: String,
    pub logical_cores: u32,
}

/// What kind of fault failed a scenario: reports and `compare` count failures by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// A CUDA driver, NVML or CUPTI call failed.
    Gpu,
    /// The device ran out of memory.
    OutOfMemory,
    /// NPP returned an error status.
    Npp,
    /// NPP (or a library it needs) could not be loaded.
    Load,
    /// The output differs from the CPU reference.
    Mismatch,
    /// A host thread could not be spawned, panicked or exited early.
    Thread,
    /// The probe ran past its timeout and was killed.
    Timeout,
    /// The probe died (a signal, an exit without an answer).
    Crash,
    /// The scenario asks for something impossible (a geometry NPP cannot take).
    Input,
    /// Recorded before failures had kinds, or none of the above.
    #[default]
    Other,
}

impl FailureKind {
    pub const ALL: [FailureKind; 10] = [
        FailureKind::Gpu,
        FailureKind::OutOfMemory,
        FailureKind::Npp,
        FailureKind::Load,
        FailureKind::Mismatch,
        FailureKind::Thread,
        FailureKind::Timeout,
        FailureKind::Crash,
        FailureKind::Input,
        FailureKind::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Gpu => "GPU error",
            FailureKind::OutOfMemory => "out of memory",
            FailureKind::Npp => "NPP error",
            FailureKind::Load => "load error",
            FailureKind::Mismatch => "wrong output",
            FailureKind::Thread => "thread error",
            FailureKind::Timeout => "timeout",
            FailureKind::Crash => "crash",
            FailureKind::Input => "bad input",
            FailureKind::Other => "other",
        }
    }
}

/// How a scenario ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    /// The probe failed: a crash, a timeout, a CUDA or NPP error, or a wrong output.
    Failed {
        reason: String,
        #[serde(default)]
        kind: FailureKind,
    },
    /// A leaking scenario stopped early because its process grew past the memory budget.
    StoppedAtBudget {
        budget_mib: u64,
    },
    /// This NPP lacks the primitive or its library: nothing to measure, and no fault.
    NotMeasured {
        reason: String,
    },
}

impl Outcome {
    pub fn is_failed(&self) -> bool {
        matches!(self, Outcome::Failed { .. })
    }

    /// A failed outcome of `kind`.
    pub fn failed(kind: FailureKind, reason: impl Into<String>) -> Outcome {
        Outcome::Failed {
            reason: reason.into(),
            kind,
        }
    }

    /// The kind of failure, for a failed outcome.
    pub fn failure_kind(&self) -> Option<FailureKind> {
        match self {
            Outcome::Failed { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryRecord {
    pub scenario: MemoryScenario,
    pub outcome: Outcome,
    pub result: Option<MemoryResult>,
    /// The UUID of the GPU it ran on; `None` in runs made before runs could use several.
    #[serde(default)]
    pub gpu: Option<String>,
    /// The scenario's wall time, its process's start included, milliseconds.
    #[serde(default)]
    pub wall_ms: Option<f64>,
}

/// Device memory before the first call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MemoryReading {
    /// Device-wide used memory (`cuMemGetInfo`: total − free), bytes.
    pub device_used_bytes: u64,
    /// This process's used memory as NVML reports it, bytes; `None` where NVML gives none.
    pub process_used_bytes: Option<u64>,
}

/// The raw samples of a memory scenario, one entry per call (index 0 is the warm-up call).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemorySeries {
    /// Calls made so far, the warm-up call included.
    pub call: Vec<u32>,
    /// Distinct host threads that have called NPP so far.
    pub threads_spawned: Vec<u32>,
    /// Time since the warm-up call started, milliseconds.
    pub elapsed_ms: Vec<f64>,
    /// Host latency of this call: launch plus stream synchronisation, microseconds.
    pub latency_us: Vec<f64>,
    pub device_used_bytes: Vec<u64>,
    pub process_used_bytes: Vec<Option<u64>>,
}

impl MemorySeries {
    pub fn len(&self) -> usize {
        self.call.len()
    }

    pub fn is_empty(&self) -> bool {
        self.call.is_empty()
    }
}

/// The check of NPP's output against the CPU reference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Correctness {
    pub pixels_checked: u64,
    /// Padding bytes (between the row's end and the stride) checked to be untouched.
    pub padding_bytes_checked: u64,
    pub max_abs_error: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryResult {
    pub baseline: MemoryReading,
    pub samples: MemorySeries,
    pub wall_ms: f64,
    /// From the probe's start to its baseline reading: driver, NPP, NVML and CUPTI set-up.
    #[serde(default)]
    pub startup_ms: f64,
    /// `startup_ms` step by step (`gpu`, `nvml`, `npp`, `cupti`, `baseline`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startup: Vec<PhaseTime>,
    pub correctness: Correctness,
    /// Streams created and destroyed during the calls, counted with CUPTI; `None` where CUPTI
    /// could not be loaded (see `streams_not_measured`).
    #[serde(default)]
    pub streams: Option<StreamCounts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams_not_measured: Option<String>,
    /// The call after which the scenario's class was settled and it stopped; `None` when it
    /// made every call (or ran before scenarios could stop early).
    #[serde(default)]
    pub settled_after: Option<u32>,
    /// The stream context as filled for the calls, and the stream's real flags.
    #[serde(default)]
    pub context: Option<ContextRecord>,
    /// The most other nppbench probes seen on the GPU during the scenario: with any, the
    /// device-wide figure is shared and only this process's (NVML) is judged.
    #[serde(default)]
    pub concurrent_probes: u32,
    /// Other processes seen on the GPU before or after the calls.
    #[serde(default)]
    pub other_processes: Vec<GpuProcess>,
    /// The device addresses of the call's buffers (sources, then the destination): NPP picks
    /// some paths by a buffer's alignment, which the process's other allocations shift.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buffer_addresses: Vec<u64>,
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

/// CUDA streams created and destroyed by anything in the process from the warm-up call on,
/// cumulative after each call (aligned with [`MemorySeries`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamCounts {
    pub created: Vec<u32>,
    pub destroyed: Vec<u32>,
    /// Of those created, the ones nppbench itself made (the own-stream threading model).
    pub created_by_nppbench: Vec<u32>,
    /// Distinct host threads that created at least one stream.
    pub creating_threads: u32,
    /// Streams created during the calls and still alive after the last one.
    pub never_destroyed: u32,
}

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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelStat {
    pub name: String,
    pub median_ns: f64,
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

/// Schema version 1 → 2, on the JSON: the matrix named one primitive (`primitive`), version 2
/// lists them (`primitives`). Every field version 2 added has a default.
fn migrate_v1(value: &mut serde_json::Value) {
    if let Some(m) = value.get_mut("matrix").and_then(|m| m.as_object_mut()) {
        let one = m
            .remove("primitive")
            .unwrap_or_else(|| serde_json::json!("convert8u32f_c1"));
        m.insert("primitives".to_owned(), serde_json::Value::Array(vec![one]));
    }
    if let Some(v) = value.get_mut("schema_version") {
        *v = serde_json::json!(SCHEMA_VERSION);
    }
}

impl RunFile {
    /// A short label a reader can tell runs apart by: `NPP 13.0.1.2 · H200 · driver 580.159.04`
    /// (and `· 2 GPUs` where the run measured several).
    pub fn short_label(&self) -> String {
        let e = &self.environment;
        let gpu = e.gpu.name.trim_start_matches("NVIDIA ").to_owned();
        let gpus = e.gpus.len();
        let several = if gpus > 1 {
            format!(" · {gpus} GPUs")
        } else {
            String::new()
        };
        format!(
            "NPP {} · {gpu} · driver {}{several}",
            e.npp.full_version(),
            e.driver_version.as_deref().unwrap_or("unknown")
        )
    }

    /// The run.json files one folder below `dir` (`reports/*/run.json`), sorted by path.
    pub fn find_in(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut runs: Vec<_> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|d| d.path().join("run.json"))
            .filter(|p| p.exists())
            .collect();
        runs.sort();
        runs
    }

    /// Reads a run.json, telling a truncated file, a foreign JSON file and another schema
    /// version apart.
    pub fn read(path: &Path) -> Result<RunFile, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: path.to_owned(),
            source,
        })?;
        RunFile::parse(&text, path)
    }

    /// Parses the text of a run.json; `path` names it in messages.
    pub fn parse(text: &str, path: &Path) -> Result<RunFile, ModelError> {
        let mut value: serde_json::Value = serde_json::from_str(text).map_err(|e| ModelError::RunJsonSyntax {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let foreign = |message: &str| ModelError::ForeignRunJson {
            path: path.to_owned(),
            message: message.to_owned(),
        };
        let tool = value
            .get("tool")
            .and_then(|t| t.get("name"))
            .and_then(|n| n.as_str())
            .ok_or_else(|| foreign("it has no tool.name field"))?;
        if tool != "nppbench" {
            return Err(foreign(&format!("tool.name is {tool:?}, not \"nppbench\"")));
        }
        let found = value
            .get("schema_version")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| foreign("it has no schema_version field"))?;
        if !READABLE_SCHEMA_VERSIONS.iter().any(|v| u64::from(*v) == found) {
            let writer = value
                .get("tool")
                .and_then(|t| t.get("version"))
                .and_then(|v| v.as_str())
                .map_or_else(|| "an unknown nppbench".to_owned(), |v| format!("nppbench {v}"));
            return Err(ModelError::SchemaVersion {
                path: path.to_owned(),
                found,
                expected: READABLE_SCHEMA_VERSIONS
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(" and "),
                writer,
            });
        }
        if found == 1 {
            migrate_v1(&mut value);
        }
        let mut run: RunFile = serde_json::from_value(value).map_err(|e| foreign(&e.to_string()))?;
        if found == 1 {
            run.rederive_ids();
        }
        Ok(run)
    }

    /// Scenario ids as this version derives them from the axes (runs of schema version 1 had
    /// shorter ids, without the primitive and context).
    fn rederive_ids(&mut self) {
        for s in &mut self.matrix.memory {
            s.id = s.derived_id();
        }
        for s in &mut self.matrix.throughput {
            s.id = s.derived_id();
        }
        for r in &mut self.memory {
            r.scenario.id = r.scenario.derived_id();
        }
        for r in &mut self.throughput {
            r.scenario.id = r.scenario.derived_id();
        }
    }
}
