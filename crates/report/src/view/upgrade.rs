//! The upgrade-first page of a report that holds several runs: what changed from the first run
//! to each of the others (by `compare`'s rule), charts that put the versions side by side, each
//! function's rule per version, and a link to each run's own page.

use std::collections::BTreeMap;

use nppbench_model::{ContextFill, Primitive, RunFile, Threading};
use serde::Serialize;

use super::format::{labels, run_json_name, run_page_name};
use super::prose;
use super::run_charts::ChartView;
use crate::charts::version_dots::{self, Mark, Row};
use crate::compare_view::{self, ComparePage};
use nppbench_analysis::compare::{self, Thresholds};
use nppbench_analysis::evidence::{FunctionRules, differences, race_differences};
use nppbench_analysis::thresholds::LAUNCH_BOUND_PIXELS;
use nppbench_analysis::{RunAnalysis, ThroughputAnalysis};

use super::evidence::Evidence;

mod lead;
use self::lead::leads;

#[derive(Debug, Serialize)]
pub struct UpgradeView {
    /// `CHANGED` or `NO CHANGE`.
    pub status: String,
    /// What a reader deciding the upgrade must read first: where a run computes wrong pixels that
    /// the base computed right, one line per such run (the functions, the rule, an example).
    pub lead: Vec<String>,
    pub versions: Vec<VersionRow>,
    /// Every candidate against the first run, by `compare`'s rule (no gates).
    pub compare: ComparePage,
    pub charts: Vec<ChartView>,
    /// Each function's rule in each run, where the runs measured several functions or a rule
    /// changed.
    pub rules: Vec<RuleRow>,
    pub rules_differ: usize,
    /// Each function's race rule in each run, where a run measured the race (#29).
    pub race_rules: Vec<RuleRow>,
    pub race_rules_differ: usize,
}

/// One run of the report, with its own page.
#[derive(Debug, Serialize)]
pub struct VersionRow {
    pub label: String,
    /// `WRONG PIXELS · LEAKS`, `WRONG PIXELS`, `LEAKS` or `NO LEAK`: correctness first.
    pub status: String,
    pub leaking: String,
    pub page: String,
    pub run_json: String,
    pub warnings: usize,
    pub interrupted: bool,
    /// A further round of an earlier run's atlas (same NPP and GPU model, no scenario in common,
    /// as `nppbench design` proposes): pooled as evidence, not compared with the base.
    pub round: bool,
}

/// One function's rule, run by run.
#[derive(Debug, Serialize)]
pub struct RuleRow {
    pub primitive: String,
    pub cells: Vec<String>,
    /// A scenario measured in the first run and another in different classes.
    pub differs: bool,
    /// That scenario and its classes, run by run (empty where none differs).
    pub shown_by: String,
}

/// Each function's rule in each run (its group's pooled rule), and whether a scenario measured in
/// the first run and in a run of another NPP version or GPU model shows the rules differ.
fn rule_rows(analyses: &[RunAnalysis<'_>], evidence: &Evidence) -> Vec<RuleRow> {
    let shown = |a: &RunAnalysis<'_>, c: &RunAnalysis<'_>| {
        differences(a, c)
            .into_iter()
            .map(|d| {
                (
                    d.primitive,
                    d.id,
                    d.base.as_str().to_owned(),
                    d.candidate.as_str().to_owned(),
                )
            })
            .collect()
    };
    rows_of(analyses, evidence, |f| Some(prose::rule_words(f).sentence), shown)
}

/// Each function's race rule in each run, where a run measured the race, and whether a scenario
/// whose race the first run and a run of another NPP version or GPU model measured races in one
/// only. Empty where no run measured a race.
fn race_rule_rows(analyses: &[RunAnalysis<'_>], evidence: &Evidence) -> Vec<RuleRow> {
    let measured = (0..analyses.len()).any(|i| evidence.of_run(i).rules.iter().any(|f| f.race.is_some()));
    if !measured {
        return Vec::new();
    }
    let words = |r: bool| if r { "races" } else { "ordered" }.to_owned();
    let shown = |a: &RunAnalysis<'_>, c: &RunAnalysis<'_>| {
        race_differences(a, c)
            .into_iter()
            .map(|d| (d.primitive, d.id, words(d.base), words(d.candidate)))
            .collect()
    };
    rows_of(analyses, evidence, |f| f.race.as_ref().map(prose::race_sentence), shown)
}

/// A function's sentence in each run (`sentence` of its pooled rules; "not measured" where it has
/// none), and the first scenario `shown` finds measured differently in the first run and a run
/// of another group: (function, scenario, the first run's word, the other's).
fn rows_of(
    analyses: &[RunAnalysis<'_>],
    evidence: &Evidence,
    sentence: impl Fn(&FunctionRules) -> Option<String>,
    shown: impl Fn(&RunAnalysis<'_>, &RunAnalysis<'_>) -> Vec<(Primitive, String, String, String)>,
) -> Vec<RuleRow> {
    let per_run: Vec<BTreeMap<Primitive, String>> = (0..analyses.len())
        .map(|i| {
            evidence
                .of_run(i)
                .rules
                .iter()
                .filter_map(|f| sentence(f).map(|s| (f.primitive, s)))
                .collect()
        })
        .collect();
    // Runs of the first run's own NPP version and GPU model pool with it: they are not compared.
    let first_group = evidence.of_run(0).group;
    let shown: Vec<(usize, (Primitive, String, String, String))> = analyses
        .iter()
        .enumerate()
        .filter(|(i, _)| evidence.of_run(*i).group != first_group)
        .flat_map(|(i, c)| shown(&analyses[0], c).into_iter().map(move |d| (i, d)))
        .collect();
    let mut primitives: Vec<Primitive> = per_run.iter().flat_map(|m| m.keys().copied()).collect();
    primitives.sort();
    primitives.dedup();
    primitives
        .iter()
        .map(|p| {
            let cells: Vec<String> = per_run
                .iter()
                .map(|m| m.get(p).cloned().unwrap_or_else(|| "not measured".into()))
                .collect();
            let difference = shown.iter().find(|(_, d)| d.0 == *p);
            RuleRow {
                primitive: p.to_string(),
                cells,
                differs: difference.is_some(),
                shown_by: difference.map_or_else(String::new, |(run, d)| {
                    format!("{}: {} in run 1, {} in run {}", d.1, d.2, d.3, run + 1)
                }),
            }
        })
        .collect()
}

/// For each run, whether it is a further round of an earlier run's atlas rather than something to
/// compare with the base: the same NPP version and GPU model as that run, and not one scenario in
/// common. Each run's scenario ids are gathered once.
fn further_rounds(runs: &[RunFile]) -> Vec<bool> {
    let ids: Vec<std::collections::HashSet<&str>> = runs
        .iter()
        .map(|r| {
            r.memory
                .iter()
                .map(|m| m.scenario.id.as_str())
                .chain(r.throughput.iter().map(|t| t.scenario.id.as_str()))
                .collect()
        })
        .collect();
    let same_kind = |a: &RunFile, b: &RunFile| {
        a.environment.npp.full_version() == b.environment.npp.full_version()
            && a.environment.gpu.name == b.environment.gpu.name
    };
    (0..runs.len())
        .map(|i| (0..i).any(|j| same_kind(&runs[j], &runs[i]) && ids[j].is_disjoint(&ids[i])))
        .collect()
}

/// The runs the first page compares, base first: the first run, then every run of another NPP
/// version or GPU model (what a page of several versions is for), then the other runs of the
/// base's own version and GPU model, each group in the order given. A further round of an atlas is
/// pooled, not compared.
fn compared_in_order(round: &[bool], evidence: &Evidence) -> Vec<usize> {
    let base_group = evidence.of_run(0).group;
    let mut candidates: Vec<usize> = (1..round.len()).filter(|&i| !round[i]).collect();
    candidates.sort_by_key(|&i| evidence.of_run(i).group == base_group);
    std::iter::once(0).chain(candidates).collect()
}

/// Rows a chart may hold before it is summarised (per function rather than per scenario).
const MAX_ROWS: usize = 48;

pub(crate) fn upgrade(
    analyses: &[RunAnalysis<'_>],
    runs: &[RunFile],
    evidence: &Evidence,
) -> Result<UpgradeView, String> {
    if analyses.is_empty() {
        return Err("no runs".into());
    }
    let label = labels(runs);
    let round = further_rounds(runs);
    let compared = compared_in_order(&round, evidence);
    let comparisons: Vec<compare::Comparison> = compared[1..]
        .iter()
        .map(|&i| compare::compare_analysed(&analyses[0], &analyses[i], Thresholds::default()))
        .collect();
    // The runs compared, in that order (copied only where a round is left out or the order
    // changes), and their labels: each run keeps the label (and so the number) it has in the
    // table of runs and on its own page.
    let compared_runs: std::borrow::Cow<'_, [RunFile]> = if compared.iter().copied().eq(0..runs.len()) {
        std::borrow::Cow::Borrowed(runs)
    } else {
        std::borrow::Cow::Owned(compared.iter().map(|&i| runs[i].clone()).collect())
    };
    let compared_labels: Vec<String> = compared.iter().map(|&i| label[i].clone()).collect();
    let compare = compare_view::page(&compared_runs, &compared_labels, &comparisons, Thresholds::default());
    let versions = analyses
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let measured = a.memory.iter().filter(|m| m.class.is_some()).count();
            let leaking = a.leaking().count();
            let v = nppbench_analysis::verdict::verdict(a);
            VersionRow {
                label: label[i].clone(),
                status: super::run::status_word(v.output.wrong + v.output.faults > 0, leaking > 0),
                leaking: format!("{leaking} of {measured} memory scenarios leak"),
                page: run_page_name(i),
                run_json: run_json_name(i, a.run, analyses.len()),
                warnings: prose::warnings(a).len(),
                interrupted: a.run.interrupted,
                round: round[i],
            }
        })
        .collect();

    let mut charts = Vec::new();
    if let Some(svg) = throughput_chart(analyses, &label)? {
        charts.push(svg);
    }
    if let Some(svg) = leak_chart(analyses, &label)? {
        charts.push(svg);
    }

    let rules = rule_rows(analyses, evidence);
    let rules_differ = rules.iter().filter(|r| r.differs).count();
    let mut rules = rules;
    rules.sort_by_key(|r| !r.differs);
    if rules.len() <= 1 && rules_differ == 0 {
        rules.clear();
    }
    let mut race_rules = race_rule_rows(analyses, evidence);
    let race_rules_differ = race_rules.iter().filter(|r| r.differs).count();
    race_rules.sort_by_key(|r| !r.differs);
    Ok(UpgradeView {
        lead: leads(analyses, &compared[1..], &comparisons, evidence),
        status: if compare.status == "CHANGED" || rules_differ > 0 || race_rules_differ > 0 {
            "CHANGED"
        } else {
            "NO CHANGE"
        }
        .into(),
        versions,
        compare,
        charts,
        rules,
        rules_differ,
        race_rules,
        race_rules_differ,
    })
}

/// A row's label: the function where the runs measured several, then the geometry and stream.
fn scenario_label(many: bool, p: Primitive, geometry: &str, stream: &str) -> String {
    if many {
        format!("{p} · {geometry} · {stream}")
    } else {
        format!("{geometry} · {stream}")
    }
}

/// Kernel GB/s of one scenario and its interval (the analysis's figure), as a chart mark.
pub(super) fn kernel_mark(t: &ThroughputAnalysis<'_>) -> Mark {
    t.kernel_gbps_interval()
}

fn throughput_chart(analyses: &[RunAnalysis<'_>], label: &[String]) -> Result<Option<ChartView>, String> {
    let many = analyses[0].primitives().len() > 1;
    // The base's scenarios of a megapixel and more (smaller ones are launch-bound: judged on
    // latency, in the tables), on its first GPU.
    let mut keys: Vec<&ThroughputAnalysis<'_>> = analyses[0]
        .throughput
        .iter()
        .filter(|t| t.record.scenario.geometry.pixels() >= LAUNCH_BOUND_PIXELS)
        .filter(|t| t.gpu == analyses[0].throughput.first().and_then(|f| f.gpu))
        .collect();
    let mut caption_extra = String::new();
    let mut per_function = false;
    if keys.len() > MAX_ROWS {
        // One row per function: its largest image, first stream kind and context measured.
        let mut best: Vec<&ThroughputAnalysis<'_>> = Vec::new();
        for t in keys {
            match best
                .iter_mut()
                .find(|b| b.record.scenario.primitive == t.record.scenario.primitive)
            {
                Some(b) if t.record.scenario.geometry.pixels() > b.record.scenario.geometry.pixels() => *b = t,
                Some(_) => {}
                None => best.push(t),
            }
        }
        keys = best;
        per_function = true;
        caption_extra = format!(
            " One row per function: its largest image ({}), first stream kind measured; every scenario is in the tables.",
            keys.first()
                .map(|t| t.record.scenario.geometry.label())
                .unwrap_or_default()
        );
    }
    if keys.is_empty() {
        return Ok(None);
    }
    let rows: Vec<Row> = keys
        .iter()
        .map(|t| {
            let s = &t.record.scenario;
            Row {
                label: if per_function {
                    s.primitive.to_string()
                } else {
                    scenario_label(many, s.primitive, &s.geometry.label(), s.stream.as_str())
                },
                marks: analyses
                    .iter()
                    .map(|a| {
                        a.throughput
                            .iter()
                            .find(|x| x.record.scenario.id == s.id)
                            .and_then(kernel_mark)
                    })
                    .collect(),
            }
        })
        .collect();
    Ok(Some(ChartView {
        id: "versions-throughput".into(),
        title: "Kernel throughput per version".into(),
        caption: format!(
            "Bytes read plus written per second of kernel time per call (CUPTI records, the kernels of a call summed), one mark per run; whiskers: the 95% interval of the median over passes (three passes or more), else over the first pass's calls. Images of a megapixel and more; smaller ones are judged on host latency in the tables.{caption_extra}"
        ),
        svg: version_dots::render(
            "Kernel GB/s per call, by run",
            "GB/s (10⁹ bytes read plus written per second)",
            label,
            &rows,
        )?,
    }))
}

fn leak_chart(analyses: &[RunAnalysis<'_>], label: &[String]) -> Result<Option<ChartView>, String> {
    let many = analyses[0].primitives().len() > 1;
    // Scenarios with a new thread per call and the context filled from the stream that leak in
    // some run.
    let mut ids: Vec<String> = Vec::new();
    for a in analyses {
        for m in a.leaking() {
            let s = &m.record.scenario;
            if s.threading == Threading::ThreadPerCall && s.context == ContextFill::FromStream && !ids.contains(&s.id) {
                ids.push(s.id.clone());
            }
        }
    }
    if ids.is_empty() {
        return Ok(None);
    }
    let find = |a: &'_ RunAnalysis<'_>, id: &str| {
        a.memory
            .iter()
            .find(|m| m.record.scenario.id == id)
            .and_then(|m| m.class.map(|c| (c, m.per_thread)))
    };
    let (rows, caption_extra): (Vec<Row>, &str) = if ids.len() <= MAX_ROWS {
        let rows = ids
            .iter()
            .filter_map(|id| {
                let s = analyses
                    .iter()
                    .find_map(|a| a.memory.iter().find(|m| &m.record.scenario.id == id))?
                    .record
                    .scenario
                    .clone();
                Some(Row {
                    label: scenario_label(many, s.primitive, &s.geometry.label(), s.stream.as_str()),
                    marks: analyses
                        .iter()
                        .map(|a| {
                            find(a, id).map(|(_, fit)| {
                                fit.map_or((0.0, None), |f| {
                                    (f.slope.max(0.0), Some((f.slope_ci.0.max(0.0), f.slope_ci.1)))
                                })
                            })
                        })
                        .collect(),
                })
            })
            .collect();
        (rows, "")
    } else {
        // Per function: the median slope over its scenarios that leak in that run (0: none does).
        let mut primitives: Vec<Primitive> = Vec::new();
        for a in analyses {
            for m in a.memory.iter().filter(|m| ids.contains(&m.record.scenario.id)) {
                if !primitives.contains(&m.record.scenario.primitive) {
                    primitives.push(m.record.scenario.primitive);
                }
            }
        }
        let rows = primitives
            .iter()
            .map(|p| Row {
                label: p.to_string(),
                marks: analyses
                    .iter()
                    .map(|a| {
                        a.median_leak_slope(*p, |id| ids.iter().any(|i| i == id))
                            .map(|slope| (slope, None))
                    })
                    .collect(),
            })
            .collect();
        (
            rows,
            " One row per function: the median slope over its scenarios that leak in that run (0 where none does).",
        )
    };
    Ok(Some(ChartView {
        id: "versions-leak".into(),
        title: "Leak slope per version".into(),
        caption: format!(
            "MiB of device memory per new host thread (a new thread per call, the context filled from the stream), one mark per run, for every scenario that leaks in any run; whiskers: the fit's 95% interval. A mark at 0: the scenario does not grow in that run; no mark: not measured there.{caption_extra}"
        ),
        svg: version_dots::render("MiB per new thread, by run", "MiB per new host thread", label, &rows)?,
    }))
}
