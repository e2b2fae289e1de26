//! Where a run's time went, phase by phase and scenario by scenario; and, where it measured
//! several GPUs, each GPU and where they disagree.

use std::collections::BTreeMap;

use serde::Serialize;

use super::fmt;
use crate::analysis::RunAnalysis;
use crate::stats::median;
use crate::stats::tests_of_passes::{Verdict, compare_passes};
use crate::thresholds::{ALPHA, NOISE_PCT};

#[derive(Debug, Clone, Default, Serialize)]
pub struct TimingView {
    pub total: String,
    pub phases: Vec<PhaseRow>,
    pub lines: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseRow {
    pub phase: String,
    pub seconds: String,
    pub share: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct GpuRow {
    pub ordinal: String,
    pub name: String,
    pub uuid: String,
    pub copy_ceiling: String,
    pub memory: String,
    pub throughput: String,
}

/// Each step's median over the scenarios, in milliseconds, in first-seen order.
fn step_medians<'a>(steps: impl Iterator<Item = &'a nppbench_model::PhaseTime>) -> Vec<(String, f64)> {
    let mut by: Vec<(String, Vec<f64>)> = Vec::new();
    for s in steps {
        match by.iter_mut().find(|(p, _)| *p == s.phase) {
            Some((_, v)) => v.push(s.wall_s * 1e3),
            None => by.push((s.phase.clone(), vec![s.wall_s * 1e3])),
        }
    }
    by.into_iter().map(|(p, v)| (p, median(&v).unwrap_or(0.0))).collect()
}

fn steps_text(steps: &[(String, f64)]) -> String {
    steps
        .iter()
        .map(|(p, ms)| format!("{p} {} ms", fmt(*ms, 0)))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn timing(a: &RunAnalysis<'_>) -> TimingView {
    let run = a.run;
    let phases = run
        .phases
        .iter()
        .map(|p| PhaseRow {
            phase: p.phase.clone(),
            seconds: fmt(p.wall_s, 1),
            share: fmt(100.0 * p.wall_s / run.wall_s.max(1e-9), 0),
        })
        .collect();
    let mut lines = Vec::new();
    let results: Vec<_> = run.memory.iter().filter_map(|m| m.result.as_ref()).collect();
    if !run.memory.is_empty() {
        let walls: Vec<f64> = run.memory.iter().filter_map(|m| m.wall_ms).collect();
        let startup: Vec<f64> = results.iter().map(|r| r.startup_ms).collect();
        let calls: Vec<f64> = results.iter().map(|r| r.wall_ms).collect();
        let settled: Vec<f64> = results.iter().filter_map(|r| r.settled_after).map(f64::from).collect();
        let jobs = run.jobs.as_ref().map_or_else(
            || "one at a time".to_owned(),
            |j| match &j.connections {
                Some(c) => format!("{} at once ({}), each with {}", j.jobs, j.reason, c.describe()),
                None => format!("{} at once ({})", j.jobs, j.reason),
            },
        );
        let mut line = format!("{} memory scenarios, {jobs}", run.memory.len());
        if let Some(w) = median(&walls) {
            line.push_str(&format!(
                "; per scenario a median {} ms from its process's start to its answer",
                fmt(w, 0)
            ));
        }
        if let (Some(s), Some(c)) = (median(&startup), median(&calls)) {
            let steps = step_medians(results.iter().flat_map(|r| &r.startup));
            line.push_str(&format!(
                ", of which {} ms start-up{} and {} ms of calls",
                fmt(s, 0),
                if steps.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", steps_text(&steps))
                },
                fmt(c, 0)
            ));
        }
        line.push('.');
        lines.push(line);
        if !settled.is_empty() {
            lines.push(format!(
                "{} of {} memory scenarios stopped once their class was settled (a median of {} calls, at most {} asked for, at least {} before stopping).",
                settled.len(),
                results.len(),
                fmt(median(&settled).unwrap_or(0.0), 0),
                run.matrix.settings.calls + 1,
                run.matrix.settings.min_calls.min(run.matrix.settings.calls)
            ));
        }
    }
    if !run.throughput.is_empty() {
        let walls: Vec<f64> = run.throughput.iter().filter_map(|t| t.wall_ms).collect();
        let steps = step_medians(
            run.throughput
                .iter()
                .filter_map(|t| t.result.as_ref())
                .flat_map(|r| &r.steps),
        );
        let mut line = format!(
            "{} throughput records ({} scenarios, {} pass(es), {} GPU(s))",
            run.throughput.len(),
            run.matrix.throughput.len(),
            run.matrix.settings.repeat,
            run.environment.all_gpus().len()
        );
        if let Some(w) = median(&walls) {
            line.push_str(&format!("; a median {} ms each", fmt(w, 0)));
        }
        if !steps.is_empty() {
            line.push_str(&format!(" ({})", steps_text(&steps)));
        }
        line.push('.');
        lines.push(line);
    }
    TimingView {
        total: fmt(run.wall_s, 1),
        phases,
        lines,
    }
}

pub(super) fn gpus(a: &RunAnalysis<'_>) -> Vec<GpuRow> {
    let run = a.run;
    if run.environment.gpus.len() < 2 {
        return Vec::new();
    }
    let mut mem: BTreeMap<&str, usize> = BTreeMap::new();
    for m in &run.memory {
        *mem.entry(m.gpu.as_deref().unwrap_or("")).or_default() += 1;
    }
    let mut tp: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &run.throughput {
        *tp.entry(t.gpu.as_deref().unwrap_or("")).or_default() += 1;
    }
    run.environment
        .gpus
        .iter()
        .map(|g| GpuRow {
            ordinal: g.gpu.ordinal.to_string(),
            name: g.gpu.name.clone(),
            uuid: g.gpu.uuid.clone(),
            copy_ceiling: g
                .copy_ceiling_bytes_per_s
                .map_or_else(|| "not measured".into(), |b| format!("{} GB/s", fmt(b / 1e9, 0))),
            memory: mem.get(g.gpu.uuid.as_str()).copied().unwrap_or(0).to_string(),
            throughput: tp.get(g.gpu.uuid.as_str()).copied().unwrap_or(0).to_string(),
        })
        .collect()
}

/// Where the GPUs of one host disagree: the same throughput scenario faster or slower on a GPU
/// than on the first, by the calibrated test on passes.
pub(super) fn disagreements(a: &RunAnalysis<'_>) -> Vec<String> {
    let gpus = a.run.environment.gpus.clone();
    if gpus.len() < 2 {
        return Vec::new();
    }
    let first = gpus[0].gpu.uuid.as_str();
    let mut out = Vec::new();
    let mut judged = 0;
    for t in a.throughput.iter().filter(|t| t.gpu.is_some_and(|g| g != first)) {
        let Some(base) = a
            .throughput
            .iter()
            .find(|b| b.gpu == Some(first) && b.record.scenario.id == t.record.scenario.id)
        else {
            continue;
        };
        let test = compare_passes(&base.pass_kernel_ns, &t.pass_kernel_ns, ALPHA, NOISE_PCT);
        judged += 1;
        if matches!(test.verdict, Verdict::Faster | Verdict::Slower) {
            let ordinal = gpus
                .iter()
                .find(|g| Some(g.gpu.uuid.as_str()) == t.gpu)
                .map_or(0, |g| g.gpu.ordinal);
            out.push(format!(
                "{} on GPU {ordinal} takes {} µs per call against {} µs on GPU {}: {:+.1}%{}",
                t.record.scenario.id,
                fmt(test.candidate / 1e3, 2),
                fmt(test.base / 1e3, 2),
                gpus[0].gpu.ordinal,
                -test.change_pct,
                test.p_value
                    .map_or(String::new(), |p| format!(" (p {})", super::fmt_p(p)))
            ));
        }
    }
    if out.is_empty() && judged > 0 {
        out.push(format!(
            "The GPUs agree: none of {judged} throughput scenarios measured on several GPUs differs from the first GPU beyond {}% (Welch's test on passes, p < {ALPHA}).",
            fmt(NOISE_PCT, 0)
        ));
    }
    out
}
