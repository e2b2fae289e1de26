//! Fault injection for the fault tests: a probe made to crash, hang or run out of memory.

use std::time::Duration;

use nppbench_gpu::{DeviceBuffer, Gpu};

use crate::error::ProbeError;
use crate::protocol::FAULT_ENV;

/// A test hook for the fault tests: `NPPBENCH_FAULT=KIND@TEXT` makes the probe of every scenario
/// whose id contains TEXT crash (`crash`: SIGABRT), hang (`hang`), ask the device for more
/// memory than it has (`oom`: a real CUDA out-of-memory error, without filling the device), or
/// run a kernel that traps (`trap`: a real poisoned context, the scenario failing with the
/// driver's sticky error).
pub(crate) fn inject(id: &str, gpu: &Gpu) -> Result<(), ProbeError> {
    let Some(spec) = std::env::var_os(FAULT_ENV) else {
        return Ok(());
    };
    let spec = spec.to_string_lossy();
    let Some((kind, target)) = spec.split_once('@') else {
        return Ok(());
    };
    if !id.contains(target) {
        return Ok(());
    }
    match kind {
        "crash" => std::process::abort(),
        "hang" => loop {
            std::thread::sleep(Duration::from_secs(1));
        },
        "trap" => Ok(nppbench_gpu::run_trap_kernel(gpu)?),
        "oom" => {
            let too_much = gpu.props().total_mem.saturating_mul(2);
            Ok(DeviceBuffer::alloc(gpu, too_much).map(drop)?)
        }
        _ => Ok(()),
    }
}
