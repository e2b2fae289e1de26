//! The GPU layer's error type: which driver or NVML call failed, and with what.

use cudarc::driver::DriverError;

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error(
        "no CUDA driver library (libcuda.so) could be loaded: install the NVIDIA driver, or run on a machine with an NVIDIA GPU; to render a report of a run made elsewhere, use `nppbench report --from RUN.json --out DIR`"
    )]
    NoDriver,
    #[error("{call}: {name} ({message})")]
    Driver {
        call: &'static str,
        name: String,
        message: String,
    },
    #[error("no CUDA device {ordinal}: this machine has {count}")]
    NoDevice { ordinal: usize, count: i32 },
    #[error("NVML: {0}")]
    Nvml(String),
    #[error("CUPTI: {0}")]
    Cupti(String),
    #[error("NVRTC: {0}")]
    Nvrtc(String),
}

impl GpuError {
    pub(crate) fn driver(call: &'static str) -> impl FnOnce(DriverError) -> GpuError {
        move |e| GpuError::Driver {
            call,
            name: e
                .error_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|_| format!("CUresult {:?}", e.0)),
            message: e
                .error_string()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }

    /// Whether the device ran out of memory.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, GpuError::Driver { name, .. } if name.contains("OUT_OF_MEMORY"))
    }
}
