//! Scenarios not judged for want of a figure, worded: which run was made by an older nppbench
//! (no per-layout figures) and what to do; and runs that share no layout of a call's kernels.
//! The reasons are the analysis's ([`NotJudged`]).

use nppbench_analysis::compare::{Comparison, Counts, NotJudged, Older, ThroughputChange};

/// The run(s) named: `the base (NPP 12.2.3 · …)`, `both runs`.
fn older_run(older: Older, base: &str, cand: &str) -> String {
    match older {
        Older::Base => format!("the base ({base})"),
        Older::Candidate => format!("the candidate ({cand})"),
        Older::Both => "both runs".into(),
    }
}

/// The summary's lines on scenarios not judged: how many, which run is older, why, and what to
/// do; none where every scenario was judged.
pub(super) fn not_judged_lines(c: &Comparison, n: &Counts, base: &str, cand: &str) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(older) = c.older().filter(|_| n.unsettled_older > 0) {
        let was = if older == Older::Both { "were" } else { "was" };
        lines.push(format!(
            "Not judged (older run): {} scenario(s), listed as unsettled. {} {was} made by an older nppbench, \
             which timed no layout of a call's kernels apart, and the two runs drew the layouts apart \
             (their kernels at once in most calls of one run, in turn in the other's): the time over all \
             calls moves with that share, which is the host's doing, not a change. Measure {} again with \
             this nppbench to judge them; the other scenarios are judged as before.",
            n.unsettled_older,
            capitalised(&older_run(older, base, cand)),
            match older {
                Older::Base => "the base",
                Older::Candidate => "the candidate",
                Older::Both => "both runs",
            },
        ));
    }
    if n.unsettled_layouts_apart > 0 {
        lines.push(format!(
            "Not judged (no layout in both runs): {} scenario(s), listed as unsettled: the calls' kernels ran \
             at once in one run and in turn in the other, so no layout's time can be compared.",
            n.unsettled_layouts_apart
        ));
    }
    lines
}

/// The counts' words on scenarios not judged: ` (2 not judged: the base is older)`; empty where
/// none.
pub(super) fn not_judged_count(n: &Counts, older: Option<Older>) -> String {
    let mut parts = Vec::new();
    if let Some(o) = older.filter(|_| n.unsettled_older > 0) {
        let is = if o == Older::Both { "are" } else { "is" };
        parts.push(format!("{} not judged: {} {is} older", n.unsettled_older, o.words()));
    }
    if n.unsettled_layouts_apart > 0 {
        parts.push(format!(
            "{} not judged: no layout in both runs",
            n.unsettled_layouts_apart
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}

/// A row's verdict where the scenario was not judged for want of a figure.
pub(super) fn not_judged_verdict(x: &ThroughputChange) -> Option<String> {
    Some(match x.not_judged? {
        NotJudged::Older(o) => format!(
            "not judged: {} made by an older nppbench (no per-layout figures) and the runs drew the layouts apart; over all calls",
            match o {
                Older::Base => "the base was",
                Older::Candidate => "the candidate was",
                Older::Both => "both runs were",
            }
        ),
        NotJudged::LayoutsApart => "not judged: no layout of the calls' kernels in both runs; over all calls".into(),
    })
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(chars).collect())
}
