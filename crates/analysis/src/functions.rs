//! Each function of a run at a glance, as the atlas shows it: how many of its scenarios were
//! measured, failed and leak, its MiB and NPP streams per new thread over the leaking ones, its
//! kernels per call, and its fastest scenario against the copy ceiling.

use nppbench_model::{Outcome, Primitive};
use nppbench_stats::{LeakClass, median};

use crate::{MemoryAnalysis, RunAnalysis, ThroughputAnalysis};

/// A function's verdict over its scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionVerdict {
    /// Its NPP lacks it (or its library): nothing measured.
    NotMeasured,
    /// Every memory scenario failed.
    Failed,
    Leaks,
    NoLeak,
}

impl FunctionVerdict {
    pub fn words(self) -> &'static str {
        match self {
            FunctionVerdict::NotMeasured => "not measured",
            FunctionVerdict::Failed => "failed",
            FunctionVerdict::Leaks => "leaks",
            FunctionVerdict::NoLeak => "no leak",
        }
    }
}

/// One function of a run, summarised.
#[derive(Debug, Clone)]
pub struct FunctionSummary<'b, 'a> {
    pub primitive: Primitive,
    pub memory: Vec<&'b MemoryAnalysis<'a>>,
    pub throughput: Vec<&'b ThroughputAnalysis<'a>>,
    /// Why its NPP could not measure it, where it could not.
    pub not_measured: Option<String>,
    /// Memory scenarios with a class, and those that failed.
    pub measured: usize,
    pub failed: usize,
    pub leaking: usize,
    /// The median MiB per new thread over its leaking scenarios.
    pub median_mib_per_thread: Option<f64>,
    /// NPP streams per new thread over its leaking scenarios, lowest and highest.
    pub streams_per_thread: Option<(f64, f64)>,
    /// Kernels per call over its throughput scenarios, lowest and highest.
    pub kernels_per_call: Option<(f64, f64)>,
    /// Its fastest throughput scenario against the copy ceiling (cold where measured).
    pub best: Option<&'b ThroughputAnalysis<'a>>,
    pub verdict: FunctionVerdict,
}

impl FunctionSummary<'_, '_> {
    /// The class its bar is drawn in: leak, flat (measured, no leak), none (not measured).
    pub fn class(&self) -> Option<LeakClass> {
        match (self.leaking, self.measured) {
            (1.., _) => Some(LeakClass::Leak),
            (0, 0) => None,
            (0, _) => Some(LeakClass::Flat),
        }
    }
}

fn range(values: &[f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(*v), hi.max(*v))
    }))
}

/// Every function of the run (asked for or measured), in catalogue order.
pub fn function_summaries<'b, 'a>(a: &'b RunAnalysis<'a>) -> Vec<FunctionSummary<'b, 'a>> {
    a.all_primitives().into_iter().map(|p| summary(a, p)).collect()
}

fn summary<'b, 'a>(a: &'b RunAnalysis<'a>, p: Primitive) -> FunctionSummary<'b, 'a> {
    let memory: Vec<_> = a.memory.iter().filter(|m| m.record.scenario.primitive == p).collect();
    let throughput: Vec<_> = a
        .throughput
        .iter()
        .filter(|t| t.record.scenario.primitive == p)
        .collect();
    let not_measured = memory
        .iter()
        .map(|m| &m.record.outcome)
        .chain(throughput.iter().map(|t| t.outcome))
        .find_map(|o| match o {
            Outcome::NotMeasured { reason } => Some(reason.clone()),
            _ => None,
        });
    let measured = memory.iter().filter(|m| m.class.is_some()).count();
    let failed = memory.iter().filter(|m| m.record.outcome.is_failed()).count();
    let leaking: Vec<_> = memory.iter().filter(|m| m.class == Some(LeakClass::Leak)).collect();
    let per_thread: Vec<f64> = leaking.iter().filter_map(|m| m.per_thread.map(|f| f.slope)).collect();
    let streams: Vec<f64> = leaking
        .iter()
        .filter_map(|m| m.hidden_per_thread.map(|f| f.slope))
        .collect();
    let kernels: Vec<f64> = throughput.iter().filter_map(|t| t.kernels_per_call).collect();
    let pct = |t: &&ThroughputAnalysis<'_>| t.ceiling_pct(a.ceiling_gbps).map_or(0.0, |p| p.0);
    let best = throughput
        .iter()
        .copied()
        .filter(|t| t.ceiling_pct(a.ceiling_gbps).is_some())
        .max_by(|x, y| pct(x).total_cmp(&pct(y)));
    let verdict = match (&not_measured, measured, leaking.is_empty()) {
        (Some(_), 0, _) => FunctionVerdict::NotMeasured,
        (None, 0, _) => FunctionVerdict::Failed,
        (_, _, false) => FunctionVerdict::Leaks,
        (_, _, true) => FunctionVerdict::NoLeak,
    };
    FunctionSummary {
        primitive: p,
        not_measured,
        measured,
        failed,
        leaking: leaking.len(),
        median_mib_per_thread: median(&per_thread),
        streams_per_thread: range(&streams),
        kernels_per_call: range(&kernels),
        best,
        verdict,
        memory,
        throughput,
    }
}
