//! `--memory-readings shared`: the run's parent lists each GPU's compute processes for all of that
//! GPU's memory probes (`nppbench_gpu::ListingServer`), from a socket a GPU in a folder of its own
//! that the probes find through `nppbench_gpu::LISTINGS_ENV`.

use nppbench_gpu::{LISTINGS_ENV, ListingServer, ProcessMemoryProbe, socket_path};

use crate::runner::RunError;

/// The listing servers of a memory phase, one a GPU, stopped and their folder removed when
/// dropped.
pub(super) struct Listings {
    // Dropped before the folder that holds their sockets.
    _servers: Vec<ListingServer>,
    dir: tempfile::TempDir,
}

impl Listings {
    /// Starts one server for each GPU `(ordinal, uuid)`, each with NVML loaded in this process.
    pub(super) fn start(gpus: &[(u32, String)]) -> Result<Listings, RunError> {
        let dir = tempfile::Builder::new()
            .prefix("nppbench-listings-")
            .tempdir()
            .map_err(|e| RunError::Environment(format!("cannot make a folder for the memory listings: {e}")))?;
        let mut servers = Vec::new();
        for (_, uuid) in gpus {
            let unavailable = |e: nppbench_gpu::GpuError| {
                RunError::Environment(format!(
                    "--memory-readings shared: {e}; run with --memory-readings own, where each probe lists for itself"
                ))
            };
            let nvml = ProcessMemoryProbe::new(uuid).map_err(unavailable)?;
            let server = ListingServer::start(&socket_path(dir.path(), uuid), move || nvml.list_compute());
            servers.push(server.map_err(unavailable)?);
        }
        Ok(Listings { _servers: servers, dir })
    }

    /// The variable that sends the probes to these servers.
    pub(super) fn env(&self) -> (&'static str, String) {
        (LISTINGS_ENV, self.dir.path().display().to_string())
    }
}
