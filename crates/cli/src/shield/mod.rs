//! `nppbench shield -- PROGRAM`: runs a program with the interposer preloaded in shield mode, so
//! that each NPP call whose configuration the atlas's rules say leaks or races is passed a context
//! declaring `cudaStreamNonBlocking` (the fix measured to end both), each call whose configuration
//! computes wrong pixels runs on staging copies at aligned pitches (the strides measured right),
//! every other call untouched.
//! The plan (the rules compiled, `compile.rs`) goes to the interposer in a file; it writes
//! shield.json at exit (and on SIGTERM), which this command reads, words and renders. The program
//! is started, its signals passed on and its status returned as `trace` does (`trace.rs`).

mod compile;
mod elf;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use clap::Args;
use nppbench_model::{Hazard, ShieldAction, ShieldPlan, ShieldReport, TraceEnd, TraceFile};

use crate::exit::bad_input;
use crate::trace::{end_of, exit_code, forward_signals, held_signals, interposer, prepend};

#[derive(Debug, Args)]
pub(crate) struct ShieldArgs {
    /// The hazards to end, comma-separated: `leak` (NPP's streams kept for every new thread),
    /// `race` (NPP's work on its own stream not waiting for the caller's), `wrong` (wrong pixels
    /// at unaligned source strides: the call runs on staging copies at aligned pitches).
    #[arg(
        long,
        value_name = "HAZARDS",
        value_delimiter = ',',
        default_value = "leak,race,wrong"
    )]
    pub(crate) hazards: Vec<HazardArg>,
    /// Atlas runs (run.json, or folders of them) or knowledge files whose rules decide which
    /// calls leak or race, of the NPP version the program loads; default: the knowledge built
    /// into nppbench (`nppbench predict --help` says which versions).
    #[arg(long, value_name = "RUN")]
    pub(crate) atlas: Vec<PathBuf>,
    /// A folder for shield.json, its page (index.html) and the plan applied (plan.json).
    #[arg(long, value_name = "DIR")]
    pub(crate) report: Option<PathBuf>,
    /// The folder holding NPP's libraries to run the program against (put first on
    /// LD_LIBRARY_PATH); by default the program's own.
    #[arg(long, value_name = "DIR")]
    pub(crate) npp: Option<PathBuf>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub(crate) program: Vec<String>,
}

/// A hazard of `shield --hazards`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum HazardArg {
    Leak,
    Race,
    Wrong,
}

/// The hazards asked for, each once.
fn hazards(args: &[HazardArg]) -> Vec<Hazard> {
    let mut out: Vec<Hazard> = args
        .iter()
        .map(|h| match h {
            HazardArg::Leak => Hazard::Leak,
            HazardArg::Race => Hazard::Race,
            HazardArg::Wrong => Hazard::Wrong,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The plan from `--atlas` (runs, or knowledge files), else from the knowledge built into
/// nppbench (every version: the interposer uses the one the program loads); refused where it
/// rules on no function.
fn plan(args: &ShieldArgs, hazards: &[Hazard]) -> anyhow::Result<ShieldPlan> {
    let knowledge = crate::knowledge::for_shield(&args.atlas)?;
    let plan = compile::plan(&knowledge, hazards);
    if plan.knowledge.is_empty() {
        return Err(bad_input(format!(
            "the atlas runs given ({}) measured no memory scenario to rule on: name atlas runs (`nppbench run --preset atlas`)",
            args.atlas
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(plan)
}

/// The folder the plan and report go to: `--report`, created, absolute; else a temporary one.
fn folder(report: Option<&Path>) -> anyhow::Result<(PathBuf, Option<tempfile::TempDir>)> {
    match report {
        Some(dir) => {
            if dir.exists() && !dir.is_dir() {
                return Err(bad_input(format!(
                    "--report {} is a file; name a folder",
                    dir.display()
                )));
            }
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            let dir = dir
                .canonicalize()
                .with_context(|| format!("resolving {}", dir.display()))?;
            Ok((dir, None))
        }
        None => {
            let tmp = tempfile::tempdir().context("making a temporary folder for the shield's plan")?;
            Ok((tmp.path().to_owned(), Some(tmp)))
        }
    }
}

fn start(args: &ShieldArgs, lib: &Path, plan: &Path, report: &Path) -> anyhow::Result<std::process::Child> {
    let (program, rest) = args
        .program
        .split_first()
        .ok_or_else(|| bad_input("no program to shield"))?;
    if let Some(path) = elf::locate(program)
        && elf::statically_linked(&path)
    {
        return Err(bad_input(format!(
            "{} is statically linked: LD_PRELOAD cannot reach its NPP calls; link it against NPP's shared libraries",
            path.display()
        )));
    }
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .env("LD_PRELOAD", prepend("LD_PRELOAD", lib))
        .env(ShieldPlan::PLAN_VAR, plan)
        .env(ShieldPlan::REPORT_VAR, report)
        .env(TraceFile::PARENT_VAR, std::process::id().to_string())
        .env_remove(TraceFile::OUT_VAR);
    if let Some(npp) = &args.npp {
        crate::runs::check_npp_dir(npp)?;
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

fn write_json(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value).context("serialising")?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

/// Why the shield did not apply, where it could not: said at exit (exit 2 where the program
/// itself succeeded).
fn refusal(r: &ShieldReport) -> Option<String> {
    if r.totals.calls == 0 && r.npp_libraries.is_empty() {
        return Some(
            "the program loaded no NPP library and made no catalogued NPP call: nothing was shielded (is it \
             linked against NPP's shared libraries? a statically linked NPP cannot be shielded)"
                .into(),
        );
    }
    if r.totals.no_knowledge > 0 {
        return Some(format!(
            "{}: its calls were left alone; give --atlas runs of that NPP version",
            r.knowledge_missing
                .as_deref()
                .unwrap_or("no knowledge for the NPP version loaded")
        ));
    }
    None
}

pub(crate) fn shield(args: ShieldArgs) -> anyhow::Result<()> {
    let hazards = hazards(&args.hazards);
    let plan = plan(&args, &hazards)?;
    let lib = interposer()?;
    let (dir, _tmp) = folder(args.report.as_deref())?;
    let plan_path = dir.join("plan.json");
    write_json(&plan_path, &plan)?;
    let report_path = dir.join(ShieldPlan::REPORT_FILE_NAME);
    let _ = std::fs::remove_file(&report_path);
    let mut child = start(&args, &lib, &plan_path, &report_path)?;
    // Held only once the program runs: a blocked mask would be the program's too.
    let held = held_signals();
    held.thread_block()
        .context("holding SIGINT and SIGTERM for the program")?;
    let reaped = Arc::new(AtomicBool::new(false));
    forward_signals(held, child.id(), Arc::clone(&reaped));
    let status = child.wait().context("waiting for the program")?;
    reaped.store(true, Ordering::SeqCst);
    let code = exit_code(status);
    let report = match std::fs::read(&report_path) {
        Ok(bytes) => serde_json::from_slice::<ShieldReport>(&bytes)
            .with_context(|| format!("reading {}", report_path.display()))
            .map(Some)?,
        Err(_) => None,
    };
    let Some(mut report) = report else {
        eprintln!(
            "error: the program left no shield report: it ended before the interposer started, or never loaded it \
             (a statically linked executable ignores LD_PRELOAD)"
        );
        std::process::exit(if code != 0 { code } else { 2 });
    };
    report.end = end_of(status, &report.end);
    println!("{}", summary(&report, status));
    if args.report.is_some() {
        write_json(&report_path, &report)?;
        match nppbench_report::render_shield_to_dir(&report, &dir) {
            Ok(page) => println!("report: {} and {}", report_path.display(), page.display()),
            Err(e) => eprintln!("error: the shield page was not rendered: {e:#}"),
        }
    }
    if code != 0 {
        std::process::exit(code);
    }
    if let Some(why) = refusal(&report) {
        return Err(bad_input(why));
    }
    Ok(())
}

/// The shield's cost in words: its time per call and in all, what it staged.
fn cost(r: &ShieldReport) -> String {
    let c = &r.cost;
    let Some(per_call) = c.per_call_ns(r.totals.calls) else {
        return String::new();
    };
    let mut s = format!(
        ". The shield took {:.2} ms of the program's threads in all, {per_call:.0} ns a call",
        c.shield_ns as f64 / 1e6
    );
    if let Some(alone) = c.per_call_left_alone_ns(&r.totals) {
        s += &format!(" ({alone:.0} ns a call left alone)");
    }
    if let Some(peak) = c.staging_peak_bytes {
        s += &format!(
            "; staging copied {:.1} MiB and held at most {:.1} MiB of device memory",
            c.staged_bytes as f64 / 1048576.0,
            peak as f64 / 1048576.0
        );
    }
    s
}

/// One paragraph: calls seen, rewritten per hazard, left alone and why, the busiest rewritten
/// sites, how the program ended.
pub(crate) fn summary(r: &ShieldReport, status: ExitStatus) -> String {
    let t = &r.totals;
    let hazards: Vec<&str> = r.hazards.iter().map(|h| h.as_str()).collect();
    let mut s = format!(
        "shielded {} ({}) with {}: {} NPP calls, {} rewritten ({} leaking, {} racing, declared non-blocking; {} computing wrong pixels, staged at aligned pitches)",
        r.program.join(" "),
        hazards.join(", "),
        r.knowledge_version
            .as_deref()
            .map_or_else(|| "no knowledge".to_owned(), |v| format!("the atlas of NPP {v}")),
        t.calls,
        t.rewritten,
        t.rewritten_leak,
        t.rewritten_race,
        t.rewritten_wrong,
    );
    if t.wrong_not_staged > 0 {
        s += &format!(
            "; {} computing wrong pixels could not be staged (their images, or the driver refused)",
            t.wrong_not_staged
        );
    }
    s += &format!(
        "; {} left alone ({} not hazardous, {} of functions the atlas does not know, {} of configurations it cannot judge, {} without knowledge of the NPP loaded)",
        t.left_alone(),
        t.not_hazardous,
        t.unknown_function,
        t.unknown_configuration,
        t.no_knowledge
    );
    s += &cost(r);
    let rewritten: Vec<String> = r
        .sites
        .iter()
        .filter(|x| matches!(x.action, ShieldAction::Rewritten { .. }))
        .take(3)
        .map(|x| {
            let step = |s: Option<i32>| s.map_or_else(|| "-".to_owned(), |s| s.to_string());
            format!(
                "{} {}x{} steps {}/{} ({} calls)",
                x.function,
                x.width,
                x.height,
                step(x.src_step),
                step(x.dst_step),
                x.calls
            )
        })
        .collect();
    if !rewritten.is_empty() {
        s += &format!(". Rewritten most at {}", rewritten.join(", "));
    }
    s += &match &r.end {
        TraceEnd::Exited { .. } => format!(". The program exited with {}.", exit_code(status)),
        TraceEnd::Signal { name, .. } => format!(". The program was ended by {name}."),
        TraceEnd::Running => format!(
            ". The program exited with {} without running its exit path: the counts are those of the last write.",
            exit_code(status)
        ),
    };
    s
}

#[cfg(test)]
mod tests;
