//! Run against run: per scenario, the change in throughput with a statistical test on the raw
//! samples and a noise band, changes of leak class, and new hidden streams. Runs from different
//! environments (GPU, driver) are compared but never silently: each comparison says what differs.

use std::collections::BTreeMap;

use nppbench_model::{FailureKind, RunFile, ThroughputResult};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::analysis::{MemoryAnalysis, RunAnalysis};
use crate::stats::{LeakClass, median};
use crate::thresholds::{ALPHA, LAUNCH_BOUND_PIXELS, NOISE_PCT, STREAMS_NEVER_DESTROYED_MARGIN, STREAMS_PER_THREAD};

/// What makes a comparison fail a CI gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Gate {
    /// A throughput scenario slower beyond the threshold, significantly.
    Regression,
    /// A scenario that leaks in the candidate and did not in the base.
    Leak,
    /// A scenario whose NPP creates more streams per thread (or leaves more undestroyed).
    Streams,
}

impl std::str::FromStr for Gate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "regression" => Ok(Gate::Regression),
            "leak" => Ok(Gate::Leak),
            "streams" => Ok(Gate::Streams),
            _ => Err(format!(
                "unknown --fail-on {s:?}: use regression, leak, streams (comma-separated)"
            )),
        }
    }
}

/// How a comparison judges throughput.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// Changes smaller than this (percent of the base) are noise, whatever the test says.
    pub noise_pct: f64,
    /// The significance level of Welch's t-test on the per-call times.
    pub alpha: f64,
    /// Only images of at least this many pixels can fail the regression gate: smaller ones are
    /// launch-bound, and their time moves with the host between runs.
    pub gate_min_pixels: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            noise_pct: NOISE_PCT,
            alpha: ALPHA,
            gate_min_pixels: LAUNCH_BOUND_PIXELS,
        }
    }
}

/// The throughput verdict of one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Faster,
    Slower,
    Same,
}

#[derive(Debug, Clone)]
pub struct ThroughputChange {
    pub id: String,
    /// Candidate throughput over base throughput, minus one, percent (+ is faster).
    pub change_pct: f64,
    /// Welch's t-test on the per-call times of criterion's samples.
    pub p_value: f64,
    pub verdict: Change,
    /// Whether this scenario can fail the regression gate (see [`Thresholds::gate_min_pixels`]).
    pub gated: bool,
    pub base_gbps: f64,
    pub cand_gbps: f64,
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

impl Comparison {
    /// The gates this comparison trips.
    pub fn tripped(&self, gates: &[Gate]) -> Vec<Gate> {
        let mut out = Vec::new();
        for &g in gates {
            let hit = match g {
                Gate::Regression => self.throughput.iter().any(|t| t.gated && t.verdict == Change::Slower),
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

/// Per-call times of criterion's samples: each sample's batch time over its batch size.
fn per_call(r: &ThroughputResult) -> Vec<f64> {
    r.kernel
        .sample_times_ns
        .iter()
        .zip(&r.kernel.sample_iters)
        .filter(|(_, i)| **i > 0.0)
        .map(|(t, i)| t / i)
        .collect()
}

/// Welch's two-sided t-test: the p-value of "the means are equal".
pub fn welch_p(a: &[f64], b: &[f64]) -> f64 {
    let stats = |x: &[f64]| {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        let v = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0);
        (n, m, v)
    };
    if a.len() < 2 || b.len() < 2 {
        return 1.0;
    }
    let ((na, ma, va), (nb, mb, vb)) = (stats(a), stats(b));
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 {
        return if ma == mb { 1.0 } else { 0.0 };
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2.powi(2) / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    StudentsT::new(0.0, 1.0, df).map_or(1.0, |d| 2.0 * (1.0 - d.cdf(t.abs())))
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
    let (b, c) = (RunAnalysis::new(base), RunAnalysis::new(cand));
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
    let same_machine = be.gpu.uuid == ce.gpu.uuid;

    let mut throughput = Vec::new();
    for bt in &b.throughput {
        let id = &bt.record.scenario.id;
        let Some(ct) = c.throughput.iter().find(|x| &x.record.scenario.id == id) else {
            continue;
        };
        let (Some(br), Some(cr)) = (&bt.record.result, &ct.record.result) else {
            continue;
        };
        let (bs, cs) = (per_call(br), per_call(cr));
        let (Some(bm), Some(cm)) = (median(&bs), median(&cs)) else {
            continue;
        };
        let change_pct = (bm / cm - 1.0) * 100.0;
        let p_value = welch_p(&bs, &cs);
        let significant = p_value < t.alpha && change_pct.abs() > t.noise_pct;
        throughput.push(ThroughputChange {
            id: id.clone(),
            change_pct,
            p_value,
            verdict: match (significant, change_pct > 0.0) {
                (false, _) => Change::Same,
                (true, true) => Change::Faster,
                (true, false) => Change::Slower,
            },
            gated: bt.record.scenario.geometry.pixels() >= t.gate_min_pixels,
            base_gbps: br.bytes_per_call as f64 / bm,
            cand_gbps: cr.bytes_per_call as f64 / cm,
        });
    }
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

#[cfg(test)]
mod tests {
    //! Generated data, labelled as such: checks of the arithmetic only.
    use super::*;

    #[test]
    fn welch_tells_shifted_samples_apart() {
        let a: Vec<f64> = (0..20).map(|i| 100.0 + (i % 5) as f64).collect();
        let same: Vec<f64> = (0..20).map(|i| 100.0 + ((i + 2) % 5) as f64).collect();
        let slower: Vec<f64> = a.iter().map(|v| v * 1.2).collect();
        assert!(welch_p(&a, &same) > 0.5);
        assert!(welch_p(&a, &slower) < 1e-6);
        assert_eq!(welch_p(&[1.0], &[2.0]), 1.0);
    }

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
