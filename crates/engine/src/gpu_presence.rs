//! Whether this machine has what a GPU test needs (a driver, a device, an NPP): the one guard
//! every GPU test goes through.

use nppbench_gpu::Gpu;
use nppbench_npp::{Npp, NppSearch};

use crate::protocol::REQUIRE_GPU_ENV;

/// What a GPU test would lack here (a driver, a device, an NPP), or `None` when nothing.
pub fn gpu_missing() -> Option<String> {
    if !Gpu::driver_present() {
        Some("no CUDA driver library".to_owned())
    } else if let Err(e) = Gpu::open(0) {
        Some(e.to_string())
    } else if let Err(e) = Npp::load(&NppSearch::new(None)) {
        Some(e.to_string().lines().next().unwrap_or_default().to_owned())
    } else {
        None
    }
}

/// How many GPUs this machine has (0 without a driver).
pub fn gpu_count() -> usize {
    Gpu::device_count().unwrap_or(0)
}

/// Whether a GPU test can run here. When not, says why the test `name` is skipped (past the test
/// harness's capture: [`nppbench_model::say_skipped`]) and returns
/// `false` — unless `NPPBENCH_REQUIRE_GPU=1`, where a missing GPU fails the test instead (set on
/// the GPU machine, so that nothing skips silently there).
pub fn gpu_available(name: &str) -> bool {
    match gpu_missing() {
        None => true,
        Some(why) if std::env::var_os(REQUIRE_GPU_ENV).is_some_and(|v| v == "1") => {
            panic!("{name}: {REQUIRE_GPU_ENV}=1 but {why}")
        }
        Some(why) => {
            nppbench_model::say_skipped(name, &format!("needs a GPU ({why})"));
            false
        }
    }
}
