//! The verdict and the fixes in words, generated from the typed findings.

use super::fmt;
use super::run::{FixView, VerdictView};
use crate::analysis::RunAnalysis;
use crate::findings::{Fix, Verdict};

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
    if !v.stream_hoarders.is_empty() {
        details.push(format!(
            "The scenarios whose NPP creates streams for every new thread and never destroys them: {}.",
            v.stream_hoarders.join("; ")
        ));
    }
    if let (Some(l), Some(o)) = (v.kernels_per_call_leaking, v.kernels_per_call_other) {
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
        shared: v.shared.clone(),
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
                let name = if p.name.is_empty() { "unnamed".to_owned() } else { p.name.clone() };
                match p.used_bytes {
                    Some(b) => format!("PID {} ({name}, {} MiB)", p.pid, b >> 20),
                    None => format!("PID {} ({name})", p.pid),
                }
            })
            .collect();
        out.push(format!(
            "The GPU was shared with other processes while nppbench measured: {}. {} of {} throughput records were taken with another process on the GPU: their figures may be off (clocks, memory bandwidth); per-process memory and leak classes are not affected. `compare` does not gate on this run unless given --allow-shared-gpu.",
            who.join(", "),
            a.shared_throughput(),
            a.run.throughput.len()
        ));
    }
    for hook in &a.run.test_hooks {
        out.push(format!(
            "This run was made with a test hook ({hook}): it measures nppbench's calibration, not NPP as it is."
        ));
    }
    out
}
