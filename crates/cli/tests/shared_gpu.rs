//! A GPU shared with another process: nppbench names the process in run.json, the report says
//! the GPU was shared, and `compare` refuses to gate on such a run unless told to. The other
//! process is real: this test binary run again as a loader that holds GPU memory and copies in a
//! loop. Skips (saying why) where there is no GPU.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use nppbench_model::RunFile;

fn bin() -> String {
    std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned())
}

/// The loader's side: hold 3 GiB and copy a GiB back and forth until the ready file's folder is
/// gone or a minute has passed. Run only by the test below (it is ignored otherwise).
#[test]
#[ignore = "run by another_process_on_the_gpu_is_named_and_gates_refuse_it, as its loader"]
fn gpu_loader() {
    let Some(ready) = std::env::var_os("NPPBENCH_LOADER_READY") else {
        return;
    };
    let gpu = nppbench_gpu::Gpu::open(0).unwrap();
    let _held = nppbench_gpu::DeviceBuffer::alloc(&gpu, 3 << 30).unwrap();
    let start = Instant::now();
    let mut first = true;
    while start.elapsed() < Duration::from_secs(60) && Path::new(&ready).parent().is_some_and(Path::exists) {
        nppbench_gpu::copy_throughput(&gpu, 1 << 30, 10).unwrap();
        if first {
            std::fs::write(&ready, std::process::id().to_string()).unwrap();
            first = false;
        }
    }
}

const TINY: &str = r#"
name = "tiny"
streams = ["non_blocking"]
threading = ["thread_per_call"]
[settings]
calls = 4
warm_up_ms = 10
measurement_ms = 30
samples = 10
resamples = 1000
[[geometry]]
width = 1920
height = 1080
src_stride = 1920
"#;

/// `nppbench ARGS`, run to the end.
fn nppbench(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Starts the loader (this test binary again) and waits until it holds its memory: the loader
/// and its pid. It goes once `ready`'s folder does.
fn start_loader(ready: &Path) -> (Child, u32) {
    let loader = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "gpu_loader", "--nocapture"])
        .env("NPPBENCH_LOADER_READY", ready)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !ready.exists() && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = std::fs::read_to_string(ready)
        .expect("the loader started")
        .parse()
        .unwrap();
    (loader, pid)
}

#[test]
fn another_process_on_the_gpu_is_named_and_gates_refuse_it() {
    if !nppbench_engine::gpu_available("another_process_on_the_gpu_is_named_and_gates_refuse_it") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("signals").join("ready");
    std::fs::create_dir_all(ready.parent().unwrap()).unwrap();
    let (mut loader, loader_pid) = start_loader(&ready);
    let m = dir.path().join("tiny.toml");
    std::fs::write(&m, TINY).unwrap();
    let shared = dir.path().join("shared");
    let shared = shared.to_str().unwrap();
    let o = nppbench(&["run", "--matrix", m.to_str().unwrap(), "--out", shared]);
    // The loader goes once its folder does.
    std::fs::remove_dir_all(ready.parent().unwrap()).unwrap();
    let _ = loader.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = RunFile::read(&Path::new(shared).join("run.json")).unwrap();
    let named = |list: &[nppbench_model::GpuProcess]| list.iter().any(|p| p.pid == loader_pid);
    assert!(
        named(&run.environment.other_processes),
        "{:?}",
        run.environment.other_processes
    );
    let tp = run.throughput[0].result.as_ref().unwrap();
    assert!(named(&tp.other_processes), "{:?}", tp.other_processes);
    assert!(tp.other_processes.iter().any(|p| p.used_bytes.unwrap_or(0) >= 3 << 30));
    let mem = run.memory[0].result.as_ref().unwrap();
    assert!(named(&mem.other_processes), "{:?}", mem.other_processes);
    the_report_and_compare_say_so(dir.path(), shared, loader_pid);
}

/// The report of a run on a shared GPU says so; compare will not gate on it without
/// --allow-shared-gpu.
fn the_report_and_compare_say_so(dir: &Path, shared: &str, loader_pid: u32) {
    let report = dir.join("report");
    let o = nppbench(&["report", "--from", shared, "--out", report.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(summary.contains("The GPU was shared with other processes"), "{summary}");
    assert!(summary.contains(&format!("PID {loader_pid}")), "{summary}");
    let cmp = dir.join("cmp");
    let gate = [
        "compare",
        shared,
        shared,
        "--out",
        cmp.to_str().unwrap(),
        "--fail-on",
        "regression",
    ];
    let gated = nppbench(&gate);
    assert_eq!(gated.status.code(), Some(2), "{}", stderr(&gated));
    assert!(stderr(&gated).contains("--allow-shared-gpu"));
    let allowed = nppbench(&[&gate[..], &["--allow-shared-gpu"]].concat());
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
}
