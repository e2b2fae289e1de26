//! The GPU layer: the CUDA driver (through cudarc) and NVML, wrapped in the few safe types the
//! engine needs — a device on its primary context, pitched buffers, the four stream kinds, event
//! timing and two memory probes.
//!
//! Everything is loaded at run time: a machine without CUDA builds and tests this crate, and a
//! missing driver is an error, never a panic.

mod context;
mod error;
mod event;
mod hidden_streams;
mod kernel_records;
mod listings;
mod memory;
mod nvml;
mod process;
mod reference;
mod stream;
use nppbench_npp_sys::toolkit;

pub use context::{DeviceProps, Gpu};
pub use error::GpuError;
pub use event::{EventPair, copy_throughput};
pub use hidden_streams::{StreamEvent, StreamTracker, thread_id};
pub use kernel_records::{COPY_RECORD, FILL_RECORD, KernelRecord, KernelRecorder};
pub use listings::{LISTINGS_ENV, ListingClient, ListingServer, socket_path};
pub use memory::{DeviceBuffer, HostBuffer};
pub use nvml::{DeviceReading, ProcessMemoryProbe};
pub use process::DeviceProcess;
pub use reference::{DelayKernel, ReferenceConvert, run_trap_kernel};
pub use stream::Stream;

/// Ends the process at once with `code`, running no destructor and no exit handler: a probe
/// whose answer is written leaves the CUDA context, CUPTI and NVML for the kernel driver to
/// reclaim, instead of tearing each down in turn (tens to hundreds of milliseconds a probe).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit has no preconditions; it never returns.
    unsafe { libc::_exit(code) }
}

/// Raw driver types for the crates that hand them to NVIDIA libraries (NPP takes a `cudaStream_t`).
pub use cudarc::driver::sys::CUstream;
