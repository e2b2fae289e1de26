//! The command line: every subcommand and option of `nppbench`, parsed by clap into typed
//! values (a preset, the GPUs, the probes' connections), so that bad input is clap's usage error.

use std::ffi::OsStr;
use std::path::PathBuf;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Parser, Subcommand};
use nppbench_analysis::compare::Gate;
use nppbench_engine::Devices;
use nppbench_model::{MemoryReadings, Preset, Primitive, RaceRounds};

use crate::history;

/// What `nppbench --help` opens with: what it measures, and what it makes of the measurements.
fn about() -> String {
    format!(
        "Measure which ways of calling NPP's image functions ({} in the catalogue: `nppbench primitives`) grow GPU memory, and what each costs; render the measurements as reports, comparisons and a history",
        Primitive::all().count()
    )
}

#[derive(Parser)]
#[command(name = "nppbench", version, about = about(), after_help = crate::exit::EXIT_STATUS)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Cmd,
}

#[derive(Subcommand)]
pub(crate) enum Cmd {
    /// Run a matrix of scenarios on the GPU and write DIR/run.json (DIR/runs/N/run.json for
    /// several NPP versions).
    Run(RunArgs),
    /// List the NPP functions nppbench knows (the catalogue): a table, one function a row, with
    /// its library, source and destination formats and operation.
    Primitives,
    /// Render index.html, summary.md and scenarios.csv from one run.json, or several side by side;
    /// or, with --catalogue, the page of every function a version's headers declare.
    Report {
        /// A run.json (or a folder holding runs, as `compare` takes them); give several (or
        /// repeat it) to put several runs (NPP versions) side by side. The runs of every shard
        /// of a `run --shard K/N` merge into one run.
        #[arg(long, value_name = "RUN.json", required_unless_present = "catalogue", num_args = 1..)]
        from: Vec<PathBuf>,
        /// Instead of runs: every function the headers of this NPP version declare (a folder,
        /// `catalogue/npp-13.0.1.2`, or a version built in, `13.0`), each in its state: measured
        /// (knowledge or designs), a lead or what its --calls found, or why no call can be made.
        #[arg(long, value_name = "DIR|VERSION", conflicts_with_all = ["from", "force"])]
        catalogue: Option<PathBuf>,
        /// With --catalogue: files of `nppbench call-catalogue` lines (one per host or shard; a
        /// later line of a function replaces an earlier one).
        #[arg(long, value_name = "FILE", requires = "catalogue", num_args = 1..)]
        calls: Vec<PathBuf>,
        /// With --catalogue: design lines (of `call-catalogue`) instead of the designs built in.
        #[arg(long, value_name = "FILE", requires = "catalogue", conflicts_with = "no_designs")]
        designs: Option<PathBuf>,
        /// With --catalogue: no designs at all.
        #[arg(long, requires = "catalogue")]
        no_designs: bool,
        /// The folder the report is written to.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Replace a report of other runs already in --out.
        #[arg(long)]
        force: bool,
        /// Atlas runs whose rules and fixes a trace page shows beside each call site (only with
        /// a trace.json in --from); with --catalogue, the knowledge (runs or a knowledge file) of
        /// the catalogue's version, instead of the built-in.
        #[arg(long, value_name = "RUN")]
        atlas: Vec<PathBuf>,
    },
    /// Compare runs against the first (the base): throughput with a statistical test, leak
    /// classes, hidden streams, failures. Writes DIR/compare.html, DIR/summary.md and
    /// DIR/compare.json (docs/compare.md).
    #[command(after_help = crate::exit::COMPARE_EXIT_STATUS)]
    Compare(CompareArgs),
    /// Every run a fleet has made, in a database: add runs, render trends and change points, export.
    History(history::Args),
    /// The class of any scenario (leak, bounded, flat or unknown) from atlas runs, no GPU needed:
    /// its measurement where the runs measured it, else its function's rule.
    Predict(crate::predict::PredictArgs),
    /// The next round of an atlas: a matrix of the scenarios one factor away from where each
    /// function's rule is weak, to measure with `run --matrix` and pool with the atlas.
    Design(crate::design::DesignArgs),
    /// Run a program with NPP's calls recorded (an LD_PRELOAD interposer): which calls create
    /// CUDA streams that are never destroyed, and how device memory grows. Writes DIR/trace.json
    /// and its page; exits with the program's own status.
    Trace(crate::trace::TraceArgs),
    /// Run a program with the leak and the race shielded (an LD_PRELOAD interposer): each NPP
    /// call whose configuration the atlas's rules say leaks or races gets a context declaring a
    /// non-blocking stream, every other call is untouched. Prints what it changed; --report DIR
    /// writes shield.json and its page. Exits with the program's own status.
    Shield(crate::shield::ShieldArgs),
    /// Print a preset's matrix file, a starting point for `run --matrix`.
    Preset {
        /// The preset: quick, full or atlas.
        #[arg(value_name = "NAME", value_parser = PresetParser)]
        name: Preset,
    },
    /// Load NPP (no GPU needed) and print its version and the files it was loaded from.
    Npp {
        /// The folder holding libnppc and libnppidei; default: the same search as `run`.
        #[arg(long, value_name = "DIR")]
        npp: Option<PathBuf>,
    },
    /// Every synthesisable function of a catalogue called on the GPU from its roles (issue #45;
    /// one JSON line a function).
    #[command(hide = true)]
    CallCatalogue(crate::catalogue_call::CallArgs),
    /// Internal: one child probe of `run`.
    #[command(hide = true)]
    Probe {
        #[arg(long)]
        request: PathBuf,
        #[arg(long)]
        answer: PathBuf,
    },
}

/// `nppbench run`'s arguments.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// A built-in matrix.
    #[arg(long, value_name = "NAME", default_value = "quick", conflicts_with = "matrix", value_parser = PresetParser)]
    pub(crate) preset: Preset,
    /// A custom matrix in TOML; `nppbench preset NAME` prints a preset's, a starting point.
    #[arg(long, value_name = "FILE")]
    pub(crate) matrix: Option<PathBuf>,
    /// The folder holding libnppc and the other NPP libraries; default: NPPBENCH_NPP_DIR, then
    /// CUDA_HOME and CUDA_PATH (their lib64), /usr/local/cuda/lib64, the loader. Repeat it to measure several versions, their
    /// throughput passes interleaved.
    #[arg(long, value_name = "DIR")]
    pub(crate) npp: Vec<PathBuf>,
    /// The GPUs to measure on: `all`, or ordinals (`0,2`).
    #[arg(long, value_name = "all|N,N...", default_value = "0", value_parser = parse_devices)]
    pub(crate) devices: Devices,
    /// Memory probe processes at once; default: chosen from the machine.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) jobs: Option<u32>,
    /// The most memory scenarios one probe process measures, each on host threads made for it
    /// (default 64). A fault costs only its scenario, measured again alone; `--batch 1` gives
    /// every scenario a fresh process, as nppbench did before (about seven times slower:
    /// docs/performance.md).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) batch: Option<u32>,
    /// The seed that shuffles the memory scenarios into processes; default: drawn, and
    /// recorded in run.json (jobs.batching.seed) to repeat a run's order.
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// CUDA_DEVICE_MAX_CONNECTIONS for the memory probes: 1 to 32 (default 1), or `inherit`
    /// (this environment's). One connection halves the cost of NPP's stream creation on each new
    /// thread and leaves the leak classes alone (docs/performance.md). The race is measured apart,
    /// in ordering probes that always inherit the environment, as your program does (one
    /// connection queues every stream behind the others and would hide it); so do throughput
    /// probes.
    // The full path keeps clap from reading `Option` as "the option may be left out": the value
    // is `None` for `inherit`.
    #[arg(long, value_name = "N|inherit", default_value = "1", value_parser = parse_probe_connections)]
    pub(crate) probe_connections: std::option::Option<u32>,
    /// How each memory probe reads its own memory after a call: `own`, an NVML listing of the
    /// GPU's processes made by the probe itself (the default), or `shared`, one listing made by
    /// this process for all of a GPU's probes, begun after each asked. Listings made by many
    /// processes at once slow one another down (docs/performance.md); the figure read is the
    /// same. On one H100 the atlas was no faster with `shared` (docs/performance.md).
    #[arg(long, value_name = "own|shared", default_value = "own", value_parser = str::parse::<MemoryReadings>)]
    pub(crate) memory_readings: MemoryReadings,
    /// Where the race's ordering rounds are made: `where-split` (the default), only for the
    /// configurations whose first call (synchronised, recorded by CUPTI) put a kernel, copy or
    /// fill on a stream other than the caller's, or where CUPTI could not say; `always`, for
    /// every configuration. Work all on the caller's stream is ordered by it after the late write
    /// and before the read: the rounds would find no race there (docs/run.md).
    #[arg(long, value_name = "where-split|always", default_value = "where-split", value_parser = str::parse::<RaceRounds>)]
    pub(crate) race_rounds: RaceRounds,
    /// Ordering probe processes at once beside the memory probes, on one GPU; default: half
    /// the memory probes (`--jobs`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) ordering_jobs: Option<u32>,
    /// Independent throughput passes (fresh processes), overriding the matrix's: K passes
    /// exactly, or `auto`: three, then more (up to 20, within two minutes) for each scenario whose
    /// passes still disagree too much for a comparison to settle (docs/calibration.md). The
    /// quick and full presets repeat `auto`.
    #[arg(long, value_name = "K|auto", value_parser = parse_repeat)]
    pub(crate) repeat: Option<Repeat>,
    /// Where run.json is written.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Continue a run that was interrupted, from the journal in --out.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Measure only the K-th of N disjoint parts of the matrix's scenarios (by scenario id), as
    /// one host of N does: the N shards' runs, given together to `nppbench report --from`, merge
    /// into the unsharded run. docs/shard/ has a Slurm array job and a Kubernetes Indexed Job.
    #[arg(long, value_name = "K/N")]
    pub(crate) shard: Option<nppbench_model::Shard>,
}

/// `nppbench compare`'s arguments.
#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// run.json files or report folders: a folder holding run.json, or a report of several
    /// runs (its run-N-*.json, or runs/N/run.json of a run of several NPP versions), each run in
    /// it taken in order. The first run is the base.
    #[arg(required = true, num_args = 1.., value_name = "RUN")]
    pub(crate) runs: Vec<PathBuf>,
    /// The folder compare.html, summary.md and compare.json are written to (created if missing).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Exit with status 3 when a candidate trips any of these gates (comma-separated; `--help`
    /// says what trips each).
    #[arg(long, value_delimiter = ',', value_name = "GATES", value_enum)]
    pub(crate) fail_on: Vec<Gate>,
    /// Judge a candidate that does not compare with the base (under 90% of the base's
    /// scenarios in it, other functions, or another matrix) on the scenarios that pair, instead
    /// of exiting with status 4; the page still says first that it does not compare.
    #[arg(long)]
    pub(crate) allow_partial: bool,
    /// Kernel-time changes smaller than this percentage are noise (calibrated on
    /// same-against-same runs of machines left out of the fit: docs/calibration.md); for a call
    /// of under 2.56 µs, two ticks of the GPU's 32 ns clock instead.
    #[arg(long, allow_negative_numbers = true, default_value_t = nppbench_analysis::thresholds::NOISE_PCT)]
    pub(crate) noise_pct: f64,
    /// Host-latency changes smaller than this percentage are called noise in the host latency
    /// the page shows for images under a megapixel. Host latency is not judged: it moves with the
    /// host between processes (docs/calibration.md), so it makes no verdict and trips no gate.
    #[arg(long, allow_negative_numbers = true, default_value_t = nppbench_analysis::thresholds::LATENCY_NOISE_PCT)]
    pub(crate) latency_noise_pct: f64,
    /// Significance level of Welch's t-test on the per-pass medians.
    #[arg(long, allow_negative_numbers = true, default_value_t = nppbench_analysis::thresholds::ALPHA)]
    pub(crate) alpha: f64,
    /// Only images of at least this many pixels can fail the regression gate (default 0:
    /// every size; the test on passes is calibrated at every size).
    #[arg(long, default_value_t = 0)]
    pub(crate) gate_min_pixels: u64,
    /// Apply the gates to runs measured on a GPU shared with other processes too.
    #[arg(long)]
    pub(crate) allow_shared_gpu: bool,
}

/// A preset by name, with the model's message for an unknown one; `--help` lists the names.
#[derive(Clone)]
struct PresetParser;

impl TypedValueParser for PresetParser {
    type Value = Preset;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<Preset, clap::Error> {
        let parse = |name: &str| name.parse::<Preset>();
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            Preset::ALL
                .into_iter()
                .map(|p| PossibleValue::new(p.name()).help(p.summary())),
        ))
    }
}

/// `--devices all` or `0,2`.
fn parse_devices(spec: &str) -> Result<Devices, String> {
    if spec == "all" {
        return Ok(Devices::All);
    }
    let list: Vec<u32> = spec
        .split(',')
        .map(|s| s.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| "give `all` or GPU ordinals separated by commas (0,2)".to_owned())?;
    let mut seen = list.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != list.len() {
        return Err("a GPU is listed twice".to_owned());
    }
    Ok(Devices::List(list))
}

/// `--probe-connections N|inherit`: `Some(N)` to set, `None` to inherit.
/// `--repeat`: K passes exactly, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Repeat {
    Passes(u32),
    Auto,
}

fn parse_repeat(spec: &str) -> Result<Repeat, String> {
    if spec == "auto" {
        return Ok(Repeat::Auto);
    }
    match spec.trim().parse::<u32>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(Repeat::Passes(n)),
        _ => Err("give a number of passes from 1 to 1000, or `auto`".to_owned()),
    }
}

fn parse_probe_connections(spec: &str) -> Result<Option<u32>, String> {
    if spec == "inherit" {
        return Ok(None);
    }
    match spec.trim().parse::<u32>() {
        Ok(n) if (1..=32).contains(&n) => Ok(Some(n)),
        _ => Err(
            "give a number of connections from 1 to 32 (CUDA's range), or `inherit` to leave CUDA_DEVICE_MAX_CONNECTIONS as the environment has it"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod help_agrees;
#[cfg(test)]
mod readme_commands;
#[cfg(test)]
mod shard_manifests;
#[cfg(test)]
mod tests;
