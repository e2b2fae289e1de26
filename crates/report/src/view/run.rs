//! One run's section of the page: its verdict and fixes (worded in `prose`), charts
//! (`run_charts`), environment and tables (`scenario_rows`), failures and the command that makes
//! it again.

use nppbench_analysis::RunAnalysis;
use nppbench_analysis::verdict as findings;
use nppbench_model::{Outcome, RunFile};
use serde::Serialize;

use super::atlas::{self, AtlasRow, FunctionView};
use super::evidence::RunEvidence;
use super::format::{fmt, measured_by, run_json_name};
use super::prose::{self, FixView, RuleView, VerdictView, fix_view, rule_view_of, verdict_view};
use super::run_charts::{ChartView, charts_for, charts_for_atlas};
use super::scenario_rows::{MemoryRow, ThroughputRow, memory_row, throughput_row};
use super::timing;

#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    pub anchor: String,
    /// `NPP 13.0.1.2 · H200 · driver 580.159.04`.
    pub label: String,
    pub npp_version: String,
    pub gpu_name: String,
    pub heading: String,
    /// `WRONG PIXELS · LEAKS`, `WRONG PIXELS`, `LEAKS` or `NO LEAK`: correctness first.
    pub status: String,
    pub interrupted: bool,
    /// What a reader must know before trusting the figures: a shared GPU, a test hook.
    pub warnings: Vec<String>,
    pub verdict: VerdictView,
    /// Each primitive's leak rule.
    pub rules: Vec<RuleView>,
    /// What the rules were derived from: this run, or every run of its NPP version given.
    pub rules_basis: String,
    /// The rules' class against the held-out scenarios of the runs they were derived from, in
    /// all and by width octave; `None` where none was held out.
    pub held_out_score: Option<ScoreView>,
    pub fixes: Vec<FixView>,
    /// Several primitives: one row each (the atlas), and a section each.
    pub atlas: Vec<AtlasRow>,
    pub functions: Vec<FunctionView>,
    pub environment: Vec<EnvEntry>,
    pub charts: Vec<ChartView>,
    pub memory: Vec<MemoryRow>,
    pub throughput: Vec<ThroughputRow>,
    /// Columns shown only where they vary.
    pub many_primitives: bool,
    pub many_contexts: bool,
    pub many_gpus: bool,
    /// Over this many memory rows, the full table is left to scenarios.csv.
    pub full_tables: bool,
    pub timing: timing::TimingView,
    pub gpus: Vec<timing::GpuRow>,
    pub gpu_disagreements: Vec<String>,
    pub failures: Vec<FailureRow>,
    pub not_measured: Vec<FailureRow>,
    pub reproduce: String,
    pub run_json: String,
    /// The nppbench build that measured this run (run.json's `tool`), which need not be the one
    /// rendering the page.
    pub measured_by: String,
}

/// A score of the rules on scenarios they were not fitted on.
#[derive(Debug, Clone, Serialize)]
pub struct ScoreView {
    /// "2,431 of 2,440 right (99.6%)": the class.
    pub total: String,
    /// The same, of leaking or not.
    pub leak_total: String,
    pub octaves: Vec<OctaveScore>,
}

/// One width octave of a [`ScoreView`].
#[derive(Debug, Clone, Serialize)]
pub struct OctaveScore {
    /// "16–31".
    pub widths: String,
    /// Leaking or not, then the class.
    pub leak: String,
    pub words: String,
    /// Under 95% right, of leaking or not: marked on the page.
    pub weak: bool,
}

fn score_view(s: &nppbench_analysis::score::Score) -> Option<ScoreView> {
    (s.total.total() > 0).then(|| ScoreView {
        total: s.total.words(),
        leak_total: s.leak_total.words(),
        octaves: s
            .by_octave
            .iter()
            .zip(&s.leak_by_octave)
            .map(|((k, t), (_, l))| OctaveScore {
                widths: nppbench_analysis::score::octave_label(*k),
                leak: l.words(),
                words: t.words(),
                weak: (l.right as f64) < 0.95 * l.total() as f64,
            })
            .collect(),
    })
}

/// One line of the environment list.
#[derive(Debug, Clone, Serialize)]
pub struct EnvEntry {
    pub name: String,
    pub value: String,
}

/// A failed (or not measured) scenario: its id, the kind of fault and why.
#[derive(Debug, Clone, Serialize)]
pub struct FailureRow {
    pub scenario: String,
    pub kind: String,
    pub reason: String,
}

/// Over this many memory scenarios, a page keeps the compact table and leaves every column to
/// scenarios.csv.
const FULL_TABLE_LIMIT: usize = 400;

pub(crate) fn run_view(
    a: &RunAnalysis<'_>,
    index: usize,
    total: usize,
    evidence: &RunEvidence,
) -> Result<RunView, String> {
    let run = a.run;
    let anchor = format!("run-{}", index + 1);
    let v = findings::verdict(a);
    let outcome_rows = |want: fn(&Outcome) -> Option<(String, String)>| -> Vec<FailureRow> {
        run.memory
            .iter()
            .map(|m| (&m.scenario.id, &m.outcome))
            .chain(run.throughput.iter().map(|t| (&t.scenario.id, &t.outcome)))
            .filter_map(|(id, o)| {
                want(o).map(|(kind, reason)| FailureRow {
                    scenario: id.clone(),
                    kind,
                    reason,
                })
            })
            .collect()
    };
    let failures = outcome_rows(|o| match o {
        Outcome::Failed { reason, kind } => Some((kind.as_str().to_owned(), reason.clone())),
        _ => None,
    });
    let mut not_measured = outcome_rows(|o| match o {
        Outcome::NotMeasured { reason } => Some(("not measured".to_owned(), reason.clone())),
        _ => None,
    });
    not_measured.extend(run.matrix.skipped.iter().map(|s| FailureRow {
        scenario: "(matrix)".into(),
        kind: "not measured".into(),
        reason: s.clone(),
    }));
    let rules = &evidence.rules;
    let primitives = a.primitives();
    let many_primitives = primitives.len() > 1;
    let memory: Vec<MemoryRow> = a.memory.iter().map(memory_row).collect();
    let throughput: Vec<ThroughputRow> = a.throughput.iter().map(|t| throughput_row(t, a.ceiling_gbps)).collect();
    let (atlas, functions, bars) = if many_primitives {
        atlas::rows(a, rules, &evidence.held_out, &memory, &throughput)
    } else {
        (Vec::new(), Vec::new(), Vec::new())
    };
    let mut contexts: Vec<_> = run.memory.iter().map(|m| m.scenario.context).collect();
    contexts.sort();
    contexts.dedup();
    let leaking = v.leaking > 0;
    Ok(RunView {
        heading: run.short_label(),
        label: run.short_label(),
        npp_version: run.environment.npp.full_version(),
        gpu_name: run.environment.gpu.name.clone(),
        status: status_word(v.output.wrong + v.output.faults > 0, leaking),
        interrupted: run.interrupted,
        warnings: prose::warnings(a),
        verdict: verdict_view(&v, a),
        rules: rules.iter().map(rule_view_of).collect(),
        rules_basis: evidence.basis.clone(),
        held_out_score: score_view(&evidence.held_out),
        fixes: findings::fixes(a).iter().map(fix_view).collect(),
        atlas,
        functions,
        environment: environment(run),
        charts: if many_primitives {
            charts_for_atlas(&bars, &anchor)?
        } else {
            charts_for(a, &anchor)?
        },
        full_tables: memory.len() <= FULL_TABLE_LIMIT,
        memory: if many_primitives { Vec::new() } else { memory },
        throughput: if many_primitives { Vec::new() } else { throughput },
        many_primitives,
        many_contexts: contexts.len() > 1,
        many_gpus: run.environment.gpus.len() > 1,
        timing: timing::timing(a),
        gpus: timing::gpus(a),
        gpu_disagreements: timing::disagreements(a),
        failures,
        not_measured,
        reproduce: reproduce(run),
        run_json: run_json_name(index, run, total),
        measured_by: measured_by(run),
        anchor,
    })
}

fn environment(run: &RunFile) -> Vec<EnvEntry> {
    let e = &run.environment;
    let api = e.cuda_driver_api_version;
    let entries: Vec<(String, String)> = vec![
        (
            "GPU".into(),
            format!(
                "{} ({} SMs, {} MiB, compute {})",
                e.gpu.name,
                e.gpu.sm_count,
                e.gpu.memory_total_bytes >> 20,
                e.gpu.compute_capability
            ),
        ),
        ("GPU UUID".into(), e.gpu.uuid.clone()),
        (
            "Driver".into(),
            e.driver_version.clone().unwrap_or_else(|| "unknown (no NVML)".into()),
        ),
        (
            "CUDA driver API".into(),
            format!("{}.{}", api / 1000, (api % 1000) / 10),
        ),
        ("NPP".into(), e.npp.version.clone()),
        ("NPP libraries".into(), e.npp.libraries.join(", ")),
        (
            "Copy ceiling".into(),
            e.copy_ceiling_bytes_per_s.map_or_else(
                || "not measured".into(),
                |b| format!("{} GB/s (device-to-device, read + written)", fmt(b / 1e9, 0)),
            ),
        ),
        (
            "Per-process memory probe".into(),
            if e.process_memory_probe {
                "NVML".into()
            } else {
                "unavailable: device-wide figures used".into()
            },
        ),
        (
            "Host".into(),
            format!("{} — {}, kernel {}", e.host.hostname, e.host.os, e.host.kernel),
        ),
        (
            "CPU".into(),
            format!("{} ({} logical cores)", e.host.cpu.model, e.host.cpu.logical_cores),
        ),
        ("Measured by".into(), measured_by(run)),
        (
            "Matrix".into(),
            format!("{} — {}", run.matrix.name, run.matrix.description),
        ),
        (
            "Run".into(),
            format!("{} → {} ({} s)", run.started_at, run.finished_at, fmt(run.wall_s, 1)),
        ),
    ];
    entries
        .into_iter()
        .map(|(name, value)| EnvEntry { name, value })
        .collect()
}

/// The command that makes this run again: the recorded command line, with the binary as
/// `nppbench` and the output folder kept.
///
/// The measuring machine's own paths say nothing on another machine: the output folder becomes
/// `DIR`, an NPP folder `NPP_DIR` (the version is in the environment), a matrix file
/// `MATRIX.toml` (its contents are in run.json).
pub(crate) fn reproduce(run: &RunFile) -> String {
    let placeholder = |flag: &str| match flag {
        "--out" => Some("DIR"),
        "--npp" => Some("NPP_DIR"),
        "--matrix" => Some("MATRIX.toml"),
        _ => None,
    };
    let mut words = vec!["nppbench".to_owned()];
    let mut args = run.command.iter().skip(1);
    while let Some(arg) = args.next() {
        if let Some((flag, _)) = arg.split_once('=')
            && let Some(p) = placeholder(flag)
        {
            words.push(format!("{flag}={p}"));
        } else if let Some(p) = placeholder(arg) {
            words.push(arg.clone());
            if args.next().is_some() {
                words.push(p.to_owned());
            }
        } else {
            words.push(arg.clone());
        }
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn reproduce_shows_no_path_of_the_measuring_machine() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h200-full-npp-13.0.1/run.json.gz");
        let mut run = nppbench_model::RunFile::read(&path).unwrap();
        run.command = [
            "/home/ci/target/release/nppbench",
            "run",
            "--matrix=/home/ci/m.toml",
            "--npp",
            "/opt/npp-12.2.3.2",
            "--repeat",
            "5",
            "--out",
            "/srv/out/run-7",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            super::reproduce(&run),
            "nppbench run --matrix=MATRIX.toml --npp NPP_DIR --repeat 5 --out DIR"
        );
    }
}

/// A run's status, correctness first: `WRONG PIXELS · LEAKS`, `WRONG PIXELS`, `LEAKS` or
/// `NO LEAK`.
pub(crate) fn status_word(wrong: bool, leaking: bool) -> String {
    let leak = if leaking { "LEAKS" } else { "NO LEAK" };
    match (wrong, leaking) {
        (true, true) => format!("WRONG PIXELS · {leak}"),
        (true, false) => "WRONG PIXELS".to_owned(),
        (false, _) => leak.to_owned(),
    }
}

#[cfg(test)]
mod status_tests {
    #[test]
    fn the_status_says_wrong_pixels_before_leaks() {
        let all = [(true, true), (true, false), (false, true), (false, false)].map(|(w, l)| super::status_word(w, l));
        assert_eq!(all, ["WRONG PIXELS · LEAKS", "WRONG PIXELS", "LEAKS", "NO LEAK"]);
    }
}
