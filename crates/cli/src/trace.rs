//! `nppbench trace`: runs a program with the interposer preloaded and renders what it recorded.
//!
//! The interposer (`nppbench-trace`, `libnppbench_trace.so`) writes DIR/trace.json from inside
//! the program; this command starts the program with it, passes SIGTERM and SIGHUP on (and
//! SIGINT where no terminal gave the program its own), waits, records how the program ended in
//! the file (writing one where the program left none) and exits with the program's own status.
//! The names both sides use are [`TraceFile`]'s.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use nix::sys::signal::{SigSet, Signal, kill};
use nix::unistd::Pid;
use nppbench_model::{TraceEnd, TraceFile};

use nppbench_analysis::trace::gates::{TraceGate, tripped};

use crate::exit::bad_input;

mod interposer;
mod summary;
pub(crate) use interposer::interposer;
use summary::summary;

#[derive(Debug, Args)]
pub(crate) struct TraceArgs {
    /// The folder trace.json and its page are written to.
    #[arg(long, value_name = "DIR", default_value = "nppbench-trace")]
    pub(crate) out: PathBuf,
    /// The folder holding NPP's libraries to run the program against (put first on
    /// LD_LIBRARY_PATH); by default the program's own.
    #[arg(long, value_name = "DIR")]
    pub(crate) npp: Option<PathBuf>,
    /// Atlas runs (or a knowledge file) whose rules and fixes the page shows beside each call
    /// site, and the gates use; default: the knowledge built into nppbench of the NPP version the
    /// program loaded (none where nppbench has none of that version).
    #[arg(long, value_name = "RUN")]
    pub(crate) atlas: Vec<PathBuf>,
    /// Gates, comma-separated: `leak` trips where new threads keep NPP's streams (memory grows
    /// for as long as the program makes new threads); `race` trips where a call site was called
    /// while its stream still had work queued, in a configuration the atlas does not call ordered
    /// (with no knowledge of the program's NPP, any such site: its calls could race); `wrong`
    /// trips where a call site's configuration computes wrong pixels with every call
    /// synchronised, as the atlas says (measured, or by its function's rule; with no knowledge of
    /// the program's NPP it cannot trip). Calls are asked
    /// within a budget, the first always, then while the recording of the calls that can race,
    /// question included, averages under 0.6 µs a call (`NPPBENCH_TRACE_ASK_PENDING=all` asks
    /// every call, `0` none). A tripped gate exits with status 3, after the trace and its
    /// page are written; a program that failed exits with its own status, which wins.
    #[arg(long, value_name = "GATES", value_delimiter = ',')]
    pub(crate) fail_on: Vec<TraceGateArg>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub(crate) program: Vec<String>,
}

/// A gate of `trace --fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TraceGateArg {
    Leak,
    Race,
    /// A call site in a configuration the atlas says computes wrong pixels (needs knowledge of the
    /// program's NPP: built in, or --atlas).
    Wrong,
}

impl TraceGateArg {
    fn gate(self) -> TraceGate {
        match self {
            TraceGateArg::Leak => TraceGate::Leak,
            TraceGateArg::Race => TraceGate::Race,
            TraceGateArg::Wrong => TraceGate::Wrong,
        }
    }
}

/// Exit status of a trace whose program exited 0 and that trips a `--fail-on` gate (as
/// `compare`'s gates do).
const GATE_FAILED: i32 = 3;

/// Why no program here can use an NVIDIA GPU (no driver loaded in the kernel, no device file),
/// or `None`. Asks the kernel's files, never the CUDA driver library: the program's own
/// (`LD_LIBRARY_PATH` may name a stand-in) is not this process's to load.
fn no_gpu_here() -> Option<String> {
    let files = ["/proc/driver/nvidia/version", "/dev/nvidia0"];
    (!files.iter().any(|f| Path::new(f).exists())).then(|| format!("neither {} exists", files.join(" nor ")))
}

/// `--out`, created, absolute (the program may change directory), without a previous run's
/// traces.
fn prepare_out(out: &Path) -> anyhow::Result<PathBuf> {
    if out.exists() && !out.is_dir() {
        return Err(bad_input(format!(
            "--out {} is a file; name a folder for trace.json",
            out.display()
        )));
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let out = out
        .canonicalize()
        .with_context(|| format!("resolving {}", out.display()))?;
    for entry in std::fs::read_dir(&out).with_context(|| format!("listing {}", out.display()))? {
        let path = entry?.path();
        if is_trace_file(&path) {
            std::fs::remove_file(&path).with_context(|| format!("removing the old {}", path.display()))?;
        }
    }
    Ok(out)
}

/// trace.json or a descendant's `trace-<pid>.json`.
fn is_trace_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == TraceFile::FILE_NAME || (name.starts_with(TraceFile::DESCENDANT_PREFIX) && name.ends_with(".json"))
}

/// `first` before the variable's present value, joined by `:`.
pub(crate) fn prepend(var: &str, first: &Path) -> OsString {
    let mut v = first.as_os_str().to_owned();
    if let Some(old) = std::env::var_os(var).filter(|o| !o.is_empty()) {
        v.push(":");
        v.push(old);
    }
    v
}

fn start(args: &TraceArgs, lib: &Path, out: &Path) -> anyhow::Result<Child> {
    let text = lib.to_string_lossy();
    if text.contains([' ', ':']) {
        return Err(bad_input(format!(
            "the interposer's path {text} holds a space or a colon, which LD_PRELOAD cannot name; move it"
        )));
    }
    let (program, rest) = args
        .program
        .split_first()
        .ok_or_else(|| bad_input("no program to trace"))?;
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .env("LD_PRELOAD", prepend("LD_PRELOAD", lib))
        .env(TraceFile::OUT_VAR, out.join(TraceFile::FILE_NAME))
        .env(TraceFile::PARENT_VAR, std::process::id().to_string());
    if let Some(npp) = &args.npp {
        cmd.env("LD_LIBRARY_PATH", prepend("LD_LIBRARY_PATH", npp));
    }
    cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            bad_input(format!("program {program} not found (give a path, or put it on PATH)"))
        }
        std::io::ErrorKind::PermissionDenied => bad_input(format!("program {program} is not executable")),
        _ => anyhow::Error::new(e).context(format!("starting {program}")),
    })
}

/// The signals this command takes in place of the program: held (blocked, on the one thread
/// there is) from the moment the program runs, and passed on by a thread of their own.
pub(crate) fn held_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        set.add(s);
    }
    set
}

/// Passes each held signal on to the program. SIGINT from a terminal already reached the program
/// (it shares the terminal's foreground group), so it is passed on only where there is none.
/// Stops once `reaped` is set (the pid may then name another process).
pub(crate) fn forward_signals(set: SigSet, child: u32, reaped: Arc<AtomicBool>) {
    let from_terminal = std::io::stdin().is_terminal();
    std::thread::spawn(move || {
        while let Ok(signal) = set.wait() {
            if reaped.load(Ordering::SeqCst) {
                return;
            }
            if signal == Signal::SIGINT && from_terminal {
                continue;
            }
            let _ = kill(Pid::from_raw(child as i32), signal);
        }
    });
}

/// How the program ended, as trace.json says it.
pub(crate) fn end_of(status: ExitStatus, written: &TraceEnd) -> TraceEnd {
    match (status.code(), status.signal()) {
        // The exit path wrote the file: the trace is whole.
        (Some(code), _) if matches!(written, TraceEnd::Exited { .. }) => TraceEnd::Exited { code: Some(code) },
        // An exit that skipped the exit path (`_exit`): what was written last is all there is.
        (Some(_), _) => TraceEnd::Running,
        (None, Some(signal)) => TraceEnd::Signal {
            signal,
            name: Signal::try_from(signal).map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_owned()),
        },
        (None, None) => TraceEnd::Running,
    }
}

/// The status this command exits with: the program's own, 128 + n for a signal.
pub(crate) fn exit_code(status: ExitStatus) -> i32 {
    status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(1)
}

/// Why a trace is empty: the program left none.
const LEFT_NONE: &str = "the program ended before the interposer's first write, or never loaded it (a statically \
                         linked executable ignores LD_PRELOAD)";
/// Why a trace is empty: the one the program left could not be read.
const UNREADABLE: &str = "the trace the program left could not be read";

/// A trace for a program that left none (or none readable), saying `why`.
fn empty_trace(args: &TraceArgs, pid: u32, wall_s: f64, why: &str) -> TraceFile {
    TraceFile::empty(
        args.program.clone(),
        pid,
        jiff::Timestamp::now().to_string(),
        wall_s,
        TraceEnd::Running,
        why,
    )
}

fn read_trace(path: &Path) -> anyhow::Result<Option<TraceFile>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .with_context(|| format!("reading {}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Writes `trace` to a temporary file beside `path`, then renames it over `path`.
fn write_trace(path: &Path, trace: &TraceFile) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(trace).context("serialising trace.json")?;
    std::fs::write(&tmp, text + "\n").with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

pub(crate) fn trace(args: TraceArgs) -> anyhow::Result<()> {
    // Bad input first, as `run` checks it (exit 2).
    if let Some(npp) = &args.npp {
        crate::runs::check_npp_dir(npp)?;
    }
    let lib = interposer()?;
    let out = prepare_out(&args.out)?;
    let started = Instant::now();
    let mut child = start(&args, &lib, &out)?;
    // Held only once the program runs: a blocked mask would be the program's too (exec keeps it).
    let held = held_signals();
    held.thread_block()
        .context("holding SIGINT and SIGTERM for the program")?;
    let reaped = Arc::new(AtomicBool::new(false));
    forward_signals(held, child.id(), Arc::clone(&reaped));
    let status = child.wait().context("waiting for the program")?;
    reaped.store(true, Ordering::SeqCst);
    let path = out.join(TraceFile::FILE_NAME);
    let mut trace = match read_trace(&path) {
        Ok(Some(t)) => t,
        Ok(None) => empty_trace(&args, child.id(), started.elapsed().as_secs_f64(), LEFT_NONE),
        Err(e) => {
            eprintln!("warning: {e:#}; writing one that says so");
            empty_trace(&args, child.id(), started.elapsed().as_secs_f64(), UNREADABLE)
        }
    };
    trace.end = end_of(status, &trace.end);
    write_trace(&path, &trace)?;
    if let Some(why) = no_gpu_here() {
        eprintln!(
            "warning: no NVIDIA GPU or driver here ({why}): the program's CUDA and NPP calls cannot run on a GPU, \
             and its streams and device memory cannot be measured"
        );
    }
    println!("{}", summary(&trace, &path, status, &descendants(&out)));
    // The page: a failure to render it (an unreadable --atlas run) is said, and the program's
    // exit status still returned; trace.json is written either way.
    let (page, runs) = match crate::report::trace_page(&path, &args.atlas, &out) {
        Ok((page, runs)) => {
            println!("page: {}", page.display());
            (page, runs)
        }
        Err(e) => {
            eprintln!("error: the trace page was not rendered: {e:#}");
            (path.clone(), Vec::new())
        }
    };
    let code = exit_code(status);
    if code != 0 {
        std::process::exit(code);
    }
    if !args.fail_on.is_empty() {
        let findings = nppbench_analysis::trace::findings(&trace, &runs);
        let gates: Vec<TraceGate> = args.fail_on.iter().map(|g| g.gate()).collect();
        let tripped = tripped(&findings, &gates);
        for t in &tripped {
            eprintln!("{}: {}", t.gate.as_str(), t.what);
        }
        if !tripped.is_empty() {
            eprintln!(
                "error: the trace fails --fail-on {}; see {}",
                tripped.iter().map(|t| t.gate.as_str()).collect::<Vec<_>>().join(","),
                page.display()
            );
            std::process::exit(GATE_FAILED);
        }
    }
    Ok(())
}

/// The traces of processes the program started, beside trace.json.
fn descendants(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| is_trace_file(p) && p.file_name().is_some_and(|n| n != TraceFile::FILE_NAME))
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_follows_the_wait_status_and_what_the_exit_path_wrote() {
        let exited = ExitStatus::from_raw(3 << 8);
        let killed = ExitStatus::from_raw(9);
        let whole = TraceEnd::Exited { code: None };
        assert_eq!(end_of(exited, &whole), TraceEnd::Exited { code: Some(3) });
        assert_eq!(end_of(exited, &TraceEnd::Running), TraceEnd::Running);
        assert_eq!(
            end_of(killed, &TraceEnd::Running),
            TraceEnd::Signal {
                signal: 9,
                name: "SIGKILL".into()
            }
        );
        assert_eq!((exit_code(exited), exit_code(killed)), (3, 137));
    }

    #[test]
    fn trace_files_are_told_from_others() {
        assert!(is_trace_file(Path::new("/o/trace.json")));
        assert!(is_trace_file(Path::new("/o/trace-4242.json")));
        assert!(!is_trace_file(Path::new("/o/index.html")));
    }
}
