//! Where a library is missing, the GPU layer answers with an error that names it — never a
//! panic (cudarc panics on a missing library, so every entry point checks first). On a machine
//! with the libraries these calls may succeed; what is tested is that none of them panics.

use nppbench_gpu::{Gpu, GpuError, KernelRecorder, ProcessMemoryProbe, StreamTracker};

#[test]
fn no_driver_is_an_error_not_a_panic() {
    if Gpu::driver_present() {
        eprintln!("skipped no_driver_is_an_error_not_a_panic: needs a machine without a CUDA driver");
        return;
    }
    assert!(matches!(Gpu::open(0), Err(GpuError::NoDriver)));
    assert!(Gpu::driver_api_version().is_err());
    let message = Gpu::open(0).err().unwrap().to_string();
    assert!(message.contains("libcuda") && message.contains("--from"), "{message}");
}

#[test]
fn missing_cupti_or_nvml_degrades_to_an_error() {
    // CUPTI: the stream tracker and the kernel recorder.
    match StreamTracker::start() {
        Ok(_) => {}
        Err(e) => assert!(e.to_string().contains("CUPTI"), "{e}"),
    }
    match KernelRecorder::start() {
        Ok(_) => {}
        Err(e) => assert!(e.to_string().contains("CUPTI"), "{e}"),
    }
    // NVML: the per-process memory probe.
    match ProcessMemoryProbe::new("GPU-00000000-0000-0000-0000-000000000000") {
        Ok(_) => panic!("no device has the all-zero UUID"),
        Err(e) => assert!(e.to_string().contains("NVML"), "{e}"),
    }
}
