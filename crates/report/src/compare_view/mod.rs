//! The compare page's view model: the verdict first (PARTIAL where the runs do not compare, then
//! PASS or FAIL, the failing candidates and the items that tripped a gate first), then each
//! candidate's changes, every figure formatted; and compare.json's model beside it.

mod comparison;
mod coverage_words;
mod json;
mod older_words;
mod tripped;

use nppbench_analysis::compare::{Change, Comparison, Gate, MIN_COVERAGE, MIN_PASSES, PassTest, Thresholds};
use nppbench_model::RunFile;
use serde::Serialize;

pub use self::json::{COMPARE_JSON_SCHEMA_VERSION, CompareJson};

use self::comparison::comparison_view;
use self::coverage_words::partial_line;
use crate::ReportError;
use crate::templates::{COMPARE_PAGE, COMPARE_SUMMARY, MACROS, render_templates};
use crate::view::{counted, fmt, fmt_p, named_labels};

/// Scenario ids a page or summary lists at most in one list, before "and N more" (compare.json
/// lists every one).
const MAX_LISTED: usize = 20;

/// The outcome, decided in `nppbench_analysis::compare::outcome`: shown here, never decided.
pub use nppbench_analysis::compare::Status;

#[derive(Debug, Serialize)]
pub struct ComparePage {
    pub title: String,
    pub generated_by: String,
    /// `PARTIAL` (a candidate that does not compare, without --allow-partial), `PASS`, `FAIL`,
    /// or (without gates) `CHANGED` / `NO CHANGE`.
    pub status: String,
    pub outcome: Status,
    /// What the badge says: the status, after `PARTIAL · ` where a candidate that does not
    /// compare was judged on what pairs.
    pub badge: String,
    /// Some candidate does not compare with the base.
    pub partial: bool,
    pub failed: bool,
    /// One sentence each: the candidates that do not compare first, then the failing ones.
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
    /// The nppbench build that measured the run.
    pub measured_by: String,
}

#[derive(Debug, Serialize)]
pub struct ComparisonView {
    pub heading: String,
    pub group: String,
    /// Whether the two runs compare; whether this candidate is given a verdict (it compares, or
    /// --allow-partial asked to judge what pairs).
    pub compares: bool,
    pub judged: bool,
    /// Why it does not compare, in words; empty where it does.
    pub mismatch: String,
    pub failed: bool,
    pub environment_changes: Vec<String>,
    /// Empty on the same GPU; else what a reader must know of the hardware.
    pub machine_note: String,
    pub summary: Vec<String>,
    pub tripped: Vec<String>,
    /// What tripped a gate, each with its size and interval (a long list of one gate cut, with a
    /// last row saying how many more), and how many items trip in all.
    pub failing: Vec<FailingItem>,
    pub failing_count: usize,
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
    /// The scenarios in one run only: how many, the first [`MAX_LISTED`], and how many more.
    pub only_in_base: Vec<String>,
    pub only_in_base_count: usize,
    pub only_in_base_more: usize,
    pub only_in_candidate: Vec<String>,
    pub only_in_candidate_count: usize,
    pub only_in_candidate_more: usize,
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
    /// Every pass's figure of each side, sorted, µs (of each layout apart where they mix).
    pub pass_values: String,
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

/// A comparison rendered: the page, summary.md, compare.json's model, and the outcome.
#[derive(Debug)]
pub struct RenderedComparison {
    pub compare_html: String,
    pub summary_md: String,
    pub json: CompareJson,
    pub status: Status,
}

/// Compares every run after the first against the first and renders compare.html, summary.md
/// and compare.json's model; `names`, one a run where the runs have them (the files they came
/// from), name the runs (see [`named_labels`]), else what tells them apart does. A candidate that does not compare with the base makes the status
/// [`Status::Partial`] unless `allow_partial`, which judges what pairs and says so.
pub fn render(
    runs: &[RunFile],
    names: &[String],
    t: Thresholds,
    gates: &[Gate],
    allow_partial: bool,
) -> Result<RenderedComparison, ReportError> {
    let (base, candidates) = runs.split_first().ok_or(ReportError::NoRuns)?;
    if candidates.is_empty() {
        return Err(ReportError::NoRuns);
    }
    let comparisons: Vec<Comparison> = candidates
        .iter()
        .map(|c| nppbench_analysis::compare::compare(base, c, t))
        .collect();
    let page = page_with(runs, &named_labels(runs, names), &comparisons, t, gates, allow_partial);
    let json = json::compare_json(runs, &comparisons, &page, t, gates, allow_partial);
    let [compare_html, summary_md] = render_templates(
        [
            ("compare.html", COMPARE_PAGE),
            ("compare.md", COMPARE_SUMMARY),
            ("macros.html", MACROS),
        ],
        &page,
    )
    .map(|[html, md, _]| [html, md])?;
    Ok(RenderedComparison {
        compare_html,
        summary_md,
        json,
        status: page.outcome,
    })
}

/// The page of a comparison whose candidates are judged on what pairs even where they do not
/// compare, without gates: the upgrade page's, whose runs keep the labels `label` they have on the
/// rest of that page, and whose verdict follows the order of `comparisons` (another NPP version
/// first), each candidate's lines together: whether it compares, then what changed.
pub(crate) fn page(runs: &[RunFile], label: &[String], comparisons: &[Comparison], t: Thresholds) -> ComparePage {
    let mut page = page_with(runs, label, comparisons, t, &[], true);
    // Without gates nothing fails, so the views keep the comparisons' order.
    page.verdict = comparisons
        .iter()
        .zip(&page.comparisons)
        .flat_map(|(c, v)| {
            let partial = (!v.compares).then(|| partial_line(c, v));
            partial.into_iter().chain(v.judged.then(|| verdict_line(v, &[])))
        })
        .collect();
    page
}

fn page_with(
    runs: &[RunFile],
    label: &[String],
    comparisons: &[Comparison],
    t: Thresholds,
    gates: &[Gate],
    allow_partial: bool,
) -> ComparePage {
    let group = groups(runs);
    let mut views: Vec<ComparisonView> = comparisons
        .iter()
        .enumerate()
        .map(|(i, c)| comparison_view(c, &label[0], &label[i + 1], &group[i + 1], gates, allow_partial))
        .collect();
    let partial = views.iter().any(|v| !v.compares);
    let failed = views.iter().any(|v| v.failed);
    let outcome = nppbench_analysis::compare::outcome(comparisons, gates, allow_partial);
    let mut verdict: Vec<String> = comparisons
        .iter()
        .zip(&views)
        .filter(|(_, v)| !v.compares)
        .map(|(c, v)| partial_line(c, v))
        .collect();
    verdict.extend(verdict_lines(&views, gates));
    views.sort_by_key(|v| !v.failed);
    ComparePage {
        title: format!(
            "nppbench compare: {} against {}",
            counted(comparisons.len(), "run", "runs"),
            label[0]
        ),
        generated_by: crate::view::rendered_by(),
        status: outcome.words().to_owned(),
        outcome,
        badge: if partial && outcome != Status::Partial {
            format!("{} · {}", Status::Partial.words(), outcome.words())
        } else {
            outcome.words().to_owned()
        },
        partial,
        failed,
        verdict,
        rule: rule_text(t, gates),
        environments: environment_rows(runs, label, &group),
        comparisons: views,
    }
}

/// The page's verdict, a line per candidate given one, failing ones first.
fn verdict_lines(views: &[ComparisonView], gates: &[Gate]) -> Vec<String> {
    let mut ordered: Vec<&ComparisonView> = views.iter().filter(|v| v.judged).collect();
    ordered.sort_by_key(|v| !v.failed);
    ordered.iter().map(|v| verdict_line(v, gates)).collect()
}

/// One judged candidate's verdict line.
fn verdict_line(v: &ComparisonView, gates: &[Gate]) -> String {
    if v.failed {
        format!(
            "FAIL: {} — {} --fail-on {}.",
            v.heading,
            counted(v.failing_count, "item trips", "items trip"),
            v.tripped.join(",")
        )
    } else if gates.is_empty() {
        format!("{}: {}.", v.heading, v.counts)
    } else {
        format!("PASS: {} — {}; no gate asked for trips.", v.heading, v.counts)
    }
}

/// How the comparison judges, in words, with the gates asked for.
fn rule_text(t: Thresholds, gates: &[Gate]) -> String {
    format!(
        "A scenario is slower or faster when its kernel time per call (CUPTI: the time the call's kernels kept the GPU busy; the median of each pass, every pass a fresh process) differs by more than {}% (or two ticks of the GPU's 32 ns clock, for a call that short) and Welch's t-test on the passes gives p < {}; where the call's kernels ran at once in some passes and one after the other in others (the host decides which, per process), with that layout held fixed. For images under a megapixel the host latency per call is shown with its own test (beyond {}%), and judges nothing: it moves with the host between processes. Fewer than {} passes a side: not judged. The thresholds come from same-against-same runs on machines left out of the fit (docs/calibration.md). Two runs compare when at least {}% of the base's scenarios have a counterpart in the candidate and both measured the same functions under a matrix of the same name; a candidate that does not is named first and given no verdict unless --allow-partial asks to judge what pairs. {}Gates: {}.",
        t.noise_pct,
        t.alpha,
        fmt(t.latency_noise_pct, 0),
        MIN_PASSES,
        fmt(MIN_COVERAGE * 100.0, 0),
        if t.gate_min_pixels > 0 {
            format!(
                "Only images of {} pixels and more can fail the regression gate. ",
                t.gate_min_pixels
            )
        } else {
            String::new()
        },
        if gates.is_empty() {
            "none (whatever changed, the verdict trips no gate)".to_owned()
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
            measured_by: crate::view::measured_by(r),
        })
        .collect()
}
