//! The trace as it stands: every thread's sites merged into call sites, the streams, the memory
//! samples and the overhead, as one [`TraceFile`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Instant;

use nppbench_model::{
    CallSite, Capture, Overhead, TRACE_SCHEMA_VERSION, TraceDevice, TraceEnd, TraceFile, TraceThread, TracedStream,
};

use crate::protocol::FLUSH_INTERVAL_S;
use crate::recorder::clock::{self, seconds};
use crate::recorder::cupti;
use crate::writer::memory::{self, Sampler, Samples};
use crate::writer::site::{SiteKey, SiteStats};
use crate::writer::streams::StreamRec;
use crate::writer::thread;

/// What the writer knows beside the recorders' data.
pub(crate) struct Context<'a> {
    pub(crate) end: TraceEnd,
    pub(crate) program: Vec<String>,
    pub(crate) streams_missing: Option<String>,
    /// Why NVML cannot be asked; `None` once the sampler is loaded.
    pub(crate) memory_unavailable: Option<String>,
    pub(crate) sampler: Option<&'a Sampler>,
    pub(crate) devices: &'a [TraceDevice],
    pub(crate) samples: &'a Samples,
    pub(crate) npp_libraries: Vec<String>,
    pub(crate) npp_version: Option<String>,
}

/// One site over all threads.
struct Merged {
    stats: SiteStats,
    threads: u32,
    first_call_threads: u32,
}

/// The threads' data, merged; `deadline` bounds the wait for a busy thread.
struct FromThreads {
    sites: HashMap<SiteKey, Merged>,
    threads: Vec<TraceThread>,
    overhead: Overhead,
    /// The part of `overhead` spent on each thread's first call.
    first_calls: Overhead,
    /// The recording time of the process's first call (the first thread's first), and the most
    /// one call took, ns.
    process_first_call_ns: Option<u64>,
    costliest_call_ns: Option<u64>,
    flags_asked: u64,
    /// Whether the threads' records were read (`thread::each_thread`).
    read: bool,
}

fn from_threads(deadline: Instant) -> FromThreads {
    let mut out = FromThreads {
        sites: HashMap::new(),
        threads: Vec::new(),
        overhead: Overhead::default(),
        first_calls: Overhead::default(),
        process_first_call_ns: None,
        costliest_call_ns: None,
        flags_asked: 0,
        read: false,
    };
    let mut first_thread_ns = u64::MAX;
    out.read = thread::each_thread(deadline, |t| {
        if t.calls == 0 {
            return;
        }
        for (key, stats) in &t.sites {
            let m = out.sites.entry(*key).or_insert_with(|| Merged {
                stats: SiteStats::new(stats.first_ns),
                threads: 0,
                first_call_threads: 0,
            });
            m.stats.merge(stats);
            m.threads += 1;
            m.first_call_threads += u32::from(t.first_site == Some(*key));
        }
        out.threads.push(TraceThread {
            tid: t.tid,
            first_s: seconds(t.first_ns),
            last_s: seconds(t.last_ns),
            calls: t.calls,
            exited: Some(t.exited),
        });
        out.overhead.calls += t.calls;
        out.overhead.recording_ns += t.overhead_ns;
        out.first_calls.calls += 1;
        out.first_calls.recording_ns += t.first_call_overhead_ns;
        if t.first_ns < first_thread_ns {
            first_thread_ns = t.first_ns;
            out.process_first_call_ns = Some(t.first_call_overhead_ns);
        }
        out.costliest_call_ns = out.costliest_call_ns.max(Some(t.max_overhead_ns));
        out.flags_asked += t.flags_asked;
    });
    out
}

fn call_site(key: &SiteKey, m: &Merged, streams: (u64, u64)) -> CallSite {
    CallSite {
        function: crate::SYMBOLS[usize::from(key.symbol)].to_owned(),
        width: key.width,
        height: key.height,
        src_stride: key.src_stride,
        dst_stride: key.dst_stride,
        declared_flags: key.declared_flags,
        stream: key.stream,
        real_flags: key.real_flags,
        device: key.device,
        calls: m.stats.calls,
        threads: m.threads,
        first_call_threads: m.first_call_threads,
        statuses: m.stats.statuses.to_vec(),
        streams_created: streams.0,
        streams_destroyed: streams.1,
        first_s: seconds(m.stats.first_ns),
        last_s: seconds(m.stats.last_ns),
        time_in_npp_ns: m.stats.in_npp_ns,
        calls_pending_asked: m.stats.pending_asked,
        calls_with_work_pending: m.stats.pending,
    }
}

fn traced_stream(s: &StreamRec, index: &HashMap<SiteKey, usize>) -> TracedStream {
    let (attributed_function, attributed_library) = s.attributed();
    TracedStream {
        handle: s.handle,
        tid: s.tid,
        created_s: seconds(s.created_ns),
        destroyed_s: s.destroyed_ns.map(seconds),
        call_site: s.site.and_then(|k| index.get(&k).copied()),
        attributed_function,
        attributed_library,
    }
}

/// Why calls may be missing, from what was recorded and what is loaded.
pub(crate) fn calls_missing(calls: u64, npp_loaded: bool, threads_read: bool) -> Option<String> {
    if !threads_read {
        return Some(
            "the threads' records could not be read at this write (another write held them past its deadline): \
             the calls are missing from it"
                .to_owned(),
        );
    }
    if calls > 0 {
        return None;
    }
    Some(if npp_loaded {
        "NPP is loaded but no catalogued function was called through the dynamic linker: functions looked up \
         with dlopen+dlsym through a library handle bypass LD_PRELOAD, and functions the catalogue lacks are not \
         interposed (their streams are still named by the creating stack)"
            .to_owned()
    } else {
        "no NPP shared library is loaded: NPP linked statically, or not used; streams are counted per thread only"
            .to_owned()
    })
}

/// The streams as the trace lists them, from the writer's registry.
struct FromStreams {
    call_sites: Vec<CallSite>,
    streams: Vec<TracedStream>,
    not_listed: u64,
    npp_stacks: BTreeMap<String, u64>,
    /// Threads that created streams without a catalogued call: their first and last creation.
    stream_only: BTreeMap<i64, (u64, u64)>,
}

/// The call sites (in `keys`' order, with their streams counted) and the streams, built inside
/// the registry's lock without copying it; `None` where another write held it past `deadline`.
fn from_streams(keys: &[(&SiteKey, &Merged)], threads: &[TraceThread], deadline: Instant) -> Option<FromStreams> {
    let index: HashMap<SiteKey, usize> = keys.iter().enumerate().map(|(i, (k, _))| (**k, i)).collect();
    thread::with_streams(deadline, |r| {
        r.name_stacks();
        let call_sites = keys
            .iter()
            .map(|(k, m)| call_site(k, m, r.per_site.get(*k).copied().unwrap_or_default()))
            .collect();
        let recs = r.in_order();
        // Threads that created streams without a catalogued call (looked up in a set: a
        // thread-per-call service has as many threads as streams, and a scan per stream made
        // each write quadratic).
        let calling: HashSet<i64> = threads.iter().map(|t| t.tid).collect();
        let mut stream_only: BTreeMap<i64, (u64, u64)> = BTreeMap::new();
        for s in recs.iter().filter(|s| !calling.contains(&s.tid)) {
            let e = stream_only.entry(s.tid).or_insert((s.created_ns, s.created_ns));
            e.0 = e.0.min(s.created_ns);
            e.1 = e.1.max(s.created_ns);
        }
        FromStreams {
            call_sites,
            streams: recs.iter().map(|s| traced_stream(s, &index)).collect(),
            not_listed: r.not_listed,
            npp_stacks: r.npp_stacks.clone(),
            stream_only,
        }
    })
}

/// The trace now.
pub(crate) fn snapshot(ctx: Context<'_>, deadline: Instant) -> TraceFile {
    let t = from_threads(deadline);
    let mut keys: Vec<(&SiteKey, &Merged)> = t.sites.iter().collect();
    keys.sort_by_key(|(k, m)| (m.stats.first_ns, k.symbol, k.width, k.height, k.device));
    let mut threads = t.threads;
    // Where the registry could not be had before the deadline, the calls are still written.
    let s = from_streams(&keys, &threads, deadline).unwrap_or_else(|| FromStreams {
        call_sites: keys.iter().map(|(k, m)| call_site(k, m, (0, 0))).collect(),
        streams: Vec::new(),
        not_listed: 0,
        npp_stacks: BTreeMap::new(),
        stream_only: BTreeMap::new(),
    });
    let (callbacks, callbacks_ns) = cupti::callbacks();
    let callbacks = Overhead {
        calls: callbacks,
        recording_ns: callbacks_ns,
    };
    threads.extend(s.stream_only.into_iter().map(|(tid, (a, b))| TraceThread {
        tid,
        first_s: seconds(a),
        last_s: seconds(b),
        calls: 0,
        exited: None,
    }));
    threads.sort_by(|a, b| a.first_s.total_cmp(&b.first_s));
    let npp_loaded = !ctx.npp_libraries.is_empty();
    let ordinals: BTreeSet<i32> = keys.iter().map(|(k, _)| k.device).collect();
    let used = ctx.sampler.map(|s| s.nvml_indices(&ordinals)).unwrap_or_default();
    let memory = memory::resolve(
        &ctx.samples.list,
        &used,
        ctx.memory_unavailable.as_deref(),
        std::process::id(),
    );
    let callback_overhead = ctx.streams_missing.is_none().then_some(callbacks);
    TraceFile {
        schema_version: TRACE_SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        program: ctx.program,
        pid: std::process::id(),
        started_at: clock::started_at(),
        wall_s: seconds(clock::now_ns()),
        end: ctx.end,
        capture: Capture {
            calls_missing: calls_missing(t.overhead.calls, npp_loaded, t.read),
            streams_missing: ctx.streams_missing,
            memory_missing: memory.missing,
            functions_interposed: crate::SYMBOLS.len() as u32,
            streams_not_listed: s.not_listed,
            flush_interval_s: FLUSH_INTERVAL_S,
            sample_interval_s: ctx.samples.interval_s,
            memory_device_wide: memory.device_wide,
            first_call_overhead: t.first_calls,
            process_first_call_ns: t.process_first_call_ns,
            costliest_call_ns: t.costliest_call_ns,
            flags_asked: Some(t.flags_asked),
            callback_overhead,
            npp_stacks: s.npp_stacks,
        },
        npp_libraries: ctx.npp_libraries,
        npp_version: ctx.npp_version,
        devices: ctx.devices.to_vec(),
        call_sites: s.call_sites,
        threads,
        streams: s.streams,
        memory: memory.samples,
        overhead: t.overhead,
    }
}

/// Streams created and not destroyed so far (0 where another write held the registry past
/// `deadline`).
pub(crate) fn live_streams(deadline: Instant) -> u64 {
    thread::with_streams(deadline, |r| r.live.len() as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_calls_are_explained_by_what_is_loaded() {
        assert_eq!(calls_missing(3, true, true), None);
        assert!(calls_missing(0, false, true).unwrap().contains("statically"));
        assert!(calls_missing(0, true, true).unwrap().contains("dlopen+dlsym"));
        assert!(
            calls_missing(5, true, false)
                .unwrap()
                .starts_with("the threads' records could not be read")
        );
    }
}
