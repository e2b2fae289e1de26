//! The trace page's words: the verdict, the notices, each group's stream and threading, the cost
//! over time and the details, from the typed findings (the atlas's answer: `answer.rs`).

use nppbench_analysis::LeakClass;
use nppbench_analysis::thresholds::MIN_TRACE_S_FOR_A_RATE;
use nppbench_analysis::trace::{MemoryScope, SiteGroup, SiteStream, ThreadingPattern, TraceFindings, TraceStatus};
use nppbench_model::{TraceEnd, TraceFile};

use super::CostRow;
use crate::view::format::{fmt, fmt_sig};

/// MiB as a reader takes it in: `148.5 MiB`, `1.3 GiB`.
pub(super) fn mib(v: f64) -> String {
    if v.abs() >= 1024.0 {
        format!("{} GiB", fmt(v / 1024.0, 1))
    } else {
        format!("{} MiB", fmt(v, 1))
    }
}

/// Bytes as a reader takes them in: `80.0 GiB`.
pub(super) fn bytes(b: u64) -> String {
    format!("{} GiB", fmt(b as f64 / f64::from(1u32 << 30), 1))
}

/// A span of hours as a reader takes it in: `45 minutes`, `5.2 hours`, `22.4 days`.
fn duration(hours: f64) -> String {
    if hours < 1.0 {
        format!("{} minutes", fmt(hours * 60.0, 0))
    } else if hours < 48.0 {
        format!("{} hours", fmt(hours, 1))
    } else {
        format!("{} days", fmt(hours / 24.0, 1))
    }
}

pub(super) fn geometry_label(g: &SiteGroup) -> String {
    let step = |s: Option<i32>| s.map_or_else(|| "—".to_owned(), |s| s.to_string());
    match g.geometry {
        Some(x) => format!(
            "{}x{} s{}/{}",
            x.width,
            x.height,
            step(x.src_stride),
            step(x.dst_stride)
        ),
        None => "not recorded".into(),
    }
}

pub(super) fn stream_words(g: &SiteGroup) -> String {
    match g.stream {
        None => "not recorded",
        Some(SiteStream::LegacyDefault) => "legacy default (NULL)",
        Some(SiteStream::PerThreadDefault) => "per-thread default",
        Some(SiteStream::LegacyHandle) => "legacy (cudaStreamLegacy)",
        Some(SiteStream::Created {
            non_blocking: Some(true),
        }) => "created, non-blocking",
        Some(SiteStream::Created {
            non_blocking: Some(false),
        }) => "created, blocking",
        Some(SiteStream::Created { non_blocking: None }) => "created, flags unknown",
    }
    .to_owned()
}

pub(super) fn stream_csv(g: &SiteGroup) -> &'static str {
    match g.stream {
        None => "not_recorded",
        Some(SiteStream::LegacyDefault) => "legacy_default",
        Some(SiteStream::PerThreadDefault) => "per_thread_default",
        Some(SiteStream::LegacyHandle) => "legacy_handle",
        Some(SiteStream::Created {
            non_blocking: Some(true),
        }) => "non_blocking",
        Some(SiteStream::Created {
            non_blocking: Some(false),
        }) => "blocking",
        Some(SiteStream::Created { non_blocking: None }) => "created_flags_unknown",
    }
}

pub(super) fn threading_words(g: &SiteGroup) -> String {
    match g.threading {
        ThreadingPattern::ThreadPerCall => "a new thread per call".into(),
        ThreadingPattern::Pool(n) => format!("a pool of {n} threads"),
        ThreadingPattern::Single => "one thread".into(),
    }
}

pub(super) fn threading_csv(g: &SiteGroup) -> String {
    match g.threading {
        ThreadingPattern::ThreadPerCall => "thread_per_call".into(),
        ThreadingPattern::Pool(n) => format!("pool:{n}"),
        ThreadingPattern::Single => "single".into(),
    }
}

/// `1 thread`, `3 threads`.
pub(super) fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `100 threads each kept 3 NPP streams`, or `… kept 2 to 4 NPP streams each (2.9 on average)`.
fn kept_words(f: &TraceFindings) -> String {
    let k = &f.keeping;
    let threads = count(k.threads as u64, "thread", "threads");
    match k.per_thread {
        Some((n, hi, _)) if n == hi && k.threads == 1 => {
            format!("{threads} kept {}", count(n, "NPP stream", "NPP streams"))
        }
        Some((n, hi, _)) if n == hi => format!("{threads} each kept {}", count(n, "NPP stream", "NPP streams")),
        Some((lo, hi, mean)) => format!(
            "{threads} kept {lo} to {hi} NPP streams each ({} on average)",
            fmt(mean, 1)
        ),
        None => "no thread kept an NPP stream".into(),
    }
}

/// `device 0`, `devices 0 and 1`.
fn devices_words(devices: &[u32]) -> String {
    let list: Vec<String> = devices.iter().map(u32::to_string).collect();
    match list.as_slice() {
        [one] => format!("device {one}"),
        [rest @ .., last] => format!("devices {} and {last}", rest.join(", ")),
        [] => "every device".into(),
    }
}

/// Whose memory the samples are, as the subject of a sentence: `Memory` (the process's own), or
/// `Device memory (every process on the device)`.
pub(super) fn memory_subject(f: &TraceFindings) -> &'static str {
    match &f.memory_scope {
        MemoryScope::Process => "Memory",
        MemoryScope::Devices(d) if d.len() == 1 => "Device memory (every process on the device)",
        MemoryScope::Devices(_) => "Device memory (every process on the devices)",
    }
}

/// The memory chart's and the details' words for whose memory it is.
pub(super) fn memory_label(f: &TraceFindings) -> String {
    match &f.memory_scope {
        MemoryScope::Process => "the process's device memory (NVML, summed over devices)".into(),
        MemoryScope::Devices(d) => format!(
            "device memory, every process on {} (NVML's used memory: it did not list the traced process)",
            devices_words(d)
        ),
    }
}

/// The verdict sentence and the lines that follow it.
pub(super) fn verdict(trace: &TraceFile, f: &TraceFindings) -> (String, Vec<String>) {
    let grew = f.memory.map(|m| mib(m.growth_mib));
    let subject = memory_subject(f);
    let sentence = match (f.status, &grew, &trace.capture.streams_missing) {
        (TraceStatus::NotSeen, _, _) => format!(
            "No NPP call was seen: {}.",
            trace
                .capture
                .calls_missing
                .as_deref()
                .unwrap_or("no catalogued function was called")
        ),
        (TraceStatus::Grows | TraceStatus::Bounded, Some(g), Some(why)) => format!(
            "{subject} grew {g}, but the streams could not be counted ({why}): the growth cannot be tied to NPP."
        ),
        (TraceStatus::NoGrowth, _, Some(why)) => format!(
            "No growth: {} grew {} over the trace; the streams could not be counted ({why}).",
            subject.to_lowercase(),
            grew.as_deref().unwrap_or("by an unknown amount")
        ),
        (TraceStatus::Grows, Some(g), None) => format!("{subject} grew {g}: {}.", kept_words(f)),
        (TraceStatus::Bounded, Some(g), None) => format!(
            "{subject} grew {g}, then stopped: {}, and no new thread did.",
            kept_words(f)
        ),
        (TraceStatus::Grows | TraceStatus::Bounded, None, _) => format!(
            "{} (device memory could not be sampled: {}).",
            capitalised(&kept_words(f)),
            trace.capture.memory_missing.as_deref().unwrap_or("no sample")
        ),
        (TraceStatus::NoGrowth, _, None) => format!(
            "No growth from NPP: no thread kept an NPP stream{}.",
            grew.map(|g| format!(" ({} changed by {g} over the trace)", subject.to_lowercase()))
                .unwrap_or_default()
        ),
    };
    let mut lines = Vec::new();
    if let Some(fit) = f
        .memory
        .and_then(|m| m.per_keeping_thread)
        .filter(|_| f.keeping.threads > 0)
    {
        // An interval that reaches zero establishes no growth, and memory is never negative.
        lines.push(if fit.slope_ci.0 > 0.0 {
            format!(
                "{} MiB per thread that kept NPP streams (least squares of device memory against those threads over {} samples; 95% CI {} to {}).",
                fmt_sig(fit.slope),
                fit.n,
                fmt_sig(fit.slope_ci.0),
                fmt_sig(fit.slope_ci.1)
            )
        } else {
            format!(
                "Growth per thread that kept NPP streams not established: the 95% interval of the least squares of device memory against those threads over {} samples reaches zero (at most {} MiB per thread).",
                fit.n,
                fmt_sig(fit.slope_ci.1.max(0.0))
            )
        });
    }
    let leaking = f.groups.iter().filter(|g| g.observed == Some(LeakClass::Leak)).count();
    if leaking > 0 {
        lines.push(format!(
            "{leaking} group(s) of call sites made from a new thread per call kept streams: they are listed first, with the atlas's answer beside each."
        ));
    }
    (sentence, lines)
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().collect::<String>() + c.as_str())
}

/// What a reader must know before trusting the page.
pub(super) fn notices(trace: &TraceFile, f: &TraceFindings) -> Vec<String> {
    let mut out = Vec::new();
    match &trace.end {
        TraceEnd::Running => out.push(format!(
            "Partial trace: the program was still running, was killed or crashed before the interposer's last flush. This page shows what was flushed up to {} s.",
            fmt(trace.wall_s, 1)
        )),
        TraceEnd::Signal { signal, name } => out.push(format!(
            "Partial trace: the program was ended by {name} (signal {signal}). This page shows what was flushed before it, up to {} s.",
            fmt(trace.wall_s, 1)
        )),
        TraceEnd::Exited { code: Some(c) } if *c != 0 => out.push(format!("The program exited with code {c}.")),
        TraceEnd::Exited { .. } => {}
    }
    let c = &trace.capture;
    if let Some(why) = &c.calls_missing {
        out.push(format!(
            "NPP calls could not be seen: {why}. Streams NPP created are still counted where their stack names an NPP function ({} here).",
            f.streams.attributed_by_stack
        ));
    }
    if let Some(why) = &c.streams_missing {
        out.push(format!(
            "Streams could not be counted: {why}. No call site is judged by its streams."
        ));
    }
    if let Some(why) = &c.memory_missing {
        out.push(format!(
            "Device memory could not be sampled: {why}. No growth or cost is given."
        ));
    } else if let MemoryScope::Devices(d) = &f.memory_scope {
        out.push(format!(
            "Device memory is {}'s as a whole, every process on it: NVML never listed the traced process among its processes (in a container NVML lists the host's pids), so the growth includes whatever other programs allocated meanwhile.",
            devices_words(d)
        ));
    }
    // Calls that can race (declared blocking, off the legacy default stream) none of which was
    // asked whether its stream had work queued: the question was off, or the driver could not
    // answer. The race section's silence is then no finding.
    let can_race = |g: &&SiteGroup| {
        g.declared_flags.is_some_and(|d| d & 1 == 0)
            && !matches!(g.stream, Some(SiteStream::LegacyDefault | SiteStream::LegacyHandle))
    };
    let unasked = f.groups.iter().filter(can_race).count();
    if unasked > 0 && f.groups.iter().all(|g| g.calls_pending_asked == 0) {
        out.push(format!(
            "The race was not asked about: {unasked} call site(s) declare a blocking stream off the legacy default, where NPP may split a call onto a stream of its own, but no call was asked whether its stream still had work queued (NPPBENCH_TRACE_ASK_PENDING=0, or the driver could not answer). No site is named for the race, and --fail-on race cannot trip."
        ));
    }
    // Calls that can race asked in part: the interposer asks within a budget.
    let sampled = f
        .groups
        .iter()
        .filter(can_race)
        .filter(|g| g.calls_pending_asked > 0 && g.calls_pending_asked < g.calls)
        .count();
    if sampled > 0 {
        out.push(format!(
            "Whether a stream still had work queued was asked of some calls only, at {sampled} call site(s): the interposer asks within a budget (the question costs a few µs), the process's first such call always, then while the recording of such calls, question included, averages under 0.6 µs a call. A site with work pending in none of its asked calls may still have had it in others; NPPBENCH_TRACE_ASK_PENDING=all asks every call, at that cost."
        ));
    }
    if let Some(b) = &f.atlas {
        if b.version_matches == Some(false) {
            out.push(format!(
                "The atlas runs are of NPP {}, the traced program's NPP is {}: their answers may not hold for it. Give atlas runs of the program's NPP version.",
                b.npp_version,
                trace.npp_version.as_deref().unwrap_or("unknown")
            ));
        }
        if !b.not_used.is_empty() {
            out.push(format!(
                "Atlas runs not used (another NPP version or GPU): {}.",
                b.not_used.join("; ")
            ));
        }
    }
    out
}

/// The cost over time, and a note on what it assumes: a rate where the trace lasted long enough
/// to show one; for a burst, the threads seen and the headroom in such threads, no projection.
pub(super) fn cost_rows(f: &TraceFindings) -> (Vec<CostRow>, String) {
    let Some(c) = f.cost else {
        let note = match f.status {
            TraceStatus::Grows => {
                "No rate can be given: it needs device memory samples and the threads that kept NPP streams, over some time."
            }
            TraceStatus::Bounded => {
                "The growth is bounded: once the fixed set of threads has kept its streams, memory stays."
            }
            _ if !f.timeline.iter().any(|p| p.device_mib.is_some()) => {
                "Device memory was not sampled, so no cost over time can be given."
            }
            _ => "Nothing grows, so nothing costs over time.",
        };
        return (Vec::new(), note.into());
    };
    let row = |name: &str, value: String| CostRow {
        name: name.into(),
        value,
    };
    let seen = format!(
        "{} in {} s",
        count(c.keeping_threads as u64, "thread", "threads"),
        fmt_sig(c.observed_s)
    );
    let mut rows = vec![match c.rate {
        Some(r) => row(
            "New threads that kept NPP streams",
            format!("{} per hour ({seen})", fmt_sig(r.keeping_threads_per_hour)),
        ),
        None => row(
            "New threads that kept NPP streams",
            format!("{seen}: a burst, not a rate"),
        ),
    }];
    rows.push(row(
        "Memory per such thread",
        format!(
            "{} MiB ({})",
            fmt_sig(c.mib_per_thread),
            if c.from_fit {
                "least squares"
            } else {
                "growth / threads"
            }
        ),
    ));
    if let Some(r) = c.rate {
        rows.push(row("Growth per hour", mib(r.mib_per_hour)));
        rows.push(row("Growth per day", mib(r.mib_per_day)));
    }
    if let (Some(h), Some(d)) = (c.headroom_mib, &f.device) {
        rows.push(row("Device memory left", format!("{} of {}", mib(h), d.name)));
    }
    if let Some(n) = c.threads_until_full {
        rows.push(row(
            "The device is full after",
            format!("{} more such threads", fmt(n, 0)),
        ));
    }
    if let Some(h) = c.rate.and_then(|r| r.hours_until_full) {
        rows.push(row("The device runs out of memory in", duration(h)));
    }
    let note = if c.rate.is_some() {
        "At the rate new threads kept NPP streams over the trace (from the first NPP call to the last flush), and if nothing else uses the device.".to_owned()
    } else {
        format!(
            "The trace saw NPP for {} s (from the first NPP call to the last flush), under the {} s it takes to show a rate: {seen} is a burst, and how many threads the program starts an hour cannot be told from it, so nothing is projected over time: trace the program for longer, under its usual load, to see its rate.",
            fmt_sig(c.observed_s),
            fmt(MIN_TRACE_S_FOR_A_RATE, 0)
        )
    };
    (rows, note)
}
