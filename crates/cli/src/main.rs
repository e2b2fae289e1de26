//! `nppbench`: measure NPP convert on this machine's GPU (`run`) and render reports (`report`).

#![forbid(unsafe_code)]

mod history;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use nppbench_engine::{Devices, Progress, RunError, RunOptions};
use nppbench_model::{Matrix, ModelError, Outcome, Preset, RunFile};

/// Measure which ways of calling NPP's convert leak device memory, and what each costs.
#[derive(Parser)]
#[command(name = "nppbench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a matrix of scenarios on the GPU and write DIR/run.json (DIR/runs/N/run.json for
    /// several NPP versions).
    Run {
        /// A built-in matrix: quick (CI, a first look), full, or atlas (every primitive).
        #[arg(long, default_value = "quick", conflicts_with = "matrix")]
        preset: String,
        /// A custom matrix in TOML (same format as crates/model/presets/*.toml).
        #[arg(long, value_name = "FILE")]
        matrix: Option<PathBuf>,
        /// The folder holding libnppc and the other NPP libraries; default: CUDA_HOME,
        /// /usr/local/cuda/lib64, the loader. Repeat it to measure several versions, their
        /// throughput passes interleaved.
        #[arg(long, value_name = "DIR")]
        npp: Vec<PathBuf>,
        /// The GPUs to measure on: `all`, or ordinals (`0,2`); default 0.
        #[arg(long, value_name = "all|N,N...")]
        devices: Option<String>,
        /// Memory scenarios at once (each in its own process); default: chosen from the machine.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        jobs: Option<u32>,
        /// CUDA_DEVICE_MAX_CONNECTIONS for the memory probes: 1 to 32, or `inherit` (this
        /// environment's). One connection halves the CUDA start-up each probe spends, which the
        /// driver serialises host-wide; classes and slopes do not change (docs/performance.md).
        /// Throughput probes always inherit the environment.
        #[arg(long, value_name = "N|inherit", default_value = "1")]
        probe_connections: String,
        /// Independent throughput passes (fresh processes), overriding the matrix's `repeat`.
        #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=1000))]
        repeat: Option<u32>,
        /// Where run.json is written.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Continue a run that was interrupted, from the journal in --out.
        #[arg(long)]
        resume: bool,
    },
    /// List the NPP primitives nppbench knows (the catalogue), one a line.
    Primitives,
    /// Render index.html, summary.md and scenarios.csv from one run.json, or several side by side.
    Report {
        /// A run.json (or a folder holding runs, as `compare` takes them); repeat it to put
        /// several runs (NPP versions) side by side.
        #[arg(long, value_name = "RUN.json", required = true)]
        from: Vec<PathBuf>,
        /// The folder the report is written to.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Replace a report of other runs already in --out.
        #[arg(long)]
        force: bool,
    },
    /// Compare runs against the first (the base): throughput with a statistical test, leak
    /// classes, hidden streams. Writes DIR/compare.html and DIR/summary.md.
    Compare {
        /// run.json files or report folders: a folder holding run.json, or a report of several
        /// runs (its run-N-*.json, or runs/N/run.json of a run with several --npp), each run in
        /// it taken in order. The first run is the base.
        #[arg(required = true, num_args = 1.., value_name = "RUN")]
        runs: Vec<PathBuf>,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Exit with status 3 when any of these is found: regression, leak, streams (comma-separated).
        #[arg(long, value_delimiter = ',', value_name = "KINDS")]
        fail_on: Vec<String>,
        /// Kernel-time changes smaller than this percentage are noise (calibrated on
        /// same-against-same runs: docs/calibration.md).
        #[arg(long, default_value_t = nppbench_report::thresholds::NOISE_PCT)]
        noise_pct: f64,
        /// Host-latency changes smaller than this percentage are noise (images under a megapixel).
        #[arg(long, default_value_t = nppbench_report::thresholds::LATENCY_NOISE_PCT)]
        latency_noise_pct: f64,
        /// Significance level of Welch's t-test on the per-pass medians.
        #[arg(long, default_value_t = nppbench_report::thresholds::ALPHA)]
        alpha: f64,
        /// Only images of at least this many pixels can fail the regression gate (default 0:
        /// every size; the test on passes is calibrated at every size).
        #[arg(long, default_value_t = 0)]
        gate_min_pixels: u64,
        /// Apply the gates to runs measured on a GPU shared with other processes too.
        #[arg(long)]
        allow_shared_gpu: bool,
    },
    /// Every run a fleet has made, in a database: add runs, render trends and change points, export.
    History(history::Args),
    /// Print a preset's matrix file, a starting point for --matrix.
    Preset { name: String },
    /// Load NPP (no GPU needed) and print its version and the files it was loaded from.
    Npp {
        /// The folder holding libnppc and libnppidei; default: the same search as `run`.
        #[arg(long, value_name = "DIR")]
        npp: Option<PathBuf>,
    },
    /// Internal: one child probe of `run`.
    #[command(hide = true)]
    Probe {
        #[arg(long)]
        request: PathBuf,
        #[arg(long)]
        answer: PathBuf,
    },
}

/// Bad input: exit 2, like a usage error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadInput(String);

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<BadInput>().is_some() {
                ExitCode::from(2)
            } else if e.downcast_ref::<Interrupted>().is_some() {
                ExitCode::from(INTERRUPTED)
            } else if e.downcast_ref::<GateFailed>().is_some() {
                ExitCode::from(GATE_FAILED)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn bad_input(e: impl std::fmt::Display) -> anyhow::Error {
    BadInput(e.to_string()).into()
}

fn dispatch(cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::Run {
            preset,
            matrix,
            npp,
            devices,
            jobs,
            probe_connections,
            repeat,
            out,
            resume,
        } => run(RunArgs {
            preset,
            matrix,
            npp,
            devices,
            jobs,
            probe_connections,
            repeat,
            out,
            resume,
        }),
        Cmd::Primitives => {
            println!(
                "{:<36} {:<8} {:<10} {:<10} operation",
                "primitive", "library", "source", "destination"
            );
            for p in nppbench_model::Primitive::all() {
                let r = p.row();
                let fmt = |f: nppbench_model::catalog::Format| format!("{}×{}", f.sample.npp_name(), f.channels);
                let src = if r.sources == 0 { "—".to_owned() } else { fmt(r.src) };
                println!(
                    "{:<36} {:<8} {:<10} {:<10} {}",
                    r.name,
                    r.library,
                    src,
                    fmt(r.dst),
                    r.operation
                );
            }
            Ok(())
        }
        Cmd::Report { from, out, force } => report(&from, &out, force),
        Cmd::History(args) => history::run(args),
        Cmd::Compare {
            runs,
            out,
            fail_on,
            noise_pct,
            latency_noise_pct,
            alpha,
            gate_min_pixels,
            allow_shared_gpu,
        } => compare(
            &runs,
            &out,
            &fail_on,
            allow_shared_gpu,
            nppbench_report::compare::Thresholds {
                noise_pct,
                latency_noise_pct,
                alpha,
                gate_min_pixels,
            },
        ),
        Cmd::Npp { npp } => {
            if let Some(dir) = &npp {
                check_npp_dir(dir)?;
            }
            let lib = nppbench_engine::load_npp(npp.as_deref()).map_err(|e| {
                // A folder the user named that holds no NPP is bad input; the system search
                // finding none is the environment's fault.
                if npp.is_some() {
                    bad_input(e)
                } else {
                    anyhow::anyhow!("{e}")
                }
            })?;
            println!("NPP {}", lib.version());
            for path in lib.library_paths() {
                println!("{}", path.display());
            }
            Ok(())
        }
        Cmd::Preset { name } => {
            let preset: Preset = name.parse().map_err(bad_input)?;
            print!("{}", preset.toml());
            Ok(())
        }
        Cmd::Probe { request, answer } => {
            let resources = nppbench_engine::run_probe(&request, &answer)?;
            // The answer is on disk: leave without tearing the CUDA context down.
            nppbench_engine::end_probe(resources)
        }
    }
}

/// Exit status of a comparison that trips a `--fail-on` gate.
const GATE_FAILED: u8 = 3;

/// A comparison that trips a gate: the page is written, the exit status says so.
#[derive(Debug, thiserror::Error)]
#[error("the comparison fails on --fail-on {0}; see {1}")]
struct GateFailed(String, String);

/// The runs a path names: a run.json; a folder holding run.json; a report of several runs
/// (`run-N-npp-V.json`, in N's order); a run of several `--npp` (`runs/N/run.json`). A folder
/// holding none of these is bad input that says what the folder does hold.
fn run_paths(p: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !p.exists() {
        return Err(bad_input(format!("{}: no such file or folder", p.display())));
    }
    if !p.is_dir() {
        return Ok(vec![p.to_owned()]);
    }
    if p.join("run.json").is_file() {
        return Ok(vec![p.join("run.json")]);
    }
    let number =
        |name: &str, prefix: &str| -> Option<u32> { name.strip_prefix(prefix)?.split(['-', '.']).next()?.parse().ok() };
    let entries: Vec<(String, PathBuf)> = std::fs::read_dir(p)
        .with_context(|| format!("reading {}", p.display()))?
        .filter_map(Result::ok)
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    let mut several: Vec<(u32, PathBuf)> = entries
        .iter()
        .filter(|(name, _)| name.ends_with(".json"))
        .filter_map(|(name, path)| Some((number(name, "run-")?, path.clone())))
        .collect();
    if several.is_empty() {
        several = std::fs::read_dir(p.join("runs"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("run.json"))))
            .filter(|(_, path): &(u32, PathBuf)| path.is_file())
            .collect();
    }
    several.sort();
    if several.is_empty() {
        let mut names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        let shown = names.iter().take(12).copied().collect::<Vec<_>>().join(", ");
        return Err(bad_input(format!(
            "{}: holds no run.json, no run-N-*.json and no runs/N/run.json (it holds: {}{}); give a run.json or a report folder",
            p.display(),
            if shown.is_empty() { "nothing" } else { &shown },
            if names.len() > 12 {
                format!(", and {} more", names.len() - 12)
            } else {
                String::new()
            }
        )));
    }
    Ok(several.into_iter().map(|(_, path)| path).collect())
}

/// Every run the paths name, in order, with the file each came from.
fn read_runs(paths: &[PathBuf]) -> anyhow::Result<Vec<(PathBuf, RunFile)>> {
    let mut out = Vec::new();
    for p in paths {
        for path in run_paths(p)? {
            let run = RunFile::read(&path).map_err(bad_input)?;
            out.push((path, run));
        }
    }
    Ok(out)
}

/// `--out` must be a folder (or not exist yet).
fn check_out_dir(out: &Path) -> anyhow::Result<()> {
    if out.exists() && !out.is_dir() {
        return Err(bad_input(format!(
            "--out {}: is a file; give a folder (it is created if missing)",
            out.display()
        )));
    }
    Ok(())
}

/// `--npp` must be a folder.
fn check_npp_dir(dir: &Path) -> anyhow::Result<()> {
    if !dir.is_dir() {
        return Err(bad_input(format!(
            "--npp {}: no such folder; point it at the folder that holds libnppc.so.N and the other NPP libraries",
            dir.display()
        )));
    }
    Ok(())
}

/// What identifies a run: when it started, on which GPU, with which NPP.
fn run_identity(r: &RunFile) -> (String, String, String) {
    (
        r.started_at.clone(),
        r.environment.gpu.uuid.clone(),
        r.environment.npp.version.clone(),
    )
}

/// A report folder that already holds other runs is not overwritten without --force.
fn check_not_another_report(out: &Path, runs: &[RunFile], force: bool) -> anyhow::Result<()> {
    if force || !out.is_dir() {
        return Ok(());
    }
    let Ok(existing) = run_paths(out) else {
        return Ok(());
    };
    let ours: Vec<_> = runs.iter().map(run_identity).collect();
    for path in existing {
        let Ok(other) = RunFile::read(&path) else { continue };
        if !ours.contains(&run_identity(&other)) {
            return Err(bad_input(format!(
                "--out {} holds the report of another run ({}, {}); choose another folder, or pass --force to replace it",
                out.display(),
                other.short_label(),
                other.started_at
            )));
        }
    }
    Ok(())
}

fn compare(
    runs: &[PathBuf],
    out: &Path,
    fail_on: &[String],
    allow_shared_gpu: bool,
    t: nppbench_report::compare::Thresholds,
) -> anyhow::Result<()> {
    use nppbench_report::compare::Gate;
    let gates = fail_on
        .iter()
        .map(|g| g.parse::<Gate>().map_err(bad_input))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if !((0.0..100.0).contains(&t.noise_pct) && t.alpha > 0.0 && t.alpha < 1.0) {
        return Err(bad_input("--noise-pct must be in [0, 100) and --alpha in (0, 1)"));
    }
    check_out_dir(out)?;
    let (paths, loaded): (Vec<PathBuf>, Vec<RunFile>) = read_runs(runs)?.into_iter().unzip();
    if loaded.len() < 2 {
        return Err(bad_input(format!(
            "compare needs two runs or more; {} hold(s) only {}",
            runs.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            paths.first().map_or_else(|| "none".into(), |p| p.display().to_string())
        )));
    }
    if !gates.is_empty() && !allow_shared_gpu {
        for (path, run) in paths.iter().zip(&loaded) {
            let shared = nppbench_report::analysis::RunAnalysis::new(run).sharing_that_touches_gates();
            if let Some(p) = shared.first() {
                return Err(bad_input(format!(
                    "{} was measured on a GPU shared with other processes (PID {} {}{}) at its start, beside its throughput or beside device-wide memory figures; those figures may be disturbed, so the gates are not applied: re-run it on an idle GPU, or pass --allow-shared-gpu to gate anyway",
                    path.display(),
                    p.pid,
                    p.name,
                    if shared.len() > 1 {
                        format!(", and {} more", shared.len() - 1)
                    } else {
                        String::new()
                    }
                )));
            }
        }
    }
    let r = nppbench_report::render_compare(&loaded, t, &gates)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let page = out.join("compare.html");
    std::fs::write(&page, &r.compare_html).with_context(|| format!("writing {}", page.display()))?;
    std::fs::write(out.join("summary.md"), &r.summary_md)
        .with_context(|| format!("writing {}", out.join("summary.md").display()))?;
    print!("{}", r.summary_md);
    println!("{}", page.display());
    if r.failed {
        return Err(GateFailed(fail_on.join(","), page.display().to_string()).into());
    }
    Ok(())
}

fn report(from: &[PathBuf], out: &Path, force: bool) -> anyhow::Result<()> {
    check_out_dir(out)?;
    let (from, runs): (Vec<PathBuf>, Vec<RunFile>) = read_runs(from)?.into_iter().unzip();
    check_not_another_report(out, &runs, force)?;
    let written = nppbench_report::render_to_dir(&runs, out)
        .with_context(|| format!("rendering the report into {}", out.display()))?;
    // Each run.json beside the page, under the name the page links to.
    for (i, (path, run)) in from.iter().zip(&runs).enumerate() {
        let dest = out.join(nppbench_report::view::run_json_name(i, run, runs.len()));
        if path.canonicalize().ok() != dest.canonicalize().ok() {
            std::fs::copy(path, &dest).with_context(|| format!("copying {} to {}", path.display(), dest.display()))?;
        }
    }
    println!("{}", written.display());
    Ok(())
}

fn load_matrix(preset: &str, matrix: Option<&Path>) -> Result<Matrix, ModelError> {
    match matrix {
        Some(path) => Matrix::from_file(path),
        None => preset.parse::<Preset>()?.matrix(),
    }
}

/// Exit status of a run stopped by Ctrl-C or SIGTERM, as shells report a SIGINT.
const INTERRUPTED: u8 = 130;

/// A run that stopped early: its run.json holds what finished.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: run.json holds the scenarios that finished; continue with `nppbench run --resume --out {0}`")]
struct Interrupted(String);

/// `nppbench run`'s arguments.
struct RunArgs {
    preset: String,
    matrix: Option<PathBuf>,
    npp: Vec<PathBuf>,
    devices: Option<String>,
    jobs: Option<u32>,
    probe_connections: String,
    repeat: Option<u32>,
    out: PathBuf,
    resume: bool,
}

/// `--probe-connections N|inherit`: `Some(N)` to set, `None` to inherit.
fn parse_probe_connections(spec: &str) -> anyhow::Result<Option<u32>> {
    if spec == "inherit" {
        return Ok(None);
    }
    match spec.trim().parse::<u32>() {
        Ok(n) if (1..=32).contains(&n) => Ok(Some(n)),
        _ => Err(bad_input(format!(
            "--probe-connections {spec}: give a number of connections from 1 to 32 (CUDA's range), or `inherit` to leave CUDA_DEVICE_MAX_CONNECTIONS as the environment has it"
        ))),
    }
}

/// `--devices all` or `0,2`.
fn parse_devices(spec: Option<&str>) -> anyhow::Result<Devices> {
    let Some(spec) = spec else {
        return Ok(Devices::List(vec![0]));
    };
    if spec == "all" {
        return Ok(Devices::All);
    }
    let list: Result<Vec<u32>, _> = spec.split(',').map(|s| s.trim().parse::<u32>()).collect();
    match list {
        Ok(list) if !list.is_empty() => {
            let mut seen = list.clone();
            seen.sort_unstable();
            seen.dedup();
            if seen.len() != list.len() {
                return Err(bad_input(format!("--devices {spec}: a GPU is listed twice")));
            }
            Ok(Devices::List(list))
        }
        _ => Err(bad_input(format!(
            "--devices {spec}: give `all` or GPU ordinals separated by commas (0,2)"
        ))),
    }
}

fn run(args: RunArgs) -> anyhow::Result<()> {
    let mut matrix = load_matrix(&args.preset, args.matrix.as_deref()).map_err(bad_input)?;
    if let Some(k) = args.repeat {
        matrix.settings.repeat = k;
    }
    for dir in &args.npp {
        check_npp_dir(dir)?;
    }
    let devices = parse_devices(args.devices.as_deref())?;
    let probe_connections = parse_probe_connections(&args.probe_connections)?;
    let npp_dirs = if args.npp.is_empty() {
        vec![None]
    } else {
        args.npp.iter().cloned().map(Some).collect()
    };
    let out = args.out;
    check_out_dir(&out)?;
    let opts = RunOptions {
        matrix,
        npp_dirs,
        devices,
        jobs: args.jobs,
        probe_connections,
        probe_exe: std::env::current_exe().context("locating the nppbench binary for its child probes")?,
        out_dir: out.clone(),
        command: std::env::args().collect(),
        resume: args.resume,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let handler_stop = stop.clone();
    ctrlc::set_handler(move || handler_stop.store(true, Ordering::SeqCst))
        .context("installing the Ctrl-C and SIGTERM handler")?;
    let progress = Reporter::new();
    let runs = match nppbench_engine::run(&opts, &progress, &stop) {
        Ok(runs) => runs,
        Err(e @ RunError::Input(_)) => return Err(bad_input(e)),
        Err(e) => return Err(e).context("nothing was measured"),
    };
    let mut paths = Vec::new();
    for (i, mut run) in runs.into_iter().enumerate() {
        let dir = opts.run_dir(i);
        // The writing phase is timed on the first write and recorded in the second.
        let t = std::time::Instant::now();
        nppbench_engine::write_run_json(&run, &dir)?;
        run.phases.push(nppbench_model::PhaseTime {
            phase: "writing".into(),
            wall_s: t.elapsed().as_secs_f64(),
        });
        let path = nppbench_engine::write_run_json(&run, &dir)?;
        if !run.interrupted {
            let _ = std::fs::remove_file(opts.journal_path(i));
        }
        let failed_here = run
            .memory
            .iter()
            .map(|r| &r.outcome)
            .chain(run.throughput.iter().map(|r| &r.outcome))
            .filter(|o| o.is_failed())
            .count();
        if failed_here == 0 && !run.interrupted {
            let _ = std::fs::remove_dir_all(opts.work_dir(i));
        } else if failed_here > 0 {
            eprintln!(
                "{failed_here} scenario(s) failed; their reasons are in {} and the probes' logs in {}",
                path.display(),
                opts.work_dir(i).display()
            );
        }
        paths.push((path, run.interrupted));
    }
    for (path, _) in &paths {
        println!("{}", path.display());
    }
    if paths.iter().any(|(_, interrupted)| *interrupted) {
        return Err(Interrupted(out.display().to_string()).into());
    }
    Ok(())
}

/// A progress bar on a terminal, one plain line per scenario otherwise.
struct Reporter {
    bar: OnceLock<ProgressBar>,
}

impl Reporter {
    fn new() -> Self {
        Reporter { bar: OnceLock::new() }
    }
}

impl Progress for Reporter {
    fn begin(&self, total: usize) {
        if !std::io::stderr().is_terminal() {
            eprintln!("running {total} scenarios");
            return;
        }
        let bar = ProgressBar::new(total as u64).with_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        let _ = self.bar.set(bar);
    }

    fn done(&self, id: &str, outcome: &Outcome) {
        let status = match outcome {
            Outcome::Ok => "ok".to_owned(),
            Outcome::StoppedAtBudget { budget_mib } => format!("stopped at the {budget_mib} MiB budget"),
            Outcome::NotMeasured { reason } => format!("not measured: {reason}"),
            Outcome::Failed { reason, kind } => format!("FAILED ({}): {reason}", kind.as_str()),
        };
        match self.bar.get() {
            Some(bar) => {
                if outcome.is_failed() || matches!(outcome, Outcome::StoppedAtBudget { .. }) {
                    bar.println(format!("{id}: {status}"));
                }
                bar.set_message(id.to_owned());
                bar.inc(1);
            }
            None => eprintln!("{id}: {status}"),
        }
    }

    fn note(&self, message: &str) {
        eprintln!("{message}");
    }

    fn finish(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}
