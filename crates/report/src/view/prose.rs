//! The verdict and the fixes in words, generated from the typed findings.

use serde::Serialize;

use super::format::fmt;
use nppbench_analysis::RunAnalysis;
use nppbench_analysis::evidence::FunctionRules;
use nppbench_analysis::rules::{HeldOut, Literal, MAX_LITERALS, RuleKind, Standing};
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

/// One literal of a rule, in words.
pub(crate) fn literal(l: &Literal) -> String {
    use nppbench_analysis::rules::Feature as F;
    let is = if l.holds { "is" } else { "is not" };
    let at_least = |what: &str, k: &u64, unit: &str| {
        if l.holds {
            format!("{what} has at least {k} {unit}")
        } else {
            format!("{what} has fewer than {k} {unit}")
        }
    };
    match &l.feature {
        F::SrcRowBytesMultiple(m) => format!("a source row in bytes {is} a multiple of {m}"),
        F::DstRowBytesMultiple(m) => format!("a destination row in bytes {is} a multiple of {m}"),
        F::WidthPixelsMultiple(m) => format!("the width in pixels {is} a multiple of {m}"),
        F::SrcStrideMultiple(m) => format!("the source stride {is} a multiple of {m} bytes"),
        F::DstStrideMultiple(m) => format!("the destination stride {is} a multiple of {m} bytes"),
        F::SrcRowBytesAtLeast(k) => at_least("a source row", k, "bytes"),
        F::DstRowBytesAtLeast(k) => at_least("a destination row", k, "bytes"),
        F::WidthAtLeast(k) => at_least("the width", k, "pixels"),
        F::HeightAtLeast(k) => at_least("the image", k, "rows"),
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
        F::LeaksWithNewThreads(_) if l.holds => "the leak rule's other conditions hold".into(),
        F::LeaksWithNewThreads(_) => "the leak rule's other conditions do not hold".into(),
        F::ThreadsAtLeast(n) if l.holds => format!("a bounded set of at least {n} threads makes the calls"),
        F::ThreadsAtLeast(n) => format!("no bounded set of {n} threads or more makes the calls"),
    }
}

/// A rule as words: its sentence, its support, what the data cannot tell apart, and the
/// counter-examples where no rule fits or held-out scenarios contradict it.
pub(crate) struct RuleWords {
    pub(crate) sentence: String,
    pub(crate) support: String,
    pub(crate) equivalents: Vec<String>,
    pub(crate) counter_examples: Vec<String>,
}

fn case_words((id, leaks): &(String, bool)) -> String {
    format!("{id} ({})", if *leaks { "leaks" } else { "does not leak" })
}

/// The rule's sentence as strong as its standing allows: "if and only if" only where it fits
/// every fitted scenario, predicts every held-out one, and no scenario flips between processes.
fn sentence(f: &FunctionRules, conditions: Option<&str>) -> String {
    let r = &f.leak;
    let held = held_out_text(&r.held_out);
    let wrong = r.held_out.wrong.len();
    let claim = match (&r.kind, conditions) {
        (RuleKind::Never, _) => "never leaks".to_owned(),
        (RuleKind::Always, _) => "leaks in every scenario".to_owned(),
        (_, Some(c)) => format!("leaks when {c}"),
        (_, None) => String::new(),
    };
    let base = match r.standing() {
        Standing::Earned if f.flips.is_empty() => match &r.kind {
            RuleKind::Exactly { .. } => format!("Leaks if and only if {} ({held})", conditions.unwrap_or_default()),
            RuleKind::Never => format!("Never leaks: none of {} fitted scenarios did ({held})", r.measured),
            _ => format!("Leaks in every scenario: all {} fitted did ({held})", r.measured),
        },
        Standing::Earned | Standing::NotValidated => {
            let mut s = format!("Fits all {} scenarios measured: {claim}", r.measured);
            if r.held_out.total == 0 {
                s.push_str("; not validated: no scenario was held out to test it");
            } else {
                s.push_str(&format!(" ({held})"));
            }
            s
        }
        Standing::WrongOnHeldOut => format!(
            "Best rule found: {claim}, which fits all {} fitted scenarios but gets {wrong} of {} held-out wrong",
            r.measured, r.held_out.total
        ),
        Standing::NoneFits => {
            let RuleKind::Approximately { counter_examples, .. } = &r.kind else {
                unreachable!("only an approximate rule fits none")
            };
            format!(
                "No rule of up to {MAX_LITERALS} conditions separates the leaking scenarios exactly; the closest, “{claim}”, gets {} of {} fitted wrong ({})",
                counter_examples.len(),
                r.measured,
                if r.held_out.total == 0 {
                    "none held out".to_owned()
                } else {
                    format!("{wrong} of {} held-out wrong", r.held_out.total)
                }
            )
        }
    };
    if f.flips.is_empty() {
        base
    } else {
        format!(
            "Not stable between processes: {} scenario(s) changed class from one process to another, kept out of the rule. {base}",
            f.flips.len()
        )
    }
}

/// A function's leak rule in one sentence, as its page states it.
pub fn rule_sentence(f: &FunctionRules) -> String {
    rule_words(f).sentence
}

pub(crate) fn rule_words(f: &FunctionRules) -> RuleWords {
    let r = &f.leak;
    let support = format!(
        "{} fitted scenarios: {} leak, {} do not; {}",
        r.measured,
        r.leaking,
        r.measured - r.leaking,
        held_out_text(&r.held_out)
    );
    let mut counter_examples: Vec<String> = Vec::new();
    let mut equivalents: Vec<String> = Vec::new();
    let conditions = match &r.kind {
        RuleKind::Exactly { literals, alternatives } => {
            equivalents = literals
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
            Some(one_of_and(
                &literals.iter().map(|(l, _)| literal(l)).collect::<Vec<_>>(),
            ))
        }
        RuleKind::Approximately {
            literals,
            counter_examples: fitted,
        } => {
            counter_examples.extend(fitted.iter().map(case_words));
            Some(one_of_and(&literals.iter().map(literal).collect::<Vec<_>>()))
        }
        RuleKind::Never | RuleKind::Always => None,
    };
    counter_examples.extend(r.held_out.wrong.iter().map(|c| format!("held out: {}", case_words(c))));
    counter_examples.extend(f.flips.iter().map(|flip| {
        let classes: Vec<&str> = flip.classes.iter().map(|c| c.as_str()).collect();
        format!(
            "{} measured {} times: {}",
            flip.id,
            flip.measurements,
            classes.join(", then ")
        )
    }));
    RuleWords {
        sentence: sentence(f, conditions.as_deref()),
        support,
        equivalents,
        counter_examples,
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
