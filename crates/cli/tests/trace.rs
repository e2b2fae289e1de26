//! `nppbench trace` as a user meets it, no GPU: the program's own exit status comes back, its
//! trace.json is written and says how it ended (a signal included), signals reach the program,
//! calls through the stand-in NPP are summarised, and bad input says what to do.
//!
//! The traced caller is this test binary run again as a child; it links the stand-in's caller,
//! never the interposer (which comes in through `LD_PRELOAD`, as in any traced program).

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use nppbench_model::{TraceEnd, TraceFile};
use nppbench_trace_standin::caller::{self, Plan};

/// Set in the child: the caller runs and exits with this status.
const CHILD: &str = "NPPBENCH_CLI_TRACE_CHILD";
/// Set in the child for a race: `HANDLE,DRIVER`: Convert on the stream HANDLE (declared
/// blocking) of the stand-in driver at DRIVER.
const CHILD_STREAM: &str = "NPPBENCH_CLI_TRACE_CHILD_STREAM";

/// The caller, when run as the child; does nothing in a normal test run.
#[test]
fn caller_child() {
    let Ok(code) = std::env::var(CHILD) else { return };
    let mut plan = Plan {
        threads: 3,
        calls_per_thread: 20,
        symbols: vec!["nppiCopy_8u_C1R_Ctx".into(), "nppiSet_8u_C1R_Ctx".into()],
        ..Plan::default()
    };
    if let Ok(spec) = std::env::var(CHILD_STREAM) {
        let (handle, driver) = spec.split_once(',').unwrap();
        plan.symbols = vec!["nppiConvert_8u32f_C1R_Ctx".into()];
        plan.stream = handle.parse().unwrap();
        plan.driver = Some(PathBuf::from(driver));
        plan.setup = Duration::from_millis(200);
    }
    caller::run(&plan).expect("the caller runs");
    std::process::exit(code.parse().unwrap());
}

/// The interposer cargo built for this test (a dev-dependency), in `target/<profile>/deps`.
fn interposer() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap();
    [
        dir.join(TraceFile::LIB_FILE_NAME),
        dir.join("..").join(TraceFile::LIB_FILE_NAME),
    ]
    .into_iter()
    .find(|p| p.exists())
    .expect("cargo builds libnppbench_trace.so for the tests")
}

fn nppbench() -> Command {
    let bin = std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned());
    let mut cmd = Command::new(bin);
    cmd.env(TraceFile::LIB_VAR, interposer());
    cmd
}

fn trace(out: &Path, program: &[&str]) -> Output {
    nppbench()
        .args(["trace", "--out"])
        .arg(out)
        .arg("--")
        .args(program)
        .output()
        .unwrap()
}

fn read(out: &Path) -> TraceFile {
    let bytes = std::fs::read(out.join(TraceFile::FILE_NAME)).expect("trace.json is written");
    serde_json::from_slice(&bytes).expect("trace.json is valid")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_programs_exit_status_comes_back_and_the_trace_says_how_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let o = trace(dir.path(), &["sh", "-c", "exit 7"]);
    assert_eq!(o.status.code(), Some(7), "{}", text(&o.stderr));
    let t = read(dir.path());
    assert_eq!(t.end, TraceEnd::Exited { code: Some(7) });
    assert_eq!(t.program, ["sh", "-c", "exit 7"]);
    assert!(
        t.capture
            .calls_missing
            .unwrap()
            .contains("no NPP shared library is loaded")
    );
    assert!(
        text(&o.stdout).contains("The program exited with 7"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn a_killed_program_is_marked_with_its_signal() {
    let dir = tempfile::tempdir().unwrap();
    let o = trace(dir.path(), &["sh", "-c", "kill -KILL $$"]);
    assert_eq!(o.status.code(), Some(128 + 9));
    assert_eq!(
        read(dir.path()).end,
        TraceEnd::Signal {
            signal: 9,
            name: "SIGKILL".into()
        }
    );
    assert!(text(&o.stdout).contains("partial"));
}

#[test]
fn sigterm_reaches_the_program_and_the_trace_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut cli = nppbench()
        .args(["trace", "--out"])
        .arg(dir.path())
        .args(["--", "sleep", "30"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Once the program runs with the interposer (its first write), end the command.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.path().join(TraceFile::FILE_NAME).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(Pid::from_raw(cli.id() as i32), Signal::SIGTERM).unwrap();
    let status = cli.wait().unwrap();
    assert_eq!((status.code(), status.signal()), (Some(128 + 15), None));
    assert_eq!(
        read(dir.path()).end,
        TraceEnd::Signal {
            signal: 15,
            name: "SIGTERM".into()
        }
    );
}

/// A regression: the signals held for forwarding were once blocked in the program too.
#[test]
fn the_program_runs_with_the_signal_mask_it_would_have_without_nppbench() {
    let dir = tempfile::tempdir().unwrap();
    let probe = ["grep", "SigBlk", "/proc/self/status"];
    let direct = Command::new(probe[0]).args(&probe[1..]).output().unwrap();
    let traced = trace(dir.path(), &probe);
    let first_line = |o: &Output| text(&o.stdout).lines().next().unwrap_or("").to_owned();
    assert!(first_line(&direct).starts_with("SigBlk:"));
    assert_eq!(first_line(&traced), first_line(&direct));
}

#[test]
fn calls_through_the_stand_in_are_counted_and_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let me = std::env::current_exe().unwrap();
    let o = nppbench()
        .args(["trace", "--out"])
        .arg(dir.path())
        .arg("--")
        .arg(&me)
        .args(["--exact", "caller_child", "--nocapture", "--test-threads", "1"])
        .env(CHILD, "5")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    let t = read(dir.path());
    assert_eq!(t.end, TraceEnd::Exited { code: Some(5) });
    let calls: u64 = t.call_sites.iter().map(|s| s.calls).sum();
    assert_eq!(calls, 60);
    assert_eq!(t.call_sites.len(), 2);
    assert_eq!(t.threads.iter().filter(|t| t.calls == 20).count(), 3);
    let out = text(&o.stdout);
    assert!(
        out.contains("60 NPP calls of 2 functions at 2 call sites on 3 threads"),
        "{out}"
    );
    assert!(out.contains("ns a call ("), "{out}");
    assert!(out.contains("ns on a thread's first call"), "{out}");
    // Three threads, each with a first call. NVML never lists a process without a CUDA
    // context: the trace falls back to the devices' memory, or (without NVML) says why not.
    assert_eq!(t.capture.first_call_overhead.calls, 3);
    // The process's first call is one of the threads' first, and no call cost more than the
    // costliest.
    let (first, costliest) = (
        t.capture.process_first_call_ns.unwrap(),
        t.capture.costliest_call_ns.unwrap(),
    );
    assert!(
        first <= costliest && costliest <= t.overhead.recording_ns,
        "{first} {costliest}"
    );
    assert!(out.contains("the process's first"), "{out}");
    assert!(
        t.capture.memory_missing.is_some() || t.capture.memory_device_wide.is_some(),
        "{:?}",
        t.capture
    );
}

/// #29 item 5: `--fail-on race` exits 3 where a call was made with work pending on its stream
/// in a configuration that can race (no --atlas: any such site), and 0 where none was; the
/// message names the gate, the sites and the worst. `--fail-on leak` does not trip on it.
#[test]
fn fail_on_race_trips_where_a_call_had_work_pending() {
    let dir = tempfile::tempdir().unwrap();
    let driver = nppbench_trace_standin::driver::install(dir.path()).unwrap();
    let me = std::env::current_exe().unwrap();
    let run = |handle: u64, gates: &str, out: &str| {
        nppbench()
            .args(["trace", "--fail-on", gates, "--out"])
            .arg(dir.path().join(out))
            .arg("--")
            .arg(&me)
            .args(["--exact", "caller_child", "--nocapture", "--test-threads", "1"])
            .env(CHILD, "0")
            .env(CHILD_STREAM, format!("{handle},{}", driver.display()))
            .env("LD_LIBRARY_PATH", dir.path())
            // Every call asked, for exact counts (by default, within a budget).
            .env("NPPBENCH_TRACE_ASK_PENDING", "all")
            .output()
            .unwrap()
    };
    // Bit 5 of the handle: the stand-in driver says the stream has work queued.
    let pending = 0x7f00_1234_5020_u64;
    assert!(nppbench_trace_standin::driver::pending_for(pending));
    let o = run(pending, "leak,race", "pending");
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("race: 1 call site(s) called with work pending on their stream, the most nppiConvert_8u32f_C1R_Ctx 64x32: 60 of 60 calls asked, 60 in all"),
        "{err}"
    );
    assert!(err.contains("fails --fail-on race;"), "{err}");
    assert_eq!(
        read(&dir.path().join("pending")).call_sites[0].calls_with_work_pending,
        60
    );
    let o = run(pending, "leak", "leak-only");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run(0x7f00_1234_5000, "leak,race", "idle");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn bad_input_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let o = trace(dir.path(), &["no-such-program-nppbench"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("not found"), "{}", text(&o.stderr));

    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = trace(&file, &["true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("is a file"), "{}", text(&o.stderr));

    let o = nppbench().args(["trace", "--out"]).arg(dir.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "no program: a usage error");

    let o = nppbench()
        .env(TraceFile::LIB_VAR, dir.path().join("missing.so"))
        .args(["trace", "--out"])
        .arg(dir.path())
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.contains("cargo xtask install") && err.contains("missing.so"),
        "{err}"
    );
}

/// `trace --npp /nonexistent` exited 1 where `run --npp` exits 2; checked before the interposer
/// is looked for.
#[test]
fn npp_that_is_no_folder_is_bad_input_as_for_run() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_nppbench"))
        .env(TraceFile::LIB_VAR, dir.path().join("missing.so"))
        .args(["trace", "--npp", "/nonexistent", "--out"])
        .arg(dir.path())
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("--npp /nonexistent: no such folder"),
        "{}",
        text(&o.stderr)
    );
}

/// After `cargo install --path crates/cli` the interposer was missing and the error said to build
/// it: nppbench copied alone into a folder says where it looked and how to install both.
#[test]
fn an_installed_nppbench_without_its_interposer_names_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("nppbench");
    std::fs::copy(env!("CARGO_BIN_EXE_nppbench"), &exe).unwrap();
    let o = Command::new(&exe)
        .env_remove(TraceFile::LIB_VAR)
        .args(["trace", "--out"])
        .arg(dir.path().join("out"))
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    let beside = dir.path().join(TraceFile::LIB_FILE_NAME);
    assert!(err.contains(&format!("tried {}", beside.display())), "{err}");
    assert!(err.contains("cargo xtask install"), "{err}");
}

/// Without a GPU `trace` never said so: only that streams and memory were not measured.
#[test]
fn trace_without_a_gpu_says_so() {
    if ["/proc/driver/nvidia/version", "/dev/nvidia0"]
        .iter()
        .any(|f| Path::new(f).exists())
    {
        nppbench_model::say_skipped("trace_without_a_gpu_says_so", "needs a machine without a GPU");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = trace(dir.path(), &["true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("no NVIDIA GPU or driver here"),
        "{}",
        text(&o.stderr)
    );
}
