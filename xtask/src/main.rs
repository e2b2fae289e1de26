//! `cargo xtask`: the project's jobs. `report` measures and renders (or renders committed runs
//! with `--from`); `install` puts nppbench and its interposer side by side; `npp fetch` gets
//! other NPP versions; `compare` judges runs against each other
//! and gates CI on the result; `rerender` renders every committed report again; `baseline`
//! measures the CI baseline; `knowledge` makes the knowledge files nppbench embeds; `evidence`
//! brings back from git the runs that left the tree.
//!
//! Kept light on purpose: it drives the `nppbench` binary through cargo and never compiles the
//! GPU stack itself (of nppbench's crates it uses `nppbench-model`, plain data, to find run files
//! as nppbench does, and `nppbench-analysis` to make the knowledge files from runs).

#![forbid(unsafe_code)]

mod baseline;
mod catalogue;
mod evidence;
mod history;
mod install;
mod knowledge;
mod measure;
mod npp;
#[cfg(test)]
mod readme_commands;
mod rerender;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use nppbench_model::Preset;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "nppbench's jobs")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Measure on this machine's GPU and render target/nppbench/latest/ (or render --from run.json files).
    Report {
        /// Render these run.json files instead of measuring (no GPU needed).
        #[arg(long, value_name = "RUN.json")]
        from: Vec<PathBuf>,
        /// The report folder.
        #[arg(long, value_name = "DIR", default_value = measure::DEFAULT_OUT)]
        out: PathBuf,
        /// The preset: quick (the default), full or atlas (`nppbench preset NAME` prints one).
        #[arg(long, default_value = "quick")]
        preset: Preset,
        /// A custom matrix file instead of the preset.
        #[arg(long, value_name = "FILE")]
        matrix: Option<PathBuf>,
        /// NPP to measure: `system` (the default search), a version fetched with `cargo xtask npp
        /// fetch` (`12.2.3.2`), or a folder. Repeat it for versions side by side.
        #[arg(long, value_name = "system|VERSION|DIR")]
        npp: Vec<String>,
    },
    /// Compare runs against the first: `nppbench compare` (compare.html, summary.md, exit status 3
    /// when a --fail-on gate trips).
    Compare {
        /// Everything after `compare`, passed on: RUN... --out DIR [--fail-on regression,leak,streams] ...
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<String>,
    },
    /// The fleet's history: `nppbench history add|report|export` (exit status 3 when a --fail-on
    /// gate trips).
    History(history::Args),
    /// Render every committed report under reports/ again from its runs (after a change to the
    /// report): each folder holding run.json or run-N-*.json, and each compare folder from the
    /// arguments in its compare.args.
    Rerender,
    /// Measure the baseline a CI gate compares against: the quick preset with five throughput
    /// passes, into .ci/baseline/ (commit its run.json; refresh it after a driver, CUDA or NPP
    /// upgrade that was judged and accepted).
    Baseline {
        /// NPP to measure, as for `report`.
        #[arg(long, value_name = "system|VERSION|DIR", default_value = "system")]
        npp: String,
        #[arg(long, value_name = "DIR", default_value = ".ci/baseline")]
        out: PathBuf,
    },
    /// Build nppbench for release and install it with the interposer `nppbench trace` preloads
    /// (libnppbench_trace.so), side by side.
    Install {
        /// The folder (by default $CARGO_HOME/bin, else ~/.cargo/bin).
        #[arg(long, value_name = "DIR")]
        to: Option<PathBuf>,
    },
    /// NPP's image functions from the headers of each VERSION's wheel, into
    /// catalogue/npp-VERSION/ (docs/catalogue.md); --regenerate writes every committed folder's
    /// rows again from its prototypes.
    Catalogue {
        #[arg(required_unless_present = "regenerate", value_name = "VERSION")]
        versions: Vec<String>,
        #[arg(long)]
        regenerate: bool,
    },
    /// The knowledge files nppbench embeds (knowledge/*.json.gz, one per NPP version and GPU
    /// architecture): --from makes one from atlas runs; --check fits every committed file's rules
    /// again on its own cases and fails where they differ; --refit writes them back; --calls puts
    /// a call-catalogue run's lines into one; --designs writes knowledge/designs/NAME.jsonl.gz
    /// from `call-catalogue --design` files.
    #[command(group(clap::ArgGroup::new("job").required(true).args(["check", "refit", "from", "calls", "designs"])))]
    Knowledge {
        /// Fail where a committed file's rules or scores are not what its cases give today.
        #[arg(long)]
        check: bool,
        /// Fit every committed file's rules again on its cases and write them back.
        #[arg(long)]
        refit: bool,
        /// Make the knowledge of these runs (files or folders, of one NPP version and GPU
        /// architecture) into knowledge/NAME.json.gz.
        #[arg(long, value_name = "RUN", num_args = 1..)]
        from: Vec<PathBuf>,
        /// Put the lines of this `call-catalogue --out` file (`.gz` too) into the knowledge file
        /// --to names, replacing any it held: what `predict` says of the functions no rule covers.
        #[arg(long, value_name = "FILE", requires = "to")]
        calls: Option<PathBuf>,
        /// The lines of these `call-catalogue --design` files (`.gz` too), of one NPP version,
        /// compacted into knowledge/designs/NAME.jsonl.gz (--to): what `predict` fits the rules
        /// of the functions known from their headers alone on.
        #[arg(long, value_name = "FILE", num_args = 1.., requires = "to")]
        designs: Vec<PathBuf>,
        /// The knowledge file --calls goes into, or the designs file --designs makes
        /// (`npp-13.0.1-sm90`, in knowledge/).
        #[arg(long, value_name = "NAME")]
        to: Option<String>,
    },
    /// The committed runs that left the working tree and the commits that hold them
    /// (reports/ELSEWHERE.tsv); with paths, each brought back from git into target/evidence/.
    Evidence {
        /// Paths of the index (or folders above them) to bring back.
        #[arg(value_name = "PATH")]
        paths: Vec<String>,
    },
    /// Other NPP versions, from their wheels on the Python package index.
    Npp {
        #[command(subcommand)]
        command: NppCmd,
    },
}

#[derive(Subcommand)]
enum NppCmd {
    /// Download NPP VERSION... (12.x from nvidia-npp-cu12, 13.x from nvidia-npp) into .npp/VERSION/.
    Fetch {
        #[arg(required = true)]
        versions: Vec<String>,
    },
}

/// Bad input: exit 2, as nppbench's (README: exit statuses).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadInput(String);

/// This machine cannot measure (no NVIDIA GPU): exit 5, as `nppbench run` does there.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Unavailable(String);

/// The exit status of a machine that cannot measure, as nppbench gives it.
const UNAVAILABLE: u8 = 5;

/// A step (nppbench, cargo) that exited with a status: xtask exits with that status, so that a
/// failure kind keeps its status through xtask (README: exit statuses).
#[derive(Debug, thiserror::Error)]
#[error("{what} failed ({status})")]
struct StepFailed {
    what: String,
    status: std::process::ExitStatus,
}

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit_code(&e)
        }
    }
}

fn exit_code(e: &anyhow::Error) -> ExitCode {
    if e.downcast_ref::<BadInput>().is_some() {
        ExitCode::from(2)
    } else if e.downcast_ref::<Unavailable>().is_some() {
        ExitCode::from(UNAVAILABLE)
    } else if let Some(code) = e
        .downcast_ref::<StepFailed>()
        .and_then(|s| s.status.code())
        .and_then(|c| u8::try_from(c).ok())
        .filter(|&c| c != 0)
    {
        ExitCode::from(code)
    } else {
        ExitCode::FAILURE
    }
}

fn run(cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::Report {
            from,
            out,
            preset,
            matrix,
            npp,
        } => measure::report(&from, &out, preset, matrix.as_deref(), &npp),
        Cmd::Npp {
            command: NppCmd::Fetch { versions },
        } => versions.iter().try_for_each(|v| npp::fetch(v)),
        Cmd::Catalogue { versions, regenerate } => {
            versions.iter().try_for_each(|v| catalogue::generate(v))?;
            if regenerate {
                catalogue::regenerate()?;
            }
            Ok(())
        }
        Cmd::History(args) => history::run(args),
        Cmd::Rerender => rerender::rerender(),
        Cmd::Evidence { paths } => evidence::evidence(&paths),
        Cmd::Knowledge {
            check,
            refit,
            from,
            calls,
            designs,
            to,
        } => knowledge::knowledge(if check {
            knowledge::Job::Check
        } else if refit {
            knowledge::Job::Refit
        } else if let (Some(calls), Some(to)) = (calls, to.clone()) {
            knowledge::Job::Calls { calls, to }
        } else if let (false, Some(to)) = (designs.is_empty(), to) {
            knowledge::Job::Designs { designs, to }
        } else {
            knowledge::Job::From(from)
        }),
        Cmd::Install { to } => install::install(to.as_deref()),
        Cmd::Baseline { npp, out } => baseline::baseline(&npp, &out),
        Cmd::Compare { args } => {
            let mut c = nppbench(&["compare"]);
            c.args(&args);
            // The exit status is the gate: pass it on unchanged.
            let status = c.status().context("starting nppbench compare")?;
            match status.code() {
                Some(0) => Ok(()),
                Some(code) => std::process::exit(code),
                None => bail!("nppbench compare was killed ({status})"),
            }
        }
    }
}

fn root() -> PathBuf {
    // xtask's manifest sits one folder below the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_owned()
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(root());
    c
}

/// `nppbench ARGS…`, built and run through cargo (not quiet: a first build takes minutes, and
/// cargo's progress is what says so).
fn nppbench(args: &[&str]) -> Command {
    let mut c = cargo();
    c.args(["run", "--release", "--package", "nppbench", "--"]).args(args);
    c
}

fn check(mut cmd: Command, what: &str) -> anyhow::Result<()> {
    let status = cmd.status().with_context(|| format!("starting {what}"))?;
    if !status.success() {
        return Err(StepFailed {
            what: what.to_owned(),
            status,
        }
        .into());
    }
    Ok(())
}

fn build_nppbench() -> anyhow::Result<PathBuf> {
    let mut c = cargo();
    c.args(["build", "--release", "--package", "nppbench"]);
    check(c, "cargo build --release --package nppbench")?;
    Ok(root().join("target/release/nppbench"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo xtask` ran `cargo run --quiet`, and built nppbench with `--quiet`: one to two
    /// minutes of compiling printed nothing.
    /// `cargo xtask report --preset bogus` said "no NVIDIA GPU" and exited 5; `nppbench run`
    /// says what was wrong and exits 2.
    #[test]
    fn an_unknown_preset_is_bad_input_before_any_gpu_is_looked_for() {
        let Err(e) = Cli::try_parse_from(["cargo xtask", "report", "--preset", "bogus"]) else {
            panic!("--preset bogus parsed")
        };
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("use quick, full or atlas"), "{e}");
    }

    #[test]
    fn builds_show_their_progress_nothing_is_quiet() {
        let config = std::fs::read_to_string(root().join(".cargo/config.toml")).unwrap();
        let alias = config
            .lines()
            .find(|l| l.trim_start().starts_with("xtask ="))
            .expect("the xtask alias");
        assert!(!alias.contains("--quiet") && !alias.contains(" -q"), "{alias}");
        let run = nppbench(&["report"]);
        let args: Vec<_> = run.get_args().collect();
        assert!(!args.iter().any(|a| *a == "--quiet" || *a == "-q"), "{args:?}");
    }
}
