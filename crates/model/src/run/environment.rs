//! What a run.json records of the machine: GPUs, driver, NPP, host, and other processes.

use serde::{Deserialize, Serialize};

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
