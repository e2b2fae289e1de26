//! The history page (`nppbench history report`): findings from `nppbench_history` worded, with
//! every number formatted here, charts drawn by `charts::history_series`, rendered with
//! `templates/history.html.tera` and `templates/history.md.tera`.
//!
//! [`scenario_rows`] is also here: the one place that turns a run into the rows the history
//! keeps through this crate's analysis (so that a scenario's leak class in the history is the one
//! its run's page shows).

use std::collections::BTreeMap;

use nppbench_history::findings::{Alignment, Direction, EnvChange, EnvField, Findings, Gate, SeriesFindings};
use nppbench_history::ingest::{self, Kind, MemoryFigures, ScenarioRow};
use nppbench_history::series::{History, Series};
use nppbench_model::RunFile;
use serde::Serialize;

use crate::ReportError;
use crate::analysis::RunAnalysis;
use crate::charts::history_series::{self, Mark, SeriesLine};

const PAGE: &str = include_str!("../../../templates/history.html.tera");
const SUMMARY: &str = include_str!("../../../templates/history.md.tera");

/// Every scenario row of `run` for the history: memory scenarios judged by [`RunAnalysis`]
/// (class, MiB per thread, NPP's streams per thread), throughput passes aggregated by
/// `nppbench_history::ingest::throughput_rows`. Every use of this crate's analysis by the history
/// is in this function.
pub fn scenario_rows(run: &RunFile) -> Vec<ScenarioRow> {
    let analysis = RunAnalysis::new(run);
    let first_gpu = &run.environment.gpu.uuid;
    let mut rows: Vec<ScenarioRow> = analysis
        .memory
        .iter()
        .map(|m| {
            let s = &m.record.scenario;
            ScenarioRow {
                kind: Kind::Memory,
                scenario_id: s.id.clone(),
                primitive: s.primitive.to_string(),
                geometry: s.geometry.key(),
                stream: s.stream.to_string(),
                context: s.context.to_string(),
                threading: Some(s.threading.to_string()),
                gpu_uuid: m.record.gpu.clone().unwrap_or_else(|| first_gpu.clone()),
                status: ingest::status_of(&m.record.outcome).to_owned(),
                throughput: None,
                memory: Some(MemoryFigures {
                    class: m.class,
                    mib_per_thread: m.per_thread.map(|f| f.slope),
                    mib_per_thread_ci: m.per_thread.map(|f| f.slope_ci),
                    hidden_streams_per_thread: m.hidden_per_thread.map(|f| f.slope),
                    threads_spawned: m.threads_spawned,
                }),
            }
        })
        .collect();
    rows.extend(ingest::throughput_rows(run));
    rows
}

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
    /// What tripped each gate asked for.
    pub tripped: Vec<String>,
    /// Change points and leak class changes at the latest run of their series.
    pub new_changes: Vec<ChangeRow>,
    pub fleet: Vec<FleetRow>,
    pub fleet_rule: String,
    /// Every leak class change, any run.
    pub class_changes: Vec<ChangeRow>,
    /// Every change point of kernel time, any run.
    pub change_points: Vec<ChangeRow>,
    pub runners: Vec<RunnerRow>,
    pub runs: Vec<RunView>,
    pub groups: Vec<GroupView>,
}

/// A change point or a class change, worded.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeRow {
    pub scenario: String,
    /// GPU model @ host.
    pub runner: String,
    pub run: String,
    /// `slower`, `faster` or `leak`, `bounded`, `flat`: the row's class for the colour.
    pub class: String,
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
    let [index_html, summary_md] = crate::render_templates([("history.html", PAGE), ("history.md", SUMMARY)], &page)?;
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
                t.gate.as_str(),
                s.key.scenario_id,
                words.runner(s),
                words.run_label(s.points[t.point].run)
            )
        })
        .collect();
    let mut new_changes: Vec<ChangeRow> = Vec::new();
    let mut change_points = Vec::new();
    let mut class_changes = Vec::new();
    for f in &findings.series {
        let s = &history.series[f.series];
        for shift in &f.shifts {
            let row = words.shift_row(s, f, shift);
            if shift.latest {
                new_changes.push(row.clone());
            }
            change_points.push(row);
        }
        for c in &f.class_changes {
            let row = ChangeRow {
                scenario: s.key.scenario_id.clone(),
                runner: words.runner(s),
                run: words.run_label(c.run),
                class: c.to.as_str().to_owned(),
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
    // Failing rows first: slower kernels and new leaks.
    let bad = |r: &ChangeRow| !(r.class == "slower" || r.class == "leak");
    new_changes.sort_by_key(bad);
    change_points.sort_by_key(bad);
    let fleet: Vec<FleetRow> = findings
        .fleet
        .iter()
        .map(|d| {
            let figure = |f: &nppbench_history::findings::RunnerFigure| {
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
        .collect();
    let verdict = verdict(history, findings, &tripped, &new_changes, &fleet);
    let groups = groups(history, findings, &words)?;
    let noise = findings.settings.noise_pct;
    Ok(HistoryPage {
        title: format!(
            "nppbench history: {} run{} from {} runner{}",
            history.runs.len(),
            plural(history.runs.len()),
            words.runners().len(),
            plural(words.runners().len())
        ),
        generated_by: format!("nppbench {}", env!("CARGO_PKG_VERSION")),
        status: {
            let alarm = new_changes.iter().any(|r| r.class == "slower" || r.class == "leak");
            match (gates.is_empty(), tripped.is_empty(), alarm) {
                (false, false, _) => "FAIL",
                (false, true, _) => "PASS",
                (true, _, true) => "ALARM",
                (true, _, false) => "NO ALARM",
            }
            .to_owned()
        },
        failed: !tripped.is_empty(),
        alarm: !tripped.is_empty() || new_changes.iter().any(|r| r.class == "slower" || r.class == "leak"),
        verdict,
        rule: format!(
            "A change point is where a series' kernel time per call moves to a new level: found by PELT with a normal mean-shift cost and a penalty of 3 ln n per change point, with the noise σ taken from the series' own run-to-run differences (at least {}% of its level), and shown when the level moves by at least {noise}%. It lines up with an environment change at its run or one run either side.",
            findings.settings.resolution_pct
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
        runs: history
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
                    nppbench: format!("{} ({})", r.tool_version, short_commit(&r.tool_commit)),
                    matrix: r.matrix_name.clone(),
                    note: if r.test_hooks.is_empty() {
                        String::new()
                    } else {
                        format!("test hooks: {}", r.test_hooks.join(", "))
                    },
                }
            })
            .collect(),
        groups,
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn verdict(
    history: &History,
    findings: &Findings,
    tripped: &[String],
    new_changes: &[ChangeRow],
    fleet: &[FleetRow],
) -> Vec<String> {
    let count = |class: &str| new_changes.iter().filter(|r| r.class == class).count();
    let (slower, faster, leaks) = (count("slower"), count("faster"), count("leak"));
    let mut out = Vec::new();
    out.push(if !tripped.is_empty() {
        format!(
            "FAIL: {} change{} new in the latest runs go{} the wrong way",
            tripped.len(),
            plural(tripped.len()),
            if tripped.len() == 1 { "es" } else { "" }
        )
    } else if new_changes.is_empty() {
        "No change point new in the latest runs".to_owned()
    } else {
        format!(
            "{} change{} new in the latest runs: {slower} slower, {faster} faster, {leaks} new leak{}",
            new_changes.len(),
            plural(new_changes.len()),
            plural(leaks)
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

/// Series grouped by primitive and geometry, each group with its chart.
fn groups(history: &History, findings: &Findings, words: &Words<'_>) -> Result<Vec<GroupView>, ReportError> {
    let mut grouped: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, s) in history.series.iter().enumerate() {
        grouped.entry((&s.key.primitive, &s.key.geometry)).or_default().push(i);
    }
    grouped
        .into_iter()
        .map(|((primitive, geometry), members)| {
            let title = format!("{primitive} {geometry}");
            let tp: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&i| history.series[i].key.kind == Kind::Throughput)
                .collect();
            let chart_svg = if tp.is_empty() {
                None
            } else {
                let lines: Vec<SeriesLine> = tp
                    .iter()
                    .map(|&i| {
                        let s = &history.series[i];
                        SeriesLine {
                            label: words.series_label(s),
                            points: s
                                .points
                                .iter()
                                .filter_map(|p| p.kernel_ns.map(|ns| (p.run as i32 + 1, ns / 1e3)))
                                .collect(),
                            change_points: findings.series[i].shifts.iter().map(|c| c.run as i32 + 1).collect(),
                        }
                    })
                    .collect();
                let mut marks: BTreeMap<i32, Vec<String>> = BTreeMap::new();
                for &i in &tp {
                    let s = &history.series[i];
                    for (point, changes) in &findings.series[i].env {
                        let words = marks.entry(s.points[*point].run as i32 + 1).or_default();
                        for c in changes {
                            let w = short_env(c);
                            if !words.contains(&w) {
                                words.push(w);
                            }
                        }
                    }
                }
                let marks: Vec<Mark> = marks
                    .into_iter()
                    .map(|(run, w)| Mark {
                        run,
                        label: match w.len() {
                            1 => w[0].clone(),
                            n => format!("{} (+{} more)", w[0], n - 1),
                        },
                    })
                    .collect();
                Some(
                    history_series::render(&format!("{title}: kernel time per call"), &lines, &marks)
                        .map_err(ReportError::Chart)?,
                )
            };
            let series = members
                .iter()
                .map(|&i| words.series_view(&history.series[i], &findings.series[i]))
                .collect();
            Ok(GroupView {
                anchor: anchor(&title),
                title,
                chart_svg,
                series,
            })
        })
        .collect()
}

/// Wording that needs the history (run numbers, runners).
struct Words<'a> {
    history: &'a History,
}

impl Words<'_> {
    /// `#7 (2026-11-26 03:45)`: runs are numbered from 1 in order of start time.
    fn run_label(&self, run: usize) -> String {
        format!("#{} ({})", run + 1, timestamp(&self.history.runs[run].run.started_at))
    }

    fn runner(&self, s: &Series) -> String {
        format!("{} @ {}", s.key.gpu_model, s.key.host)
    }

    fn series_label(&self, s: &Series) -> String {
        let k = &s.key;
        let axes = match &k.threading {
            Some(t) => format!("{}, {}, {t}", k.stream, k.context),
            None => format!("{}, {}", k.stream, k.context),
        };
        format!("{axes} · {}", self.runner(s))
    }

    fn env_list(&self, changes: &[EnvChange]) -> String {
        changes.iter().map(env_words).collect::<Vec<_>>().join("; ")
    }

    fn aligned(&self, s: &Series, a: &Option<Alignment>) -> String {
        match a {
            None => "no environment change within a run".to_owned(),
            Some(a) => {
                let at = match a.offset {
                    0 => "at this run".to_owned(),
                    -1 => format!("a run earlier, {}", self.run_label(s.points[a.point].run)),
                    _ => format!("a run later, {}", self.run_label(s.points[a.point].run)),
                };
                format!("{} ({at})", self.env_list(&a.changes))
            }
        }
    }

    fn shift_row(&self, s: &Series, _f: &SeriesFindings, shift: &nppbench_history::findings::Shift) -> ChangeRow {
        let c = &shift.change;
        ChangeRow {
            scenario: s.key.scenario_id.clone(),
            runner: self.runner(s),
            run: self.run_label(shift.run),
            class: match shift.direction {
                Direction::Slower => "slower",
                Direction::Faster => "faster",
            }
            .to_owned(),
            change: format!(
                "kernel time {:+.1}% ({} → {}), {}",
                shift.shift_pct,
                micros(c.mean_before),
                micros(c.mean_after),
                match shift.direction {
                    Direction::Slower => "slower",
                    Direction::Faster => "faster",
                }
            ),
            lines_up_with: self.aligned(s, &shift.aligned),
        }
    }

    fn series_view(&self, s: &Series, f: &SeriesFindings) -> SeriesView {
        let latest = s.points.last().map_or_else(String::new, |p| match s.key.kind {
            Kind::Throughput => match (p.kernel_ns, p.kernel_ns_range) {
                (Some(ns), Some((lo, hi))) => format!("{} ({}–{})", micros(ns), micros(lo), micros(hi)),
                _ => p.status.replace('_', " "),
            },
            Kind::Memory => p
                .class
                .map_or_else(|| p.status.replace('_', " "), |c| c.as_str().to_owned()),
        });
        let mut changes: Vec<String> = f
            .shifts
            .iter()
            .map(|shift| {
                format!(
                    "{}: {:+.1}% ({} → {}); {}",
                    self.run_label(shift.run),
                    shift.shift_pct,
                    micros(shift.change.mean_before),
                    micros(shift.change.mean_after),
                    self.aligned(s, &shift.aligned)
                )
            })
            .collect();
        changes.extend(
            f.class_changes
                .iter()
                .map(|c| format!("{}: {} → {}", self.run_label(c.run), c.from.as_str(), c.to.as_str())),
        );
        SeriesView {
            label: self.series_label(s),
            kind: s.key.kind.as_str(),
            points: s.points.len(),
            latest,
            env_changes: f
                .env
                .iter()
                .map(|(point, c)| format!("{}: {}", self.run_label(s.points[*point].run), self.env_list(c)))
                .collect(),
            changes,
        }
    }

    /// Every runner (host and GPU), with its runs.
    fn runners(&self) -> Vec<RunnerRow> {
        let mut by: BTreeMap<(&str, &str), (&str, Vec<usize>)> = BTreeMap::new();
        for (i, r) in self.history.runs.iter().enumerate() {
            for (uuid, model) in r.run.gpu_uuids.iter().zip(&r.run.gpu_models) {
                by.entry((&r.run.host, uuid)).or_insert((model, Vec::new())).1.push(i);
            }
        }
        by.into_iter()
            .map(|((host, uuid), (model, runs))| {
                let mut npp: Vec<&str> = runs
                    .iter()
                    .map(|&i| self.history.runs[i].run.npp_version.as_str())
                    .collect();
                npp.dedup();
                RunnerRow {
                    host: host.to_owned(),
                    gpu_model: model.to_owned(),
                    gpu_uuid: uuid.to_owned(),
                    runs: runs.len(),
                    latest: runs.last().map_or_else(String::new, |&i| self.run_label(i)),
                    npp: npp.join(" → "),
                }
            })
            .collect()
    }
}

/// "NPP 12.2.3 → 13.0.1", "driver 570.1 → 580.159.04", ….
pub fn env_words(c: &EnvChange) -> String {
    let (from, to) = match c.field {
        EnvField::CudaDriverApi => (cuda_text(&c.from), cuda_text(&c.to)),
        EnvField::Gpu => (uuid_list(&c.from), uuid_list(&c.to)),
        EnvField::Nppbench => (short_commit(&c.from).to_owned(), short_commit(&c.to).to_owned()),
        _ => (c.from.clone(), c.to.clone()),
    };
    format!("{} {from} → {to}", field_name(c.field))
}

fn field_name(f: EnvField) -> &'static str {
    match f {
        EnvField::Npp => "NPP",
        EnvField::Driver => "driver",
        EnvField::CudaDriverApi => "CUDA driver API",
        EnvField::Gpu => "GPU",
        EnvField::Nppbench => "nppbench",
        EnvField::Matrix => "matrix",
    }
}

/// The short label of a chart mark: what changed and to what.
fn short_env(c: &EnvChange) -> String {
    match c.field {
        EnvField::Npp => format!("NPP {}", c.to),
        EnvField::Driver => format!("driver {}", c.to),
        EnvField::CudaDriverApi => format!("CUDA {}", cuda_text(&c.to)),
        EnvField::Gpu => "GPU".to_owned(),
        EnvField::Nppbench => "nppbench".to_owned(),
        EnvField::Matrix => format!("matrix {}", c.to),
    }
}

fn cuda_text(v: &str) -> String {
    v.parse::<i32>().map_or_else(|_| v.to_owned(), cuda_version)
}

/// 13000 → "13.0", 12080 → "12.8".
fn cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

fn uuid_list(v: &str) -> String {
    if v.is_empty() {
        return "none".to_owned();
    }
    v.split(',').map(short_uuid).collect::<Vec<_>>().join(", ")
}

/// `GPU-637600d3-b2bf-…` → `GPU-637600d3`.
fn short_uuid(u: &str) -> &str {
    u.get(..12).unwrap_or(u)
}

fn short_commit(c: &str) -> &str {
    c.get(..7).unwrap_or(c)
}

/// RFC 3339 → `2026-11-26 03:45`.
fn timestamp(t: &str) -> String {
    t.get(..16).unwrap_or(t).replacen('T', " ", 1)
}

/// Nanoseconds as microseconds with three significant digits or more.
fn micros(ns: f64) -> String {
    let us = ns / 1e3;
    let digits = if us < 10.0 {
        3
    } else if us < 100.0 {
        2
    } else {
        1
    };
    format!("{us:.digits$} µs")
}

fn anchor(title: &str) -> String {
    let slug: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("g-{slug}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_changes_are_worded() {
        let c = |field, from: &str, to: &str| EnvChange {
            field,
            from: from.into(),
            to: to.into(),
        };
        assert_eq!(
            env_words(&c(EnvField::Driver, "570.1", "580.159.04")),
            "driver 570.1 → 580.159.04"
        );
        assert_eq!(env_words(&c(EnvField::Npp, "12.2.3", "13.0.1")), "NPP 12.2.3 → 13.0.1");
        assert_eq!(
            env_words(&c(EnvField::CudaDriverApi, "12080", "13000")),
            "CUDA driver API 12.8 → 13.0"
        );
        assert_eq!(
            env_words(&c(EnvField::Gpu, "GPU-59ab6514-6532", "GPU-637600d3-b2bf")),
            "GPU GPU-59ab6514 → GPU-637600d3"
        );
        assert_eq!(
            env_words(&c(EnvField::Nppbench, "938dcf3d34aa", "5235713d83bb")),
            "nppbench 938dcf3 → 5235713"
        );
    }

    #[test]
    fn numbers_are_formatted_for_reading() {
        assert_eq!(micros(1664.0), "1.664 µs");
        assert_eq!(micros(61_234.0), "61.23 µs");
        assert_eq!(timestamp("2026-11-26T03:45:25.857259784Z"), "2026-11-26 03:45");
        assert_eq!(
            anchor("Convert_8u32f_C1R 31x31-s32-d128"),
            "g-convert-8u32f-c1r-31x31-s32-d128"
        );
    }
}
