//! One candidate against the base, worded: its summary, the items that trip a gate, the
//! throughput and memory rows that changed. Every verdict and gate is the analysis's.

use nppbench_analysis::compare::{Change, Comparison, Counts, Gate, MIN_PASSES, MemoryChange, ThroughputChange};

use super::coverage_words::{coverage_lines, first_ids, mismatch_words};
use super::older_words::{not_judged_count, not_judged_lines, not_judged_verdict};
use super::{
    ComparisonView, FailingItem, MAX_LISTED, MemoryChangeRow, ThroughputChangeRow, UNSETTLED_MEANS, test_text,
    verdict_name,
};
use crate::view::{by_kind, class_name, counted, fmt, fmt_p, fmt_sig};

/// One candidate's view; `allow_partial` judges a candidate that does not compare on what pairs.
pub(super) fn comparison_view(
    c: &Comparison,
    base: &str,
    cand: &str,
    group: &str,
    gates: &[Gate],
    allow_partial: bool,
) -> ComparisonView {
    let n = c.counts();
    let judged = c.judged(allow_partial);
    let tripped_gates = c.tripped_if_judged(gates, judged);
    let mut failing = Vec::new();
    let (mut changed, unchanged) = throughput_rows(c, &tripped_gates, &mut failing);
    let mut memory_changed = memory_rows(c, &tripped_gates, &mut failing);
    let failing_count = failing.len() + candidate_items(c, &tripped_gates, &mut failing);
    // Rows that tripped a gate first.
    changed.sort_by_key(|r| !r.gated_failure);
    memory_changed.sort_by_key(|r| !r.gated_failure);
    let (only_in_base, only_in_base_more) = first_ids(&c.only_in_base);
    let (only_in_candidate, only_in_candidate_more) = first_ids(&c.only_in_candidate);
    ComparisonView {
        heading: format!("{cand} against {base}"),
        group: group.to_owned(),
        compares: c.compares(),
        judged,
        mismatch: mismatch_words(&c.coverage),
        failed: !tripped_gates.is_empty(),
        environment_changes: c.environment_changes.clone(),
        machine_note: if c.same_machine {
            String::new()
        } else if c.environment_changes.iter().any(|e| e.starts_with("GPU:")) {
            "Different GPU models: throughput differences are partly the hardware's.".into()
        } else {
            "Another card of the same model (the GPU UUIDs differ): throughput differences may be partly the card's."
                .into()
        },
        summary: summary(c, &n, base, cand),
        tripped: tripped_gates.iter().map(Gate::to_string).collect(),
        failing,
        failing_count,
        throughput_changed: changed,
        throughput_unchanged: unchanged,
        throughput_same: n.same,
        throughput_unjudged: n.unjudged,
        counts: counts_text(&n, c),
        memory_unchanged: c.memory.len() - memory_changed.len(),
        memory_changed,
        only_in_base,
        only_in_base_count: c.only_in_base.len(),
        only_in_base_more,
        only_in_candidate,
        only_in_candidate_count: c.only_in_candidate.len(),
        only_in_candidate_more,
    }
}

/// What trips `any-leak` and `failed`: the candidate's leaking scenarios not already listed (a
/// new leak is, under `leak`), and its failed scenarios, each list cut at [`MAX_LISTED`]; returns
/// how many items they are, listed or not.
fn candidate_items(c: &Comparison, tripped: &[Gate], failing: &mut Vec<FailingItem>) -> usize {
    let listed: Vec<String> = failing.iter().map(|f| f.scenario.clone()).collect();
    let mut count = 0;
    let mut items = |gate: Gate, rows: Vec<(String, String)>| {
        let n = rows.len();
        count += n;
        failing.extend(rows.into_iter().take(MAX_LISTED).map(|(scenario, what)| FailingItem {
            gate: gate.to_string(),
            scenario,
            what,
        }));
        if n > MAX_LISTED {
            failing.push(FailingItem {
                gate: gate.to_string(),
                scenario: format!("and {} more", n - MAX_LISTED),
                what: "compare.json lists every one".into(),
            });
        }
    };
    if tripped.contains(&Gate::AnyLeak) {
        let rows = c
            .cand_leaking
            .iter()
            .filter(|id| !listed.contains(id))
            .map(|id| (id.clone(), "leaks in the candidate".to_owned()))
            .collect();
        items(Gate::AnyLeak, rows);
    }
    if tripped.contains(&Gate::AnyWrong) {
        let rows = c
            .cand_wrong
            .iter()
            .filter(|id| !listed.contains(id))
            .map(|id| (id.clone(), "wrong pixels in the candidate".to_owned()))
            .collect();
        items(Gate::AnyWrong, rows);
    }
    if tripped.contains(&Gate::Failed) {
        let rows = c
            .cand_failed
            .iter()
            .map(|f| (f.id.clone(), format!("failed ({}): {}", f.kind.as_str(), f.reason)))
            .collect();
        items(Gate::Failed, rows);
    }
    count
}

fn summary(c: &Comparison, n: &Counts, base: &str, cand: &str) -> Vec<String> {
    let mut summary = coverage_lines(c);
    summary.push(format!(
        "Throughput: {} slower, {} faster, {} the same{}{} of {} scenarios.",
        n.slower,
        n.faster,
        n.same,
        if n.unsettled > 0 {
            format!(", {} unsettled ({UNSETTLED_MEANS})", n.unsettled)
        } else {
            String::new()
        },
        if n.unjudged > 0 {
            format!(
                ", {} with too few passes to judge (fewer than {MIN_PASSES} a side: measure both runs with `--repeat {MIN_PASSES}` or more to judge throughput)",
                n.unjudged
            )
        } else {
            String::new()
        },
        c.throughput.len()
    ));
    summary.extend(not_judged_lines(c, n, base, cand));
    // Correctness leads: wrong pixels are worse than memory or time.
    summary.push(format!(
        "Pixels: {} newly wrong with every call synchronised, {} now right; in the candidate {} wrong or faulting, new or not.",
        counted(n.new_wrong, "scenario", "scenarios"),
        n.wrong_gone,
        n.cand_wrong
    ));
    summary.push(format!(
        "Memory: {}, of {}.",
        memory_counts(n),
        counted(c.memory.len(), "scenario", "scenarios")
    ));
    summary.push(format!(
        "In the candidate: {} {}, new or not; {} failed.",
        counted(n.cand_leaking, "memory scenario", "memory scenarios"),
        if n.cand_leaking == 1 { "leaks" } else { "leak" },
        counted(n.cand_failed, "scenario", "scenarios")
    ));
    if !c.base_failures.is_empty() || !c.cand_failures.is_empty() {
        let side = |m: &std::collections::BTreeMap<_, usize>| {
            if m.is_empty() {
                "none".to_owned()
            } else {
                format!("{} ({})", m.values().sum::<usize>(), by_kind(m))
            }
        };
        summary.push(format!(
            "Failed scenarios: base {}; candidate {}.",
            side(&c.base_failures),
            side(&c.cand_failures)
        ));
    }
    summary
}

/// `0 new leaks, 1 leak gone, 0 scenarios with more NPP streams, 0 new races, 0 races gone`.
fn memory_counts(n: &Counts) -> String {
    [
        counted(n.new_leaks, "new leak", "new leaks"),
        counted(n.fixed_leaks, "leak gone", "leaks gone"),
        counted(
            n.more_streams,
            "scenario with more NPP streams",
            "scenarios with more NPP streams",
        ),
        counted(n.new_races, "new race", "new races"),
        counted(n.races_gone, "race gone", "races gone"),
    ]
    .join(", ")
}

fn counts_text(n: &Counts, c: &Comparison) -> String {
    format!(
        "{}, {}; throughput {} slower, {} faster{}{}",
        counted(n.new_wrong, "newly wrong scenario", "newly wrong scenarios"),
        memory_counts(n),
        n.slower,
        n.faster,
        if n.unsettled > 0 {
            format!(", {} unsettled{}", n.unsettled, not_judged_count(n, c.older()))
        } else {
            String::new()
        },
        if n.unjudged > 0 {
            format!(", {} not judged (fewer than {MIN_PASSES} passes a side)", n.unjudged)
        } else {
            String::new()
        }
    )
}

/// The throughput rows that changed (unsettled ones with them: a change could not be ruled out)
/// and those that did not; each scenario that trips the regression gate joins `failing`.
fn throughput_rows(
    c: &Comparison,
    tripped: &[Gate],
    failing: &mut Vec<FailingItem>,
) -> (Vec<ThroughputChangeRow>, Vec<ThroughputChangeRow>) {
    let mut changed = Vec::new();
    let mut unchanged = Vec::new();
    for x in &c.throughput {
        let gated_failure = x.trips(tripped).is_some();
        if gated_failure {
            failing.push(FailingItem {
                gate: Gate::Regression.to_string(),
                scenario: x.id.clone(),
                what: regression_words(x),
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
            pass_values: pass_values_text(x),
            verdict: not_judged_verdict(x).unwrap_or_else(|| verdict_name(x.verdict)),
            gated_failure,
            changed: matches!(x.verdict, Change::Faster | Change::Slower),
        };
        if row.changed || x.verdict == Change::Unsettled {
            changed.push(row);
        } else {
            unchanged.push(row);
        }
    }
    (changed, unchanged)
}

fn regression_words(x: &ThroughputChange) -> String {
    let main = format!(
        "{} {} → {} µs, {} in time",
        x.metric.words(),
        fmt_sig(x.kernel.base / 1e3),
        fmt_sig(x.kernel.candidate / 1e3),
        test_text(&x.kernel)
    );
    if x.by_layout.is_empty() {
        main
    } else {
        format!("{main}; {}", layout_words(x))
    }
}

/// Each layout's test in words, where the calls' kernels ran at once in some passes and in turn
/// in others: `kernels at once 6.30 → 6.31 µs, +0.2% (p 0.61), 14 vs 3 passes; …`.
fn layout_words(x: &ThroughputChange) -> String {
    x.by_layout
        .iter()
        .map(|l| {
            format!(
                "{} {} → {} µs, {}, {} vs {} passes",
                l.layout.words(),
                fmt_sig(l.test.base / 1e3),
                fmt_sig(l.test.candidate / 1e3),
                test_text(&l.test),
                l.base_passes,
                l.cand_passes
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every pass's figure of each side, sorted, µs, so that a reader sees the modes: of each layout
/// apart where they mix (`kernels at once: base 6.27 6.30 6.30 · candidate 6.28 6.31 6.33;
/// kernels in turn: …`), else of the figure tested.
fn pass_values_text(x: &ThroughputChange) -> String {
    let sorted_us = |v: &[f64]| {
        let mut v: Vec<f64> = v.iter().map(|ns| ns / 1e3).collect();
        v.sort_by(f64::total_cmp);
        v.iter().map(|us| fmt_sig(*us)).collect::<Vec<_>>().join(" ")
    };
    let sides = |b: &[f64], c: &[f64]| format!("base {} · candidate {}", sorted_us(b), sorted_us(c));
    match (&x.base_values.by_layout, &x.cand_values.by_layout) {
        (Some(b), Some(c)) if !x.by_layout.is_empty() => x
            .by_layout
            .iter()
            .map(|l| format!("{}: {}", l.layout.words(), sides(b.get(l.layout), c.get(l.layout))))
            .collect::<Vec<_>>()
            .join("; "),
        _ => {
            let (b, c) = x.pass_values();
            sides(b, c)
        }
    }
}

/// The memory scenarios that changed class or streams; each that trips a gate joins `failing`.
fn memory_rows(c: &Comparison, tripped: &[Gate], failing: &mut Vec<FailingItem>) -> Vec<MemoryChangeRow> {
    let mut rows = Vec::new();
    for m in &c.memory {
        let Some(flag) = memory_flag(m) else {
            continue;
        };
        let gate = m.trips(tripped);
        let h = |v: Option<f64>| v.map_or_else(|| "—".into(), |v| fmt(v, 2));
        if let Some(gate) = gate {
            failing.push(FailingItem {
                gate: gate.to_string(),
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
        rows.push(MemoryChangeRow {
            scenario: m.id.clone(),
            base_class: class_name(m.base_class).to_owned(),
            cand_class: class_name(m.cand_class).to_owned(),
            base_streams: h(m.base_hidden),
            cand_streams: h(m.cand_hidden),
            change: flag.to_owned(),
            gated_failure: gate.is_some(),
        });
    }
    rows
}

fn memory_flag(m: &MemoryChange) -> Option<&'static str> {
    if m.new_wrong {
        Some("newly wrong pixels")
    } else if m.wrong_gone {
        Some("pixels now right")
    } else if m.new_leak {
        Some("new leak")
    } else if m.fixed_leak {
        Some("leak gone")
    } else if m.more_streams {
        Some("more streams")
    } else if m.new_race {
        Some("new race")
    } else if m.race_gone {
        Some("race gone")
    } else {
        None
    }
}
