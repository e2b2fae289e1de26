//! The compare page's view model: every comparison's figures, formatted.

use nppbench_model::RunFile;
use serde::Serialize;

use crate::compare::{Change, Comparison, Gate, Thresholds};
use crate::view::{class_name, fmt};

#[derive(Debug, Serialize)]
pub struct ComparePage {
    pub title: String,
    pub generated_by: String,
    pub verdict: Vec<String>,
    pub failed: bool,
    pub rule: String,
    pub environments: Vec<EnvironmentRow>,
    pub comparisons: Vec<ComparisonView>,
}

#[derive(Debug, Serialize)]
pub struct EnvironmentRow {
    pub run: String,
    pub group: String,
    pub gpu: String,
    pub driver: String,
    pub npp: String,
    pub started_at: String,
}

#[derive(Debug, Serialize)]
pub struct ComparisonView {
    pub heading: String,
    pub group: String,
    pub environment_changes: Vec<String>,
    pub different_machine: bool,
    pub summary: Vec<String>,
    pub tripped: Vec<String>,
    pub throughput: Vec<ThroughputChangeRow>,
    pub memory: Vec<MemoryChangeRow>,
    pub only_in_base: Vec<String>,
    pub only_in_candidate: Vec<String>,
}

/// One throughput scenario of a comparison.
#[derive(Debug, Serialize)]
pub struct ThroughputChangeRow {
    pub scenario: String,
    pub base_gbps: String,
    pub cand_gbps: String,
    pub change: String,
    pub p_value: String,
    /// `faster`, `slower`, `slower (launch-bound, not gated)` or `same`.
    pub verdict: String,
    pub changed: bool,
}

/// One memory scenario of a comparison.
#[derive(Debug, Serialize)]
pub struct MemoryChangeRow {
    pub scenario: String,
    pub base_class: String,
    pub cand_class: String,
    pub base_streams: String,
    pub cand_streams: String,
    /// `new leak`, `leak gone`, `more streams`, or empty.
    pub change: String,
}

fn megapixels(pixels: u64) -> String {
    let mp = pixels as f64 / 1e6;
    if mp.fract() == 0.0 { fmt(mp, 0) } else { fmt(mp, 2) }
}

fn gate_name(g: Gate) -> &'static str {
    match g {
        Gate::Regression => "regression",
        Gate::Leak => "leak",
        Gate::Streams => "streams",
    }
}

/// The environment group of a run: one letter per distinct GPU and driver.
fn groups(runs: &[RunFile]) -> Vec<String> {
    let mut keys: Vec<(String, Option<String>)> = Vec::new();
    runs.iter()
        .map(|r| {
            let key = (r.environment.gpu.name.clone(), r.environment.driver_version.clone());
            let i = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
                keys.push(key);
                keys.len() - 1
            });
            char::from(b'A' + (i % 26) as u8).to_string()
        })
        .collect()
}

pub(crate) fn page(runs: &[RunFile], comparisons: &[Comparison], t: Thresholds, gates: &[Gate]) -> ComparePage {
    let group = groups(runs);
    let mut verdict = Vec::new();
    let mut failed = false;
    let views = comparisons
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let slower = c.throughput.iter().filter(|x| x.verdict == Change::Slower).count();
            let gated_slower = c.throughput.iter().filter(|x| x.gated && x.verdict == Change::Slower).count();
            let faster = c.throughput.iter().filter(|x| x.verdict == Change::Faster).count();
            let new_leaks = c.memory.iter().filter(|m| m.new_leak).count();
            let fixed = c.memory.iter().filter(|m| m.fixed_leak).count();
            let streams = c.memory.iter().filter(|m| m.more_streams).count();
            let mut summary = vec![
                format!(
                    "Throughput: {slower} slower ({gated_slower} of them at {} megapixels or more), {faster} faster, {} unchanged of {} scenarios (beyond ±{}% and p < {}).",
                    megapixels(t.gate_min_pixels),
                    c.throughput.len() - slower - faster,
                    c.throughput.len(),
                    fmt(t.noise_pct, 0),
                    t.alpha
                ),
                format!("Memory: {new_leaks} new leak(s), {fixed} leak(s) gone, {streams} scenario(s) with more NPP streams, of {} scenarios.", c.memory.len()),
            ];
            if !c.base_failures.is_empty() || !c.cand_failures.is_empty() {
                let side = |m: &std::collections::BTreeMap<_, usize>| {
                    if m.is_empty() { "none".to_owned() } else { format!("{} ({})", m.values().sum::<usize>(), crate::view::by_kind(m)) }
                };
                summary.push(format!(
                    "Failed scenarios: base {}; candidate {}.",
                    side(&c.base_failures),
                    side(&c.cand_failures)
                ));
            }
            let tripped: Vec<String> = c.tripped(gates).into_iter().map(|g| gate_name(g).to_owned()).collect();
            failed |= !tripped.is_empty();
            verdict.push(format!(
                "{} against {}: {} slower at {} megapixels or more, {} new leak(s), {} with more streams{}",
                c.candidate,
                c.base,
                gated_slower,
                megapixels(t.gate_min_pixels),
                new_leaks,
                streams,
                if tripped.is_empty() { String::new() } else { format!(" — fails on {}", tripped.join(", ")) }
            ));
            ComparisonView {
                heading: format!("{} against {}", c.candidate, c.base),
                group: group[i + 1].clone(),
                environment_changes: c.environment_changes.clone(),
                different_machine: !c.same_machine,
                summary,
                tripped,
                throughput: c
                    .throughput
                    .iter()
                    .map(|x| ThroughputChangeRow {
                        scenario: x.id.clone(),
                        base_gbps: fmt(x.base_gbps, 1),
                        cand_gbps: fmt(x.cand_gbps, 1),
                        change: format!("{:+.1}%", x.change_pct),
                        p_value: format!("{:.2e}", x.p_value),
                        verdict: match (x.verdict, x.gated) {
                            (Change::Faster, _) => "faster",
                            (Change::Slower, true) => "slower",
                            (Change::Slower, false) => "slower (launch-bound, not gated)",
                            (Change::Same, _) => "same",
                        }
                        .to_owned(),
                        changed: x.verdict != Change::Same,
                    })
                    .collect(),
                memory: c
                    .memory
                    .iter()
                    .map(|m| {
                        let flag = if m.new_leak {
                            "new leak"
                        } else if m.fixed_leak {
                            "leak gone"
                        } else if m.more_streams {
                            "more streams"
                        } else {
                            ""
                        };
                        let h = |v: Option<f64>| v.map_or_else(|| "—".into(), |v| fmt(v, 2));
                        MemoryChangeRow {
                            scenario: m.id.clone(),
                            base_class: class_name(m.base_class).to_owned(),
                            cand_class: class_name(m.cand_class).to_owned(),
                            base_streams: h(m.base_hidden),
                            cand_streams: h(m.cand_hidden),
                            change: flag.to_owned(),
                        }
                    })
                    .collect(),
                only_in_base: c.only_in_base.clone(),
                only_in_candidate: c.only_in_candidate.clone(),
            }
        })
        .collect();
    ComparePage {
        title: format!(
            "nppbench compare: {} run(s) against {}",
            comparisons.len(),
            comparisons.first().map_or("—", |c| c.base.as_str())
        ),
        generated_by: format!("nppbench {}", env!("CARGO_PKG_VERSION")),
        verdict,
        failed,
        rule: format!(
            "A throughput change counts when it exceeds ±{}% and Welch's t-test on the per-call times of criterion's samples gives p < {}; only images of {} megapixels or more (not launch-bound) can fail the regression gate. Gates: {}.",
            fmt(t.noise_pct, 0),
            t.alpha,
            megapixels(t.gate_min_pixels),
            if gates.is_empty() {
                "none (the exit status is 0 whatever changed)".to_owned()
            } else {
                gates.iter().map(|g| gate_name(*g)).collect::<Vec<_>>().join(", ")
            }
        ),
        environments: runs
            .iter()
            .zip(&group)
            .enumerate()
            .map(|(i, (r, g))| EnvironmentRow {
                run: if i == 0 {
                    "base".into()
                } else {
                    format!("candidate {i}")
                },
                group: g.clone(),
                gpu: format!("{} ({})", r.environment.gpu.name, r.environment.gpu.uuid),
                driver: r.environment.driver_version.clone().unwrap_or_else(|| "unknown".into()),
                npp: r.environment.npp.version.clone(),
                started_at: r.started_at.clone(),
            })
            .collect(),
        comparisons: views,
    }
}
