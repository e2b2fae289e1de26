//! The compare page's view model: the verdict first (PASS or FAIL, the failing candidates and
//! the items that tripped a gate first), then each candidate's changes, every figure formatted.

mod comparison;

use nppbench_analysis::compare::{Change, Comparison, Gate, MIN_PASSES, PassTest, Thresholds};
use nppbench_model::RunFile;
use serde::Serialize;

use self::comparison::comparison_view;
use crate::view::{fmt, fmt_p, labels};

#[derive(Debug, Serialize)]
pub struct ComparePage {
    pub title: String,
    pub generated_by: String,
    /// `PASS`, `FAIL`, or (without gates) `CHANGED` / `NO CHANGE`.
    pub status: String,
    pub failed: bool,
    /// One sentence, the failing candidates first.
    pub verdict: Vec<String>,
    pub rule: String,
    pub environments: Vec<EnvironmentRow>,
    /// The failing candidates first.
    pub comparisons: Vec<ComparisonView>,
}

#[derive(Debug, Serialize)]
pub struct EnvironmentRow {
    pub run: String,
    pub label: String,
    pub group: String,
    pub gpu: String,
    pub driver: String,
    pub npp: String,
    pub started_at: String,
}

#[derive(Debug, Serialize)]
pub struct ComparisonView {
    pub heading: String,
    pub group: String,
    pub failed: bool,
    pub environment_changes: Vec<String>,
    /// Empty on the same GPU; else what a reader must know of the hardware.
    pub machine_note: String,
    pub summary: Vec<String>,
    pub tripped: Vec<String>,
    /// What tripped a gate, each with its size and interval.
    pub failing: Vec<FailingItem>,
    /// Throughput rows judged faster or slower; then the rest (the same, or not judged for want
    /// of passes: their verdict says which).
    pub throughput_changed: Vec<ThroughputChangeRow>,
    pub throughput_unchanged: Vec<ThroughputChangeRow>,
    /// Of the rest, how many are the same and how many could not be judged (too few passes).
    pub throughput_same: usize,
    pub throughput_unjudged: usize,
    /// One line: what changed, in counts.
    pub counts: String,
    pub memory_changed: Vec<MemoryChangeRow>,
    pub memory_unchanged: usize,
    pub only_in_base: Vec<String>,
    pub only_in_candidate: Vec<String>,
}

/// One item that tripped a gate.
#[derive(Debug, Serialize)]
pub struct FailingItem {
    pub gate: String,
    pub scenario: String,
    pub what: String,
}

/// One throughput scenario of a comparison.
#[derive(Debug, Serialize)]
pub struct ThroughputChangeRow {
    pub scenario: String,
    /// Kernel time per call, µs, base and candidate (median over passes).
    pub base_us: String,
    pub cand_us: String,
    /// Positive is faster.
    pub change: String,
    /// The change's 95% interval.
    pub change_ci: String,
    pub p_value: String,
    pub latency: String,
    pub passes: String,
    /// `faster`, `slower`, `same`, `unsettled: …`, `not enough passes to judge`.
    pub verdict: String,
    /// This row trips the regression gate.
    pub gated_failure: bool,
    pub changed: bool,
}

/// One memory scenario of a comparison.
#[derive(Debug, Serialize)]
pub struct MemoryChangeRow {
    pub scenario: String,
    pub base_class: String,
    pub cand_class: String,
    pub base_streams: String,
    pub cand_streams: String,
    /// `new leak`, `leak gone`, `more streams`, or empty.
    pub change: String,
    pub gated_failure: bool,
}

/// What an unsettled verdict means, in the words every page uses.
const UNSETTLED_MEANS: &str = "no significant change, but the passes spread too much to call it the same";

pub(super) fn verdict_name(c: Change) -> String {
    match c {
        Change::Faster => "faster".into(),
        Change::Slower => "slower".into(),
        Change::Same => "same".into(),
        Change::Unsettled => format!("unsettled: {UNSETTLED_MEANS}"),
        Change::NotEnoughPasses => "not enough passes to judge".into(),
    }
}

/// `+12.3% (95% CI +10.1 … +14.5%, p 4.2e-4)`, or the change alone where no test was made.
/// Positive is faster.
pub(crate) fn test_text(t: &PassTest) -> String {
    match (t.p_value, t.change_ci_pct) {
        (Some(p), Some((lo, hi))) => format!("{:+.1}% (95% CI {lo:+.1} … {hi:+.1}%, p {})", t.change_pct, fmt_p(p)),
        (Some(p), None) => format!("{:+.1}% (p {})", t.change_pct, fmt_p(p)),
        _ => format!("{:+.1}%", t.change_pct),
    }
}

/// The environment group of a run: one letter per distinct GPU and driver.
fn groups(runs: &[RunFile]) -> Vec<String> {
    let mut keys: Vec<(String, Option<String>)> = Vec::new();
    runs.iter()
        .map(|r| {
            let key = (r.environment.gpu.name.clone(), r.environment.driver_version.clone());
            let i = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
                keys.push(key);
                keys.len() - 1
            });
            char::from(b'A' + (i % 26) as u8).to_string()
        })
        .collect()
}

pub(crate) fn page(runs: &[RunFile], comparisons: &[Comparison], t: Thresholds, gates: &[Gate]) -> ComparePage {
    let group = groups(runs);
    let label = labels(runs);
    let mut views: Vec<ComparisonView> = comparisons
        .iter()
        .enumerate()
        .map(|(i, c)| comparison_view(c, &label[0], &label[i + 1], &group[i + 1], gates))
        .collect();
    let failed = views.iter().any(|v| v.failed);
    let any_change = views
        .iter()
        .any(|v| v.throughput_changed.iter().any(|r| r.changed) || !v.memory_changed.is_empty());
    let status = match (gates.is_empty(), failed, any_change) {
        (false, true, _) => "FAIL",
        (false, false, _) => "PASS",
        (true, _, true) => "CHANGED",
        (true, _, false) => "NO CHANGE",
    };
    let verdict = verdict_lines(&views, gates);
    views.sort_by_key(|v| !v.failed);
    ComparePage {
        title: format!("nppbench compare: {} run(s) against {}", comparisons.len(), label[0]),
        generated_by: format!("nppbench {}", env!("CARGO_PKG_VERSION")),
        status: status.to_owned(),
        failed,
        verdict,
        rule: rule_text(t, gates),
        environments: environment_rows(runs, &label, &group),
        comparisons: views,
    }
}

/// The page's verdict, a line per candidate, failing ones first.
fn verdict_lines(views: &[ComparisonView], gates: &[Gate]) -> Vec<String> {
    let mut ordered: Vec<&ComparisonView> = views.iter().collect();
    ordered.sort_by_key(|v| !v.failed);
    ordered
        .iter()
        .map(|v| {
            if v.failed {
                format!(
                    "FAIL: {} — {} item(s) trip --fail-on {}.",
                    v.heading,
                    v.failing.len(),
                    v.tripped.join(",")
                )
            } else if gates.is_empty() {
                format!("{}: {}.", v.heading, v.counts)
            } else {
                format!("PASS: {} — {}; no gate asked for trips.", v.heading, v.counts)
            }
        })
        .collect()
}

/// How the comparison judges, in words, with the gates asked for.
fn rule_text(t: Thresholds, gates: &[Gate]) -> String {
    format!(
        "A scenario is slower or faster when its kernel time per call (CUPTI, the kernels of a call summed; the median of each pass, every pass a fresh process) differs by more than {}% and Welch's t-test on the passes gives p < {}; for images under a megapixel (launch-bound) its host latency per call counts too, beyond {}%. Fewer than {} passes a side: not judged. The thresholds come from same-against-same runs (docs/calibration.md). {}Gates: {}.",
        fmt(t.noise_pct, 0),
        t.alpha,
        fmt(t.latency_noise_pct, 0),
        MIN_PASSES,
        if t.gate_min_pixels > 0 {
            format!(
                "Only images of {} pixels and more can fail the regression gate. ",
                t.gate_min_pixels
            )
        } else {
            String::new()
        },
        if gates.is_empty() {
            "none (the exit status is 0 whatever changed)".to_owned()
        } else {
            gates.iter().map(Gate::to_string).collect::<Vec<_>>().join(", ")
        }
    )
}

/// Each run's environment, with its group letter.
fn environment_rows(runs: &[RunFile], label: &[String], group: &[String]) -> Vec<EnvironmentRow> {
    runs.iter()
        .zip(group)
        .enumerate()
        .map(|(i, (r, g))| EnvironmentRow {
            run: if i == 0 {
                "base".into()
            } else {
                format!("candidate {i}")
            },
            label: label[i].clone(),
            group: g.clone(),
            gpu: format!("{} ({})", r.environment.gpu.name, r.environment.gpu.uuid),
            driver: r.environment.driver_version.clone().unwrap_or_else(|| "unknown".into()),
            npp: r.environment.npp.full_version(),
            started_at: r.started_at.clone(),
        })
        .collect()
}
