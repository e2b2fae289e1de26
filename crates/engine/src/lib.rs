//! The measurement engine: runs a matrix of scenarios on the GPU and returns a [`RunFile`].
//!
//! The parent process ([`run`]) never touches the GPU. It starts child probes of its own binary
//! (`nppbench probe …`): one for the environment of each NPP version; for each throughput pass,
//! one per GPU (restarted past any scenario that kills it); and one fresh process per memory
//! scenario, several at once, because the streams NPP hides live until their process exits and
//! would pollute the next baseline.
//!
//! [`RunFile`]: nppbench_model::RunFile

#![forbid(unsafe_code)]

mod env;
mod error;
mod guard;
mod measurement;
mod probe;
mod protocol;
mod runner;

pub use env::{host_info, tool_info};
pub use guard::{gpu_available, gpu_count, gpu_missing};
pub use measurement::{CudaEventTime, DeviceReadings, TimingErrors};
pub use probe::{Resources, run_probe};
pub use protocol::Devices;
pub use runner::{Progress, RunError, RunOptions, run, write_run_json};

/// Loads NPP as a run would (`--npp DIR`, else the default search); needs no GPU.
pub fn load_npp(dir: Option<&std::path::Path>) -> Result<nppbench_npp::Npp, nppbench_npp::LoadError> {
    nppbench_npp::Npp::load(&nppbench_npp::NppSearch::new(dir))
}

/// Ends a probe process once its answer is written, without tearing down the CUDA resources it
/// still holds (see [`nppbench_gpu::exit_now`]): the kernel driver reclaims them.
/// With `NPPBENCH_CLEAN_EXIT=1` (for a profiler that reports at exit, such as Nsight Compute) it
/// tears everything down and exits normally instead.
pub fn end_probe(resources: Resources) -> ! {
    if std::env::var_os("NPPBENCH_CLEAN_EXIT").is_some_and(|v| v == "1") {
        drop(resources);
        std::process::exit(0);
    }
    std::mem::forget(resources);
    nppbench_gpu::exit_now(0)
}

/// The hidden subcommand of the `nppbench` binary that runs one child probe.
pub const PROBE_SUBCOMMAND: &str = "probe";
