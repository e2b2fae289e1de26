//! The atlas: one row per function of a run that measured several, and a section each with its
//! rule and its scenarios.

use nppbench_model::Outcome;

use super::run::{AtlasRow, FunctionView, MemoryRow, ThroughputRow};
use super::{fmt, fmt_sig};
use crate::analysis::RunAnalysis;
use crate::analysis::rules::Rule;
use crate::charts;
use crate::stats::{LeakClass, median};

/// `1.6`, or `1.2–1.7` where the values span more.
fn spread(values: &[f64], digits: usize) -> String {
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(*v), hi.max(*v))
    });
    if values.is_empty() {
        return "—".into();
    }
    let (a, b) = (fmt(lo, digits), fmt(hi, digits));
    if a == b { a } else { format!("{a}–{b}") }
}

pub(super) fn rows(
    a: &RunAnalysis<'_>,
    rules: &[Rule],
    memory: &[MemoryRow],
    throughput: &[ThroughputRow],
) -> (Vec<AtlasRow>, Vec<FunctionView>, Vec<charts::atlas_overview::Bar>) {
    let mut rows = Vec::new();
    let mut sections = Vec::new();
    let mut bars = Vec::new();
    for p in a.all_primitives() {
        let row = p.row();
        let anchor = format!("fn-{p}");
        let mem: Vec<_> = a.memory.iter().filter(|m| m.record.scenario.primitive == p).collect();
        let tp: Vec<_> = a
            .throughput
            .iter()
            .filter(|t| t.record.scenario.primitive == p)
            .collect();
        let not_measured = mem
            .iter()
            .map(|m| &m.record.outcome)
            .chain(tp.iter().map(|t| t.outcome))
            .find_map(|o| match o {
                Outcome::NotMeasured { reason } => Some(reason.clone()),
                _ => None,
            });
        let rule = rules.iter().find(|r| r.primitive == p);
        let measured = mem.iter().filter(|m| m.class.is_some()).count();
        let failed = mem.iter().filter(|m| m.record.outcome.is_failed()).count();
        let leaking: Vec<_> = mem.iter().filter(|m| m.class == Some(LeakClass::Leak)).collect();
        let per_thread: Vec<f64> = leaking.iter().filter_map(|m| m.per_thread.map(|f| f.slope)).collect();
        let streams: Vec<f64> = leaking
            .iter()
            .filter_map(|m| m.hidden_per_thread.map(|f| f.slope))
            .collect();
        let kernels: Vec<f64> = tp.iter().filter_map(|t| t.kernels_per_call).collect();
        // The fastest scenario from DRAM (cold L2), comparable with the copy ceiling.
        let best = tp
            .iter()
            .filter(|t| t.ceiling_pct(a.ceiling_gbps).is_some())
            .max_by(|x, y| {
                let pct =
                    |t: &&&crate::analysis::ThroughputAnalysis<'_>| t.ceiling_pct(a.ceiling_gbps).map_or(0.0, |p| p.0);
                pct(x).total_cmp(&pct(y))
            });
        let verdict = match (&not_measured, measured, leaking.is_empty()) {
            (Some(_), 0, _) => "not measured",
            (None, 0, _) => "failed",
            (_, _, false) => "leaks",
            (_, _, true) => "no leak",
        };
        let rule_view = match rule {
            Some(r) => super::run::rule_view_of(r),
            None => super::run::RuleView {
                primitive: p.to_string(),
                library: row.library.to_string(),
                leaks: false,
                sentence: not_measured.clone().map_or_else(
                    || "no scenario of it was measured".into(),
                    |why| format!("not measured: {why}"),
                ),
                support: String::new(),
                equivalents: Vec::new(),
                counter_examples: Vec::new(),
            },
        };
        bars.push(charts::atlas_overview::Bar {
            name: p.to_string(),
            pct: best.and_then(|t| t.ceiling_pct(a.ceiling_gbps)).map(|(pct, _)| pct),
            class: match (leaking.is_empty(), measured) {
                (false, _) => Some(LeakClass::Leak),
                (true, 0) => None,
                (true, _) => Some(LeakClass::Flat),
            },
        });
        rows.push(AtlasRow {
            anchor: anchor.clone(),
            primitive: p.to_string(),
            library: row.library.to_string(),
            operation: row.operation.to_owned(),
            verdict: verdict.to_owned(),
            rule: rule_view.sentence.clone(),
            mib_per_thread: if per_thread.is_empty() {
                "—".into()
            } else {
                fmt(median(&per_thread).unwrap_or(0.0), 2)
            },
            streams_per_thread: spread(&streams, 1),
            kernels_per_call: spread(&kernels, 0),
            gbps: best
                .and_then(|t| t.cold_gbps.or(t.kernel_gbps))
                .map_or_else(|| "—".into(), fmt_sig),
            pct_of_ceiling: super::ceiling_pct_text(best.and_then(|t| t.ceiling_pct(a.ceiling_gbps))),
            scenarios: format!(
                "{measured} memory{}, {} throughput",
                if failed > 0 {
                    format!(" ({failed} failed)")
                } else {
                    String::new()
                },
                tp.len()
            ),
        });
        sections.push(FunctionView {
            anchor,
            primitive: p.to_string(),
            symbol: p.npp_name(),
            library: row.library.to_string(),
            operation: row.operation.to_owned(),
            docs: row.docs.to_owned(),
            rule: rule_view,
            memory: memory.iter().filter(|m| m.primitive == p.name()).cloned().collect(),
            throughput: throughput.iter().filter(|t| t.primitive == p.name()).cloned().collect(),
        });
    }
    (rows, sections, bars)
}
