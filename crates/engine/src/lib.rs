//! The measurement engine: runs a matrix of scenarios on the GPU and returns a [`RunFile`].
//!
//! The parent process ([`run`]) never touches the GPU. It starts child probes of its own binary
//! (`nppbench probe …`): one for the environment of each NPP version; for each throughput pass,
//! one per GPU (restarted past any scenario that kills it); and, for the memory scenarios, fresh
//! processes that measure a batch each, several at once, every scenario on host threads made for
//! it: the streams NPP hides are kept per thread until the process exits, so a scenario whose
//! threads have never met NPP finds it as a fresh process would.
//!
//! [`RunFile`]: nppbench_model::RunFile

#![forbid(unsafe_code)]

mod catalogue;
mod error;
mod gpu_presence;
mod measurement;
mod probe;
mod protocol;
mod provenance;
mod runner;

pub use catalogue::{CatalogueCalls, GpuTurns, ORACLE_HEIGHT, ORACLE_WIDTH, Shapes, append_line, call_catalogue_from};
pub use gpu_presence::{gpu_available, gpu_count, gpu_missing};
pub use measurement::{CudaEventTime, DeviceReadings, TimingErrors};
pub use nppbench_npp::is_missing_library;
pub use probe::{Resources, end_probe, run_probe};
pub use protocol::{Devices, PROBE_SUBCOMMAND};
pub use provenance::{host_info, tool_info};
pub use runner::{Expected, Progress, RunError, RunOptions, expected, planned_batches, run, write_run_json};

/// Loads NPP as a run would (`--npp DIR`, else the default search); needs no GPU.
pub fn load_npp(dir: Option<&std::path::Path>) -> Result<nppbench_npp::Npp, nppbench_npp::LoadError> {
    nppbench_npp::Npp::load(&nppbench_npp::NppSearch::new(dir))
}
