//! The atlas: one row per function of a run that measured several, and a section each with its
//! rule and its scenarios.

use serde::Serialize;

use super::format::{ceiling_pct_text, fmt, fmt_sig};
use super::prose::{RuleView, rule_view_of};
use super::scenario_rows::{MemoryRow, ThroughputRow};
use crate::charts;
use nppbench_analysis::RunAnalysis;
use nppbench_analysis::evidence::FunctionRules;
use nppbench_analysis::functions::function_summaries;

/// `1.6`, or `1.2–1.7` where the values span more.
/// One function of the atlas.
#[derive(Debug, Clone, Serialize)]
pub struct AtlasRow {
    pub anchor: String,
    pub primitive: String,
    pub library: String,
    pub operation: String,
    /// `leaks`, `no leak`, `not measured`.
    pub verdict: String,
    pub rule: String,
    pub mib_per_thread: String,
    pub streams_per_thread: String,
    pub kernels_per_call: String,
    pub gbps: String,
    pub pct_of_ceiling: String,
    pub scenarios: String,
    /// `predicted k of n held-out scenarios`, or `none held out`.
    pub held_out: String,
    /// The rules' class (leak, bounded, flat) against the function's held-out scenarios:
    /// `39 of 40 right (97.5%)`, or empty where none was held out.
    pub held_out_classes: String,
}

/// One function's section of an atlas page: its rule and its scenarios.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionView {
    pub anchor: String,
    pub primitive: String,
    pub symbol: String,
    pub library: String,
    pub operation: String,
    pub docs: String,
    pub rule: RuleView,
    pub memory: Vec<MemoryRow>,
    pub throughput: Vec<ThroughputRow>,
}

/// `lo–hi`, or one figure where both read alike; `—` for none.
fn spread(range: Option<(f64, f64)>, digits: usize) -> String {
    let Some((lo, hi)) = range else {
        return "—".into();
    };
    let (a, b) = (fmt(lo, digits), fmt(hi, digits));
    if a == b { a } else { format!("{a}–{b}") }
}

pub(super) fn rows(
    a: &RunAnalysis<'_>,
    rules: &[FunctionRules],
    held_out: &nppbench_analysis::score::Score,
    memory: &[MemoryRow],
    throughput: &[ThroughputRow],
) -> (Vec<AtlasRow>, Vec<FunctionView>, Vec<charts::atlas_overview::Bar>) {
    let mut rows = Vec::new();
    let mut sections = Vec::new();
    let mut bars = Vec::new();
    for f in function_summaries(a) {
        let p = f.primitive;
        let row = p.row();
        let anchor = format!("fn-{p}");
        let rule_view = match rules.iter().find(|r| r.primitive == p) {
            Some(r) => rule_view_of(r),
            None => RuleView {
                primitive: p.to_string(),
                library: row.library.to_string(),
                leaks: false,
                sentence: f.not_measured.clone().map_or_else(
                    || "no scenario of it was measured".into(),
                    |why| format!("not measured: {why}"),
                ),
                support: String::new(),
                equivalents: Vec::new(),
                counter_examples: Vec::new(),
                held_out: String::new(),
            },
        };
        bars.push(charts::atlas_overview::Bar {
            name: p.to_string(),
            pct: f.best.and_then(|t| t.ceiling_pct(a.ceiling_gbps)).map(|(pct, _)| pct),
            class: f.class(),
        });
        rows.push(AtlasRow {
            anchor: anchor.clone(),
            primitive: p.to_string(),
            library: row.library.to_string(),
            operation: row.operation.to_owned(),
            verdict: f.verdict.words().to_owned(),
            rule: rule_view.sentence.clone(),
            held_out: rule_view.held_out.clone(),
            held_out_classes: held_out.of(p).map_or_else(String::new, |t| t.words()),
            mib_per_thread: f.median_mib_per_thread.map_or_else(|| "—".into(), |m| fmt(m, 2)),
            streams_per_thread: spread(f.streams_per_thread, 1),
            kernels_per_call: spread(f.kernels_per_call, 0),
            gbps: f
                .best
                .and_then(|t| t.cold_gbps.or(t.kernel_gbps))
                .map_or_else(|| "—".into(), fmt_sig),
            pct_of_ceiling: ceiling_pct_text(f.best.and_then(|t| t.ceiling_pct(a.ceiling_gbps))),
            scenarios: format!(
                "{} memory{}, {} throughput",
                f.measured,
                if f.failed > 0 {
                    format!(" ({} failed)", f.failed)
                } else {
                    String::new()
                },
                f.throughput.len()
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
