//! Run against run: per scenario, the change in kernel time per call (and, for launch-bound
//! images, host latency) with Welch's test on the medians of independent passes and a noise band
//! calibrated on same-against-same runs; changes of leak class; new hidden streams; the leaks and
//! failures of the candidate. Runs from different environments (GPU, driver) are compared but
//! never silently: each comparison says what differs, and how much of the base it covers (runs
//! that do not compare get no verdict unless asked). This is the one rule every page that says
//! faster or slower uses.

mod coverage;
mod gate;
mod older;
mod outcome;
mod pairs;
mod passes;

use std::collections::{BTreeMap, BTreeSet};

use nppbench_model::{FailureKind, Outcome, RunFile};

use crate::thresholds::{ALPHA, KERNEL_TIME_RESOLUTION_NS, LATENCY_NOISE_PCT, NOISE_PCT};
use crate::{MemoryAnalysis, RunAnalysis};
use nppbench_stats::LeakClass;
pub use nppbench_stats::tests_of_passes::{MIN_PASSES, PassTest};

pub use self::coverage::{Coverage, MIN_COVERAGE, Mismatch};
pub use self::gate::Gate;
pub use self::older::{NotJudged, Older};
pub use self::outcome::{Status, outcome};
pub use self::passes::{LayoutTest, ThroughputJudgement, judge_throughput, tested_figures};
pub use crate::figure::ByLayout;
pub use crate::throughput::ThroughputPasses;

/// How a comparison judges throughput.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
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

impl Thresholds {
    /// The noise band of a kernel time per call whose base is `base_ns`, percent: `noise_pct`,
    /// or wider where the GPU's clock cannot resolve that much ([`KERNEL_TIME_RESOLUTION_NS`]:
    /// a call of under 2.56 µs).
    pub fn kernel_band_pct(&self, base_ns: Option<f64>) -> f64 {
        match base_ns {
            Some(b) if b > 0.0 => self.noise_pct.max(100.0 * KERNEL_TIME_RESOLUTION_NS / b),
            _ => self.noise_pct,
        }
    }
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
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
    /// Each layout's time tested apart, where the calls' kernels ran at once in some passes and
    /// in turn in others (see `judge_throughput`); `kernel` is then the change with the layout held fixed.
    pub by_layout: Vec<LayoutTest>,
    /// Host latency per call, tested on the per-pass medians for launch-bound images: shown,
    /// never part of the verdict.
    pub latency: Option<PassTest>,
    /// Faster or slower when the time per call is (each layout's, where they mix); unsettled
    /// where the scenario is not judged for want of a figure (`not_judged`).
    pub verdict: Change,
    /// Why the scenario is not judged though each side has passes (see [`NotJudged`]).
    pub not_judged: Option<NotJudged>,
    /// Whether this scenario can fail the regression gate (see [`Thresholds::gate_min_pixels`]).
    pub gated: bool,
    /// The passes each side had, of the figure tested.
    pub base_passes: usize,
    pub cand_passes: usize,
    /// What the rule read of each side: every pass's figures, so that a page can show them.
    pub base_values: ThroughputPasses,
    pub cand_values: ThroughputPasses,
    /// GB/s at the kernel time per call (for the reader; the test is on the times).
    pub base_gbps: Option<f64>,
    pub cand_gbps: Option<f64>,
}

impl ThroughputChange {
    /// Whether the regression gate counts this scenario.
    pub fn fails_regression(&self) -> bool {
        self.gated && self.verdict == Change::Slower
    }

    /// Each side's passes of the figure tested over all calls (see [`tested_figures`]).
    pub fn pass_values(&self) -> (&[f64], &[f64]) {
        tested_figures(&self.base_values, &self.cand_values).map_or((&[], &[]), |(_, b, c)| (b, c))
    }

    /// The gate among `gates` this scenario trips, if any: the regression gate, where it counts
    /// the scenario.
    pub fn trips(&self, gates: &[Gate]) -> Option<Gate> {
        (gates.contains(&Gate::Regression) && self.fails_regression()).then_some(Gate::Regression)
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
    /// The race, where both runs measured it: wrong pixels in the candidate and none in the base
    /// (a new race), or the other way round.
    pub new_race: bool,
    pub race_gone: bool,
    /// The output, where both runs judged it: wrong pixels (or a fault) with every call
    /// synchronised in the candidate and right in the base, or the other way round.
    pub new_wrong: bool,
    pub wrong_gone: bool,
}

/// A scenario of the candidate that failed, with the first failure's kind and reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FailedScenario {
    pub id: String,
    pub kind: FailureKind,
    pub reason: String,
}

/// One candidate against the base.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub base: String,
    pub candidate: String,
    /// What differs between the two environments (GPU, driver, NPP); empty when only the run differs.
    pub environment_changes: Vec<String>,
    pub same_machine: bool,
    /// How much of the base the candidate covers, and whether the two runs compare at all.
    pub coverage: Coverage,
    pub throughput: Vec<ThroughputChange>,
    pub memory: Vec<MemoryChange>,
    /// Scenario ids in only one of the two runs, each once, in the run's order.
    pub only_in_base: Vec<String>,
    pub only_in_candidate: Vec<String>,
    /// Failed records of each run (memory scenarios, throughput passes), by kind of fault.
    pub base_failures: BTreeMap<FailureKind, usize>,
    pub cand_failures: BTreeMap<FailureKind, usize>,
    /// The candidate's failed scenarios, each once, whether or not the base has them.
    pub cand_failed: Vec<FailedScenario>,
    /// The candidate's memory scenarios that leak, whether or not the base has them.
    pub cand_leaking: Vec<String>,
    /// The candidate's memory scenarios whose output is wrong (or that faulted), whether or not
    /// the base has them.
    pub cand_wrong: Vec<String>,
}

/// A comparison's verdicts, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Counts {
    pub slower: usize,
    pub faster: usize,
    pub same: usize,
    pub unsettled: usize,
    /// Of the unsettled, those not judged because a run made by an older nppbench lacks the
    /// per-layout figures the layouts' mix needs ([`NotJudged::Older`]), and those whose runs
    /// share no layout ([`NotJudged::LayoutsApart`]).
    pub unsettled_older: usize,
    pub unsettled_layouts_apart: usize,
    /// Too few passes a side to judge.
    pub unjudged: usize,
    pub new_leaks: usize,
    pub fixed_leaks: usize,
    pub more_streams: usize,
    pub new_races: usize,
    pub races_gone: usize,
    pub new_wrong: usize,
    pub wrong_gone: usize,
    /// Memory scenarios of the candidate that leak (new or not), whose output is wrong (new or
    /// not), and its failed scenarios.
    pub cand_leaking: usize,
    pub cand_wrong: usize,
    pub cand_failed: usize,
}

impl MemoryChange {
    /// The gate among `gates` this scenario trips, if any: new wrong pixels, a new leak, a new
    /// race, more streams, then a leak of any age.
    pub fn trips(&self, gates: &[Gate]) -> Option<Gate> {
        if self.new_wrong && gates.contains(&Gate::Wrong) {
            Some(Gate::Wrong)
        } else if self.new_leak && gates.contains(&Gate::Leak) {
            Some(Gate::Leak)
        } else if self.new_race && gates.contains(&Gate::Race) {
            Some(Gate::Race)
        } else if self.more_streams && gates.contains(&Gate::Streams) {
            Some(Gate::Streams)
        } else if self.cand_class == Some(LeakClass::Leak) && gates.contains(&Gate::AnyLeak) {
            Some(Gate::AnyLeak)
        } else {
            None
        }
    }
}

impl Comparison {
    /// The gates among `gates` this comparison trips where it is judged (it compares, or judging
    /// what pairs was asked for); none where it is not.
    pub fn tripped_if_judged(&self, gates: &[Gate], judged: bool) -> Vec<Gate> {
        if judged { self.tripped(gates) } else { Vec::new() }
    }

    /// Every verdict of the comparison, counted.
    pub fn counts(&self) -> Counts {
        let count = |v: Change| self.throughput.iter().filter(|x| x.verdict == v).count();
        Counts {
            slower: count(Change::Slower),
            faster: count(Change::Faster),
            same: count(Change::Same),
            unsettled: count(Change::Unsettled),
            unsettled_older: self
                .throughput
                .iter()
                .filter(|x| matches!(x.not_judged, Some(NotJudged::Older(_))))
                .count(),
            unsettled_layouts_apart: self
                .throughput
                .iter()
                .filter(|x| x.not_judged == Some(NotJudged::LayoutsApart))
                .count(),
            unjudged: count(Change::NotEnoughPasses),
            new_leaks: self.memory.iter().filter(|m| m.new_leak).count(),
            fixed_leaks: self.memory.iter().filter(|m| m.fixed_leak).count(),
            more_streams: self.memory.iter().filter(|m| m.more_streams).count(),
            new_races: self.memory.iter().filter(|m| m.new_race).count(),
            races_gone: self.memory.iter().filter(|m| m.race_gone).count(),
            new_wrong: self.memory.iter().filter(|m| m.new_wrong).count(),
            wrong_gone: self.memory.iter().filter(|m| m.wrong_gone).count(),
            cand_leaking: self.cand_leaking.len(),
            cand_wrong: self.cand_wrong.len(),
            cand_failed: self.cand_failed.len(),
        }
    }

    /// The run made by an older nppbench, where a scenario was not judged for that
    /// ([`NotJudged::Older`]): the base, the candidate, or both (where scenarios disagree,
    /// both).
    pub fn older(&self) -> Option<Older> {
        let mut sides = self.throughput.iter().filter_map(|x| match x.not_judged {
            Some(NotJudged::Older(o)) => Some(o),
            _ => None,
        });
        let first = sides.next()?;
        Some(if sides.all(|o| o == first) { first } else { Older::Both })
    }

    /// Whether the two runs compare (see [`Coverage::compares`]).
    pub fn compares(&self) -> bool {
        self.coverage.compares()
    }

    /// The gates among `gates` this comparison trips, in the order asked.
    pub fn tripped(&self, gates: &[Gate]) -> Vec<Gate> {
        let mut out = Vec::new();
        for &g in gates {
            let hit = match g {
                Gate::Regression => self.throughput.iter().any(ThroughputChange::fails_regression),
                Gate::Leak => self.memory.iter().any(|m| m.new_leak),
                Gate::Streams => self.memory.iter().any(|m| m.more_streams),
                Gate::Race => self.memory.iter().any(|m| m.new_race),
                Gate::AnyLeak => !self.cand_leaking.is_empty(),
                Gate::Wrong => self.memory.iter().any(|m| m.new_wrong),
                Gate::AnyWrong => !self.cand_wrong.is_empty(),
                Gate::Failed => !self.cand_failed.is_empty(),
            };
            if hit && !out.contains(&g) {
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

pub fn compare(base: &RunFile, cand: &RunFile, t: Thresholds) -> Comparison {
    compare_analysed(&RunAnalysis::new(base), &RunAnalysis::new(cand), t)
}

/// [`compare`] of runs already analysed (a page of several runs has them).
pub fn compare_analysed(b: &RunAnalysis<'_>, c: &RunAnalysis<'_>, t: Thresholds) -> Comparison {
    let (base, cand) = (b.run, c.run);
    let (bi, ci) = (coverage::scenario_ids(base), coverage::scenario_ids(cand));
    let only = |run: &RunFile, other: &BTreeSet<&str>| -> Vec<String> {
        let mut seen = BTreeSet::new();
        run.memory
            .iter()
            .map(|m| m.scenario.id.as_str())
            .chain(run.throughput.iter().map(|t| t.scenario.id.as_str()))
            .filter(|id| !other.contains(id) && seen.insert(*id))
            .map(str::to_owned)
            .collect()
    };
    Comparison {
        base: label(base),
        candidate: label(cand),
        environment_changes: environment_changes(base, cand),
        same_machine: base.environment.gpu.uuid == cand.environment.gpu.uuid,
        coverage: coverage::coverage(b, c),
        throughput: pairs::throughput_changes(b, c, t),
        memory: pairs::memory_changes(b, c),
        only_in_base: only(base, &ci),
        only_in_candidate: only(cand, &bi),
        base_failures: b.failures_by_kind(),
        cand_failures: c.failures_by_kind(),
        cand_failed: failed_scenarios(c),
        cand_leaking: c
            .memory
            .iter()
            .filter(|m| m.class == Some(LeakClass::Leak))
            .map(|m: &MemoryAnalysis<'_>| m.record.scenario.id.clone())
            .collect(),
        cand_wrong: c
            .memory
            .iter()
            .filter(|m| m.output.wrong() == Some(true))
            .map(|m: &MemoryAnalysis<'_>| m.record.scenario.id.clone())
            .collect(),
    }
}

/// A run's failed scenarios, each once (a throughput scenario failed in several passes is one).
/// A memory scenario whose output was judged (wrong, a fault, a miss of nppbench's own
/// reference: an older run filed those as failures) is a class, gated by `wrong` and
/// `any-wrong`, never a failure.
fn failed_scenarios(a: &RunAnalysis<'_>) -> Vec<FailedScenario> {
    let mut seen = BTreeSet::new();
    let outcomes = a
        .memory
        .iter()
        .filter(|m| !m.output.judged())
        .map(|m| (&m.record.scenario.id, &m.record.outcome))
        .chain(a.run.throughput.iter().map(|t| (&t.scenario.id, &t.outcome)));
    let mut out = Vec::new();
    for (id, outcome) in outcomes {
        let Outcome::Failed { reason, kind } = outcome else {
            continue;
        };
        if seen.insert(id.as_str()) {
            out.push(FailedScenario {
                id: id.clone(),
                kind: *kind,
                reason: reason.clone(),
            });
        }
    }
    out
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
