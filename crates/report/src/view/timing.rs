//! Where a run's time went, phase by phase and scenario by scenario; and, where it measured
//! several GPUs, each GPU and where they disagree.

use nppbench_analysis::thresholds::{ALPHA, NOISE_PCT};
use nppbench_analysis::{RunAnalysis, timing};
use serde::Serialize;

use super::format::{fmt, fmt_p};

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

/// Named figures joined as "name 12 ms, name 3 ms": each figure to `decimals` places, then `unit`.
fn named<'a>(figures: impl IntoIterator<Item = (&'a str, f64)>, decimals: usize, unit: &str) -> String {
    figures
        .into_iter()
        .map(|(name, x)| format!("{name} {} {unit}", fmt(x, decimals)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn steps_text(steps: &[(String, f64)]) -> String {
    named(steps.iter().map(|(p, ms)| (p.as_str(), *ms)), 0, "ms")
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
    if let Some(m) = timing::memory_timing(a) {
        lines.extend(memory_lines(a, &m));
    }
    if let Some(t) = timing::throughput_timing(a) {
        let mut line = format!(
            "{} throughput records ({} scenarios, {} pass(es), {} GPU(s))",
            t.records,
            run.matrix.throughput.len(),
            run.matrix.settings.repeat,
            run.environment.all_gpus().len()
        );
        if let Some(w) = t.wall_ms {
            line.push_str(&format!("; a median {} ms each", fmt(w, 0)));
        }
        if !t.steps.is_empty() {
            line.push_str(&format!(" ({})", steps_text(&t.steps)));
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

fn memory_lines(a: &RunAnalysis<'_>, m: &timing::MemoryTiming) -> Vec<String> {
    let run = a.run;
    let mut lines = Vec::new();
    let jobs = run.jobs.as_ref().map_or_else(
        || "one at a time".to_owned(),
        |j| match &j.connections {
            Some(c) => format!("{} at once ({}), each with {}", j.jobs, j.reason, c.describe()),
            None => format!("{} at once ({})", j.jobs, j.reason),
        },
    );
    let mut line = format!("{} memory scenarios, {jobs}", m.scenarios);
    if let Some(r) = m.per_second {
        line.push_str(&format!(", {} a second over the memory phase", fmt(r, 1)));
    }
    if let Some(w) = m.wall_ms {
        line.push_str(&format!(
            "; per scenario a median {} ms from its process's start to its answer",
            fmt(w, 0)
        ));
    }
    if let (Some(s), Some(c)) = (m.startup_ms, m.calls_ms) {
        line.push_str(&format!(
            ", of which {} ms start-up{} and {} ms of calls",
            fmt(s, 0),
            if m.steps.is_empty() {
                String::new()
            } else {
                format!(" ({})", steps_text(&m.steps))
            },
            fmt(c, 0)
        ));
        if !m.after_calls.is_empty() {
            let after = named(m.after_calls.iter().map(|(p, ms)| (p.as_str(), *ms)), 1, "ms");
            line.push_str(&format!(" (after the last call, medians: {after})"));
        }
    }
    line.push('.');
    lines.push(line);
    if let Some(w) = m.warm_up_ms {
        lines.push(format!(
            "The warm-up call, each scenario's first: a median {} ms{}.",
            fmt(w, 2),
            m.warm_up_launch_ms.map_or_else(String::new, |l| format!(
                ", of which NPP's launch (its host side, until the call returned) {} ms and the rest the wait for the device",
                fmt(l, 2)
            ))
        ));
    }
    lines.extend(probe_time_lines(m));
    if m.settled > 0 {
        lines.push(format!(
            "{} of {} memory scenarios stopped once their class was settled (a median of {} calls, at most {} asked for, at least {} before stopping, or {} where quiet: not a byte grown and no stream made since the first call).",
            m.settled,
            m.answered,
            fmt(m.settled_calls.unwrap_or(0.0), 0),
            run.matrix.settings.calls + 1,
            run.matrix.settings.min_calls.min(run.matrix.settings.calls),
            nppbench_analysis::quiet_from(run.matrix.settings.min_calls, None)
        ));
    }
    lines
}

/// Where the probes' time went: batched scenarios against those measured alone, and between two
/// calls' samples, the call against the work around it.
fn probe_time_lines(m: &timing::MemoryTiming) -> Vec<String> {
    let mut lines = Vec::new();
    // Runs made before batches were recorded (`batch`) give no split, and no time in no scenario.
    let batches = m.batched.scenarios + m.alone.scenarios > 0;
    if let Some(total) = m.probe_seconds.filter(|_| batches) {
        lines.push(format!(
            "The probes' time, the memory phase times the probes at once: {} probe-seconds; {} s in {} scenarios measured in batches, {} s in {} measured in a process of their own (its start included).",
            fmt(total, 0),
            fmt(m.batched.seconds, 1),
            m.batched.scenarios,
            fmt(m.alone.seconds, 1),
            m.alone.scenarios
        ));
    }
    lines.extend(summed_line(&m.summed, m.in_no_scenario.filter(|_| batches)));
    if !m.gaps.is_empty() {
        let each: Vec<String> = m
            .gaps
            .iter()
            .map(|g| {
                let reading = g
                    .reading_ms
                    .map(|r| format!(", the memory reading {} ms", fmt(r, 2)))
                    .unwrap_or_default();
                format!(
                    "{} {} ms, the call {} ms{reading} ({} samples)",
                    g.threading,
                    fmt(g.between_ms, 2),
                    fmt(g.call_ms, 2),
                    g.samples
                )
            })
            .collect();
        lines.push(format!(
            "Between two calls' samples, a mean of: {}. The call is NPP's with the host thread made for it; the rest is the work around it (the memory reading, the stream count, the scheduling).",
            each.join("; ")
        ));
    }
    if !m.again.is_empty() {
        let each: Vec<String> = m
            .again
            .iter()
            .map(|g| {
                // The reason's first clause names it ("a scenario that grew without keeping a stream in its batch").
                let short = g.reason.split([',', ':']).next().unwrap_or(&g.reason);
                let compared = if g.compared > 0 {
                    format!(", the same class as in its batch in {} of {}", g.same, g.compared)
                } else {
                    String::new()
                };
                format!("{}: {}{compared}", short.trim(), g.scenarios)
            })
            .collect();
        lines.push(format!(
            "Measured again in a process of their own after their batch: {}.",
            each.join("; ")
        ));
    }
    lines
}

/// The memory scenarios' time summed part by part (`timing::SummedTime`); none where no record
/// gives its wall time.
fn summed_line(t: &timing::SummedTime, in_no_scenario: Option<f64>) -> Option<String> {
    if t.total <= 0.0 {
        return None;
    }
    let parts = |parts: &[timing::Part]| named(parts.iter().map(|p| (p.name.as_str(), p.seconds)), 1, "s");
    let mut line = format!(
        "Summed over the memory scenarios, each from its turn in its probe to its answer: {} s. Start-up: {}; the warm-up calls {} s, the later calls {} s, the memory readings {} s, the rest from the first call to the last sample {} s",
        fmt(t.total, 1),
        parts(&t.start_up),
        fmt(t.warm_up_calls, 1),
        fmt(t.later_calls, 1),
        fmt(t.readings, 1),
        fmt(t.around_calls, 1)
    );
    if !t.after_calls.is_empty() {
        line.push_str(&format!("; after the last call: {}", parts(&t.after_calls)));
    }
    line.push_str(&format!("; outside these {} s.", fmt(t.outside(), 1)));
    if let Some(idle) = in_no_scenario {
        line.push_str(&format!(
            " In no scenario, of the probe-seconds above: {} s (processes started and ended around their scenarios, the end of the phase while fewer probes run, the parent between probes).",
            fmt(idle, 1)
        ));
    }
    Some(line)
}

pub(super) fn gpus(a: &RunAnalysis<'_>) -> Vec<GpuRow> {
    let run = a.run;
    if run.environment.gpus.len() < 2 {
        return Vec::new();
    }
    let (mem, tp) = timing::scenarios_per_gpu(a);
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

/// Where the GPUs of one host disagree, in words (the judgement is the analysis's).
pub(super) fn disagreements(a: &RunAnalysis<'_>) -> Vec<String> {
    let agreement = timing::gpu_agreement(a);
    let mut out: Vec<String> = agreement
        .disagreements
        .iter()
        .map(|d| {
            let test = &d.test;
            format!(
                "{} on GPU {} takes {} µs per call against {} µs on GPU {}: {:+.1}% in time ({}){}",
                d.scenario_id,
                d.gpu_ordinal,
                fmt(test.candidate / 1e3, 2),
                fmt(test.base / 1e3, 2),
                d.first_ordinal,
                test.change_pct,
                if test.change_pct > 0.0 { "slower" } else { "faster" },
                test.p_value.map_or(String::new(), |p| format!(" (p {})", fmt_p(p)))
            )
        })
        .collect();
    if out.is_empty() && agreement.judged > 0 {
        out.push(format!(
            "The GPUs agree: none of {} throughput scenarios measured on several GPUs differs from the first GPU beyond {}% (Welch's test on passes, p < {ALPHA}).",
            agreement.judged,
            fmt(NOISE_PCT, 0)
        ));
    }
    out
}
