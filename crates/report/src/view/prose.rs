//! The verdict and the fixes in words, generated from the typed findings.

use serde::Serialize;

use super::format::fmt;
use nppbench_analysis::RunAnalysis;
use nppbench_analysis::evidence::FunctionRules;
use nppbench_analysis::rules::HeldOut;
use nppbench_analysis::verdict::{Fix, Verdict};

mod rule;

/// One literal of a rule, in words (as `predict` names the condition that decides an answer).
pub use rule::literal as literal_words;
pub(crate) use rule::rule_words;
pub use rule::{race_sentence, rule_sentence, wrong_sentence};

/// One primitive's leak rule, in words.
#[derive(Debug, Clone, Serialize)]
pub struct RuleView {
    pub primitive: String,
    pub library: String,
    pub leaks: bool,
    pub sentence: String,
    pub support: String,
    pub equivalents: Vec<String>,
    pub counter_examples: Vec<String>,
    /// `predicted k of n held-out scenarios`, or `none held out`.
    pub held_out: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerdictView {
    pub headline: String,
    pub leak_found: bool,
    pub never: Vec<String>,
    pub details: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FixView {
    pub title: String,
    pub effect: String,
    pub works: bool,
}

pub(super) fn rule_view_of(f: &FunctionRules) -> RuleView {
    let w = rule_words(f);
    let r = &f.leak;
    RuleView {
        primitive: r.primitive.to_string(),
        library: r.primitive.row().library.to_string(),
        leaks: r.leaking > 0,
        sentence: w.sentence,
        support: w.support,
        equivalents: w.equivalents,
        counter_examples: w.counter_examples,
        held_out: held_out_text(&r.held_out),
    }
}

/// `predicted 12 of 12 held-out scenarios`, or `none held out`.
pub(super) fn held_out_text(h: &HeldOut) -> String {
    if h.total == 0 {
        "none held out".to_owned()
    } else {
        format!("predicted {} of {} held-out scenarios", h.predicted(), h.total)
    }
}

pub(super) fn verdict_view(v: &Verdict, a: &RunAnalysis<'_>) -> VerdictView {
    let gpu = &a.run.environment.gpu.name;
    let headline = if v.leaking == 0 {
        format!(
            "No configuration leaks: none of the {} measured memory scenarios grows without bound on {gpu} with NPP {}.",
            v.measured,
            a.npp_version()
        )
    } else {
        format!(
            "{} of {} configurations leak GPU memory on {gpu} with NPP {}.",
            v.leaking,
            v.measured,
            a.npp_version()
        )
    };
    let functions = a.primitives();
    let many = functions.len() > 1;
    let headline = if many {
        let leaking_functions = functions
            .iter()
            .filter(|p| a.leaking().any(|m| m.record.scenario.primitive == **p))
            .count();
        format!(
            "{leaking_functions} of {} functions leak GPU memory on {gpu} with NPP {}: {} of {} configurations.",
            functions.len(),
            a.npp_version(),
            v.leaking,
            v.measured
        )
    } else {
        headline
    };
    // Correctness leads: where NPP computed wrong pixels, that is the headline, and the leak's
    // headline the first detail.
    let mut details = Vec::new();
    let headline = match wrong_headline(v, a) {
        Some(wrong) => {
            details.push(headline);
            wrong
        }
        None => headline,
    };
    if v.output.reference_misses > 0 {
        details.push(format!(
            "{} configuration(s) of functions with a tolerance missed nppbench's own CPU reference: that reference may be too strict, so they are not counted as NPP's wrong pixels.",
            v.output.reference_misses
        ));
    }
    if let Some(r) = v.per_thread_range {
        details.push(format!(
            "Each new calling thread adds {} MiB of GPU memory that stays until the process exits.",
            number_range(r, 2)
        ));
    }
    if let Some(r) = v.hidden_range {
        details.push(format!(
            "In the leaking configurations NPP creates {} CUDA streams per new thread (counted with CUPTI) and destroys none of them.",
            number_range(r, 1)
        ));
    }
    // With several functions the atlas table says which do what, function by function.
    if !v.stream_hoarders.is_empty() && !many {
        details.push(format!(
            "The scenarios whose NPP creates streams for every new thread and never destroys them: {}.",
            v.stream_hoarders.join("; ")
        ));
    }
    if let (Some(l), Some(o), false) = (v.kernels_per_call_leaking, v.kernels_per_call_other, many) {
        details.push(format!(
            "On the leaking geometries NPP launches {} kernel(s) per call, against {} on the others (CUPTI's kernel records), whatever the stream.",
            number_range(l, 0),
            number_range(o, 0)
        ));
    }
    details.extend(race_detail(v));
    if v.failed > 0 {
        details.push(format!(
            "{} scenario(s) failed ({}); their reasons are listed under Failures.",
            v.failed,
            by_kind(&v.failed_by_kind)
        ));
    }
    VerdictView {
        headline,
        leak_found: v.leaking > 0,
        never: v.never.clone(),
        details,
    }
}

/// The wrong-pixel hazard as a headline, where NPP computed wrong pixels or faulted: how many
/// configurations of which functions, one example with its first wrong sample, and the faults.
fn wrong_headline(v: &Verdict, a: &RunAnalysis<'_>) -> Option<String> {
    let o = &v.output;
    if o.wrong + o.faults == 0 {
        return None;
    }
    let names: Vec<String> = o.functions.iter().map(ToString::to_string).collect();
    let mut out = format!(
        "NPP {} computes wrong pixels on {} with every call synchronised, and returns success: {} of {} configurations checked, {} function(s) ({}).",
        a.npp_version(),
        a.run.environment.gpu.name,
        o.wrong + o.faults,
        o.judged,
        names.len(),
        names.join(", ")
    );
    if let Some((label, first)) = &o.example {
        out.push_str(&format!(
            " For example {label}: row {}, pixel {}, channel {} is {} where {} is expected.",
            first.row, first.pixel, first.channel, first.actual, first.expected
        ));
    }
    if o.faults > 0 {
        out.push_str(&format!(
            " {} configuration(s) faulted the device (a misaligned or illegal address), after which every CUDA call of the process fails.",
            o.faults
        ));
    }
    Some(out)
}

/// The race in words, where it was measured: how many configurations race, what a user sees,
/// where it never raced, and what to change.
fn race_detail(v: &Verdict) -> Option<String> {
    if v.race_measured == 0 {
        return None;
    }
    let mut race = format!(
        "{} of {} configurations race: with the source written late on the caller's stream (a kernel, then a copy, as an upload with cudaMemcpyAsync is) and the result read on it, some of the output came out wrong, because part of NPP's work ran on a stream of its own that does not wait for the caller's.",
        v.races, v.race_measured
    );
    if v.race_by_one_stream > 0 {
        race.push_str(&format!(
            " {} configurations needed no round: CUPTI saw every kernel, copy and fill of their first call on the caller's stream, which orders it after the write and before the read.",
            v.race_by_one_stream
        ));
    }
    if v.races_on_one_stream > 0 {
        race.push_str(&format!(
            " {} of the races had all of their first call's work on the caller's stream as CUPTI saw it: rounds only where the call split (`--race-rounds where-split`, the default) would have filed them ordered, so measure with `--race-rounds always` until that is understood.",
            v.races_on_one_stream
        ));
    }
    if v.races_without_leak > 0 {
        race.push_str(&format!(
            " {} of them do not leak: ending the leak (a pool of threads, say) does not end the race.",
            v.races_without_leak
        ));
    }
    if let Some(e) = &v.race_example {
        let [first, last] = e.columns;
        let what = if last + 1 == e.width {
            format!("the last {} columns ({first}–{last})", last - first + 1)
        } else {
            format!("columns {first}–{last}")
        };
        race.push_str(&format!(
            " What you see, for example {}: {what} of rows {}–{} can hold the source's previous contents (the previous frame's pixels), in {} of {} rounds.",
            e.label, e.rows[0], e.rows[1], e.wrong_rounds, e.rounds
        ));
    }
    if !v.race_never.is_empty() {
        race.push_str(&format!(" Never raced: {}.", v.race_never.join(", ")));
    }
    race.push_str(" What to change: the first fix below that ends both, where one was measured.");
    Some(race)
}

/// `2 out of memory, 1 timeout`.
pub(crate) fn by_kind(counts: &std::collections::BTreeMap<nppbench_model::FailureKind, usize>) -> String {
    counts
        .iter()
        .map(|(k, n)| format!("{n} {}", k.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `83–142%`, or `100%` when both ends round to the same.
/// A change in time as a range with its word: `+3% to +5% (slower)`, `−2% (faster)`; + is
/// slower, as everywhere in nppbench.
fn change_range((lo, hi): (f64, f64)) -> String {
    let (a, b) = (format!("{lo:+.0}%"), format!("{hi:+.0}%"));
    let word = if hi <= 0.0 {
        "faster"
    } else if lo >= 0.0 {
        "slower"
    } else {
        "faster to slower"
    };
    if a == b {
        format!("{a} ({word})")
    } else {
        format!("{a} to {b} ({word})")
    }
}

/// `1.6 to 1.7`, or `1.6` when both ends round to the same.
fn number_range((lo, hi): (f64, f64), digits: usize) -> String {
    let (lo, hi) = (fmt(lo, digits), fmt(hi, digits));
    if lo == hi { lo } else { format!("{lo} to {hi}") }
}

pub(super) fn fix_view(f: &Fix) -> FixView {
    let mut effect = format!(
        "Measured beside {} leaking configuration(s): {} of them no longer leak",
        f.compared, f.fixed
    );
    effect.push_str(&format!(
        " (largest remaining growth {} MiB)",
        fmt(f.worst_growth_mib, 1)
    ));
    if let Some(r) = f.time_change_pct {
        effect.push_str(&format!(
            "; time per call at a megapixel and above: {}",
            change_range(r)
        ));
    }
    if let Some(r) = f.latency_change_pct {
        effect.push_str(&format!("; host latency per call: {}", change_range(r)));
    }
    if f.race_compared > 0 {
        effect.push_str(&format!(
            "; the race (wrong pixels when the caller's stream writes the source late): {} of {} no longer race",
            f.race_fixed, f.race_compared
        ));
        if f.race_fixed < f.race_compared {
            effect.push_str(&format!(
                " ({} still race: the leak's fix is not the race's)",
                f.race_compared - f.race_fixed
            ));
        }
    }
    effect.push('.');
    FixView {
        title: f.title.to_string(),
        effect,
        works: if f.race_compared > 0 {
            f.ends_both()
        } else {
            f.fixed == f.compared
        },
    }
}

/// The warnings a run's figures come with: a GPU shared with other processes, a test hook.
pub(super) fn warnings(a: &RunAnalysis<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let shared = a.shared_with();
    if !shared.is_empty() {
        let who: Vec<String> = shared
            .iter()
            .map(|p| {
                let name = if p.name.is_empty() {
                    "name unreadable".to_owned()
                } else {
                    p.name.clone()
                };
                match p.used_bytes {
                    Some(b) => format!("PID {} ({name}, {} MiB)", p.pid, b >> 20),
                    None => format!("PID {} ({name})", p.pid),
                }
            })
            .collect();
        let unreadable = if shared.iter().any(|p| p.name.is_empty()) {
            " (A name is unreadable where the process had exited by the time nppbench looked it up, or runs outside this machine's view of processes.)"
        } else {
            ""
        };
        if a.sharing_that_touches_gates().is_empty() {
            out.push(format!(
                "Another process was on the GPU beside {} of {} memory scenarios: {}. No throughput record and no device-wide memory figure was taken beside it, so nothing judged was touched, and `compare` gates on this run.{unreadable}",
                a.shared_memory(),
                a.run.memory.len(),
                who.join(", ")
            ));
        } else {
            out.push(format!(
                "The GPU was shared with other processes while nppbench measured: {}. Seen around {} of {} memory scenarios and {} of {} throughput records; throughput taken beside another process may be off (clocks, memory bandwidth), while per-process memory and leak classes are not affected. `compare` does not gate on this run unless given --allow-shared-gpu.{unreadable}",
                who.join(", "),
                a.shared_memory(),
                a.run.memory.len(),
                a.shared_throughput(),
                a.run.throughput.len()
            ));
        }
    }
    for hook in &a.run.test_hooks {
        out.push(format!(
            "This run was made with a test hook ({hook}): it measures nppbench's calibration, not NPP as it is."
        ));
    }
    out.extend(super::kernels::layout_notes(a));
    out
}

/// A stream kind or context filling list as words: `legacy_default, per_thread_default or
/// blocking`.
fn one_of<T: std::fmt::Display>(items: &[T]) -> String {
    let words: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    match words.len() {
        0 => String::new(),
        1 => words[0].clone(),
        n => format!("{} or {}", words[..n - 1].join(", "), words[n - 1]),
    }
}

/// `a, b and c`.
fn one_of_and(parts: &[String]) -> String {
    match parts.len() {
        0 => String::new(),
        1 => parts[0].clone(),
        n => format!("{} and {}", parts[..n - 1].join(", "), parts[n - 1]),
    }
}
