//! The compare page's view model: the verdict first (PASS or FAIL, the failing candidates and
//! the items that tripped a gate first), then each candidate's changes, every figure formatted.

use nppbench_model::RunFile;
use serde::Serialize;

use crate::compare::{Change, Comparison, Gate, PassTest, Thresholds};
use crate::view::{class_name, fmt, fmt_p, fmt_sig, labels};

#[derive(Debug, Serialize)]
pub struct ComparePage {
    pub title: String,
    pub generated_by: String,
    /// `PASS`, `FAIL`, or (without gates) `CHANGED` / `NO CHANGE`.
    pub status: String,
    pub failed: bool,
    /// One sentence, the failing candidates first.
    pub verdict: Vec<String>,
    pub rule: String,
    pub environments: Vec<EnvironmentRow>,
    /// The failing candidates first.
    pub comparisons: Vec<ComparisonView>,
}

#[derive(Debug, Serialize)]
pub struct EnvironmentRow {
    pub run: String,
    pub label: String,
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
    pub failed: bool,
    pub environment_changes: Vec<String>,
    /// Empty on the same GPU; else what a reader must know of the hardware.
    pub machine_note: String,
    pub summary: Vec<String>,
    pub tripped: Vec<String>,
    /// What tripped a gate, each with its size and interval.
    pub failing: Vec<FailingItem>,
    /// Throughput rows judged faster or slower; then the rest (the same, or not judged for want
    /// of passes: their verdict says which).
    pub throughput_changed: Vec<ThroughputChangeRow>,
    pub throughput_unchanged: Vec<ThroughputChangeRow>,
    /// Of the rest, how many are the same and how many could not be judged (too few passes).
    pub throughput_same: usize,
    pub throughput_unjudged: usize,
    /// One line: what changed, in counts.
    pub counts: String,
    pub memory_changed: Vec<MemoryChangeRow>,
    pub memory_unchanged: usize,
    pub only_in_base: Vec<String>,
    pub only_in_candidate: Vec<String>,
}

/// One item that tripped a gate.
#[derive(Debug, Serialize)]
pub struct FailingItem {
    pub gate: String,
    pub scenario: String,
    pub what: String,
}

/// One throughput scenario of a comparison.
#[derive(Debug, Serialize)]
pub struct ThroughputChangeRow {
    pub scenario: String,
    /// Kernel time per call, µs, base and candidate (median over passes).
    pub base_us: String,
    pub cand_us: String,
    /// Positive is faster.
    pub change: String,
    /// The change's 95% interval.
    pub change_ci: String,
    pub p_value: String,
    pub latency: String,
    pub passes: String,
    /// `faster`, `slower`, `same`, `unsettled: …`, `not enough passes to judge`.
    pub verdict: String,
    /// This row trips the regression gate.
    pub gated_failure: bool,
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
    pub gated_failure: bool,
}

fn gate_name(g: Gate) -> &'static str {
    match g {
        Gate::Regression => "regression",
        Gate::Leak => "leak",
        Gate::Streams => "streams",
    }
}

/// What an unsettled verdict means, in the words every page uses.
const UNSETTLED_MEANS: &str = "no significant change, but the passes spread too much to call it the same";

fn verdict_name(c: Change) -> String {
    match c {
        Change::Faster => "faster".into(),
        Change::Slower => "slower".into(),
        Change::Same => "same".into(),
        Change::Unsettled => format!("unsettled: {UNSETTLED_MEANS}"),
        Change::NotEnoughPasses => "not enough passes to judge".into(),
    }
}

/// `+12.3% (95% CI +10.1 … +14.5%, p 4.2e-4)`, or the change alone where no test was made.
/// Positive is faster.
pub(crate) fn test_text(t: &PassTest) -> String {
    match (t.p_value, t.change_ci_pct) {
        (Some(p), Some((lo, hi))) => format!("{:+.1}% (95% CI {lo:+.1} … {hi:+.1}%, p {})", t.change_pct, fmt_p(p)),
        (Some(p), None) => format!("{:+.1}% (p {})", t.change_pct, fmt_p(p)),
        _ => format!("{:+.1}%", t.change_pct),
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
    let label = labels(runs);
    let mut views: Vec<ComparisonView> = comparisons
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (base, cand) = (&label[0], &label[i + 1]);
            let count = |v: Change| c.throughput.iter().filter(|x| x.verdict == v).count();
            let (slower, faster, unjudged) = (count(Change::Slower), count(Change::Faster), count(Change::NotEnoughPasses));
            let new_leaks = c.memory.iter().filter(|m| m.new_leak).count();
            let fixed = c.memory.iter().filter(|m| m.fixed_leak).count();
            let streams = c.memory.iter().filter(|m| m.more_streams).count();
            let unsettled = count(Change::Unsettled);
            let mut summary = vec![format!(
                "Throughput: {slower} slower, {faster} faster, {} the same{}{} of {} scenarios.",
                count(Change::Same),
                if unsettled > 0 {
                    format!(", {unsettled} unsettled ({UNSETTLED_MEANS})")
                } else {
                    String::new()
                },
                if unjudged > 0 {
                    format!(", {unjudged} with too few passes to judge (fewer than {} a side)", crate::stats::tests_of_passes::MIN_PASSES)
                } else {
                    String::new()
                },
                c.throughput.len()
            )];
            summary.push(format!(
                "Memory: {new_leaks} new leak(s), {fixed} leak(s) gone, {streams} scenario(s) with more NPP streams, of {} scenarios.",
                c.memory.len()
            ));
            if !c.base_failures.is_empty() || !c.cand_failures.is_empty() {
                let side = |m: &std::collections::BTreeMap<_, usize>| {
                    if m.is_empty() {
                        "none".to_owned()
                    } else {
                        format!("{} ({})", m.values().sum::<usize>(), crate::view::by_kind(m))
                    }
                };
                summary.push(format!(
                    "Failed scenarios: base {}; candidate {}.",
                    side(&c.base_failures),
                    side(&c.cand_failures)
                ));
            }
            let tripped_gates = c.tripped(gates);
            let gate_on = |g: Gate| tripped_gates.contains(&g);
            let mut failing = Vec::new();
            let mut changed = Vec::new();
            let mut unchanged = Vec::new();
            for x in &c.throughput {
                let gated_failure = gate_on(Gate::Regression) && x.fails_regression();
                if gated_failure {
                    failing.push(FailingItem {
                        gate: "regression".into(),
                        scenario: x.id.clone(),
                        what: match &x.latency {
                            // A launch-bound image that failed on its host latency.
                            Some(l) if x.kernel.verdict != Change::Slower => format!(
                                "host latency per call {} → {} µs: {} ({} {} → {} µs)",
                                fmt_sig(l.base),
                                fmt_sig(l.candidate),
                                test_text(l),
                                x.metric.words(),
                                fmt_sig(x.kernel.base / 1e3),
                                fmt_sig(x.kernel.candidate / 1e3),
                            ),
                            _ => format!(
                                "{} {} → {} µs; throughput {}",
                                x.metric.words(),
                                fmt_sig(x.kernel.base / 1e3),
                                fmt_sig(x.kernel.candidate / 1e3),
                                test_text(&x.kernel)
                            ),
                        },
                    });
                }
                let row = ThroughputChangeRow {
                    scenario: x.id.clone(),
                    base_us: fmt_sig(x.kernel.base / 1e3),
                    cand_us: fmt_sig(x.kernel.candidate / 1e3),
                    change: format!("{:+.1}%", x.kernel.change_pct),
                    change_ci: x
                        .kernel
                        .change_ci_pct
                        .map_or_else(|| "—".into(), |(lo, hi)| format!("{lo:+.1} … {hi:+.1}%")),
                    p_value: x.kernel.p_value.map_or_else(|| "—".into(), fmt_p),
                    latency: x.latency.as_ref().map_or_else(
                        || "—".into(),
                        |l| format!("{} → {} µs; {}", fmt_sig(l.base), fmt_sig(l.candidate), test_text(l)),
                    ),
                    passes: format!("{} vs {}", x.base_passes, x.cand_passes),
                    verdict: verdict_name(x.verdict),
                    gated_failure,
                    changed: matches!(x.verdict, Change::Faster | Change::Slower),
                };
                // Unsettled rows are listed with the changes: a change could not be ruled out.
                if row.changed || x.verdict == Change::Unsettled {
                    changed.push(row);
                } else {
                    unchanged.push(row);
                }
            }
            let mut memory_changed = Vec::new();
            for m in &c.memory {
                let flag = if m.new_leak {
                    "new leak"
                } else if m.fixed_leak {
                    "leak gone"
                } else if m.more_streams {
                    "more streams"
                } else {
                    continue;
                };
                let gated_failure = (m.new_leak && gate_on(Gate::Leak)) || (m.more_streams && gate_on(Gate::Streams));
                let h = |v: Option<f64>| v.map_or_else(|| "—".into(), |v| fmt(v, 2));
                if gated_failure {
                    failing.push(FailingItem {
                        gate: if m.new_leak && gate_on(Gate::Leak) { "leak" } else { "streams" }.into(),
                        scenario: m.id.clone(),
                        what: format!(
                            "{} → {}, NPP streams per thread {} → {}",
                            class_name(m.base_class),
                            class_name(m.cand_class),
                            h(m.base_hidden),
                            h(m.cand_hidden)
                        ),
                    });
                }
                memory_changed.push(MemoryChangeRow {
                    scenario: m.id.clone(),
                    base_class: class_name(m.base_class).to_owned(),
                    cand_class: class_name(m.cand_class).to_owned(),
                    base_streams: h(m.base_hidden),
                    cand_streams: h(m.cand_hidden),
                    change: flag.to_owned(),
                    gated_failure,
                });
            }
            let counts = format!(
                "{new_leaks} new leak(s), {fixed} leak(s) gone, {streams} scenario(s) with more NPP streams; throughput {slower} slower, {faster} faster{}{}",
                if unsettled > 0 {
                    format!(", {unsettled} unsettled")
                } else {
                    String::new()
                },
                if unjudged > 0 {
                    format!(", {unjudged} not judged (fewer than {} passes a side)", crate::stats::tests_of_passes::MIN_PASSES)
                } else {
                    String::new()
                }
            );
            // Rows that tripped a gate first.
            changed.sort_by_key(|r| !r.gated_failure);
            memory_changed.sort_by_key(|r| !r.gated_failure);
            ComparisonView {
                heading: format!("{cand} against {base}"),
                group: group[i + 1].clone(),
                failed: !tripped_gates.is_empty(),
                environment_changes: c.environment_changes.clone(),
                machine_note: if c.same_machine {
                    String::new()
                } else if c.environment_changes.iter().any(|e| e.starts_with("GPU:")) {
                    "Different GPU models: throughput differences are partly the hardware's.".into()
                } else {
                    "Another card of the same model (the GPU UUIDs differ): throughput differences may be partly the card's.".into()
                },
                summary,
                tripped: tripped_gates.iter().map(|g| gate_name(*g).to_owned()).collect(),
                failing,
                throughput_changed: changed,
                throughput_unchanged: unchanged,
                throughput_same: count(Change::Same),
                throughput_unjudged: unjudged,
                counts,
                memory_unchanged: c.memory.len() - memory_changed.len(),
                memory_changed,
                only_in_base: c.only_in_base.clone(),
                only_in_candidate: c.only_in_candidate.clone(),
            }
        })
        .collect();
    let failed = views.iter().any(|v| v.failed);
    let any_change = views
        .iter()
        .any(|v| v.throughput_changed.iter().any(|r| r.changed) || !v.memory_changed.is_empty());
    let status = match (gates.is_empty(), failed, any_change) {
        (false, true, _) => "FAIL",
        (false, false, _) => "PASS",
        (true, _, true) => "CHANGED",
        (true, _, false) => "NO CHANGE",
    };
    let verdict: Vec<String> = {
        let mut ordered: Vec<&ComparisonView> = views.iter().collect();
        ordered.sort_by_key(|v| !v.failed);
        ordered
            .iter()
            .map(|v| {
                if v.failed {
                    format!(
                        "FAIL: {} — {} item(s) trip --fail-on {}.",
                        v.heading,
                        v.failing.len(),
                        v.tripped.join(",")
                    )
                } else if gates.is_empty() {
                    format!("{}: {}.", v.heading, v.counts)
                } else {
                    format!("PASS: {} — {}; no gate asked for trips.", v.heading, v.counts)
                }
            })
            .collect()
    };
    views.sort_by_key(|v| !v.failed);
    ComparePage {
        title: format!("nppbench compare: {} run(s) against {}", comparisons.len(), label[0]),
        generated_by: format!("nppbench {}", env!("CARGO_PKG_VERSION")),
        status: status.to_owned(),
        failed,
        verdict,
        rule: format!(
            "A scenario is slower or faster when its kernel time per call (CUPTI, the kernels of a call summed; the median of each pass, every pass a fresh process) differs by more than {}% and Welch's t-test on the passes gives p < {}; for images under a megapixel (launch-bound) its host latency per call counts too, beyond {}%. Fewer than {} passes a side: not judged. The thresholds come from same-against-same runs (docs/calibration.md). {}Gates: {}.",
            fmt(t.noise_pct, 0),
            t.alpha,
            fmt(t.latency_noise_pct, 0),
            crate::stats::tests_of_passes::MIN_PASSES,
            if t.gate_min_pixels > 0 {
                format!(
                    "Only images of {} pixels and more can fail the regression gate. ",
                    t.gate_min_pixels
                )
            } else {
                String::new()
            },
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
                label: label[i].clone(),
                group: g.clone(),
                gpu: format!("{} ({})", r.environment.gpu.name, r.environment.gpu.uuid),
                driver: r.environment.driver_version.clone().unwrap_or_else(|| "unknown".into()),
                npp: r.environment.npp.full_version(),
                started_at: r.started_at.clone(),
            })
            .collect(),
        comparisons: views,
    }
}
