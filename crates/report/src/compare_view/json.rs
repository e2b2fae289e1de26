//! compare.json: every verdict and figure of a comparison, for a CI system to read. Numbers are
//! numbers (never formatted), names are those of the command line and run.json; the schema is
//! documented in docs/compare.md, and `schema_version` changes when a field changes meaning.

use std::collections::BTreeMap;

use nppbench_analysis::LeakClass;
use nppbench_analysis::compare::{
    Change, Comparison, Counts, FailedScenario, Gate, MIN_COVERAGE, MIN_PASSES, Metric, Mismatch, NotJudged, Older,
    PassTest, Thresholds, ThroughputPasses,
};
use nppbench_analysis::figure::CallLayoutKind;
use nppbench_model::{FailureKind, Primitive, RunFile};
use serde::Serialize;

use super::{ComparePage, Status};

/// compare.json's schema version.
pub const COMPARE_JSON_SCHEMA_VERSION: u32 = 1;

/// The whole file.
#[derive(Debug, Serialize)]
pub struct CompareJson {
    pub schema_version: u32,
    pub generated_by: String,
    pub status: Status,
    pub allow_partial: bool,
    /// The gates asked for, and those tripped by a candidate given a verdict.
    pub gates: Vec<Gate>,
    pub tripped: Vec<Gate>,
    pub thresholds: ThresholdsJson,
    pub base: RunJson,
    pub comparisons: Vec<ComparisonJson>,
}

#[derive(Debug, Serialize)]
pub struct ThresholdsJson {
    pub noise_pct: f64,
    pub latency_noise_pct: f64,
    pub alpha: f64,
    pub gate_min_pixels: u64,
    pub min_passes: usize,
    pub min_coverage: f64,
}

#[derive(Debug, Serialize)]
pub struct RunJson {
    pub label: String,
    pub npp: String,
    pub gpu: String,
    pub gpu_uuid: String,
    pub driver: Option<String>,
    pub matrix: String,
    pub started_at: String,
}

#[derive(Debug, Serialize)]
pub struct ComparisonJson {
    pub candidate: RunJson,
    pub compares: bool,
    pub judged: bool,
    /// `too_few_paired`, `functions`, `matrix_name`: why the runs do not compare.
    pub mismatches: Vec<&'static str>,
    pub coverage: CoverageJson,
    pub environment_changes: Vec<String>,
    pub same_machine: bool,
    pub only_in_base: Vec<String>,
    pub only_in_candidate: Vec<String>,
    pub failures: FailuresJson,
    pub candidate_leaking: Vec<String>,
    /// The candidate's memory scenarios whose output is wrong or that faulted.
    pub candidate_wrong: Vec<String>,
    /// The run made by an older nppbench (`base`, `candidate`, `both`), where scenarios were not
    /// judged for that (`counts.unsettled_older`); `null` otherwise.
    pub older: Option<Older>,
    pub counts: Counts,
    /// The gates this candidate trips (empty where it is given no verdict).
    pub tripped: Vec<Gate>,
    pub throughput: Vec<ThroughputJson>,
    pub memory: Vec<MemoryJson>,
}

#[derive(Debug, Serialize)]
pub struct CoverageJson {
    pub base_scenarios: usize,
    pub paired: usize,
    pub candidate_scenarios: usize,
    pub share: f64,
    pub base_functions: Vec<Primitive>,
    pub candidate_functions: Vec<Primitive>,
    pub functions_differ: bool,
    pub base_matrix: String,
    pub candidate_matrix: String,
    pub matrix_names_differ: bool,
    pub matrices_differ: bool,
}

#[derive(Debug, Serialize)]
pub struct FailuresJson {
    /// Failed records (memory scenarios, throughput passes) by kind of fault.
    pub base_by_kind: BTreeMap<FailureKind, usize>,
    pub candidate_by_kind: BTreeMap<FailureKind, usize>,
    /// The candidate's failed scenarios, each once.
    pub candidate: Vec<FailedScenario>,
}

/// One test on passes: the medians of each side's per-pass values, the change, its interval.
#[derive(Debug, Serialize)]
pub struct TestJson {
    pub base: f64,
    pub candidate: f64,
    pub change_pct: f64,
    pub change_ci_pct: Option<[f64; 2]>,
    pub p_value: Option<f64>,
    pub verdict: Change,
}

#[derive(Debug, Serialize)]
pub struct ThroughputJson {
    pub id: String,
    pub primitive: Primitive,
    pub pixels: u64,
    pub gpu_index: usize,
    /// The scenario's verdict: the time's (each layout's, where they mix); `unsettled` where it
    /// is not judged (`not_judged`).
    pub verdict: Change,
    /// Why the scenario is not judged though each side has passes; `null` where it is judged.
    pub not_judged: Option<NotJudgedJson>,
    pub metric: Metric,
    /// Time per call in nanoseconds, as `metric` says (with the layout held fixed, where they mix).
    pub time: TestJson,
    /// Where the calls' kernels ran at once in some passes and in turn in others: each layout's
    /// time tested apart; empty otherwise.
    pub by_layout: Vec<LayoutJson>,
    /// Host latency per call in microseconds (images under a megapixel): shown, not judged.
    pub host_latency: Option<TestJson>,
    pub base_passes: usize,
    pub candidate_passes: usize,
    /// Every pass's figure of the time tested over all calls, ns, in pass order.
    pub base_pass_values: Vec<f64>,
    pub candidate_pass_values: Vec<f64>,
    pub base_gbps: Option<f64>,
    pub candidate_gbps: Option<f64>,
    /// Whether this scenario's size lets it fail the regression gate.
    pub regression_gated: bool,
    pub gate: Option<Gate>,
}

/// Why a scenario is not judged: `older` (a run made by an older nppbench lacks the per-layout
/// figures, and the runs drew the layouts apart; `older` names it) or `layouts_apart` (no layout
/// has passes in both runs).
#[derive(Debug, Serialize)]
pub struct NotJudgedJson {
    pub reason: &'static str,
    pub older: Option<Older>,
}

impl NotJudgedJson {
    fn of(n: NotJudged) -> NotJudgedJson {
        match n {
            NotJudged::Older(o) => NotJudgedJson {
                reason: "older",
                older: Some(o),
            },
            NotJudged::LayoutsApart => NotJudgedJson {
                reason: "layouts_apart",
                older: None,
            },
        }
    }
}

/// One layout's time per call (ns), base against candidate, with every pass's figure.
#[derive(Debug, Serialize)]
pub struct LayoutJson {
    pub layout: CallLayoutKind,
    pub time: TestJson,
    pub base_pass_values: Vec<f64>,
    pub candidate_pass_values: Vec<f64>,
}

#[derive(Debug, Serialize)]
pub struct MemoryJson {
    pub id: String,
    pub base_class: Option<LeakClass>,
    pub candidate_class: Option<LeakClass>,
    /// NPP's streams per new thread (or in all, where no slope was fitted).
    pub base_streams: Option<f64>,
    pub candidate_streams: Option<f64>,
    pub new_leak: bool,
    pub fixed_leak: bool,
    pub more_streams: bool,
    pub new_race: bool,
    pub race_gone: bool,
    pub new_wrong: bool,
    pub wrong_gone: bool,
    pub gate: Option<Gate>,
}

fn run_json(run: &RunFile, label: &str) -> RunJson {
    let e = &run.environment;
    RunJson {
        label: label.to_owned(),
        npp: e.npp.full_version(),
        gpu: e.gpu.name.clone(),
        gpu_uuid: e.gpu.uuid.clone(),
        driver: e.driver_version.clone(),
        matrix: run.matrix.name.clone(),
        started_at: run.started_at.clone(),
    }
}

fn test_json(t: &PassTest) -> TestJson {
    TestJson {
        base: t.base,
        candidate: t.candidate,
        change_pct: t.change_pct,
        change_ci_pct: t.change_ci_pct.map(|(lo, hi)| [lo, hi]),
        p_value: t.p_value,
        verdict: t.verdict,
    }
}

fn coverage_json(c: &Comparison) -> CoverageJson {
    let cov = &c.coverage;
    CoverageJson {
        base_scenarios: cov.base_scenarios,
        paired: cov.paired,
        candidate_scenarios: cov.candidate_scenarios,
        share: cov.share(),
        base_functions: cov.base_functions.clone(),
        candidate_functions: cov.candidate_functions.clone(),
        functions_differ: cov.functions_differ(),
        base_matrix: cov.base_matrix.clone(),
        candidate_matrix: cov.candidate_matrix.clone(),
        matrix_names_differ: cov.matrix_names_differ(),
        matrices_differ: cov.matrices_differ,
    }
}

fn comparison_json(c: &Comparison, run: RunJson, gates: &[Gate], judged: bool) -> ComparisonJson {
    let tripped = c.tripped_if_judged(gates, judged);
    let throughput = c
        .throughput
        .iter()
        .map(|x| {
            let (base_values, cand_values) = x.pass_values();
            ThroughputJson {
                id: x.id.clone(),
                primitive: x.primitive,
                pixels: x.pixels,
                gpu_index: x.gpu_index,
                verdict: x.verdict,
                not_judged: x.not_judged.map(NotJudgedJson::of),
                metric: x.metric,
                time: test_json(&x.kernel),
                by_layout: x
                    .by_layout
                    .iter()
                    .map(|l| {
                        let values = |p: &ThroughputPasses| {
                            p.by_layout
                                .as_ref()
                                .map(|b| b.get(l.layout).to_vec())
                                .unwrap_or_default()
                        };
                        LayoutJson {
                            layout: l.layout,
                            time: test_json(&l.test),
                            base_pass_values: values(&x.base_values),
                            candidate_pass_values: values(&x.cand_values),
                        }
                    })
                    .collect(),
                host_latency: x.latency.as_ref().map(test_json),
                base_passes: x.base_passes,
                candidate_passes: x.cand_passes,
                base_pass_values: base_values.to_vec(),
                candidate_pass_values: cand_values.to_vec(),
                base_gbps: x.base_gbps,
                candidate_gbps: x.cand_gbps,
                regression_gated: x.gated,
                gate: x.trips(&tripped),
            }
        })
        .collect();
    let memory = c
        .memory
        .iter()
        .map(|m| MemoryJson {
            id: m.id.clone(),
            base_class: m.base_class,
            candidate_class: m.cand_class,
            base_streams: m.base_hidden,
            candidate_streams: m.cand_hidden,
            new_leak: m.new_leak,
            fixed_leak: m.fixed_leak,
            more_streams: m.more_streams,
            new_race: m.new_race,
            race_gone: m.race_gone,
            new_wrong: m.new_wrong,
            wrong_gone: m.wrong_gone,
            gate: m.trips(&tripped),
        })
        .collect();
    ComparisonJson {
        candidate: run,
        compares: c.compares(),
        judged,
        mismatches: c
            .coverage
            .mismatches()
            .iter()
            .map(|m| match m {
                Mismatch::TooFewPaired { .. } => "too_few_paired",
                Mismatch::Functions => "functions",
                Mismatch::MatrixName => "matrix_name",
            })
            .collect(),
        coverage: coverage_json(c),
        environment_changes: c.environment_changes.clone(),
        same_machine: c.same_machine,
        only_in_base: c.only_in_base.clone(),
        only_in_candidate: c.only_in_candidate.clone(),
        failures: FailuresJson {
            base_by_kind: c.base_failures.clone(),
            candidate_by_kind: c.cand_failures.clone(),
            candidate: c.cand_failed.clone(),
        },
        candidate_leaking: c.cand_leaking.clone(),
        candidate_wrong: c.cand_wrong.clone(),
        older: c.older(),
        counts: c.counts(),
        tripped,
        throughput,
        memory,
    }
}

/// compare.json's model, from the comparisons and the page that worded them (its status and
/// labels, so that the file and the page never disagree).
pub(super) fn compare_json(
    runs: &[RunFile],
    comparisons: &[Comparison],
    page: &ComparePage,
    t: Thresholds,
    gates: &[Gate],
    allow_partial: bool,
) -> CompareJson {
    let label = |i: usize| page.environments.get(i).map_or_else(String::new, |e| e.label.clone());
    let comparisons: Vec<ComparisonJson> = comparisons
        .iter()
        .enumerate()
        .map(|(i, c)| {
            comparison_json(
                c,
                run_json(&runs[i + 1], &label(i + 1)),
                gates,
                c.compares() || allow_partial,
            )
        })
        .collect();
    let tripped: Vec<Gate> = gates
        .iter()
        .copied()
        .filter(|g| comparisons.iter().any(|c| c.tripped.contains(g)))
        .collect();
    CompareJson {
        schema_version: COMPARE_JSON_SCHEMA_VERSION,
        generated_by: page.generated_by.clone(),
        status: page.outcome,
        allow_partial,
        gates: gates.to_vec(),
        tripped,
        thresholds: ThresholdsJson {
            noise_pct: t.noise_pct,
            latency_noise_pct: t.latency_noise_pct,
            alpha: t.alpha,
            gate_min_pixels: t.gate_min_pixels,
            min_passes: MIN_PASSES,
            min_coverage: MIN_COVERAGE,
        },
        base: run_json(&runs[0], &label(0)),
        comparisons,
    }
}
