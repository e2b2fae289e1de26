//! The history page (`nppbench history report`): findings from `nppbench_history` worded, with
//! every number formatted here, charts drawn by `charts::history_series`, rendered with
//! `templates/history.html.tera` and `templates/history.md.tera`.

mod groups;
mod words;

use nppbench_analysis::LeakClass;
use nppbench_analysis::compare::{Change, MIN_PASSES};
use nppbench_history::changes::Findings;
use nppbench_history::gates::Gate;
use nppbench_history::series::History;
use serde::Serialize;

use self::groups::groups;
pub use self::words::env_words;
use self::words::{Words, cuda_version, micros, short_uuid, step_class, step_words, timestamp};
use crate::error::ReportError;

const PAGE: &str = include_str!("../../../../templates/history.html.tera");
const SUMMARY: &str = include_str!("../../../../templates/history.md.tera");

/// The page's view model.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryPage {
    pub title: String,
    pub generated_by: String,
    /// `FAIL` or `PASS` where gates were asked for; else `ALARM` (something new goes the wrong
    /// way) or `NO ALARM`.
    pub status: String,
    /// A gate asked for was tripped.
    pub failed: bool,
    /// Something new goes the wrong way (a slower kernel, a new leak), gated or not.
    pub alarm: bool,
    /// The verdict in words, headline first.
    pub verdict: Vec<String>,
    /// How change points are found, in a sentence.
    pub rule: String,
    /// How one run is judged against another (compare's rule), in a sentence.
    pub verdict_rule: String,
    /// What tripped each gate asked for.
    pub tripped: Vec<String>,
    /// Throughput scenarios slower or faster at the latest run of their series than at the run
    /// before (compare's verdict), and leak class changes at the latest run.
    pub new_changes: Vec<ChangeRow>,
    pub fleet: Vec<FleetRow>,
    pub fleet_rule: String,
    /// Every leak class change, any run.
    pub class_changes: Vec<ChangeRow>,
    /// Every change point of kernel time, any run.
    pub change_points: Vec<ChangeRow>,
    pub runners: Vec<RunnerRow>,
    pub runs: Vec<RunView>,
    /// The groups where a series has something to say (a change point, an environment change, a
    /// class change, a latest run slower or faster), drawn.
    pub groups: Vec<GroupView>,
    /// The rest, by name: every series of theirs flat, on one environment, nothing new.
    pub quiet_groups: Vec<QuietGroup>,
}

/// A group with nothing to say: its name and how many series it holds.
#[derive(Debug, Clone, Serialize)]
pub struct QuietGroup {
    pub title: String,
    pub series: usize,
}

/// A change point or a class change, worded.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeRow {
    pub scenario: String,
    /// GPU model @ host.
    pub runner: String,
    pub run: String,
    /// compare's verdict (`slower`, `faster`, `same`, `unsettled`, `unjudged`) or the new leak
    /// class (`leak`, `bounded`, `flat`): the row's class for the colour.
    pub class: String,
    /// A slower kernel or a new leak: listed first.
    #[serde(skip)]
    pub wrong_way: bool,
    pub change: String,
    pub lines_up_with: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FleetRow {
    pub scenario: String,
    pub gpu_model: String,
    pub stack: String,
    pub runners: usize,
    pub fastest: String,
    pub slowest: String,
    pub difference: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunnerRow {
    pub host: String,
    pub gpu_model: String,
    pub gpu_uuid: String,
    pub runs: usize,
    pub latest: String,
    pub npp: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    pub number: String,
    pub started: String,
    pub host: String,
    pub gpu: String,
    pub driver: String,
    pub cuda: String,
    pub npp: String,
    pub nppbench: String,
    pub matrix: String,
    pub note: String,
}

/// A primitive and geometry: its chart (throughput) and its series.
#[derive(Debug, Clone, Serialize)]
pub struct GroupView {
    pub anchor: String,
    pub title: String,
    pub chart_svg: Option<String>,
    pub series: Vec<SeriesView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeriesView {
    pub label: String,
    pub kind: &'static str,
    pub points: usize,
    pub latest: String,
    /// compare's verdict of the latest run against the run before (throughput).
    pub against_before: String,
    pub env_changes: Vec<String>,
    pub changes: Vec<String>,
}

/// The page and summary, and what tripped the gates asked for.
#[derive(Debug, Clone)]
pub struct RenderedHistory {
    pub index_html: String,
    pub summary_md: String,
    /// One line per tripped gate (empty: none tripped).
    pub tripped: Vec<String>,
}

/// Renders the history page and its Markdown summary.
pub fn render(history: &History, findings: &Findings, gates: &[Gate]) -> Result<RenderedHistory, ReportError> {
    let page = page(history, findings, gates)?;
    let [index_html, summary_md] =
        crate::templates::render_templates([("history.html", PAGE), ("history.md", SUMMARY)], &page)?;
    Ok(RenderedHistory {
        index_html,
        summary_md,
        tripped: page.tripped,
    })
}

/// The view model of the history page.
pub fn page(history: &History, findings: &Findings, gates: &[Gate]) -> Result<HistoryPage, ReportError> {
    let words = Words { history };
    let tripped: Vec<String> = findings
        .tripped(gates)
        .iter()
        .map(|t| {
            let s = &history.series[t.series];
            format!(
                "{}: {} on {} at {}",
                t.gate,
                s.key.scenario_id,
                words.runner(s),
                words.run_label(s.points[t.point].run)
            )
        })
        .collect();
    let (mut new_changes, mut change_points, class_changes) = change_rows(history, findings, &words);
    // Failing rows first: slower kernels and new leaks.
    let fine = |r: &ChangeRow| !r.wrong_way;
    new_changes.sort_by_key(fine);
    change_points.sort_by_key(fine);
    let latest = findings.latest_changes();
    let fleet = fleet_rows(history, findings, &words);
    let verdict = verdict(history, findings, &tripped, &fleet);
    let (groups, quiet_groups) = groups(history, findings, &words)?;
    let noise = findings.settings.noise_pct;
    let t = findings.settings.thresholds;
    Ok(HistoryPage {
        title: format!(
            "nppbench history: {} run{} from {} runner{}",
            history.runs.len(),
            plural(history.runs.len()),
            words.runners().len(),
            plural(words.runners().len())
        ),
        generated_by: crate::view::rendered_by(),
        status: {
            match (gates.is_empty(), tripped.is_empty(), latest.alarm()) {
                (false, false, _) => "FAIL",
                (false, true, _) => "PASS",
                (true, _, true) => "ALARM",
                (true, _, false) => "NO ALARM",
            }
            .to_owned()
        },
        failed: !tripped.is_empty(),
        alarm: !tripped.is_empty() || latest.alarm(),
        verdict,
        rule: format!(
            "A change point is where a series' kernel time per call moves to a new level (the trend): found by PELT with a normal mean-shift cost and a penalty of 3 ln n per change point, with the noise σ taken from the series' own run-to-run differences (at least {}% of its level), and shown when the level moves by at least {noise}%. It lines up with an environment change at its run or one run either side. Whether its run is slower than the run before is compare's verdict on those two runs.",
            findings.settings.resolution_pct
        ),
        verdict_rule: format!(
            "Slower and faster are nppbench compare's verdicts on the same two runs: a series' latest run against the run before it. A scenario is slower or faster when its kernel time per call (the median of each pass, every pass a fresh process) differs by more than {}% and Welch's t-test on the passes gives p < {}; for images under a megapixel (launch-bound) its host latency per call counts too, beyond {}%. Fewer than {MIN_PASSES} passes a side: not judged.",
            t.noise_pct, t.alpha, t.latency_noise_pct
        ),
        tripped,
        new_changes,
        fleet,
        fleet_rule: format!(
            "Runners (host and GPU) of one GPU model, on the same NPP and driver, whose latest kernel times for a scenario differ by at least {noise}% with their fastest and slowest passes apart."
        ),
        class_changes,
        change_points,
        runners: words.runners(),
        runs: run_rows(history),
        groups,
        quiet_groups,
    })
}

/// Every change point and leak class change as a row: those new in the latest runs, every change
/// point, every class change.
fn change_rows(
    history: &History,
    findings: &Findings,
    words: &Words<'_>,
) -> (Vec<ChangeRow>, Vec<ChangeRow>, Vec<ChangeRow>) {
    let mut new_changes: Vec<ChangeRow> = Vec::new();
    let mut change_points = Vec::new();
    let mut class_changes = Vec::new();
    for f in &findings.series {
        let s = &history.series[f.series];
        for step in f
            .latest
            .iter()
            .filter(|j| matches!(j.verdict(), Change::Slower | Change::Faster))
        {
            let runner = match words.gpu_of(s, step) {
                Some(gpu) => format!("{} {gpu}", words.runner(s)),
                None => words.runner(s),
            };
            let env = f.env_at(step.point);
            new_changes.push(ChangeRow {
                scenario: s.key.scenario_id.clone(),
                runner,
                run: words.run_label(step.run),
                class: step_class(step).to_owned(),
                wrong_way: step.verdict() == Change::Slower,
                change: step_words(step),
                lines_up_with: if env.is_empty() {
                    "no environment change".to_owned()
                } else {
                    words.env_list(env)
                },
            });
        }
        for shift in &f.shifts {
            change_points.push(words.shift_row(s, f, shift));
        }
        for c in &f.class_changes {
            let row = ChangeRow {
                scenario: s.key.scenario_id.clone(),
                runner: words.runner(s),
                run: words.run_label(c.run),
                class: c.to.as_str().to_owned(),
                wrong_way: c.to == LeakClass::Leak,
                change: format!("{} → {}", c.from.as_str(), c.to.as_str()),
                lines_up_with: if c.changes.is_empty() {
                    "no environment change".to_owned()
                } else {
                    words.env_list(&c.changes)
                },
            };
            if c.latest {
                new_changes.push(row.clone());
            }
            class_changes.push(row);
        }
    }
    (new_changes, change_points, class_changes)
}

/// Where runners of one GPU model disagree, worded.
fn fleet_rows(history: &History, findings: &Findings, words: &Words<'_>) -> Vec<FleetRow> {
    findings
        .fleet
        .iter()
        .map(|d| {
            let figure = |f: &nppbench_history::changes::RunnerFigure| {
                format!(
                    "{} {} ({}, {} pass{}, {})",
                    f.host,
                    short_uuid(&f.gpu_uuid),
                    micros(f.kernel_ns),
                    f.passes,
                    if f.passes == 1 { "" } else { "es" },
                    words.run_label(f.run)
                )
            };
            FleetRow {
                scenario: history.series[d.series].key.scenario_id.clone(),
                gpu_model: d.gpu_model.clone(),
                stack: format!(
                    "NPP {}, driver {}",
                    d.npp_version,
                    d.driver_version.as_deref().unwrap_or("unknown")
                ),
                runners: d.runners,
                fastest: figure(&d.fastest),
                slowest: figure(&d.slowest),
                difference: format!("{:+.1}%", d.pct),
            }
        })
        .collect()
}

/// Every run of the history, numbered in order of start time.
fn run_rows(history: &History) -> Vec<RunView> {
    history
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let r = &r.run;
            RunView {
                number: format!("#{}", i + 1),
                started: timestamp(&r.started_at),
                host: r.host.clone(),
                gpu: format!(
                    "{} ({})",
                    r.gpu_model,
                    r.gpu_uuids.iter().map(|u| short_uuid(u)).collect::<Vec<_>>().join(", ")
                ),
                driver: r.driver_version.clone().unwrap_or_else(|| "unknown".to_owned()),
                cuda: cuda_version(r.cuda_driver_api_version),
                npp: r.npp_version.clone(),
                nppbench: format!("{}, {}", r.tool_version, crate::view::built_from(&r.tool_commit, 7)),
                matrix: r.matrix_name.clone(),
                note: if r.test_hooks.is_empty() {
                    String::new()
                } else {
                    format!("test hooks: {}", r.test_hooks.join(", "))
                },
            }
        })
        .collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn verdict(history: &History, findings: &Findings, tripped: &[String], fleet: &[FleetRow]) -> Vec<String> {
    let latest = findings.latest_changes();
    let (slower, faster, leaks) = (latest.slower, latest.faster, latest.new_leaks);
    // As compare counts them: the scenarios it cannot judge, said beside those it can.
    let unjudged = match (latest.unjudged, latest.without_passes) {
        (0, _) => String::new(),
        (n, 0) => format!("; {n} not judged (fewer than {MIN_PASSES} passes a side)"),
        (n, old) if old == n => {
            format!("; {n} not judged (from runs added before the history kept per-pass figures: add them again)")
        }
        (n, old) => format!(
            "; {n} not judged (fewer than {MIN_PASSES} passes a side; {old} of them from runs added before the history kept per-pass figures: add them again)"
        ),
    };
    let mut out = Vec::new();
    out.push(if !tripped.is_empty() {
        format!(
            "FAIL: {} change{} new in the latest runs go{} the wrong way{unjudged}",
            tripped.len(),
            plural(tripped.len()),
            if tripped.len() == 1 { "es" } else { "" }
        )
    } else if latest.total() == 0 {
        format!("Nothing slower or faster, no leak class change, in the latest runs{unjudged}")
    } else {
        // Every change the total counts is named: the class changes that are not new leaks too.
        let other = latest.class_changes.saturating_sub(leaks);
        format!(
            "{} change{} new in the latest runs: {slower} slower, {faster} faster, {leaks} new leak{}, {other} other leak class change{}{unjudged}",
            latest.total(),
            plural(latest.total()),
            plural(leaks),
            plural(other)
        )
    });
    let shifts: usize = findings.series.iter().map(|f| f.shifts.len()).sum();
    let class_changes: usize = findings.series.iter().map(|f| f.class_changes.len()).sum();
    out.push(format!(
        "Over all runs: {shifts} change point{} of kernel time in {} series, {class_changes} leak class change{}.",
        plural(shifts),
        history.series.len(),
        plural(class_changes)
    ));
    out.push(if fleet.is_empty() {
        "Runners of one GPU model agree within the noise.".to_owned()
    } else {
        format!(
            "{} scenario{} where runners of one GPU model disagree beyond the noise.",
            fleet.len(),
            plural(fleet.len())
        )
    });
    out
}
