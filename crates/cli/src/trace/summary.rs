//! The paragraph `nppbench trace` prints once the program ended: what was called, the streams
//! kept, memory, what recording cost, how it ended.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use nppbench_model::{TraceEnd, TraceFile};

use super::exit_code;

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// One paragraph: what was called, the streams kept, memory, the overhead, how it ended.
pub(super) fn summary(t: &TraceFile, path: &Path, status: ExitStatus, descendants: &[PathBuf]) -> String {
    let calls: u64 = t.call_sites.iter().map(|s| s.calls).sum();
    let functions: std::collections::BTreeSet<&str> = t.call_sites.iter().map(|s| s.function.as_str()).collect();
    let kept: Vec<_> = t.streams.iter().filter(|s| s.destroyed_s.is_none()).collect();
    let in_calls = kept.iter().filter(|s| s.call_site.is_some()).count();
    let mut s = format!(
        "traced {}: {calls} NPP calls of {} functions at {} call sites on {} threads",
        t.program.join(" "),
        functions.len(),
        t.call_sites.len(),
        t.threads.iter().filter(|t| t.calls > 0).count()
    );
    match &t.capture.streams_missing {
        None => {
            s += &format!(
                "; {} CUDA streams created, {} never destroyed ({in_calls} of them created inside an NPP call)",
                t.streams.len() as u64 + t.capture.streams_not_listed,
                kept.len()
            )
        }
        Some(why) => s += &format!("; streams not counted ({why})"),
    }
    let bytes: Vec<u64> = t.memory.iter().filter_map(|m| m.device_bytes).collect();
    let whose = match &t.capture.memory_device_wide {
        Some(d) => format!(
            " (every process on device(s) {}: NVML did not list this process)",
            d.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
        None => String::new(),
    };
    match (bytes.first(), bytes.last(), &t.capture.memory_missing) {
        (Some(a), Some(b), _) => s += &format!("; device memory {} → {}{whose}", mib(*a), mib(*b)),
        (_, _, Some(why)) => s += &format!("; device memory not sampled ({why})"),
        _ => s += "; NVML never listed the process's device memory",
    }
    if let Some(per_call) = t.overhead.per_call_ns() {
        let first = &t.capture.first_call_overhead;
        let mut parts = match (first.per_call_ns(), t.overhead.less(first).per_call_ns()) {
            (Some(f), Some(l)) => vec![format!("{f:.0} ns on a thread's first call, {l:.0} ns on later ones")],
            _ => Vec::new(),
        };
        if let (Some(p), Some(c)) = (t.capture.process_first_call_ns, t.capture.costliest_call_ns) {
            parts.push(format!("the process's first {p} ns, the costliest {c} ns"));
        }
        let split = if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join("; "))
        };
        s += &format!(
            "; recording cost {per_call:.0} ns a call{split}, {:.3} ms in all",
            t.overhead.recording_ns as f64 / 1e6
        );
        if let Some(asked) = t.capture.flags_asked {
            s += &format!(", the driver asked for a stream's flags on {asked} calls");
        }
    }
    if let Some(c) = t.capture.callback_overhead
        && let Some(each) = c.per_call_ns()
    {
        s += &format!("; {} CUPTI callbacks, {each:.0} ns each", c.calls);
    }
    if let Some(why) = &t.capture.calls_missing {
        s += &format!(". Calls may be missing: {why}");
    }
    s += &match &t.end {
        TraceEnd::Exited { .. } => format!(". The program exited with {}", exit_code(status)),
        TraceEnd::Signal { name, .. } => format!(". The program was ended by {name}: the trace is partial"),
        TraceEnd::Running => format!(
            ". The program exited with {} without running its exit path: the trace is partial",
            exit_code(status)
        ),
    };
    s += &format!(". Wrote {}.", path.display());
    if !descendants.is_empty() {
        s += &format!(
            " Processes it started left {} more traces beside it.",
            descendants.len()
        );
    }
    s
}
