//! `nppbench history add|report|export`: every run a fleet has made, in an SQLite database, as
//! trends with change points (`nppbench_history` keeps and judges, `nppbench_report` words and
//! draws).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;
use nppbench_history::changes::Settings;
use nppbench_history::gates::Gate;
use nppbench_history::{Added, Db, History, HistoryError};

use crate::exit::{GateFailed, bad_input};

#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: HistoryCmd,
}

#[derive(Subcommand)]
enum HistoryCmd {
    /// Add runs to the history: run files, or folders searched (recursively) for every file that
    /// reads as a run, whatever its name. A run already there is left as it is. A file named
    /// that is not an nppbench run is refused and nothing is added; in a folder, each file that
    /// is not one (or a copy of one taken, or made with test hooks) is named with why it was not
    /// added.
    Add {
        /// run.json files, or folders holding runs (every run in them is added).
        #[arg(required = true, value_name = "RUN.json|DIR")]
        runs: Vec<PathBuf>,
        /// The history database (created when missing).
        #[arg(long, value_name = "FILE")]
        db: PathBuf,
        /// Add runs made with test hooks too (they measure nppbench's calibration, not NPP).
        #[arg(long)]
        allow_test_hooks: bool,
    },
    /// Render DIR/index.html and DIR/summary.md: each scenario over time per GPU model and
    /// runner, its change points and the environment changes they line up with, leak classes
    /// that changed, and runners that disagree.
    Report {
        /// The history database (`history add` makes it).
        #[arg(long, value_name = "FILE")]
        db: PathBuf,
        /// The folder index.html and summary.md are written to.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Exit with status 3 when a change new in the latest run goes the wrong way
        /// (comma-separated): `regression`, a scenario the latest run makes slower than the run
        /// before, by compare's own test on their passes (not judged under 3 passes a side); `leak`,
        /// a leak class that became leak. The history keeps no series the other gates of `compare`
        /// could trip on, so it takes these two alone.
        #[arg(long, value_delimiter = ',', value_name = "GATES", value_parser = history_gate())]
        fail_on: Vec<Gate>,
        /// Change points and disagreements between runners smaller than this percentage are noise
        /// (verdicts between two runs use compare's thresholds).
        #[arg(long, allow_negative_numbers = true, default_value_t = nppbench_analysis::thresholds::NOISE_PCT)]
        noise_pct: f64,
    },
    /// Write every scenario result, joined with its run's environment, as CSV.
    Export {
        /// The history database (`history add` makes it).
        #[arg(long, value_name = "FILE")]
        db: PathBuf,
        /// The CSV file to write (its folder must exist).
        #[arg(long, value_name = "FILE.csv")]
        out: PathBuf,
    },
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        HistoryCmd::Add {
            runs,
            db,
            allow_test_hooks,
        } => add(&runs, &db, allow_test_hooks),
        HistoryCmd::Report {
            db,
            out,
            fail_on,
            noise_pct,
        } => report(&db, &out, &fail_on, noise_pct),
        HistoryCmd::Export { db, out } => export(&db, &out),
    }
}

/// Bad input keeps the usage exit status; anything else is a failure with context.
fn history_error(e: HistoryError) -> anyhow::Error {
    if e.is_bad_input() {
        bad_input(e)
    } else {
        anyhow::Error::new(e)
    }
}

fn add(runs: &[PathBuf], db_path: &Path, allow_test_hooks: bool) -> anyhow::Result<()> {
    let existed = db_path.exists();
    let mut db = Db::open(db_path).map_err(history_error)?;
    let read = nppbench_history::ingest::prepare_paths(runs, allow_test_hooks);
    let added = match read.and_then(|(prepared, skipped)| {
        for s in &skipped {
            println!("not added {}: {}", s.path.display(), s.why);
        }
        nppbench_history::ingest::add_prepared(&mut db, prepared)
    }) {
        Ok(added) => added,
        Err(e) => {
            // A database this command made and could fill with nothing is not left behind.
            if !existed {
                drop(db);
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    let mut path = db_path.as_os_str().to_owned();
                    path.push(suffix);
                    let _ = std::fs::remove_file(path);
                }
            }
            return Err(history_error(e));
        }
    };
    for a in &added {
        let what = format!(
            "{} (NPP {}, {} @ {}, {})",
            a.path.display(),
            a.run.npp_version,
            a.run.gpu_model,
            a.run.host,
            a.run.started_at
        );
        match a.added {
            Added::New { results } => println!("added {what}: {results} results"),
            Added::AlreadyPresent => println!("already in the history: {what}"),
        }
    }
    let (runs, results) = db.counts().map_err(history_error)?;
    println!("{}: {runs} runs, {results} results", db_path.display());
    Ok(())
}

fn report(db_path: &Path, out: &Path, gates: &[Gate], noise_pct: f64) -> anyhow::Result<()> {
    let unjudged = nppbench_history::gates::unjudged_gates(gates);
    if !unjudged.is_empty() {
        return Err(bad_input(format!(
            "history report --fail-on {}: the history cannot judge it (it keeps no series it could trip on); use regression or leak, or gate streams with nppbench compare",
            crate::exit::gate_list(&unjudged)
        )));
    }
    if !(0.0..100.0).contains(&noise_pct) {
        return Err(bad_input("--noise-pct must be in [0, 100)"));
    }
    let db = Db::open_existing(db_path).map_err(history_error)?;
    let history = History::load(&db).map_err(history_error)?;
    let settings = Settings {
        noise_pct,
        ..Settings::default()
    };
    let findings = nppbench_history::changes::analyse(&history, &settings);
    let r = nppbench_report::history_view::render(&history, &findings, gates)
        .with_context(|| format!("rendering the history of {}", db_path.display()))?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let page = out.join("index.html");
    std::fs::write(&page, &r.index_html).with_context(|| format!("writing {}", page.display()))?;
    let summary = out.join("summary.md");
    std::fs::write(&summary, &r.summary_md).with_context(|| format!("writing {}", summary.display()))?;
    println!("{}", page.display());
    if !r.tripped.is_empty() {
        for t in &r.tripped {
            eprintln!("{t}");
        }
        return Err(GateFailed(crate::exit::tripped_by_gate(&r.tripped), page.display().to_string()).into());
    }
    Ok(())
}

fn export(db_path: &Path, out: &Path) -> anyhow::Result<()> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
        return Err(bad_input(format!(
            "the folder {} does not exist: create it, or give another --out",
            dir.display()
        )));
    }
    let db = Db::open_existing(db_path).map_err(history_error)?;
    let file = std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?;
    let rows = nppbench_history::export::write_csv(&db, std::io::BufWriter::new(file))
        .with_context(|| format!("writing {}", out.display()))?;
    println!("{}: {rows} results", out.display());
    Ok(())
}

/// The gates `history report --fail-on` judges, as clap offers and checks them: the others of
/// `compare` are refused with the two there are, not listed as if they were judged. Their names
/// alone: what each trips on in a history is the option's own help (compare's words name options
/// of compare's).
fn history_gate() -> impl clap::builder::TypedValueParser<Value = Gate> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(
        nppbench_history::gates::HISTORY_GATES
            .iter()
            .filter_map(clap::ValueEnum::to_possible_value)
            .map(|v| v.help(None::<&'static str>)),
    )
    .map(|name| name.parse::<Gate>().expect("a judged gate's name parses"))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::exit::BadInput;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn history(args: &[&str]) -> anyhow::Result<()> {
        run(
            Cli::try_parse_from(std::iter::once("history").chain(args.iter().copied()))
                .unwrap()
                .args,
        )
    }

    fn committed(path: &str) -> String {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports")
            .join(path)
            .display()
            .to_string()
    }

    #[test]
    fn bad_input_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.db").display().to_string();
        let out = dir.path().join("page").display().to_string();
        // No history yet.
        let err = history(&["report", "--db", &db, "--out", &out]).unwrap_err();
        assert!(err.downcast_ref::<BadInput>().is_some(), "{err:#}");
        // A --db in a folder that does not exist.
        let nowhere = dir.path().join("no/such/history.db").display().to_string();
        let err = history(&["add", &committed("h100-quick-npp-13.0.1"), "--db", &nowhere]).unwrap_err();
        assert!(err.downcast_ref::<BadInput>().is_some(), "{err:#}");
        // A failed first add leaves no database behind.
        let missing = dir.path().join("missing.json").display().to_string();
        assert!(history(&["add", &missing, "--db", &db]).is_err());
        assert!(!Path::new(&db).exists(), "a failed add created {db}");
        // A foreign file: refused, naming it, nothing added.
        history(&["add", &committed("h100-quick-npp-13.0.1"), "--db", &db]).unwrap();
        let foreign = dir.path().join("foreign.json");
        std::fs::write(&foreign, r#"{"not": "a run"}"#).unwrap();
        let before = Db::open(Path::new(&db)).unwrap().counts().unwrap();
        let err = history(&["add", &foreign.display().to_string(), "--db", &db]).unwrap_err();
        assert!(err.downcast_ref::<BadInput>().is_some(), "{err:#}");
        assert!(format!("{err:#}").contains("foreign.json"), "{err:#}");
        assert_eq!(Db::open(Path::new(&db)).unwrap().counts().unwrap(), before);
        // An unknown gate: clap refuses it, naming it and the gates there are.
        let err = Cli::try_parse_from([
            "history",
            "report",
            "--db",
            &db,
            "--out",
            &out,
            "--fail-on",
            "regression,speed",
        ])
        .err()
        .unwrap()
        .to_string();
        assert!(
            err.contains("'speed'") && err.contains("[possible values: regression, leak]"),
            "{err}"
        );
        // A gate of compare's the history cannot judge is refused alike: its help lists the two
        // it judges, no more (#32 item 9).
        let err = Cli::try_parse_from(["history", "report", "--db", &db, "--out", &out, "--fail-on", "streams"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("'streams'") && err.contains("[possible values: regression, leak]"),
            "{err}"
        );
    }

    #[test]
    fn a_regression_in_the_latest_run_fails_the_gate_after_writing_the_page() {
        // The committed H100 runs of one machine's calibration, oldest first, three or more
        // passes each (the history judges a step with compare's own rule, which needs three a
        // side): the real runs trip nothing.
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.db").display().to_string();
        let out = dir.path().join("page");
        for run in ["quick-1", "quick-2"] {
            history(&[
                "add",
                &committed(&format!("calibration/h100-a/quick/{run}.json.gz")),
                "--db",
                &db,
            ])
            .unwrap();
        }
        let out_s = out.display().to_string();
        history(&["report", "--db", &db, "--out", &out_s, "--fail-on", "leak,regression"]).unwrap();
        // Altered copy of the latest run, made later: one scenario's kernel time 30% slower in
        // every pass.
        let latest = committed("calibration/h100-a/quick/quick-2.json.gz");
        let mut run = nppbench_model::RunFile::read(Path::new(&latest)).unwrap();
        run.started_at = "2099-01-01T00:00:00Z".into();
        let id = "tp/Convert_8u32f_C1R/1920x1080-s1920-d7680/blocking/from_stream";
        let mut altered_passes = 0;
        for t in run.throughput.iter_mut().filter(|t| t.scenario.id == id) {
            altered_passes += 1;
            let per_call = t.result.as_mut().unwrap().per_call.as_mut().unwrap();
            per_call.median_ns *= 1.3;
            if let Some(layout) = per_call.layout.as_mut() {
                layout.busy_median_ns *= 1.3;
            }
        }
        assert!(altered_passes >= 3, "{altered_passes}");
        let altered = dir.path().join("run.json");
        std::fs::write(&altered, serde_json::to_string(&run).unwrap()).unwrap();
        history(&["add", &altered.display().to_string(), "--db", &db]).unwrap();
        let err = history(&["report", "--db", &db, "--out", &out_s, "--fail-on", "regression"]).unwrap_err();
        assert!(err.downcast_ref::<GateFailed>().is_some(), "{err:#}");
        // What tripped, by gate: how many scenarios and the first.
        let message = format!("{err:#}");
        assert!(
            message.starts_with("the comparison fails: regression: 1 scenario, the first ") && message.contains(id),
            "{message}"
        );
        assert!(out.join("index.html").exists() && out.join("summary.md").exists());
        let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
        assert!(summary.contains(id), "{summary}");
        let csv = dir.path().join("history.csv");
        history(&["export", "--db", &db, "--out", &csv.display().to_string()]).unwrap();
        assert!(std::fs::read_to_string(csv).unwrap().lines().count() > 100);
    }
}
