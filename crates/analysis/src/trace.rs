//! A trace judged: what `nppbench trace` recorded inside someone else's program ([`TraceFile`])
//! turned into findings, computed once: how much the process's device memory grew and how fast
//! per new thread, which threads kept NPP's streams, the call sites grouped by what the atlas
//! describes a scenario by (function, geometry, declared flags, stream kind, threading pattern)
//! with the memory attributed to each, what the growth costs over time, and, where atlas runs are
//! given, each group's predicted class beside what the trace observed ([`atlas`]).
//!
//! Definitions, each used by the page, summary.md and call_sites.csv alike:
//! - **Growth**: device memory at the last sample minus the first sample taken once NPP had been
//!   called (the CUDA context and whatever the program allocated before its first NPP call are
//!   not growth); NVML's per-process figure, summed over devices. Where NVML never listed the
//!   traced pid (in a container it lists the host's pids), the trace holds the used memory of
//!   the devices the process used instead ([`MemoryScope::Devices`]): every process on them, so
//!   the growth includes whatever other programs allocated meanwhile, and the page says so.
//! - **Kept stream**: a stream created while tracing and not destroyed by the last flush. An NPP
//!   stream is one created during a catalogued call or by a stack that names an NPP function;
//!   the others are the program's own.
//! - **MiB attributed**: the growth split over every kept stream (NPP's and the program's own)
//!   in proportion, so a group's share is `growth × its kept streams / all kept streams`. Where
//!   no stream was kept, nothing is attributed. This assumes every kept stream costs the same,
//!   which is what the atlas measures for NPP's own streams (its per-thread growth is the same
//!   whatever the geometry), and leaves growth that no stream explains on the groups' totals.
//! - **Threading pattern**: from a group's calls and threads. One thread: single; more than two
//!   calls per thread: a pool of that many threads (a pool of n behaves as new threads for its
//!   first n calls, so only more than 2n calls tell it from a new thread per call, as
//!   [`crate::evidence::conclusive`] says of measured scenarios); else a thread per call.

mod atlas;
mod cost;
pub mod gates;
mod groups;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use nppbench_model::{TraceDevice, TraceFile};
use nppbench_stats::{Fit, GRANULE_MIB, LeakClass, least_squares};

pub use self::atlas::AtlasBasis;
pub use self::cost::{Cost, Rate};
use self::cost::{capacity_mib, cost, judged_device};
pub use self::groups::{Advice, Prediction, SiteGeometry, SiteGroup, SiteStream, ThreadingPattern, Unpredicted};

const MIB: f64 = 1024.0 * 1024.0;

/// The whole trace, judged.
#[derive(Debug, Clone)]
pub struct TraceFindings {
    pub status: TraceStatus,
    /// The memory samples, or `None` where none carries a device figure.
    pub memory: Option<MemoryGrowth>,
    /// Whose memory the samples are.
    pub memory_scope: MemoryScope,
    pub keeping: Keeping,
    /// Every group of call sites, those observed leaking first, then bounded, then the rest; by
    /// MiB attributed, then calls, within each.
    pub groups: Vec<SiteGroup>,
    /// Streams kept that no NPP call or NPP frame created: the program's own.
    pub other_streams: OtherStreams,
    /// What the growth costs over time; `None` unless the status is [`TraceStatus::Grows`].
    pub cost: Option<Cost>,
    pub timeline: Vec<TimelinePoint>,
    pub threads: ThreadCounts,
    pub streams: StreamTotals,
    pub overhead: OverheadFigures,
    /// The atlas runs the predictions come from; `None` where none was given.
    pub atlas: Option<AtlasBasis>,
    /// The device whose memory the cost is judged against: the one most calls went to.
    pub device: Option<TraceDevice>,
}

/// The verdict of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceStatus {
    /// New threads keep NPP streams (or, where streams could not be counted, device memory grew
    /// by more than a granule): memory grows for as long as the program makes new threads.
    Grows,
    /// Streams kept only by a bounded set of threads (one thread, or a pool): memory stepped up,
    /// then stays.
    Bounded,
    /// No NPP stream kept (or, without stream counts, no growth).
    NoGrowth,
    /// No NPP call and no NPP stream seen: nothing to judge (`capture.calls_missing` says why).
    NotSeen,
}

/// Whose device memory a trace's samples are ([`nppbench_model::Capture::memory_device_wide`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryScope {
    /// The traced process's own, as NVML lists it per process.
    Process,
    /// The used memory of these devices (NVML indices): every process on them.
    Devices(Vec<u32>),
}

/// Device memory over the trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryGrowth {
    /// The baseline sample (the first once NPP was called) and the last, seconds and MiB.
    pub first_s: f64,
    pub first_mib: f64,
    pub last_s: f64,
    pub last_mib: f64,
    pub growth_mib: f64,
    pub peak_mib: f64,
    /// Least squares of device MiB against the threads that had kept NPP streams by each sample:
    /// MiB per such thread. `None` with under three samples or where that count never changed.
    pub per_keeping_thread: Option<Fit>,
}

/// The threads that kept NPP streams.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Keeping {
    pub threads: usize,
    pub streams: u64,
    /// NPP streams kept per such thread: smallest, largest, mean.
    pub per_thread: Option<(u64, u64, f64)>,
    /// How many threads kept how many NPP streams: (streams kept, threads), by streams.
    pub distribution: Vec<(u64, usize)>,
}

/// Streams the program created itself and kept.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OtherStreams {
    pub created: u64,
    pub kept: u64,
    pub mib_attributed: f64,
}

/// One memory sample, in the units the chart draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelinePoint {
    pub t_s: f64,
    pub device_mib: Option<f64>,
    pub live_threads: u32,
    pub live_streams: u64,
    /// Threads that had kept NPP streams by this sample.
    pub keeping_threads: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ThreadCounts {
    /// Threads that called NPP or created a stream.
    pub seen: usize,
    pub exited: usize,
    /// Threads whose exit is not known.
    pub exit_unknown: usize,
    /// Threads seen per hour of the trace; `None` for a trace too short to show a rate
    /// ([`crate::thresholds::MIN_TRACE_S_FOR_A_RATE`]).
    pub seen_per_hour: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StreamTotals {
    pub created: u64,
    pub destroyed: u64,
    pub kept: u64,
    /// Kept streams created outside any catalogued call but attributed to NPP by their stack.
    pub attributed_by_stack: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OverheadFigures {
    pub calls: u64,
    pub per_call_ns: Option<f64>,
    pub total_ms: f64,
    /// Recording time as a percentage of the time spent inside NPP.
    pub pct_of_npp_time: Option<f64>,
    /// A thread's first call (which registers the thread), per call, and how many there were;
    /// `None` where the trace did not record them apart.
    pub first_call_ns: Option<f64>,
    pub first_calls: u64,
    /// Every other call, per call; `None` where there was none or the trace did not record the
    /// first calls apart.
    pub later_call_ns: Option<f64>,
    /// Calls that asked the driver for their stream's flags; `None` in traces that did not count.
    pub flags_asked: Option<u64>,
    /// The interposer's CUPTI callbacks (stream creation and destruction, stream-creating API
    /// calls): recording paid outside NPP's calls. `None` where streams were not counted or the
    /// trace did not measure them.
    pub callbacks: Option<CallbackFigures>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CallbackFigures {
    pub callbacks: u64,
    pub per_callback_ns: Option<f64>,
    pub total_ms: f64,
}

/// The findings of `trace`, with the rules, fixes and predictions of `atlas` (the knowledge of
/// any NPP versions: that of the trace's version is used, see [`AtlasBasis`]; runs become
/// knowledge with [`crate::knowledge::Knowledge::of_runs`]).
pub fn findings(trace: &TraceFile, atlas: &[crate::knowledge::Knowledge]) -> TraceFindings {
    let first_call_s = trace
        .call_sites
        .iter()
        .map(|c| c.first_s)
        .chain(trace.streams.iter().filter(|s| is_npp(s)).map(|s| s.created_s))
        .reduce(f64::min);
    let mut groups = groups::groups(trace);
    let (keeping, kept_since) = keeping(trace);
    let timeline = timeline(trace, &kept_since);
    let memory = memory_growth(&timeline, first_call_s);
    let totals = stream_totals(trace);
    let other_kept = totals.kept
        - trace
            .streams
            .iter()
            .filter(|s| is_npp(s) && s.destroyed_s.is_none())
            .count() as u64;
    let growth = memory.map_or(0.0, |m| m.growth_mib.max(0.0));
    let all_kept = groups.iter().map(|g| g.streams_kept).sum::<u64>() + other_kept;
    let share = |kept: u64| {
        if all_kept == 0 {
            0.0
        } else {
            growth * kept as f64 / all_kept as f64
        }
    };
    for g in &mut groups {
        g.mib_attributed = share(g.streams_kept);
        g.observed = trace.capture.streams_missing.is_none().then(|| g.observed_class());
    }
    let other_streams = OtherStreams {
        created: trace.streams.iter().filter(|s| !is_npp(s)).count() as u64,
        kept: other_kept,
        mib_attributed: share(other_kept),
    };
    let basis = atlas::predict_groups(trace, atlas, &mut groups);
    groups.sort_by(|a, b| {
        let rank = |g: &SiteGroup| match g.observed {
            Some(LeakClass::Leak) => 0,
            Some(LeakClass::Bounded) => 1,
            _ => 2,
        };
        rank(a)
            .cmp(&rank(b))
            .then(b.mib_attributed.total_cmp(&a.mib_attributed))
            .then(b.calls.cmp(&a.calls))
    });
    let status = status(trace, &groups, memory);
    let device = judged_device(trace);
    let memory_scope = match &trace.capture.memory_device_wide {
        Some(devices) => MemoryScope::Devices(devices.clone()),
        None => MemoryScope::Process,
    };
    let cost = (status == TraceStatus::Grows)
        .then(|| {
            cost(
                trace,
                first_call_s,
                &keeping,
                memory,
                capacity_mib(trace, &memory_scope, device.as_ref()),
            )
        })
        .flatten();
    TraceFindings {
        status,
        memory,
        memory_scope,
        keeping,
        groups,
        other_streams,
        cost,
        timeline,
        threads: thread_counts(trace),
        streams: totals,
        overhead: overhead(trace),
        atlas: basis,
        device,
    }
}

/// Whether a stream is NPP's: created during a catalogued call, or by a stack naming NPP.
fn is_npp(s: &nppbench_model::TracedStream) -> bool {
    s.call_site.is_some() || s.attributed_function.is_some()
}

fn status(trace: &TraceFile, groups: &[SiteGroup], memory: Option<MemoryGrowth>) -> TraceStatus {
    if trace.call_sites.is_empty() && !trace.streams.iter().any(is_npp) && trace.capture.calls_missing.is_some() {
        return TraceStatus::NotSeen;
    }
    if trace.capture.streams_missing.is_some() {
        return match memory {
            Some(m) if m.growth_mib > GRANULE_MIB => TraceStatus::Grows,
            _ => TraceStatus::NoGrowth,
        };
    }
    if groups.iter().any(|g| g.observed == Some(LeakClass::Leak)) {
        TraceStatus::Grows
    } else if groups.iter().any(|g| g.observed == Some(LeakClass::Bounded)) {
        TraceStatus::Bounded
    } else {
        TraceStatus::NoGrowth
    }
}

/// The threads that kept NPP streams, and when each first kept one (sorted), for the timeline.
fn keeping(trace: &TraceFile) -> (Keeping, Vec<f64>) {
    let mut per_tid: BTreeMap<i64, (u64, f64)> = BTreeMap::new();
    for s in trace.streams.iter().filter(|s| is_npp(s) && s.destroyed_s.is_none()) {
        let e = per_tid.entry(s.tid).or_insert((0, f64::INFINITY));
        e.0 += 1;
        e.1 = e.1.min(s.created_s);
    }
    let counts: Vec<u64> = per_tid.values().map(|(n, _)| *n).collect();
    let mut distribution: BTreeMap<u64, usize> = BTreeMap::new();
    for n in &counts {
        *distribution.entry(*n).or_insert(0) += 1;
    }
    let streams: u64 = counts.iter().sum();
    let per_thread = match (counts.iter().min(), counts.iter().max()) {
        (Some(lo), Some(hi)) => Some((*lo, *hi, streams as f64 / counts.len() as f64)),
        _ => None,
    };
    let mut since: Vec<f64> = per_tid.values().map(|(_, t)| *t).collect();
    since.sort_by(f64::total_cmp);
    let k = Keeping {
        threads: counts.len(),
        streams,
        per_thread,
        distribution: distribution.into_iter().collect(),
    };
    (k, since)
}

fn timeline(trace: &TraceFile, kept_since: &[f64]) -> Vec<TimelinePoint> {
    trace
        .memory
        .iter()
        .map(|m| TimelinePoint {
            t_s: m.t_s,
            device_mib: m.device_bytes.map(|b| b as f64 / MIB),
            live_threads: m.live_threads,
            live_streams: m.live_streams,
            keeping_threads: kept_since.partition_point(|t| *t <= m.t_s),
        })
        .collect()
}

fn memory_growth(timeline: &[TimelinePoint], first_call_s: Option<f64>) -> Option<MemoryGrowth> {
    let with: Vec<(&TimelinePoint, f64)> = timeline
        .iter()
        .filter_map(|p| p.device_mib.map(|mib| (p, mib)))
        .collect();
    let start = first_call_s
        .and_then(|t| with.iter().position(|(p, _)| p.t_s >= t))
        .unwrap_or(0);
    let used = with.get(start..).filter(|u| !u.is_empty()).unwrap_or(&with[..]);
    let (first, last) = (used.first()?, used.last()?);
    let x: Vec<f64> = used.iter().map(|(p, _)| p.keeping_threads as f64).collect();
    let y: Vec<f64> = used.iter().map(|(_, mib)| *mib).collect();
    Some(MemoryGrowth {
        first_s: first.0.t_s,
        first_mib: first.1,
        last_s: last.0.t_s,
        last_mib: last.1,
        growth_mib: last.1 - first.1,
        peak_mib: y.iter().copied().fold(f64::MIN, f64::max),
        per_keeping_thread: least_squares(&x, &y),
    })
}

fn thread_counts(trace: &TraceFile) -> ThreadCounts {
    let seen = trace.threads.len();
    ThreadCounts {
        seen,
        exited: trace.threads.iter().filter(|t| t.exited == Some(true)).count(),
        exit_unknown: trace.threads.iter().filter(|t| t.exited.is_none()).count(),
        seen_per_hour: (trace.wall_s >= crate::thresholds::MIN_TRACE_S_FOR_A_RATE)
            .then(|| seen as f64 / (trace.wall_s / 3600.0)),
    }
}

fn stream_totals(trace: &TraceFile) -> StreamTotals {
    let kept = |s: &&nppbench_model::TracedStream| s.destroyed_s.is_none();
    StreamTotals {
        created: trace.streams.len() as u64,
        destroyed: trace.streams.iter().filter(|s| s.destroyed_s.is_some()).count() as u64,
        kept: trace.streams.iter().filter(kept).count() as u64,
        attributed_by_stack: trace
            .streams
            .iter()
            .filter(kept)
            .filter(|s| s.call_site.is_none() && s.attributed_function.is_some())
            .count() as u64,
    }
}

fn overhead(trace: &TraceFile) -> OverheadFigures {
    let o = &trace.overhead;
    let first = &trace.capture.first_call_overhead;
    let in_npp: u64 = trace.call_sites.iter().map(|c| c.time_in_npp_ns).sum();
    let split = first.calls > 0;
    OverheadFigures {
        calls: o.calls,
        per_call_ns: o.per_call_ns(),
        total_ms: o.recording_ns as f64 / 1e6,
        pct_of_npp_time: (in_npp > 0).then(|| o.recording_ns as f64 / in_npp as f64 * 100.0),
        first_call_ns: first.per_call_ns(),
        first_calls: first.calls,
        later_call_ns: split.then(|| o.less(first).per_call_ns()).flatten(),
        flags_asked: trace.capture.flags_asked,
        callbacks: trace.capture.callback_overhead.map(|c| CallbackFigures {
            callbacks: c.calls,
            per_callback_ns: c.per_call_ns(),
            total_ms: c.recording_ns as f64 / 1e6,
        }),
    }
}
