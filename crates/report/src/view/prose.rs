//! The verdict and the fixes in words, generated from the typed findings.

use serde::Serialize;

use super::format::fmt;
use nppbench_analysis::RunAnalysis;
use nppbench_analysis::verdict::{Fix, Verdict};

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

pub(super) fn rule_view_of(r: &nppbench_analysis::rules::Rule) -> RuleView {
    let w = rule_words(r);
    RuleView {
        primitive: r.primitive.to_string(),
        library: r.primitive.row().library.to_string(),
        leaks: r.leaking > 0,
        sentence: w.sentence,
        support: w.support,
        equivalents: w.equivalents,
        counter_examples: w.counter_examples,
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
    let mut details = Vec::new();
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

/// `2 out of memory, 1 timeout`.
pub(crate) fn by_kind(counts: &std::collections::BTreeMap<nppbench_model::FailureKind, usize>) -> String {
    counts
        .iter()
        .map(|(k, n)| format!("{n} {}", k.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `83–142%`, or `100%` when both ends round to the same.
fn percent_range((lo, hi): (f64, f64)) -> String {
    let (lo, hi) = (fmt(lo * 100.0, 0), fmt(hi * 100.0, 0));
    if lo == hi {
        format!("{lo}%")
    } else {
        format!("{lo}–{hi}%")
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
    if let Some(r) = f.throughput_ratio {
        effect.push_str(&format!(
            "; kernel throughput at 1080p and above: {} of what it was",
            percent_range(r)
        ));
    }
    if let Some(r) = f.latency_ratio {
        effect.push_str(&format!("; host latency per call: {} of what it was", percent_range(r)));
    }
    effect.push('.');
    FixView {
        title: f.title.to_owned(),
        effect,
        works: f.fixed == f.compared,
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

/// One literal of a rule, in words.
pub(crate) fn literal(l: &nppbench_analysis::rules::Literal) -> String {
    use nppbench_analysis::rules::Feature as F;
    let is = if l.holds { "is" } else { "is not" };
    match &l.feature {
        F::WidthBytesMultiple(m) => format!("the width in bytes {is} a multiple of {m}"),
        F::WidthPixelsMultiple(m) => format!("the width in pixels {is} a multiple of {m}"),
        F::SrcStrideMultiple(m) => format!("the source stride {is} a multiple of {m} bytes"),
        F::DstStrideMultiple(m) => format!("the destination stride {is} a multiple of {m} bytes"),
        F::LargeImage if l.holds => "the image has a megapixel or more".into(),
        F::LargeImage => "the image has under a megapixel".into(),
        F::NewThreadPerCall if l.holds => "a new host thread makes each call".into(),
        F::NewThreadPerCall => "a bounded set of threads makes the calls (one thread, or a pool)".into(),
        F::DeclaresNonBlocking if l.holds => "the stream context declares a non-blocking stream".into(),
        F::DeclaresNonBlocking => "the stream context declares a blocking stream (nStreamFlags 0)".into(),
        F::StreamIn(set) if l.holds => format!("the stream is {}", one_of(set)),
        F::StreamIn(set) => format!("the stream is not {}", one_of(set)),
        F::ContextIn(set) if l.holds => format!("the context is filled {}", one_of(set)),
        F::ContextIn(set) => format!("the context is not filled {}", one_of(set)),
    }
}

/// A rule as words: its sentence, its support, what the data cannot tell apart, and the
/// counter-examples where no rule fits.
pub(crate) struct RuleWords {
    pub(crate) sentence: String,
    pub(crate) support: String,
    pub(crate) equivalents: Vec<String>,
    pub(crate) counter_examples: Vec<String>,
}

pub(crate) fn rule_words(r: &nppbench_analysis::rules::Rule) -> RuleWords {
    use nppbench_analysis::rules::RuleKind;
    let support = format!(
        "{} measured scenarios: {} leak, {} do not",
        r.measured,
        r.leaking,
        r.measured - r.leaking
    );
    match &r.kind {
        RuleKind::Never => RuleWords {
            sentence: format!("Never leaked in the {} scenarios measured", r.measured),
            support,
            equivalents: Vec::new(),
            counter_examples: Vec::new(),
        },
        RuleKind::Always => RuleWords {
            sentence: format!("Leaked in every one of the {} scenarios measured", r.measured),
            support,
            equivalents: Vec::new(),
            counter_examples: Vec::new(),
        },
        RuleKind::Exactly { literals, alternatives } => {
            let parts: Vec<String> = literals.iter().map(|(l, _)| literal(l)).collect();
            let mut equivalents: Vec<String> = literals
                .iter()
                .filter(|(_, same)| !same.is_empty())
                .map(|(l, same)| {
                    format!(
                        "“{}” is, on these scenarios, the same as: {}",
                        literal(l),
                        same.iter().map(literal).collect::<Vec<_>>().join("; ")
                    )
                })
                .collect();
            if *alternatives > 0 {
                equivalents.push(format!(
                    "{alternatives} other rule(s) of {} conditions fit these scenarios as well: a sweep with more contrast would tell them apart",
                    literals.len()
                ));
            }
            RuleWords {
                sentence: format!("Leaks if and only if {}", one_of_and(&parts)),
                support: format!("checked both ways on all {support}"),
                equivalents,
                counter_examples: Vec::new(),
            }
        }
        RuleKind::Approximately {
            literals,
            counter_examples,
        } => {
            let parts: Vec<String> = literals.iter().map(literal).collect();
            RuleWords {
                sentence: format!(
                    "No rule of up to {} conditions separates the leaking scenarios exactly; the closest, “leaks when {}”, gets {} of {} wrong",
                    nppbench_analysis::rules::MAX_LITERALS,
                    one_of_and(&parts),
                    counter_examples.len(),
                    r.measured
                ),
                support,
                equivalents: Vec::new(),
                counter_examples: counter_examples
                    .iter()
                    .map(|(id, leaks)| format!("{id} ({})", if *leaks { "leaks" } else { "does not leak" }))
                    .collect(),
            }
        }
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
