//! Where a library is missing, the GPU layer answers with an error that names it — never a
//! panic (cudarc panics on a missing library, so every entry point checks first). Where the
//! library is there, the same entry points keep their word: a device past the last is named as
//! such, the CUPTI users agree on whether libcupti loads, refuse a second user while one lives
//! and start again once it is dropped, and NVML refuses an unknown UUID but takes a real one.
//! Every test runs, and can fail, on a machine with or without a GPU.

use nppbench_gpu::{Gpu, GpuError, KernelRecorder, ProcessMemoryProbe, StreamTracker};

/// What CUPTI's users say when libcupti cannot be opened.
const NO_CUPTI: &str = "libcupti could not be loaded";

#[test]
fn no_driver_is_an_error_not_a_panic() {
    if Gpu::driver_present() {
        nppbench_model::say_skipped(
            "no_driver_is_an_error_not_a_panic",
            "needs a machine without a CUDA driver",
        );
        return;
    }
    assert!(matches!(Gpu::open(0), Err(GpuError::NoDriver)));
    assert!(matches!(Gpu::device_count(), Err(GpuError::NoDriver)));
    assert!(matches!(Gpu::driver_api_version(), Err(GpuError::NoDriver)));
    let message = Gpu::open(0).err().unwrap().to_string();
    assert!(
        message.contains("libcuda") && message.contains("nppbench report --from RUN.json"),
        "{message}"
    );
}

#[test]
fn a_device_past_the_last_is_named_not_a_panic() {
    let count = match Gpu::device_count() {
        Ok(count) => count,
        Err(GpuError::NoDriver) => {
            assert!(
                !Gpu::driver_present(),
                "a driver is present but the count says there is none"
            );
            assert!(matches!(Gpu::open(usize::MAX), Err(GpuError::NoDriver)));
            return;
        }
        // A driver library without a usable device (a container without its GPU): cuInit says so.
        Err(e) => {
            assert!(matches!(&e, GpuError::Driver { call: "cuInit", .. }), "{e}");
            return;
        }
    };
    for past in [count, usize::MAX] {
        match Gpu::open(past) {
            Err(GpuError::NoDevice { ordinal, count: c }) => {
                assert_eq!((ordinal, c as usize), (past, count));
                let message = GpuError::NoDevice { ordinal, count: c }.to_string();
                assert_eq!(message, format!("no CUDA device {past}: this machine has {count}"));
            }
            Err(e) => panic!("GPU {past} of {count}: {e}"),
            Ok(_) => panic!("GPU {past} opened on a machine of {count}"),
        }
    }
}

/// Whether `e` is CUPTI's error for a libcupti that cannot be opened; any CUPTI error must be
/// [`GpuError::Cupti`], and that one must say where it looked.
fn cupti_missing(e: &GpuError) -> bool {
    assert!(matches!(e, GpuError::Cupti(_)), "not a CUPTI error: {e}");
    let message = e.to_string();
    let missing = message.contains(NO_CUPTI);
    assert!(!missing || message.contains("CUDA toolkit folders"), "{message}");
    missing
}

#[test]
fn missing_cupti_or_nvml_degrades_to_an_error() {
    // CUPTI: the stream tracker and the kernel recorder (one test, since CUPTI is one per
    // process). Both open libcupti the same way, so they agree on whether it loads.
    let tracker = StreamTracker::start();
    let recorder = KernelRecorder::start();
    let tracker_missing = tracker.as_ref().err().is_some_and(cupti_missing);
    let recorder_missing = recorder.as_ref().err().is_some_and(cupti_missing);
    assert_eq!(
        tracker_missing, recorder_missing,
        "the stream tracker and the kernel recorder disagree on whether libcupti loads"
    );
    match recorder {
        // One recorder at a time; a second, refused, leaves the first working, and once it is
        // dropped a new one starts.
        Ok(first) => {
            let second = KernelRecorder::start().err().expect("a second kernel recorder started");
            assert!(
                !cupti_missing(&second) && second.to_string().contains("already running"),
                "{second}"
            );
            let with_copies = KernelRecorder::start_with_copies()
                .err()
                .expect("a second recorder, of copies too, started");
            assert!(with_copies.to_string().contains("already running"), "{with_copies}");
            drop(first);
            assert!(
                KernelRecorder::start().is_ok(),
                "no kernel recorder after the first was dropped"
            );
        }
        // A failed start leaves nothing behind: the next fails the same way.
        Err(first) => {
            let again = KernelRecorder::start()
                .err()
                .expect("a kernel recorder started on a second try");
            assert_eq!(again.to_string(), first.to_string());
            let with_copies = KernelRecorder::start_with_copies()
                .err()
                .expect("a recorder of copies too started where a kernel recorder could not");
            assert_eq!(with_copies.to_string(), first.to_string());
        }
    }
    match tracker {
        // Dropping a tracker unsubscribes it: CUPTI takes one subscriber at a time.
        Ok(first) => {
            drop(first);
            let again = StreamTracker::start();
            assert!(
                again.is_ok(),
                "no stream tracker after the first was dropped: {:?}",
                again.err()
            );
        }
        Err(first) => {
            let again = StreamTracker::start()
                .err()
                .expect("a stream tracker started on a second try");
            assert_eq!(again.to_string(), first.to_string());
        }
    }
    // NVML: the per-process memory probe refuses a UUID no device has, saying whether NVML is
    // missing or the device is; where there is a GPU, NVML finds it by the driver's UUID.
    let zero = "GPU-00000000-0000-0000-0000-000000000000";
    let refused = match ProcessMemoryProbe::new(zero) {
        Ok(_) => panic!("no device has the all-zero UUID"),
        Err(e) => e,
    };
    assert!(matches!(refused, GpuError::Nvml(_)), "{refused}");
    let message = refused.to_string();
    let nvml_missing = message.contains("cannot initialise NVML");
    assert!(
        nvml_missing || message.contains(&format!("no NVML device with UUID {zero}")),
        "{message}"
    );
    if let (false, Ok(gpu)) = (nvml_missing, Gpu::open(0)) {
        let uuid = &gpu.props().uuid;
        assert!(uuid.starts_with("GPU-"), "{uuid}");
        let probe = ProcessMemoryProbe::new(uuid);
        assert!(
            probe.is_ok(),
            "NVML does not know GPU 0's UUID {uuid}: {:?}",
            probe.err()
        );
    }
}

/// This process's memory as the memory probes read it after every call (one NVML listing, its
/// own buffer) is the figure nvml-wrapper's listing gives, and it follows an allocation.
#[test]
fn this_process_memory_is_nvmls_own_figure_and_follows_an_allocation() {
    let Ok(gpu) = Gpu::open(0) else {
        nppbench_model::say_skipped(
            "this_process_memory_is_nvmls_own_figure_and_follows_an_allocation",
            "needs a GPU",
        );
        return;
    };
    let probe = match ProcessMemoryProbe::new(&gpu.props().uuid) {
        Ok(probe) => probe,
        Err(e) => panic!("a GPU without NVML: {e}"),
    };
    let _first = nppbench_gpu::DeviceBuffer::alloc(&gpu, 64 << 20).unwrap();
    let pid = std::process::id();
    let listed = |p: &ProcessMemoryProbe| {
        p.processes()
            .unwrap()
            .into_iter()
            .find(|d| d.pid == pid)
            .and_then(|d| d.used_bytes)
    };
    let before = probe
        .used_bytes()
        .unwrap()
        .expect("NVML lists no figure for a process with a context");
    assert_eq!(Some(before), listed(&probe));
    let _second = nppbench_gpu::DeviceBuffer::alloc(&gpu, 256 << 20).unwrap();
    let after = probe.used_bytes().unwrap().unwrap();
    assert_eq!(Some(after), listed(&probe));
    assert!(
        after >= before + (256 << 20),
        "{before} bytes, then {after} after 256 MiB more"
    );
}
