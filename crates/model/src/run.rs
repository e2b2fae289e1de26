//! The run.json schema: the environment, the matrix, and per scenario its outcome, results and
//! raw samples. Written by the engine, read by the report.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Matrix, MemoryScenario, ModelError, ThroughputScenario};

/// The version of the layout below. Bump it on any change a reader of an older file would misread.
pub const SCHEMA_VERSION: u32 = 1;

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
    pub throughput: Vec<ThroughputRecord>,
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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GpuInfo {
    pub ordinal: u32,
    pub name: String,
    pub uuid: String,
    pub sm_count: u32,
    pub memory_total_bytes: u64,
    pub memory_free_bytes_at_start: u64,
    pub compute_capability: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NppInfo {
    /// `nppGetLibVersion`, as `major.minor.build`.
    pub version: String,
    /// The file each library was loaded from, in load order.
    pub libraries: Vec<String>,
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
    pub correctness: Correctness,
    /// Streams created and destroyed during the calls, counted with CUPTI; `None` where CUPTI
    /// could not be loaded (see `streams_not_measured`).
    #[serde(default)]
    pub streams: Option<StreamCounts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams_not_measured: Option<String>,
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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThroughputRecord {
    pub scenario: ThroughputScenario,
    pub outcome: Outcome,
    pub result: Option<ThroughputResult>,
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
}

impl RunFile {
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
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ModelError::RunJsonSyntax {
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
        if found != u64::from(SCHEMA_VERSION) {
            let writer = value
                .get("tool")
                .and_then(|t| t.get("version"))
                .and_then(|v| v.as_str())
                .map_or_else(|| "an unknown nppbench".to_owned(), |v| format!("nppbench {v}"));
            return Err(ModelError::SchemaVersion {
                path: path.to_owned(),
                found,
                expected: SCHEMA_VERSION,
                writer,
            });
        }
        serde_json::from_value(value).map_err(|e| foreign(&e.to_string()))
    }
}
