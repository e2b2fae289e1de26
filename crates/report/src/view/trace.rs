//! The trace page's view model: the findings of `nppbench_analysis::trace` in words and
//! formatted numbers (the verdict first, then the notices, the growing call sites with the atlas's
//! answer beside what the trace saw, the cost over time, the charts, every call site, the threads
//! and streams, what recording cost), and call_sites.csv's rows. No figure is computed here.

mod answer;
mod overhead;
mod race;
mod words;

use serde::Serialize;

use nppbench_analysis::LeakClass;
use nppbench_analysis::trace::{SiteGroup, TraceFindings, TraceStatus};
use nppbench_model::TraceFile;

use self::answer::{agreement, prediction_text};
use self::overhead::overhead;
pub use self::race::RaceSiteView;
use self::race::{race_sentence, race_sites};
use self::words::{
    bytes, cost_rows, count, geometry_label, memory_label, mib, notices, stream_csv, stream_words, threading_csv,
    threading_words, verdict,
};
use super::format::{fmt, fmt_sig};
use super::prose::{FixView, fix_view, rule_sentence};
use super::run_charts::ChartView;
use crate::charts;

/// The whole trace page.
#[derive(Debug, Clone, Serialize)]
pub struct TracePage {
    pub title: String,
    /// The nppbench that rendered the page.
    pub generated_by: String,
    /// The interposer that recorded the trace (trace.json's `tool_version`).
    pub recorded_by: String,
    /// `GROWS`, `BOUNDED`, `NO GROWTH` or `NOT SEEN`.
    pub status: &'static str,
    /// The status's style: `fail`, `changed` or `pass`.
    pub status_class: &'static str,
    /// The verdict in one sentence, with its number.
    pub verdict: String,
    pub verdict_details: Vec<String>,
    /// A partial trace, calls or streams or memory not seen, an atlas of another version.
    pub notices: Vec<String>,
    /// The groups that kept streams, leaking first.
    pub growing: Vec<GroupView>,
    /// Call sites called while their stream still had work queued, in a configuration that may
    /// race.
    pub racing: Vec<RaceSiteView>,
    /// Where the atlas's answers come from, or how to get them.
    pub atlas_basis: String,
    pub disagreements: usize,
    pub cost: Vec<CostRow>,
    pub cost_note: String,
    pub charts: Vec<ChartView>,
    pub groups: Vec<GroupView>,
    pub details: Vec<CostRow>,
    pub overhead: String,
    pub trace_json: &'static str,
    /// Every call site, as the page's table has them and more columns: a link beside the page.
    pub call_sites_csv: &'static str,
}

/// A label and its value.
#[derive(Debug, Clone, Serialize)]
pub struct CostRow {
    pub name: String,
    pub value: String,
}

/// One group of call sites, as the page and summary.md show it.
#[derive(Debug, Clone, Serialize)]
pub struct GroupView {
    pub anchor: String,
    pub function: String,
    pub geometry: String,
    pub declared_flags: String,
    pub stream: String,
    pub threading: String,
    pub calls: String,
    pub threads: String,
    pub failed_calls: String,
    pub streams_created: String,
    pub streams_kept: String,
    pub mib_attributed: String,
    /// `leak`, `bounded`, `flat`, or `not counted`.
    pub observed: &'static str,
    pub predicted: String,
    /// The atlas's answer in words, or why there is none.
    pub prediction: String,
    /// `yes`, `no`, or empty where either side has no class.
    pub agrees: &'static str,
    /// Where the atlas and the trace disagree: the disagreement in words.
    pub disagreement: Option<String>,
    pub rule: Option<String>,
    pub fixes: Vec<FixView>,
    /// Where an earlier site of the same function shows the rule and fixes: its heading.
    pub advice_as: Option<String>,
}

/// One row of call_sites.csv. Field order is column order.
#[derive(Debug, Serialize)]
pub struct CallSiteRow {
    pub function: String,
    pub width: String,
    pub height: String,
    pub src_stride: String,
    pub dst_stride: String,
    pub declared_flags: String,
    pub stream: &'static str,
    pub threading: String,
    pub calls: u64,
    pub threads: u64,
    pub streams_created: u64,
    pub streams_kept: u64,
    pub mib_attributed: String,
    pub predicted_class: &'static str,
    pub agrees: &'static str,
    /// Calls asked whether their stream had work queued, those that had, and whether the atlas
    /// says the configuration races (`true`, `false`, or empty: no answer).
    pub calls_pending_asked: u64,
    pub calls_with_work_pending: u64,
    pub atlas_races: &'static str,
}

fn status_words(s: TraceStatus) -> (&'static str, &'static str) {
    match s {
        TraceStatus::Grows => ("GROWS", "fail"),
        TraceStatus::Bounded => ("BOUNDED", "changed"),
        TraceStatus::NoGrowth => ("NO GROWTH", "pass"),
        TraceStatus::NotSeen => ("NOT SEEN", "changed"),
    }
}

/// The page of `trace` from its findings `f`.
pub fn trace_page(trace: &TraceFile, f: &TraceFindings) -> Result<TracePage, String> {
    let (status, status_class) = status_words(f.status);
    let (sentence, mut verdict_details) = verdict(trace, f);
    let racing = race_sites(f);
    verdict_details.extend(race_sentence(&racing));
    let groups: Vec<GroupView> = f.groups.iter().enumerate().map(|(i, g)| group_view(i, g)).collect();
    let growing = advice_once(
        groups
            .iter()
            .zip(&f.groups)
            .filter(|(_, g)| g.streams_kept > 0)
            .map(|(v, _)| v.clone())
            .collect(),
    );
    let (cost, cost_note) = cost_rows(f);
    Ok(TracePage {
        title: format!("nppbench trace: {}", trace.program.join(" ")),
        generated_by: super::format::rendered_by(),
        recorded_by: format!("nppbench-trace {}", trace.tool_version),
        status,
        status_class,
        verdict: sentence,
        verdict_details,
        notices: notices(trace, f),
        growing,
        racing,
        atlas_basis: answer::atlas_basis(f),
        disagreements: groups.iter().filter(|g| g.disagreement.is_some()).count(),
        cost,
        cost_note,
        charts: timeline_charts(f)?,
        groups,
        details: details(trace, f),
        overhead: overhead(f),
        trace_json: "trace.json",
        call_sites_csv: "call_sites.csv",
    })
}

/// The rule and fixes of a function once, on its first site; later sites point to it.
fn advice_once(mut sites: Vec<GroupView>) -> Vec<GroupView> {
    for i in 1..sites.len() {
        let earlier = sites[..i]
            .iter()
            .find(|e| e.function == sites[i].function && (e.rule.is_some() || !e.fixes.is_empty()));
        if let Some(e) = earlier {
            let heading = format!("{} on {}", e.function, e.geometry);
            let s = &mut sites[i];
            s.rule = None;
            s.fixes.clear();
            s.advice_as = Some(heading);
        }
    }
    sites
}

fn group_view(i: usize, g: &SiteGroup) -> GroupView {
    let prediction = g.prediction.as_ref();
    let advice = g.advice.as_ref();
    GroupView {
        anchor: format!("site-{}", i + 1),
        function: g.function.clone(),
        geometry: geometry_label(g),
        declared_flags: g
            .declared_flags
            .map_or_else(|| "not recorded".to_owned(), |d| d.to_string()),
        stream: stream_words(g),
        threading: threading_words(g),
        calls: g.calls.to_string(),
        threads: g.threads.to_string(),
        failed_calls: g.failed_calls.to_string(),
        streams_created: g.streams_created.to_string(),
        streams_kept: g.streams_kept.to_string(),
        mib_attributed: mib(g.mib_attributed),
        observed: g.observed.map_or("not counted", LeakClass::as_str),
        predicted: prediction
            .ok()
            .and_then(|p| p.answer.class)
            .map_or_else(String::new, |c| c.as_str().to_owned()),
        prediction: prediction_text(g),
        agrees: match prediction.ok().and_then(|p| p.agrees) {
            Some(true) => "yes",
            Some(false) => "no",
            None => "",
        },
        disagreement: agreement(g),
        rule: advice.and_then(|a| a.rules.as_ref()).map(rule_sentence),
        fixes: advice
            .map(|a| a.fixes.iter().map(fix_view).collect())
            .unwrap_or_default(),
        advice_as: None,
    }
}

/// call_sites.csv: one row per group, the numbers as the page has them.
pub fn call_site_rows(f: &TraceFindings) -> Vec<CallSiteRow> {
    f.groups
        .iter()
        .map(|g| {
            let geo = g.geometry;
            let opt = |v: Option<i32>| v.map_or_else(String::new, |v| v.to_string());
            CallSiteRow {
                function: g.function.clone(),
                width: opt(geo.map(|x| x.width)),
                height: opt(geo.map(|x| x.height)),
                src_stride: opt(geo.and_then(|x| x.src_stride)),
                dst_stride: opt(geo.and_then(|x| x.dst_stride)),
                declared_flags: g.declared_flags.map_or_else(String::new, |d| d.to_string()),
                stream: stream_csv(g),
                threading: threading_csv(g),
                calls: g.calls,
                threads: g.threads,
                streams_created: g.streams_created,
                streams_kept: g.streams_kept,
                mib_attributed: fmt(g.mib_attributed, 2),
                predicted_class: g
                    .prediction
                    .as_ref()
                    .ok()
                    .and_then(|p| p.answer.class)
                    .map_or("", LeakClass::as_str),
                agrees: match g.prediction.as_ref().ok().and_then(|p| p.agrees) {
                    Some(true) => "true",
                    Some(false) => "false",
                    None => "",
                },
                calls_pending_asked: g.calls_pending_asked,
                calls_with_work_pending: g.calls_with_work_pending,
                atlas_races: match g.atlas_races() {
                    Some(true) => "true",
                    Some(false) => "false",
                    None => "",
                },
            }
        })
        .collect()
}

/// The memory chart; none where device memory was never sampled (an empty chart, its axis
/// labelled 1, 1, 1, says nothing).
fn timeline_charts(f: &TraceFindings) -> Result<Vec<ChartView>, String> {
    if !f.timeline.iter().any(|p| p.device_mib.is_some()) {
        return Ok(Vec::new());
    }
    let title = "Device memory and threads over the trace".to_owned();
    Ok(vec![ChartView {
        id: "timeline".into(),
        caption: format!(
            "Above: {}. Below: the process's live threads, and the threads that had kept NPP streams by then (dashed). Each point is one sample.",
            memory_label(f)
        ),
        svg: charts::trace_timeline::render(&title, &f.timeline)?,
        title,
    }])
}

/// The threads, streams, program and recording, as label and value.
fn details(trace: &TraceFile, f: &TraceFindings) -> Vec<CostRow> {
    let row = |name: &str, value: String| CostRow {
        name: name.into(),
        value,
    };
    let t = &f.threads;
    let s = &f.streams;
    let distribution: Vec<String> = f
        .keeping
        .distribution
        .iter()
        .map(|(streams, threads)| {
            format!(
                "{} kept {} each",
                count(*threads as u64, "thread", "threads"),
                count(*streams, "stream", "streams")
            )
        })
        .collect();
    let mut rows = vec![
        row("Program", trace.program.join(" ")),
        row("PID, started", format!("{}, {}", trace.pid, trace.started_at)),
        row("Recorded for", format!("{} s", fmt(trace.wall_s, 1))),
        row(
            "Threads seen",
            format!(
                "{} ({} exited, {} not known){}",
                t.seen,
                t.exited,
                t.exit_unknown,
                t.seen_per_hour
                    .map(|r| format!("; {} per hour", fmt_sig(r)))
                    .unwrap_or_default()
            ),
        ),
        row(
            "Threads that kept NPP streams",
            if distribution.is_empty() {
                "none".into()
            } else {
                format!("{}: {}", f.keeping.threads, distribution.join(", "))
            },
        ),
        row(
            "Streams",
            format!(
                "{} created, {} destroyed, {} kept ({} attributed to NPP by their stack outside a catalogued call)",
                s.created, s.destroyed, s.kept, s.attributed_by_stack
            ),
        ),
        row(
            "The program's own streams",
            format!(
                "{} created, {} kept ({} attributed)",
                f.other_streams.created,
                f.other_streams.kept,
                mib(f.other_streams.mib_attributed)
            ),
        ),
        row(
            "NPP",
            format!(
                "{} ({})",
                trace.npp_version.as_deref().unwrap_or("version unknown"),
                trace.npp_libraries.join(", ")
            ),
        ),
    ];
    rows.extend(memory_row(f));
    rows.extend(stack_rows(trace));
    for d in &trace.devices {
        rows.push(row(
            &format!("Device {}", d.ordinal),
            format!("{}, {}", d.name, bytes(d.memory_total_bytes)),
        ));
    }
    rows.push(row(
        "Interposer",
        format!(
            "nppbench-trace {}, {} NPP functions interposed, a sample every {} s",
            trace.tool_version,
            trace.capture.functions_interposed,
            fmt_sig(trace.capture.sample_interval_s)
        ),
    ));
    rows
}

/// The memory samples' first, last and peak, and whose memory they are.
fn memory_row(f: &TraceFindings) -> Option<CostRow> {
    let m = f.memory?;
    Some(CostRow {
        name: "Device memory".into(),
        value: format!(
            "{} at {} s, {} at {} s, peak {}: {}",
            mib(m.first_mib),
            fmt(m.first_s, 1),
            mib(m.last_mib),
            fmt(m.last_s, 1),
            mib(m.peak_mib),
            memory_label(f)
        ),
    })
}

/// The stacks that named NPP outside a catalogued call, as found: the most streams first, at
/// most [`STACKS_SHOWN`].
fn stack_rows(trace: &TraceFile) -> Vec<CostRow> {
    let mut stacks: Vec<(&String, &u64)> = trace.capture.npp_stacks.iter().collect();
    stacks.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut rows: Vec<CostRow> = stacks
        .iter()
        .take(STACKS_SHOWN)
        .map(|(text, n)| CostRow {
            name: "NPP frames on a stack that created streams".into(),
            value: format!("{}, innermost first: {text}", count(**n, "stream", "streams")),
        })
        .collect();
    if stacks.len() > STACKS_SHOWN {
        rows.push(CostRow {
            name: "NPP frames on a stack that created streams".into(),
            value: format!("{} more stacks in trace.json", stacks.len() - STACKS_SHOWN),
        });
    }
    rows
}

/// Distinct NPP stacks the details list.
const STACKS_SHOWN: usize = 5;
