//! This process's GPU memory as NVML sees it (`nvmlDeviceGetComputeRunningProcesses`).
//!
//! Device-wide used memory moves with every process on the GPU; NVML's per-process figure moves
//! only with ours, so the two are recorded side by side.

use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;

use crate::GpuError;

/// Reads this process's used memory on one device, matched by UUID.
pub struct ProcessMemoryProbe {
    nvml: Nvml,
    uuid: String,
    pid: u32,
}

impl ProcessMemoryProbe {
    /// Loads NVML (`libnvidia-ml.so.1`, then `libnvidia-ml.so`) for the device with `uuid`.
    pub fn new(uuid: &str) -> Result<ProcessMemoryProbe, GpuError> {
        let nvml = Nvml::builder()
            .lib_path(std::ffi::OsStr::new("libnvidia-ml.so.1"))
            .init()
            .or_else(|_| Nvml::init())
            .map_err(|e| GpuError::Nvml(format!("cannot initialise NVML: {e}")))?;
        nvml.device_by_uuid(uuid)
            .map_err(|e| GpuError::Nvml(format!("no NVML device with UUID {uuid}: {e}")))?;
        Ok(ProcessMemoryProbe {
            nvml,
            uuid: uuid.to_owned(),
            pid: std::process::id(),
        })
    }

    /// The kernel driver's version, e.g. `580.159.04`.
    pub fn driver_version(&self) -> Result<String, GpuError> {
        self.nvml
            .sys_driver_version()
            .map_err(|e| GpuError::Nvml(e.to_string()))
    }

    /// This process's used memory in bytes, or `None` when NVML lists no figure for it (a
    /// process that has not touched the device yet, or a platform that hides it).
    pub fn used_bytes(&self) -> Result<Option<u64>, GpuError> {
        let device = self
            .nvml
            .device_by_uuid(self.uuid.as_str())
            .map_err(|e| GpuError::Nvml(e.to_string()))?;
        let processes = device
            .running_compute_processes()
            .map_err(|e| GpuError::Nvml(format!("nvmlDeviceGetComputeRunningProcesses: {e}")))?;
        Ok(processes
            .iter()
            .find(|p| p.pid == self.pid)
            .and_then(|p| match p.used_gpu_memory {
                UsedGpuMemory::Used(b) => Some(b),
                UsedGpuMemory::Unavailable => None,
            }))
    }
}
