//! The trace findings on generated traces with known answers, and the predictions against a
//! committed atlas run (real, measured on an H100 with NPP 13.0.1).
//!
//! Every `TraceFile` here is generated, not a measurement: built by hand so that each figure has
//! a known answer.

use std::path::Path;

use nppbench_model::{
    CallSite, Capture, ContextFill, MemorySample, Overhead, RunFile, StatusCount, StreamKind, Threading, TraceDevice,
    TraceEnd, TraceFile, TraceStreamKind, TraceThread, TracedStream,
};
use nppbench_stats::LeakClass;

use super::*;

mod designed;

const CONVERT: &str = "nppiConvert_8u32f_C1R_Ctx";
const GIB: u64 = 1 << 30;
const MIB_U: u64 = 1 << 20;

/// Generated, not a measurement: an empty trace of an hour on one 80 GiB device.
fn empty_trace() -> TraceFile {
    TraceFile {
        schema_version: nppbench_model::TRACE_SCHEMA_VERSION,
        tool_version: "0.1.0".into(),
        program: vec!["./server".into()],
        pid: 4242,
        started_at: "2026-11-26T10:00:00Z".into(),
        wall_s: 3600.0,
        end: TraceEnd::Exited { code: Some(0) },
        capture: Capture {
            functions_interposed: 12,
            flush_interval_s: 1.0,
            sample_interval_s: 1.0,
            ..Capture::default()
        },
        npp_libraries: vec!["/usr/local/cuda/lib64/libnppidei.so.13".into()],
        npp_version: Some("13.0.1".into()),
        devices: vec![TraceDevice {
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            memory_total_bytes: 80 * GIB,
        }],
        call_sites: Vec::new(),
        threads: Vec::new(),
        streams: Vec::new(),
        memory: Vec::new(),
        overhead: Overhead::default(),
    }
}

/// Generated, not a measurement: one call site.
#[allow(clippy::too_many_arguments)]
fn site(
    (w, h, src, dst): (i32, i32, i32, i32),
    stream: TraceStreamKind,
    real_flags: Option<u32>,
    declared_flags: u32,
    calls: u64,
    threads: u32,
    created: u64,
    destroyed: u64,
) -> CallSite {
    CallSite {
        function: CONVERT.into(),
        width: w,
        height: h,
        src_stride: Some(src),
        dst_stride: Some(dst),
        declared_flags,
        stream,
        real_flags,
        device: 0,
        calls,
        threads,
        first_call_threads: threads,
        statuses: vec![StatusCount { status: 0, calls }],
        streams_created: created,
        streams_destroyed: destroyed,
        first_s: 0.0,
        last_s: 3600.0,
        time_in_npp_ns: calls * 10_000,
        calls_pending_asked: 0,
        calls_with_work_pending: 0,
    }
}

fn stream(tid: i64, created_s: f64, call_site: Option<usize>, attributed: Option<&str>) -> TracedStream {
    TracedStream {
        handle: 0x1000 + tid as u64 * 8 + (created_s as u64 % 8),
        tid,
        created_s,
        destroyed_s: None,
        call_site,
        attributed_function: attributed.map(str::to_owned),
        attributed_library: attributed.map(|_| "libnppidei.so.13".to_owned()),
    }
}

/// Generated, not a measurement: 100 new threads over an hour, thread `i` calling Convert on
/// 31x31 s32/128 (a blocking stream) at `36 i` s and keeping 3 NPP streams; device memory
/// 1000 MiB + 1.5 MiB per thread that kept streams, sampled half-way between threads. Beside it,
/// a pool of 4 threads making 400 calls on 1920x1080 on a non-blocking stream, keeping none.
fn leaking_trace() -> TraceFile {
    let mut t = empty_trace();
    t.call_sites.push(site(
        (31, 31, 32, 128),
        TraceStreamKind::Created,
        Some(0),
        0,
        100,
        100,
        300,
        0,
    ));
    t.call_sites.push(site(
        (1920, 1080, 1920, 7680),
        TraceStreamKind::Created,
        Some(1),
        1,
        400,
        4,
        0,
        0,
    ));
    for i in 0..100i64 {
        let at = 36.0 * i as f64;
        for _ in 0..3 {
            t.streams.push(stream(1000 + i, at, Some(0), None));
        }
        t.threads.push(TraceThread {
            tid: 1000 + i,
            first_s: at,
            last_s: at + 0.01,
            calls: 1,
            exited: Some(true),
        });
        t.memory.push(MemorySample {
            t_s: at + 18.0,
            device_bytes: Some(1000 * MIB_U + (i as u64 + 1) * 3 * MIB_U / 2),
            live_threads: 6,
            live_streams: 3 * (i as u64 + 1),
        });
    }
    t.overhead = Overhead {
        calls: 500,
        recording_ns: 500 * 400,
    };
    t
}

#[test]
fn new_threads_that_keep_streams_grow_at_the_fitted_rate() {
    let f = findings(&leaking_trace(), &[]);
    assert_eq!(f.status, TraceStatus::Grows);
    let m = f.memory.unwrap();
    // From the first sample (18 s, 1001.5 MiB) to the last (1150 MiB).
    assert!((m.growth_mib - 148.5).abs() < 1e-9, "{}", m.growth_mib);
    let fit = m.per_keeping_thread.unwrap();
    assert!((fit.slope - 1.5).abs() < 1e-9);
    assert_eq!(f.keeping.threads, 100);
    assert_eq!(f.keeping.per_thread, Some((3, 3, 3.0)));
    assert_eq!(f.keeping.distribution, vec![(3, 100)]);
    let c = f.cost.unwrap();
    assert!(c.from_fit);
    assert_eq!(c.keeping_threads, 100);
    let r = c.rate.expect("an hour's trace shows a rate");
    assert!((r.keeping_threads_per_hour - 100.0).abs() < 1e-9);
    assert!((r.mib_per_hour - 150.0).abs() < 1e-9);
    assert!((r.mib_per_day - 3600.0).abs() < 1e-9);
    let headroom = 80.0 * 1024.0 - 1150.0;
    assert!((c.headroom_mib.unwrap() - headroom).abs() < 1e-9);
    assert!((r.hours_until_full.unwrap() - headroom / 150.0).abs() < 1e-9);
    assert!((c.threads_until_full.unwrap() - headroom / 1.5).abs() < 1e-9);
    // Overhead: 400 ns per call, against 10 µs in NPP per call.
    assert_eq!(f.overhead.per_call_ns, Some(400.0));
    assert!((f.overhead.pct_of_npp_time.unwrap() - 4.0).abs() < 1e-9);
}

/// A 0.1 s trace once projected "out of memory in 1 minute at 4.7 million threads an hour": a
/// burst is not a rate. The same 100 threads squeezed into a tenth of a second keep their MiB per
/// thread and the headroom in threads, and get no rate.
#[test]
fn a_burst_shorter_than_the_floor_projects_no_rate() {
    let mut t = leaking_trace();
    let scale = 0.1 / t.wall_s;
    t.wall_s = 0.1;
    t.threads
        .iter_mut()
        .for_each(|th| (th.first_s, th.last_s) = (th.first_s * scale, th.last_s * scale));
    t.streams.iter_mut().for_each(|s| s.created_s *= scale);
    t.memory.iter_mut().for_each(|m| m.t_s *= scale);
    let c = findings(&t, &[]).cost.expect("growth has a cost");
    assert!(c.observed_s < crate::thresholds::MIN_TRACE_S_FOR_A_RATE);
    assert_eq!(c.rate, None, "a burst projects no rate");
    assert_eq!(c.keeping_threads, 100);
    assert!((c.mib_per_thread - 1.5).abs() < 1e-9);
    let headroom = 80.0 * 1024.0 - 1150.0;
    assert!((c.threads_until_full.unwrap() - headroom / 1.5).abs() < 1e-9);
}

#[test]
fn groups_carry_their_pattern_streams_and_share_of_the_growth() {
    let f = findings(&leaking_trace(), &[]);
    assert_eq!(f.groups.len(), 2);
    let leak = &f.groups[0];
    assert_eq!(leak.geometry.unwrap().width, 31);
    assert_eq!(leak.threading, ThreadingPattern::ThreadPerCall);
    assert_eq!(leak.observed, Some(LeakClass::Leak));
    assert_eq!((leak.streams_created, leak.streams_kept), (300, 300));
    assert!((leak.mib_attributed - 148.5).abs() < 1e-9);
    assert_eq!(leak.prediction, Err(Unpredicted::NoAtlas));
    let pool = &f.groups[1];
    assert_eq!(pool.threading, ThreadingPattern::Pool(4));
    assert_eq!(pool.observed, Some(LeakClass::Flat));
    assert_eq!(pool.mib_attributed, 0.0);
}

#[test]
fn threading_patterns_follow_calls_per_thread() {
    assert_eq!(ThreadingPattern::of(5, 1), ThreadingPattern::Single);
    assert_eq!(ThreadingPattern::of(10, 10), ThreadingPattern::ThreadPerCall);
    assert_eq!(ThreadingPattern::of(8, 4), ThreadingPattern::ThreadPerCall);
    assert_eq!(ThreadingPattern::of(9, 4), ThreadingPattern::Pool(4));
}

#[test]
fn growth_is_split_over_every_kept_stream_including_those_outside_calls() {
    // Generated, not a measurement: a site keeping 4 streams on 4 threads, 2 streams kept by a
    // stack in NPP outside any call, 2 kept by the program itself; 80 MiB of growth.
    let mut t = empty_trace();
    t.call_sites.push(site(
        (31, 31, 32, 128),
        TraceStreamKind::LegacyDefault,
        None,
        0,
        4,
        4,
        4,
        0,
    ));
    for i in 0..4 {
        t.streams.push(stream(i, 10.0 + i as f64, Some(0), None));
    }
    t.streams.push(stream(7, 20.0, None, Some("nppiFilterBox_8u_C1R_Ctx")));
    t.streams.push(stream(8, 21.0, None, Some("nppiFilterBox_8u_C1R_Ctx")));
    t.streams.push(stream(9, 22.0, None, None));
    t.streams.push(stream(9, 23.0, None, None));
    for (k, mib) in [(0.0, 500), (30.0, 580)] {
        t.memory.push(MemorySample {
            t_s: k,
            device_bytes: Some(mib * MIB_U),
            live_threads: 3,
            live_streams: 0,
        });
    }
    let f = findings(&t, &[]);
    assert_eq!(f.groups.len(), 2);
    let by_stack = f.groups.iter().find(|g| g.attributed_by_stack()).unwrap();
    assert_eq!(by_stack.function, "nppiFilterBox_8u_C1R_Ctx");
    assert_eq!(by_stack.prediction, Err(Unpredicted::GeometryNotRecorded));
    assert!((by_stack.mib_attributed - 20.0).abs() < 1e-9);
    let site = f.groups.iter().find(|g| !g.attributed_by_stack()).unwrap();
    assert!((site.mib_attributed - 40.0).abs() < 1e-9);
    assert_eq!((f.other_streams.kept, f.other_streams.created), (2, 2));
    assert!((f.other_streams.mib_attributed - 20.0).abs() < 1e-9);
    assert_eq!(f.streams.attributed_by_stack, 2);
    // The baseline is the first sample once NPP was called (at 0 s here).
    assert!((f.memory.unwrap().growth_mib - 80.0).abs() < 1e-9);
}

#[test]
fn a_pool_that_keeps_streams_is_bounded_and_has_no_cost_over_time() {
    let mut t = empty_trace();
    t.call_sites.push(site(
        (31, 31, 32, 128),
        TraceStreamKind::Created,
        Some(0),
        0,
        400,
        4,
        12,
        0,
    ));
    for i in 0..12 {
        t.streams.push(stream(i % 4, 1.0, Some(0), None));
    }
    let f = findings(&t, &[]);
    assert_eq!(f.status, TraceStatus::Bounded);
    assert_eq!(f.groups[0].observed, Some(LeakClass::Bounded));
    assert!(f.cost.is_none());
    assert_eq!(f.keeping.per_thread, Some((3, 3, 3.0)));
}

#[test]
fn calls_not_seen_and_streams_not_counted_are_judged_by_what_was_seen() {
    let mut t = empty_trace();
    t.capture.calls_missing = Some("NPP is linked statically".into());
    assert_eq!(findings(&t, &[]).status, TraceStatus::NotSeen);
    let mut t = leaking_trace();
    t.capture.streams_missing = Some("libcupti not found".into());
    t.streams.clear();
    let f = findings(&t, &[]);
    // 148.5 MiB of growth is more than a granule.
    assert_eq!(f.status, TraceStatus::Grows);
    assert!(f.groups.iter().all(|g| g.observed.is_none()));
}

#[test]
fn the_context_filling_follows_declared_against_real_flags() {
    let mut t = empty_trace();
    t.call_sites = vec![
        site((31, 31, 32, 128), TraceStreamKind::Created, Some(1), 0, 1, 1, 0, 0),
        site((31, 31, 32, 128), TraceStreamKind::Created, Some(0), 1, 1, 1, 0, 0),
        site((31, 31, 32, 128), TraceStreamKind::LegacyHandle, None, 0, 1, 1, 0, 0),
        site((31, 31, 32, 128), TraceStreamKind::Created, None, 0, 1, 1, 0, 0),
    ];
    let groups = groups::groups(&t);
    let p = nppbench_model::Primitive::CONVERT_8U32F_C1R;
    let s = |i: usize| atlas::scenario(&groups[i], p);
    let (g, stream, context, threading) = s(0).unwrap();
    assert_eq!((g.width, g.src_stride, g.dst_stride), (31, 32, 128));
    assert_eq!(
        (stream, context, threading),
        (
            StreamKind::NonBlocking,
            ContextFill::DeclaredBlocking,
            Threading::Single
        )
    );
    assert_eq!(s(1).unwrap().2, ContextFill::DeclaredNonBlocking);
    assert_eq!(
        (s(2).unwrap().1, s(2).unwrap().2),
        (StreamKind::LegacyDefault, ContextFill::FromStream)
    );
    assert_eq!(s(3), Err(Unpredicted::StreamFlagsUnknown));
}

fn atlas_run() -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-npp-13.0.1/run.json.gz");
    RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn predictions_from_a_real_atlas_agree_or_show_the_disagreement() {
    // The generated trace's 31x31 site is a scenario this atlas measured: it leaks there too.
    let mut t = leaking_trace();
    // And a generated site the rule says does not leak (a row of 64 bytes), observed keeping
    // streams: the two disagree.
    t.call_sites.push(site(
        (64, 64, 64, 256),
        TraceStreamKind::Created,
        Some(0),
        0,
        10,
        10,
        30,
        0,
    ));
    let atlas = crate::knowledge::Knowledge::of_runs(&[atlas_run()]).unwrap();
    let f = findings(&t, &atlas);
    let basis = f.atlas.as_ref().unwrap();
    assert_eq!(basis.version_matches, Some(true));
    assert_eq!(basis.runs, 1);
    let by_width = |w: i32| f.groups.iter().find(|g| g.geometry.unwrap().width == w).unwrap();
    let leak = by_width(31).prediction.as_ref().unwrap();
    assert_eq!(leak.answer.class, Some(LeakClass::Leak));
    assert!(matches!(leak.answer.basis, crate::predict::Basis::Measured(_)));
    assert_eq!(leak.agrees, Some(true));
    let advice = by_width(31).advice.as_ref().unwrap();
    assert!(advice.rules.is_some());
    assert!(
        advice
            .fixes
            .iter()
            .any(|x| x.title.contains("non-blocking stream") && x.fixed > 0)
    );
    assert_eq!(by_width(1920).prediction.as_ref().unwrap().agrees, Some(true));
    let odd = by_width(64).prediction.as_ref().unwrap();
    assert_eq!(odd.answer.class, Some(LeakClass::Flat));
    assert_eq!(odd.agrees, Some(false));
}

#[test]
fn device_wide_samples_are_judged_against_the_devices_summed() {
    // Generated, not a measurement: the leaking trace as a container records it, NVML's used
    // memory of device 0 (every process on it), 2000 MiB above the process's own.
    let mut t = leaking_trace();
    for m in &mut t.memory {
        m.device_bytes = m.device_bytes.map(|b| b + 2000 * MIB_U);
    }
    t.capture.memory_device_wide = Some(vec![0]);
    let f = findings(&t, &[]);
    assert_eq!(f.memory_scope, MemoryScope::Devices(vec![0]));
    let m = f.memory.unwrap();
    assert!((m.growth_mib - 148.5).abs() < 1e-9, "the growth is the same");
    let headroom = 80.0 * 1024.0 - 3150.0;
    assert!((f.cost.unwrap().headroom_mib.unwrap() - headroom).abs() < 1e-9);
    assert_eq!(findings(&leaking_trace(), &[]).memory_scope, MemoryScope::Process);
}

#[test]
fn a_threads_first_call_is_costed_apart_from_later_ones() {
    // Generated: 500 calls on 104 threads, 2.4 µs on each first call, 200 ns on the rest.
    let mut t = leaking_trace();
    t.capture.first_call_overhead = Overhead {
        calls: 104,
        recording_ns: 104 * 2400,
    };
    t.overhead.recording_ns = 104 * 2400 + 396 * 200;
    let o = findings(&t, &[]).overhead;
    assert_eq!(
        (o.first_calls, o.first_call_ns, o.later_call_ns),
        (104, Some(2400.0), Some(200.0))
    );
    // A trace written before the split: neither.
    let o = findings(&leaking_trace(), &[]).overhead;
    assert_eq!((o.first_call_ns, o.later_call_ns), (None, None));
}
