//! The interposer in front of the stand-in NPP, no GPU: this test binary, run again as a child
//! with `libnppbench_trace.so` preloaded, loads the stand-in as a program linked against NPP has
//! it and calls its symbols; the stand-in logs what reached it. Arguments, thread ids and
//! statuses must pass through unchanged, no call may be lost under many threads, a program that
//! exits early or is killed must leave a valid trace.json, and a new thread's first call must
//! ask the driver the program loaded (a copy of the stand-in as the CUDA driver, found by name).
//! `shield.rs` and `stage.rs` run the child shielded.
//! The binary links the stand-in's caller, never the interposer's rlib (the two define the same
//! symbols): the interposer comes in through `LD_PRELOAD` only, as in a traced program.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use nppbench_model::{TraceEnd, TraceFile, TraceStreamKind};
use nppbench_npp_sys::NppiSize;
use nppbench_trace_standin::caller::{self, Plan};
use nppbench_trace_standin::{FAILING_WIDTH, status_for};

mod shield;
mod stage;

/// The child's plan, `key=value;…` (threads, calls, symbols, widths, stream, flags, device, then).
const CHILD: &str = "NPPBENCH_TRACE_TEST_CHILD";
/// Where the child writes what it called.
const RECORDS: &str = "NPPBENCH_TRACE_TEST_RECORDS";

fn spec_value<'a>(spec: &'a str, key: &str) -> Option<&'a str> {
    spec.split(';').find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

fn plan(spec: &str) -> Plan {
    let num = |k: &str, d: u64| spec_value(spec, k).map_or(d, |v| v.parse().unwrap());
    let list = |k: &str| spec_value(spec, k).map(|v| v.split(',').map(str::to_owned).collect::<Vec<_>>());
    Plan {
        threads: num("threads", 1) as usize,
        calls_per_thread: num("calls", 1) as usize,
        symbols: list("symbols").unwrap_or_default(),
        rois: list("widths").map_or(Plan::default().rois, |w| {
            w.iter()
                .map(|w| NppiSize {
                    width: w.parse().unwrap(),
                    height: 32,
                })
                .collect()
        }),
        src_step: num("src_step", 256) as i32,
        dst_step: num("dst_step", 512) as i32,
        stream: num("stream", 0),
        flags: num("flags", 0) as u32,
        device: num("device", 0) as i32,
        one_thread_at_a_time: num("one_at_a_time", 0) == 1,
        driver: spec_value(spec, "driver").map(PathBuf::from),
        setup: Duration::from_millis(num("setup_ms", 0)),
        stream_created: (num("stream_per_thread", 0) == 1).then(lifecycle::stream_hook),
    }
}

/// Waits until the child's own trace holds `calls` calls (a write after them happened).
fn wait_for_write(calls: u64) {
    let out = std::env::var_os(TraceFile::OUT_VAR).expect("the trace's path is set");
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        let written = std::fs::read(&out)
            .ok()
            .and_then(|b| serde_json::from_slice::<TraceFile>(&b).ok());
        if written.is_some_and(|t| t.overhead.calls == calls) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::process::exit(99);
}

/// The caller, when run as the child; does nothing in a normal test run.
#[test]
fn caller_child() {
    let Ok(spec) = std::env::var(CHILD) else { return };
    let then = spec_value(&spec, "then").unwrap_or("return");
    let mut text = String::new();
    if then != "no_npp" {
        let plan = plan(&spec);
        let calls = caller::run(&plan).expect("the caller runs");
        text.push_str(&format!("resolved\t{}\n", calls.resolved_in.join(",")));
        let asked = calls.flags_asked.map_or_else(|| "-".to_owned(), |n| n.to_string());
        text.push_str(&format!("flags_asked\t{asked}\n"));
        for r in &calls.records {
            let line = format!(
                "{}\t{}\t{}\t{}\t{}\t{}\n",
                r.symbol, r.tid, r.status, r.roi.0, r.roi.1, r.sent
            );
            text.push_str(&line);
        }
        std::fs::write(std::env::var_os(RECORDS).unwrap(), text).unwrap();
        if then == "kill" {
            wait_for_write(calls.records.len() as u64);
            // SAFETY: signals this process; SIGKILL ends it at once.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        // A service stopped the ordinary way: the signal, its action the default, at once.
        let signal = match then {
            "term" => Some(libc::SIGTERM),
            "int" => Some(libc::SIGINT),
            "hup" => Some(libc::SIGHUP),
            _ => None,
        };
        if let Some(sig) = signal {
            // SAFETY: signals this process.
            unsafe { libc::kill(libc::getpid(), sig) };
            std::thread::sleep(Duration::from_secs(10));
        }
        // A fork without exec, both processes calling on.
        if then == "fork" {
            // SAFETY: fork; the child calls (the stand-in) and exits without returning here.
            let child = unsafe { libc::fork() };
            let again = caller::run(&plan).expect("the caller runs again");
            if child == 0 {
                // SAFETY: ends the forked child at once, through the interposed `_exit`.
                unsafe { libc::_exit(if again.records.is_empty() { 1 } else { 0 }) };
            }
            let mut status = 0;
            // SAFETY: waits for the child just forked.
            unsafe { libc::waitpid(child, &mut status, 0) };
            assert_eq!(status, 0, "the forked child's calls");
        }
        if then == "term_in_callbacks" {
            lifecycle::term_in_callbacks(&spec);
        }
        // Killed past two flush intervals, without waiting for any write.
        if then == "kill_late" {
            std::thread::sleep(Duration::from_millis(1_200));
            // SAFETY: as above.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
    }
    if then == "exit" {
        std::process::exit(3);
    }
}

/// One call as the child recorded it.
struct Record {
    symbol: String,
    tid: i64,
    status: i32,
    width: i32,
    height: i32,
    sent: String,
}

struct Run {
    status: ExitStatus,
    trace: TraceFile,
    resolved_in: String,
    /// How often the stand-in driver was asked a stream's flags (`driver=1`).
    flags_asked: Option<u64>,
    records: Vec<Record>,
    /// The stand-in's lines.
    log: Vec<String>,
    /// The traces beside trace.json (`trace-<pid>.json`), of processes the child started.
    descendants: Vec<TraceFile>,
}

fn interposer() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap();
    [
        dir.join(TraceFile::LIB_FILE_NAME),
        dir.join("..").join(TraceFile::LIB_FILE_NAME),
    ]
    .into_iter()
    .find(|p| p.exists())
    .expect("cargo builds libnppbench_trace.so beside the test")
}

fn read_trace(path: &Path) -> TraceFile {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).expect("trace.json is valid")
}

fn run_child(spec: &str) -> Run {
    run_child_with(spec, &[])
}

fn run_child_with(spec: &str, env: &[(&str, &str)]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let (trace, records, log) = (
        dir.path().join("trace.json"),
        dir.path().join("records"),
        dir.path().join("standin.log"),
    );
    // `driver=1`: a stand-in CUDA driver, found by name on the child's library path.
    let spec = match spec_value(spec, "driver") {
        Some("1") => {
            let driver = nppbench_trace_standin::driver::install(dir.path()).unwrap();
            // A decoy beside it, as a machine has another libcuda than the one a program loads
            // (CUDA's forward-compatibility folder): a lookup by name finds the decoy first.
            std::fs::copy(&driver, dir.path().join("libcuda.so")).unwrap();
            spec.replace("driver=1", &format!("driver={}", driver.display()))
        }
        _ => spec.to_owned(),
    };
    let mut child = Command::new(std::env::current_exe().unwrap());
    // Signals at their defaults: a harness started in the background inherits SIGINT ignored.
    // SAFETY: `signal` is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut child, || {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    let out = child
        .args(["--exact", "caller_child", "--nocapture", "--test-threads", "1"])
        .env(CHILD, &spec)
        .env("LD_LIBRARY_PATH", dir.path())
        .env(RECORDS, &records)
        .env(nppbench_trace_standin::LOG, &log)
        .env(TraceFile::OUT_VAR, &trace)
        .env_remove(TraceFile::PARENT_VAR)
        .env("LD_PRELOAD", interposer())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&records).unwrap_or_default();
    let mut lines = text.lines();
    let resolved_in = lines.next().unwrap_or("").trim_start_matches("resolved\t").to_owned();
    let flags_asked = lines
        .next()
        .and_then(|l| l.trim_start_matches("flags_asked\t").parse().ok());
    let records = lines
        .map(|l| {
            let f: Vec<&str> = l.splitn(6, '\t').collect();
            Record {
                symbol: f[0].into(),
                tid: f[1].parse().unwrap(),
                status: f[2].parse().unwrap(),
                width: f[3].parse().unwrap(),
                height: f[4].parse().unwrap(),
                sent: f[5].into(),
            }
        })
        .collect();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    Run {
        status: out.status,
        trace: read_trace(&trace),
        resolved_in,
        flags_asked,
        records,
        log: log.lines().map(str::to_owned).collect(),
        descendants: std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(TraceFile::DESCENDANT_PREFIX) && n.ends_with(".json"))
            })
            .map(|p| read_trace(&p))
            .collect(),
    }
}

fn sorted(v: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = v.into_iter().collect();
    v.sort();
    v
}

#[test]
fn arguments_thread_ids_and_statuses_pass_through_unchanged() {
    let n = caller::symbols().len();
    let widths = format!("64,{FAILING_WIDTH}");
    let run = run_child(&format!(
        "threads=4;calls={};widths={widths};stream=2;flags=1;device=3",
        2 * n
    ));
    assert!(run.status.success(), "{:?}", run.status);
    assert_eq!(run.resolved_in, TraceFile::LIB_FILE_NAME, "the interposer is in front");
    assert_eq!(run.records.len(), 4 * 2 * n);
    for r in &run.records {
        let roi = NppiSize {
            width: r.width,
            height: r.height,
        };
        assert_eq!(r.status, status_for(roi), "{}: the status came back changed", r.symbol);
    }
    assert!(run.records.iter().any(|r| r.status != 0), "some calls fail");
    // Every argument and the thread each call ran on, as sent and as received.
    assert_eq!(
        sorted(run.log.clone()),
        sorted(run.records.iter().map(|r| r.sent.clone()))
    );
    let t = &run.trace;
    assert_eq!(t.end, TraceEnd::Exited { code: None });
    assert_eq!(t.capture.functions_interposed as usize, n);
    assert_eq!(t.capture.calls_missing, None);
    assert_eq!(t.overhead.calls, run.records.len() as u64);
    assert!(t.overhead.recording_ns > 0);
    // Sites: each function at each ROI, with the plan's context.
    let mut expected: BTreeMap<(String, i32), (u64, i32)> = BTreeMap::new();
    for r in &run.records {
        let e = expected.entry((r.symbol.clone(), r.width)).or_insert((0, r.status));
        e.0 += 1;
    }
    let mut got: BTreeMap<(String, i32), (u64, i32)> = BTreeMap::new();
    for s in &t.call_sites {
        assert_eq!((s.height, s.declared_flags, s.device), (32, 1, 3), "{s:?}");
        assert_eq!((s.stream, s.real_flags), (TraceStreamKind::PerThreadDefault, None));
        assert_eq!(
            s.dst_stride,
            Some(512).filter(|_| !s.function.starts_with("nppiSum")
                && !s.function.starts_with("nppiMean")
                && !s.function.starts_with("nppiMinMax"))
        );
        assert_eq!(s.src_stride, Some(256).filter(|_| !s.function.starts_with("nppiSet")));
        assert_eq!(s.statuses.len(), 1, "{s:?}");
        let prev = got.insert((s.function.clone(), s.width), (s.calls, s.statuses[0].status));
        assert!(prev.is_none(), "one site per function and ROI");
    }
    assert_eq!(got, expected);
    let tids: BTreeSet<i64> = run.records.iter().map(|r| r.tid).collect();
    let traced: BTreeSet<i64> = t.threads.iter().filter(|t| t.calls > 0).map(|t| t.tid).collect();
    assert_eq!(traced, tids);
    assert!(t.threads.iter().all(|t| t.calls == 2 * n as u64));
}

#[test]
fn many_threads_lose_no_call() {
    let symbol = "nppiConvert_8u32f_C1R_Ctx";
    let run = run_child(&format!("threads=32;calls=1000;symbols={symbol}"));
    assert!(run.status.success(), "{:?}", run.status);
    assert_eq!(run.log.len(), 32_000);
    let t = &run.trace;
    assert_eq!(t.call_sites.len(), 1);
    let s = &t.call_sites[0];
    assert_eq!(
        (s.function.as_str(), s.calls, s.threads, s.first_call_threads),
        (symbol, 32_000, 32, 32)
    );
    assert_eq!(t.threads.len(), 32);
    assert!(
        t.threads.iter().all(|t| t.calls == 1000 && t.exited == Some(true)),
        "{:?}",
        t.threads
    );
    assert_eq!(t.overhead.calls, 32_000);
}

/// More new threads than the writer keeps feeds ready for: the threads that find none make their
/// own, and still lose no call. 1,500 threads start within the writer's first ticks, which ready
/// 256 feeds each (with the fallback broken, 59 of them went missing on a 2-core machine).
#[test]
fn more_new_threads_than_spares_lose_no_call() {
    let threads = 1500;
    let run = run_child(&format!("threads={threads};calls=50;symbols=nppiConvert_8u32f_C1R_Ctx"));
    assert!(run.status.success(), "{:?}", run.status);
    assert_eq!(run.log.len(), threads * 50);
    let t = &run.trace;
    assert_eq!(t.threads.iter().filter(|t| t.calls == 50).count(), threads);
    assert_eq!(t.overhead.calls, threads as u64 * 50);
}

#[test]
fn a_program_that_exits_early_leaves_a_valid_trace() {
    let run = run_child("threads=2;calls=10;then=exit");
    assert_eq!(run.status.code(), Some(3));
    assert_eq!(run.trace.end, TraceEnd::Exited { code: None });
    assert_eq!(run.trace.overhead.calls, 20);
}

#[test]
fn a_killed_program_leaves_a_valid_partial_trace_that_says_so() {
    let run = run_child("threads=2;calls=10;then=kill");
    assert_eq!(run.status.signal(), Some(libc::SIGKILL), "{:?}", run.status);
    assert_eq!(run.trace.end, TraceEnd::Running);
    assert!(run.trace.end.is_partial());
    assert_eq!(run.trace.overhead.calls, 20);
}

#[test]
fn a_program_that_loads_no_npp_is_told_apart() {
    let run = run_child("then=no_npp");
    assert!(run.status.success());
    assert!(run.trace.call_sites.is_empty());
    let why = run.trace.capture.calls_missing.unwrap();
    assert!(why.contains("no NPP shared library is loaded"), "{why}");
    assert!(run.trace.program[0].contains("interpose"), "{:?}", run.trace.program);
}

/// A stream the stand-in driver calls non-blocking (bit 4 set; see `driver::flags_for`).
const CREATED_STREAM: u64 = 0x7f00_1234_5010;

/// Regressions named after what broke. Recording cost 12.4 µs a call in a program making each
/// call on a new thread (the GPU evidence; 0.16 µs in a loop): every thread's first call looked
/// the CUDA driver up again, by cudarc's candidate names. And on the GPU machine that lookup
/// found the machine's libcuda rather than the stand-in the child had loaded, and called it
/// with the stand-in's handles: the child crashed. Here a decoy `libcuda.so` sits beside the
/// loaded stand-in driver: the interposer must ask the driver the program mapped (its counter
/// counts every question), once per process and stream: a thread that makes its first call with a
/// stream another thread's call asked about reads the flags from the interposer's cache (asking
/// cost 0.35 to 0.45 µs of a thread's first call on the GPU machine). What the first call costs
/// against a later one is printed, not asserted: timings are checked by the overhead bench and by
/// the figures a trace records (`first_call_overhead`).
#[test]
fn the_driver_asked_is_the_one_the_program_loaded_once_per_stream() {
    let spec = format!(
        "threads=200;calls=4;one_at_a_time=1;symbols=nppiConvert_8u32f_C1R_Ctx;stream={CREATED_STREAM};driver=1;setup_ms=300"
    );
    let run = run_child(&spec);
    assert!(run.status.success(), "{:?}", run.status);
    let t = &run.trace;
    assert_eq!(
        t.call_sites[0].real_flags,
        Some(nppbench_trace_standin::driver::flags_for(CREATED_STREAM))
    );
    assert_eq!(run.flags_asked, Some(1), "the loaded driver, asked once per stream");
    assert_eq!(t.capture.flags_asked, Some(1), "and the trace counts that one call");
    let first = t.capture.first_call_overhead;
    assert_eq!((first.calls, t.overhead.calls), (200, 800));
    eprintln!(
        "a new thread's first call: {:.0} ns; a later call: {:.0} ns",
        first.per_call_ns().unwrap(),
        t.overhead.less(&first).per_call_ns().unwrap()
    );
}

#[test]
fn memory_is_sampled_once_more_at_exit_and_says_whose_it_is() {
    let run = run_child("threads=1;calls=3;setup_ms=150");
    assert!(run.status.success(), "{:?}", run.status);
    let t = &run.trace;
    let last_call = t.call_sites.iter().map(|s| s.last_s).fold(0.0, f64::max);
    let last_sample = t.memory.last().expect("samples").t_s;
    assert!(last_sample >= last_call, "{last_sample} < {last_call}");
    // This process never made a CUDA context, so NVML never lists it: its devices' memory, or
    // (without NVML) why not.
    assert!(
        t.capture.memory_missing.is_some() || t.capture.memory_device_wide.is_some(),
        "{:?}",
        t.capture
    );
}

mod lifecycle;
