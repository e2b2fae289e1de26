//! `predict`'s answers as a table for a person: one answer a scenario, or a score.

use super::Row;

/// A score: in all, by width octave, by function (worst first), and the first misses.
pub(super) fn score_table(score: &nppbench_analysis::score::Score, version: &str, from: &str) -> String {
    use nppbench_analysis::score::octave_label;
    let mut out = format!("NPP {version}, from {from}: {}\n", score.total.words());
    if score.race_total.total() > 0 {
        out.push_str(&format!("races or not: {}\n", score.race_total.words()));
    }
    if score.wrong_total.total() > 0 {
        out.push_str(&format!(
            "wrong pixels or not, with every call synchronised: {}\n",
            score.wrong_total.words()
        ));
        for (r, t) in &score.wrong_by_stride_mod4 {
            out.push_str(&format!("  source stride mod 4 = {r}: {}\n", t.words()));
        }
    }
    out.push_str("\nby width (px):\n");
    for (k, t) in &score.by_octave {
        out.push_str(&format!("  {:>11}  {}\n", octave_label(*k), t.words()));
    }
    out.push_str("\nby function, worst first:\n");
    let mut functions = score.by_function.clone();
    functions.sort_by(|(_, a), (_, b)| {
        let share = |t: &nppbench_analysis::score::Tally| t.right as f64 / t.total().max(1) as f64;
        share(a).total_cmp(&share(b))
    });
    for (p, t) in functions.iter().filter(|(_, t)| t.right < t.total()) {
        out.push_str(&format!("  {p:<28} {}\n", t.words()));
    }
    if score.misses.is_empty() {
        out.push_str("  every function right\n");
    } else {
        out.push_str(&format!(
            "\n{} wrong or unknown (measured → predicted):\n",
            score.misses.len()
        ));
        for m in score.misses.iter().take(40) {
            out.push_str(&format!(
                "  {}: {} → {}\n",
                m.id,
                m.measured.as_str(),
                m.predicted.map_or("unknown", |c| c.as_str())
            ));
        }
        if score.misses.len() > 40 {
            out.push_str(&format!(
                "  … and {} more (--format csv lists each)\n",
                score.misses.len() - 40
            ));
        }
    }
    out
}

pub(super) fn table(rows: &[Row], version: &str, from: &str) -> String {
    let mut out = format!("NPP {version}, from {from}\n");
    for r in rows {
        out.push_str(&format!(
            "{} {}x{} src {} dst {} {} {} {}: pixels {} ({}); {} ({}, {}: {}); {} ({}){}{}{}{}{}{}\n",
            r.primitive,
            r.width,
            r.height,
            r.src_stride,
            r.dst_stride,
            r.stream,
            r.context,
            r.threading,
            r.wrong_class,
            r.wrong_basis,
            r.predicted_class,
            r.basis,
            r.confidence,
            r.confidence_reason,
            r.race_class,
            r.race_basis,
            if r.deciding.is_empty() {
                String::new()
            } else {
                format!("\n  decided by: {}", r.deciding)
            },
            if r.fixes.is_empty() {
                String::new()
            } else {
                format!("\n  ends the leak: {}", r.fixes)
            },
            if r.rule.is_empty() {
                String::new()
            } else {
                format!("\n  {}", r.rule)
            },
            if r.race_rule.is_empty() {
                String::new()
            } else {
                format!("\n  {}", r.race_rule)
            },
            if r.wrong_rule.is_empty() {
                String::new()
            } else {
                format!("\n  {}", r.wrong_rule)
            },
            if r.wrong_fixes.is_empty() {
                String::new()
            } else {
                format!("\n  ends the wrong pixels: {}", r.wrong_fixes)
            }
        ));
    }
    out
}
