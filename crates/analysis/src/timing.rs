//! Where a run's time went: per-scenario medians of wall time, start-up and calls, each step's
//! median, the memory scenarios' time summed part by part (`summed.rs`); and, where a run
//! measured several GPUs, the scenarios on which they disagree.

use std::collections::BTreeMap;

use nppbench_model::PhaseTime;
use nppbench_stats::median;
use nppbench_stats::tests_of_passes::{PassTest, Verdict, compare_passes};

use crate::RunAnalysis;
use crate::thresholds::{ALPHA, NOISE_PCT};

mod summed;

pub use summed::{Part, SummedTime, summed_time};

/// The memory phase's time, per scenario (medians over the scenarios), ms.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryTiming {
    pub scenarios: usize,
    /// Memory scenarios a second over the memory phase's wall time (`phases`, `memory`): issue
    /// #45's rate; `None` where the run records no memory phase.
    pub per_second: Option<f64>,
    /// From a probe process's start to its answer.
    pub wall_ms: Option<f64>,
    pub startup_ms: Option<f64>,
    pub calls_ms: Option<f64>,
    /// Each start-up step's median, in first-seen order.
    pub steps: Vec<(String, f64)>,
    /// Each step's median after a scenario's last call (`after_calls`), in first-seen order.
    pub after_calls: Vec<(String, f64)>,
    /// Scenarios that answered, and those of them that stopped once their class was settled.
    pub answered: usize,
    pub settled: usize,
    /// The median number of calls after which a settled scenario stopped.
    pub settled_calls: Option<f64>,
    /// The probes' time: the memory phase's wall time times the probes at once (`jobs`), s;
    /// `None` where the run records either not.
    pub probe_seconds: Option<f64>,
    /// What the scenarios measured in batches took, s, each from its turn in its process to its
    /// answer (`wall_ms`).
    pub batched: Spent,
    /// What the scenarios measured in a process of their own took, s, each from its process's
    /// start to its answer: the process's start is theirs alone.
    pub alone: Spent,
    /// Between two calls' samples, per threading model, the likeliest first.
    pub gaps: Vec<CallGaps>,
    /// The warm-up call's latency (each scenario's first, `samples.latency_us`), median over the
    /// scenarios, and the median of its launch's part (`warm_up_launch_us`; `None` in runs made
    /// before it was recorded), ms.
    pub warm_up_ms: Option<f64>,
    pub warm_up_launch_ms: Option<f64>,
    /// The scenarios measured again alone after their batch, per reason, the commonest first.
    pub again: Vec<MeasuredAgain>,
    /// The scenarios' time summed part by part, probe-seconds.
    pub summed: SummedTime,
    /// The probes' time in no scenario: [`MemoryTiming::probe_seconds`] less the scenarios' time
    /// summed (processes started and ended around their scenarios, the phase's tail while fewer
    /// probes than `jobs` run, the parent's turns), s; `None` where the run records no probes'
    /// time, and 0 where the sum is larger (a probe's scenarios overlap no other's, so only a
    /// phase cut short could make it so).
    pub in_no_scenario: Option<f64>,
}

/// Scenarios measured again in a process of their own for one reason (`batch.alone_because`),
/// and how many of those whose batch's class was recorded (`batch.class_in_batch`) got the same
/// class alone: where they all do, measuring again bought nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredAgain {
    pub reason: String,
    pub scenarios: usize,
    /// Those whose class in the batch was recorded, and those of them whose class alone is the same.
    pub compared: usize,
    pub same: usize,
}

/// Scenarios and the seconds they took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub scenarios: usize,
    pub seconds: f64,
}

/// The time between two calls' samples of a memory scenario (`samples.elapsed_ms`, from the
/// second call on) and the call's own latency within it (`samples.latency_us`: the NPP call with
/// the host thread made for it), both means in ms over every such pair of one threading model.
/// What is left between them is the work around the call: the memory reading, the stream count,
/// the scheduling.
#[derive(Debug, Clone, PartialEq)]
pub struct CallGaps {
    pub threading: String,
    pub samples: usize,
    pub between_ms: f64,
    pub call_ms: f64,
    /// The memory reading's mean within it (`samples.reading_us`), over the pairs whose second
    /// sample records it, a call not read after counting 0 (the part of the mean time between
    /// samples that readings took); `None` where none does (runs made before it was recorded).
    pub reading_ms: Option<f64>,
}

/// The throughput phase's time, per record (medians over the records), ms.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputTiming {
    pub records: usize,
    pub wall_ms: Option<f64>,
    /// Each step's median, in first-seen order.
    pub steps: Vec<(String, f64)>,
}

/// Each step's median over the scenarios, in milliseconds, in first-seen order.
fn step_medians<'a>(steps: impl Iterator<Item = &'a PhaseTime>) -> Vec<(String, f64)> {
    let mut by: Vec<(String, Vec<f64>)> = Vec::new();
    for s in steps {
        match by.iter_mut().find(|(p, _)| *p == s.phase) {
            Some((_, v)) => v.push(s.wall_s * 1e3),
            None => by.push((s.phase.clone(), vec![s.wall_s * 1e3])),
        }
    }
    by.into_iter().map(|(p, v)| (p, median(&v).unwrap_or(0.0))).collect()
}

/// The memory phase's timing; `None` for a run without memory scenarios.
pub fn memory_timing(a: &RunAnalysis<'_>) -> Option<MemoryTiming> {
    let run = a.run;
    if run.memory.is_empty() {
        return None;
    }
    let results: Vec<_> = run.memory.iter().filter_map(|m| m.result.as_ref()).collect();
    let walls: Vec<f64> = run.memory.iter().filter_map(|m| m.wall_ms).collect();
    let startup: Vec<f64> = results.iter().map(|r| r.startup_ms).collect();
    let calls: Vec<f64> = results.iter().map(|r| r.wall_ms).collect();
    let settled: Vec<f64> = results.iter().filter_map(|r| r.settled_after).map(f64::from).collect();
    let phase_s = run.phases.iter().find(|p| p.phase == "memory").map(|p| p.wall_s);
    let mut batched = Spent::default();
    let mut alone = Spent::default();
    for m in &run.memory {
        let (Some(place), Some(wall)) = (&m.batch, m.wall_ms) else {
            continue;
        };
        let spent = if place.size == 1 { &mut alone } else { &mut batched };
        spent.scenarios += 1;
        spent.seconds += wall / 1e3;
    }
    let probe_seconds = phase_s.zip(run.jobs.as_ref()).map(|(s, j)| s * f64::from(j.jobs));
    let summed = summed_time(&run.memory);
    Some(MemoryTiming {
        scenarios: run.memory.len(),
        per_second: phase_s.filter(|s| *s > 0.0).map(|s| run.memory.len() as f64 / s),
        wall_ms: median(&walls),
        startup_ms: median(&startup),
        calls_ms: median(&calls),
        steps: step_medians(results.iter().flat_map(|r| &r.startup)),
        after_calls: step_medians(results.iter().flat_map(|r| &r.after_calls)),
        answered: results.len(),
        settled: settled.len(),
        settled_calls: median(&settled),
        batched,
        alone,
        gaps: call_gaps(a),
        warm_up_ms: median(
            &results
                .iter()
                .filter_map(|r| r.samples.latency_us.first().map(|us| us / 1e3))
                .collect::<Vec<_>>(),
        ),
        warm_up_launch_ms: median(
            &results
                .iter()
                .filter_map(|r| r.warm_up_launch_us.map(|us| us / 1e3))
                .collect::<Vec<_>>(),
        ),
        again: measured_again(a),
        in_no_scenario: probe_seconds.map(|p| (p - summed.total).max(0.0)),
        probe_seconds,
        summed,
    })
}

/// [`MeasuredAgain`] for each reason a run's scenarios were measured again alone.
fn measured_again(a: &RunAnalysis<'_>) -> Vec<MeasuredAgain> {
    let mut by: BTreeMap<&str, MeasuredAgain> = BTreeMap::new();
    for m in &a.memory {
        let Some(place) = &m.record.batch else { continue };
        let Some(reason) = &place.alone_because else { continue };
        let row = by.entry(reason).or_insert_with(|| MeasuredAgain {
            reason: reason.clone(),
            scenarios: 0,
            compared: 0,
            same: 0,
        });
        row.scenarios += 1;
        if let Some(in_batch) = &place.class_in_batch {
            row.compared += 1;
            row.same += usize::from(m.class.is_some_and(|c| c.as_str() == in_batch));
        }
    }
    let mut again: Vec<MeasuredAgain> = by.into_values().collect();
    again.sort_by(|x, y| y.scenarios.cmp(&x.scenarios).then_with(|| x.reason.cmp(&y.reason)));
    again
}

/// [`CallGaps`] of every threading model a run's memory scenarios used, the most samples first.
fn call_gaps(a: &RunAnalysis<'_>) -> Vec<CallGaps> {
    // Per threading model: pairs, the sum of the times between samples and of the calls'
    // latencies, and the readings recorded with their sum.
    let mut by: BTreeMap<String, (usize, f64, f64, usize, f64)> = BTreeMap::new();
    for m in &a.run.memory {
        let Some(s) = m.result.as_ref().map(|r| &r.samples) else {
            continue;
        };
        let entry = by.entry(m.scenario.threading.to_string()).or_default();
        for (i, pair) in s.elapsed_ms.windows(2).enumerate() {
            let Some(latency_us) = s.latency_us.get(i + 1) else {
                break;
            };
            entry.0 += 1;
            entry.1 += pair[1] - pair[0];
            entry.2 += latency_us / 1e3;
            if let Some(reading_us) = s.reading_us.get(i + 1) {
                entry.3 += 1;
                entry.4 += reading_us / 1e3;
            }
        }
    }
    let mut gaps: Vec<CallGaps> = by
        .into_iter()
        .filter(|(_, (n, ..))| *n > 0)
        .map(|(threading, (n, between, call, read, reading))| CallGaps {
            threading,
            samples: n,
            between_ms: between / n as f64,
            call_ms: call / n as f64,
            reading_ms: (read > 0).then(|| reading / read as f64),
        })
        .collect();
    gaps.sort_by(|x, y| y.samples.cmp(&x.samples).then_with(|| x.threading.cmp(&y.threading)));
    gaps
}

/// The throughput phase's timing; `None` for a run without throughput records.
pub fn throughput_timing(a: &RunAnalysis<'_>) -> Option<ThroughputTiming> {
    let run = a.run;
    if run.throughput.is_empty() {
        return None;
    }
    let walls: Vec<f64> = run.throughput.iter().filter_map(|t| t.wall_ms).collect();
    Some(ThroughputTiming {
        records: run.throughput.len(),
        wall_ms: median(&walls),
        steps: step_medians(
            run.throughput
                .iter()
                .filter_map(|t| t.result.as_ref())
                .flat_map(|r| &r.steps),
        ),
    })
}

/// Memory scenarios and throughput records measured on each GPU, by UUID.
pub fn scenarios_per_gpu(a: &RunAnalysis<'_>) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
    let mut mem: BTreeMap<String, usize> = BTreeMap::new();
    for m in &a.run.memory {
        *mem.entry(m.gpu.clone().unwrap_or_default()).or_default() += 1;
    }
    let mut tp: BTreeMap<String, usize> = BTreeMap::new();
    for t in &a.run.throughput {
        *tp.entry(t.gpu.clone().unwrap_or_default()).or_default() += 1;
    }
    (mem, tp)
}

/// A throughput scenario on which a GPU differs from the first, by the calibrated test on passes.
#[derive(Debug, Clone)]
pub struct Disagreement {
    pub scenario_id: String,
    pub gpu_ordinal: u32,
    pub first_ordinal: u32,
    pub test: PassTest,
}

/// How the GPUs of one host compare, scenario by scenario.
#[derive(Debug, Clone, Default)]
pub struct GpuAgreement {
    /// Scenarios measured on the first GPU and another, judged.
    pub judged: usize,
    pub disagreements: Vec<Disagreement>,
}

/// Each throughput scenario measured on a GPU other than the first, judged against the first
/// GPU's by the calibrated test on passes (kernel time per call, warm).
pub fn gpu_agreement(a: &RunAnalysis<'_>) -> GpuAgreement {
    let gpus = &a.run.environment.gpus;
    let mut out = GpuAgreement::default();
    if gpus.len() < 2 {
        return out;
    }
    let first = gpus[0].gpu.uuid.as_str();
    for t in a.throughput.iter().filter(|t| t.gpu.is_some_and(|g| g != first)) {
        let Some(base) = a
            .throughput
            .iter()
            .find(|b| b.gpu == Some(first) && b.record.scenario.id == t.record.scenario.id)
        else {
            continue;
        };
        let test = compare_passes(&base.pass_kernel_ns, &t.pass_kernel_ns, ALPHA, NOISE_PCT);
        out.judged += 1;
        if matches!(test.verdict, Verdict::Faster | Verdict::Slower) {
            let gpu_ordinal = gpus
                .iter()
                .find(|g| Some(g.gpu.uuid.as_str()) == t.gpu)
                .map_or(0, |g| g.gpu.ordinal);
            out.disagreements.push(Disagreement {
                scenario_id: t.record.scenario.id.clone(),
                gpu_ordinal,
                first_ordinal: gpus[0].gpu.ordinal,
                test,
            });
        }
    }
    out
}
