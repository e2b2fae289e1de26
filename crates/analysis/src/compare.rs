//! Run against run: per scenario, the change in kernel time per call (and, for launch-bound
//! images, host latency) with Welch's test on the medians of independent passes and a noise band
//! calibrated on same-against-same runs; changes of leak class; new hidden streams. Runs from
//! different environments (GPU, driver) are compared but never silently: each comparison says
//! what differs. This is the one rule every page that says faster or slower uses.

use std::collections::BTreeMap;

use nppbench_model::{FailureKind, RunFile};

use crate::thresholds::{
    ALPHA, LATENCY_NOISE_PCT, LAUNCH_BOUND_PIXELS, NOISE_PCT, STREAMS_NEVER_DESTROYED_MARGIN, STREAMS_PER_THREAD,
};
use crate::{MemoryAnalysis, RunAnalysis};
use nppbench_stats::LeakClass;
use nppbench_stats::tests_of_passes::compare_passes;
pub use nppbench_stats::tests_of_passes::{MIN_PASSES, PassTest};

/// What makes a comparison fail a CI gate. Its names (`--fail-on regression,leak`, the history's
/// gates, compare.json) come from this one enum through clap's `ValueEnum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// A throughput scenario slower beyond the noise threshold, significantly.
    Regression,
    /// A scenario that leaks in the candidate and did not in the base (a new leak).
    Leak,
    /// A scenario whose NPP creates more streams per thread (or leaves more undestroyed).
    Streams,
}

impl std::fmt::Display for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = clap::ValueEnum::to_possible_value(self).expect("every gate has a name");
        f.write_str(value.get_name())
    }
}

impl std::str::FromStr for Gate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        <Gate as clap::ValueEnum>::from_str(s, false).map_err(|_| {
            let names: Vec<String> = <Gate as clap::ValueEnum>::value_variants()
                .iter()
                .map(Gate::to_string)
                .collect();
            format!("unknown --fail-on {s:?}: use {} (comma-separated)", names.join(", "))
        })
    }
}

/// How a comparison judges throughput.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// Kernel-time changes smaller than this (percent of the base) are noise, whatever the test
    /// says.
    pub noise_pct: f64,
    /// Host-latency changes smaller than this are noise (launch-bound images).
    pub latency_noise_pct: f64,
    /// The significance level of Welch's t-test on the passes.
    pub alpha: f64,
    /// Only images of at least this many pixels can fail the regression gate (0: every size;
    /// the test on passes is calibrated at every size).
    pub gate_min_pixels: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            noise_pct: NOISE_PCT,
            latency_noise_pct: LATENCY_NOISE_PCT,
            alpha: ALPHA,
            gate_min_pixels: 0,
        }
    }
}

/// The throughput verdict of one scenario: faster, slower, the same, unsettled, or not enough
/// passes.
pub use nppbench_stats::tests_of_passes::Verdict as Change;

/// What a throughput comparison timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// CUPTI's kernel records, the kernels of a call summed.
    KernelRecords,
    /// CUDA events around batches of calls (a run without CUPTI).
    Events,
}

impl Metric {
    /// The figure in words: `kernel time per call`.
    pub fn words(self) -> &'static str {
        match self {
            Metric::KernelRecords => "kernel time per call",
            Metric::Events => "time per call (CUDA events; no kernel records)",
        }
    }
}

/// One throughput scenario (on one GPU), base against candidate.
#[derive(Debug, Clone)]
pub struct ThroughputChange {
    pub id: String,
    pub primitive: nppbench_model::Primitive,
    pub pixels: u64,
    /// The GPU, where the runs measured several (index in the run's GPU list).
    pub gpu_index: usize,
    /// The time per call, tested on the per-pass medians: the kernels' (CUPTI) where both runs
    /// recorded them, else CUDA events around batches (see `metric`).
    pub kernel: PassTest,
    pub metric: Metric,
    /// Host latency per call, tested on the per-pass medians: judged for launch-bound images.
    pub latency: Option<PassTest>,
    /// Faster or slower when the kernel time is, or (launch-bound) the host latency is.
    pub verdict: Change,
    /// Whether this scenario can fail the regression gate (see [`Thresholds::gate_min_pixels`]).
    pub gated: bool,
    /// The passes each side had.
    pub base_passes: usize,
    pub cand_passes: usize,
    /// GB/s at the kernel time per call (for the reader; the test is on the times).
    pub base_gbps: Option<f64>,
    pub cand_gbps: Option<f64>,
}

impl ThroughputChange {
    /// Whether the regression gate counts this scenario.
    pub fn fails_regression(&self) -> bool {
        self.gated && self.verdict == Change::Slower
    }
}

#[derive(Debug, Clone)]
pub struct MemoryChange {
    pub id: String,
    pub base_class: Option<LeakClass>,
    pub cand_class: Option<LeakClass>,
    pub base_hidden: Option<f64>,
    pub cand_hidden: Option<f64>,
    pub new_leak: bool,
    pub fixed_leak: bool,
    pub more_streams: bool,
}

/// One candidate against the base.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub base: String,
    pub candidate: String,
    /// What differs between the two environments (GPU, driver, NPP); empty when only the run differs.
    pub environment_changes: Vec<String>,
    pub same_machine: bool,
    pub throughput: Vec<ThroughputChange>,
    pub memory: Vec<MemoryChange>,
    /// Scenario ids in only one of the two runs.
    pub only_in_base: Vec<String>,
    pub only_in_candidate: Vec<String>,
    /// Failed scenarios of each run, by kind of fault.
    pub base_failures: BTreeMap<FailureKind, usize>,
    pub cand_failures: BTreeMap<FailureKind, usize>,
}

/// A comparison's verdicts, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub slower: usize,
    pub faster: usize,
    pub same: usize,
    pub unsettled: usize,
    /// Too few passes a side to judge.
    pub unjudged: usize,
    pub new_leaks: usize,
    pub fixed_leaks: usize,
    pub more_streams: usize,
}

impl MemoryChange {
    /// The gate among `gates` this scenario trips, if any (a new leak before more streams).
    pub fn trips(&self, gates: &[Gate]) -> Option<Gate> {
        if self.new_leak && gates.contains(&Gate::Leak) {
            Some(Gate::Leak)
        } else if self.more_streams && gates.contains(&Gate::Streams) {
            Some(Gate::Streams)
        } else {
            None
        }
    }
}

impl Comparison {
    /// Every verdict of the comparison, counted.
    pub fn counts(&self) -> Counts {
        let count = |v: Change| self.throughput.iter().filter(|x| x.verdict == v).count();
        Counts {
            slower: count(Change::Slower),
            faster: count(Change::Faster),
            same: count(Change::Same),
            unsettled: count(Change::Unsettled),
            unjudged: count(Change::NotEnoughPasses),
            new_leaks: self.memory.iter().filter(|m| m.new_leak).count(),
            fixed_leaks: self.memory.iter().filter(|m| m.fixed_leak).count(),
            more_streams: self.memory.iter().filter(|m| m.more_streams).count(),
        }
    }

    /// The gates this comparison trips.
    pub fn tripped(&self, gates: &[Gate]) -> Vec<Gate> {
        let mut out = Vec::new();
        for &g in gates {
            let hit = match g {
                Gate::Regression => self.throughput.iter().any(ThroughputChange::fails_regression),
                Gate::Leak => self.memory.iter().any(|m| m.new_leak),
                Gate::Streams => self.memory.iter().any(|m| m.more_streams),
            };
            if hit {
                out.push(g);
            }
        }
        out
    }
}

/// `NPP 13.0.1 · NVIDIA H100 80GB HBM3 · driver 580.159.04 · 2026-11-25 22:24 UTC`.
fn label(run: &RunFile) -> String {
    let when = run
        .started_at
        .get(..16)
        .map_or_else(|| run.started_at.clone(), |t| t.replace('T', " "));
    format!(
        "NPP {} · {} · driver {} · {when} UTC",
        run.environment.npp.version,
        run.environment.gpu.name,
        run.environment.driver_version.as_deref().unwrap_or("unknown"),
    )
}

fn hidden(m: &MemoryAnalysis<'_>) -> Option<f64> {
    m.hidden_per_thread
        .map(|f| f.slope)
        .or_else(|| m.hidden_streams_total())
}

pub fn compare(base: &RunFile, cand: &RunFile, t: Thresholds) -> Comparison {
    compare_analysed(&RunAnalysis::new(base), &RunAnalysis::new(cand), t)
}

/// [`compare`] of runs already analysed (a page of several runs has them).
pub fn compare_analysed(b: &RunAnalysis<'_>, c: &RunAnalysis<'_>, t: Thresholds) -> Comparison {
    let (base, cand) = (b.run, c.run);
    let environment_changes = environment_changes(base, cand);
    let same_machine = base.environment.gpu.uuid == cand.environment.gpu.uuid;

    let throughput = throughput_changes(b, c, t);
    let memory = memory_changes(b, c);
    let ids = |r: &RunFile| -> Vec<String> {
        r.memory
            .iter()
            .map(|m| m.scenario.id.clone())
            .chain(r.throughput.iter().map(|t| t.scenario.id.clone()))
            .collect()
    };
    let (bi, ci) = (ids(base), ids(cand));
    Comparison {
        base: label(base),
        candidate: label(cand),
        environment_changes,
        same_machine,
        throughput,
        memory,
        only_in_base: bi.iter().filter(|i| !ci.contains(i)).cloned().collect(),
        only_in_candidate: ci.iter().filter(|i| !bi.contains(i)).cloned().collect(),
        base_failures: b.failures_by_kind(),
        cand_failures: c.failures_by_kind(),
    }
}

/// What differs between two runs' environments (GPU, driver, CUDA driver API, NPP).
fn environment_changes(base: &RunFile, cand: &RunFile) -> Vec<String> {
    let (be, ce) = (&base.environment, &cand.environment);
    let mut environment_changes = Vec::new();
    let mut diff = |what: &str, x: String, y: String| {
        if x != y {
            environment_changes.push(format!("{what}: {x} → {y}"));
        }
    };
    diff("GPU", be.gpu.name.clone(), ce.gpu.name.clone());
    diff(
        "driver",
        be.driver_version.clone().unwrap_or_default(),
        ce.driver_version.clone().unwrap_or_default(),
    );
    diff(
        "CUDA driver API",
        be.cuda_driver_api_version.to_string(),
        ce.cuda_driver_api_version.to_string(),
    );
    diff("NPP", be.npp.version.clone(), ce.npp.version.clone());
    environment_changes
}

/// Each throughput scenario of the base paired with the candidate's on the same GPU, judged.
fn throughput_changes(b: &RunAnalysis<'_>, c: &RunAnalysis<'_>, t: Thresholds) -> Vec<ThroughputChange> {
    let mut throughput = Vec::new();
    let gpu_index = |a: &RunAnalysis<'_>, gpu: Option<&str>| {
        let gpus = a.run.environment.all_gpus();
        gpu.and_then(|u| gpus.iter().position(|g| g.gpu.uuid == u)).unwrap_or(0)
    };
    for bt in &b.throughput {
        let id = &bt.record.scenario.id;
        let index = gpu_index(b, bt.gpu);
        // The same scenario on the same GPU (by position: runs from two machines pair their
        // first GPUs, their second, …).
        let Some(ct) = c
            .throughput
            .iter()
            .find(|x| &x.record.scenario.id == id && gpu_index(c, x.gpu) == index)
        else {
            continue;
        };
        // Kernel time per call where both runs have CUPTI's records; else CUDA events on both.
        let (metric, base_ns, cand_ns) = if !bt.pass_kernel_ns.is_empty() && !ct.pass_kernel_ns.is_empty() {
            (Metric::KernelRecords, &bt.pass_kernel_ns, &ct.pass_kernel_ns)
        } else if !bt.pass_event_ns.is_empty() && !ct.pass_event_ns.is_empty() {
            (Metric::Events, &bt.pass_event_ns, &ct.pass_event_ns)
        } else {
            continue;
        };
        let kernel = compare_passes(base_ns, cand_ns, t.alpha, t.noise_pct);
        let pixels = bt.record.scenario.geometry.pixels();
        let latency =
            (pixels < LAUNCH_BOUND_PIXELS && !bt.pass_latency_us.is_empty() && !ct.pass_latency_us.is_empty())
                .then(|| compare_passes(&bt.pass_latency_us, &ct.pass_latency_us, t.alpha, t.latency_noise_pct));
        let verdict = match (kernel.verdict, latency.map(|l| l.verdict)) {
            (Change::Slower, _) | (_, Some(Change::Slower)) => Change::Slower,
            (Change::NotEnoughPasses, _) => Change::NotEnoughPasses,
            (Change::Faster, _) | (_, Some(Change::Faster)) => Change::Faster,
            (Change::Unsettled, _) => Change::Unsettled,
            _ => Change::Same,
        };
        throughput.push(ThroughputChange {
            id: id.clone(),
            primitive: bt.record.scenario.primitive,
            pixels,
            gpu_index: index,
            kernel,
            latency,
            verdict,
            gated: pixels >= t.gate_min_pixels,
            base_passes: base_ns.len(),
            cand_passes: cand_ns.len(),
            metric,
            base_gbps: bt.kernel_gbps,
            cand_gbps: ct.kernel_gbps,
        });
    }
    throughput
}

/// Each memory scenario of the base paired with the candidate's, judged.
fn memory_changes(b: &RunAnalysis<'_>, c: &RunAnalysis<'_>) -> Vec<MemoryChange> {
    let mut memory = Vec::new();
    for bm in &b.memory {
        let id = &bm.record.scenario.id;
        let Some(cm) = c.memory.iter().find(|x| &x.record.scenario.id == id) else {
            continue;
        };
        let leak = |m: &MemoryAnalysis<'_>| m.class == Some(LeakClass::Leak);
        let (bh, ch) = (hidden(bm), hidden(cm));
        let more_streams = match (bh, ch) {
            (Some(x), Some(y)) => y > x + STREAMS_PER_THREAD,
            (None, Some(y)) => y > STREAMS_PER_THREAD,
            _ => false,
        } || cm.streams_never_destroyed.unwrap_or(0)
            > bm.streams_never_destroyed.unwrap_or(0) + STREAMS_NEVER_DESTROYED_MARGIN;
        memory.push(MemoryChange {
            id: id.clone(),
            base_class: bm.class,
            cand_class: cm.class,
            base_hidden: bh,
            cand_hidden: ch,
            new_leak: leak(cm) && !leak(bm),
            fixed_leak: leak(bm) && !leak(cm),
            more_streams,
        });
    }
    memory
}

#[cfg(test)]
mod tests {
    //! Generated data, labelled as such: checks of the arithmetic only.
    use super::*;

    #[test]
    fn gates_parse_and_reject_unknown_names() {
        assert_eq!("leak".parse::<Gate>(), Ok(Gate::Leak));
        assert!(
            "leaks"
                .parse::<Gate>()
                .unwrap_err()
                .contains("regression, leak, streams")
        );
    }
}
