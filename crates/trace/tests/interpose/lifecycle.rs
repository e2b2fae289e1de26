//! The interposer in a process's life beyond its calls: how it ends (a catchable signal, SIGKILL
//! while NVML still loads), a fork without exec, and what it asks the driver before a call that
//! can race. Part of the `interpose` test binary (its child and helpers are in `main.rs`).

use super::*;

/// #29 item 5: a call that can race (declared blocking, not the legacy stream) records whether
/// its stream still had work queued, as the driver the program loaded says (`cuStreamQuery`;
/// the stand-in says so for handles with bit 5 set); a call declared non-blocking, or on the
/// legacy stream, is not asked. Every call asks with `NPPBENCH_TRACE_ASK_PENDING=all`; by
/// default within a budget (`recorder/pending.rs`), the process's first such call always.
#[test]
fn calls_that_can_race_record_whether_their_stream_had_work_pending() {
    let pending: u64 = 0x7f00_1234_5020;
    let idle: u64 = 0x7f00_1234_5000;
    let count_with = |spec: &str, asking: &str| {
        let run = run_child_with(
            &format!("threads=3;calls=4;symbols=nppiConvert_8u32f_C1R_Ctx;driver=1;setup_ms=200;{spec}"),
            &[(nppbench_trace::protocol::ASK_PENDING, asking)],
        );
        assert!(run.status.success(), "{spec}: {:?}", run.status);
        let s = &run.trace.call_sites[0];
        (s.calls, s.calls_pending_asked, s.calls_with_work_pending)
    };
    let count = |spec: &str| count_with(spec, "all");
    assert!(nppbench_trace_standin::driver::pending_for(pending));
    assert_eq!(count(&format!("stream={pending}")), (12, 12, 12));
    assert_eq!(count(&format!("stream={idle}")), (12, 12, 0));
    assert_eq!(count(&format!("stream={pending};flags=1")), (12, 0, 0));
    assert_eq!(count("stream=0"), (12, 0, 0));
    // Within the budget: asked at least once, and every answer counted.
    let (calls, asked, with_work) = count_with(&format!("stream={pending}"), "budget");
    assert!(
        calls == 12 && (1..=12).contains(&asked) && with_work == asked,
        "{calls} {asked} {with_work}"
    );
    // Switched off, for an A/B of what the question costs.
    assert_eq!(count_with(&format!("stream={pending}"), "0"), (12, 0, 0));
}

/// #32: a service stopped by SIGTERM lost its whole trace (the file covered its first 7 ms:
/// the writer flushed nothing while NVML loaded, and no exit path runs for a signal's default
/// action). Now each of SIGTERM, SIGINT and SIGHUP, raised right after the calls, finds every
/// call in the file, the end says which signal, and the process still ends by that signal. NVML
/// is made slow here, as it is on a GPU machine.
#[test]
fn a_program_ended_by_a_catchable_signal_keeps_every_call() {
    for (then, sig) in [("term", libc::SIGTERM), ("int", libc::SIGINT), ("hup", libc::SIGHUP)] {
        let run = run_child_with(
            &format!("threads=4;calls=5;then={then}"),
            &[(nppbench_trace::protocol::TEST_NVML_DELAY_MS, "3000")],
        );
        assert_eq!(run.status.signal(), Some(sig), "{then}: {:?}", run.status);
        assert_eq!(run.trace.overhead.calls, 20, "{then}");
        assert_eq!(
            run.trace.end,
            TraceEnd::Signal {
                signal: sig,
                name: format!("SIG{}", then.to_uppercase()),
            }
        );
    }
}

/// #32: a forked child kept recording with no writer to drain it (4 KiB more every 63 calls,
/// forever). Now it stops recording at the fork and writes a trace that says so; the parent's
/// trace holds its own calls, before the fork and after, and none of the child's.
#[test]
fn a_forked_child_stops_recording_and_says_so() {
    let dir_run = run_child("threads=2;calls=3;then=fork");
    assert!(dir_run.status.success(), "{:?}", dir_run.status);
    assert_eq!(
        dir_run.trace.overhead.calls, 12,
        "the parent's calls, before the fork and after"
    );
    let child = dir_run.descendants;
    assert_eq!(child.len(), 1, "{child:?}");
    let why = child[0].capture.calls_missing.as_deref().unwrap_or_default();
    assert!(why.contains("forked child of process"), "{why}");
    assert!(child[0].call_sites.is_empty());
    assert_eq!(child[0].end, TraceEnd::Exited { code: None });
}

/// #32: SIGKILL cannot be caught, but the writer flushes every half second from the first call
/// on, NVML loaded or not: a program killed 1.2 s after its calls has them all in the file.
#[test]
fn a_killed_program_keeps_the_calls_of_its_last_flush_while_nvml_still_loads() {
    let run = run_child_with(
        "threads=2;calls=3;then=kill_late",
        &[(nppbench_trace::protocol::TEST_NVML_DELAY_MS, "5000")],
    );
    assert_eq!(run.status.signal(), Some(libc::SIGKILL), "{:?}", run.status);
    assert_eq!(run.trace.overhead.calls, 6);
    assert_eq!(run.trace.end, TraceEnd::Running);
}

/// The interposer's test hook of stream events (`protocol::TEST_STREAM_EVENT_SYMBOL`), as the
/// child finds it.
pub(crate) fn stream_hook() -> extern "C" fn(u64, libc::c_int) {
    let name = std::ffi::CString::new(nppbench_trace::protocol::TEST_STREAM_EVENT_SYMBOL).unwrap();
    // SAFETY: looks a name up among the loaded objects (the preloaded interposer's export).
    let hook = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    assert!(!hook.is_null(), "the interposer exports its test hook");
    // SAFETY: the hook's signature, `void (uint64_t, int)` (`protocol::TEST_STREAM_EVENT_SYMBOL`).
    unsafe { std::mem::transmute::<*mut libc::c_void, extern "C" fn(u64, libc::c_int)>(hook) }
}

/// The child of [`a_signal_that_interrupts_a_stream_callback_still_flushes`]: four threads tell
/// the interposer of streams created and destroyed, as CUPTI's callbacks do (the test hook), and
/// after `delay_us`, SIGTERM comes to one of them (this thread blocks it), most likely in the
/// middle of a callback's work. Each stops after [`PAIRS`] streams, so that the final write has
/// a bounded amount to read.
pub(crate) fn term_in_callbacks(spec: &str) {
    const PAIRS: u64 = 50_000;
    let delay = Duration::from_micros(spec_value(spec, "delay_us").map_or(50_000, |v| v.parse().unwrap()));
    let hook = stream_hook();
    for t in 0..4u64 {
        std::thread::spawn(move || {
            for i in 0..PAIRS {
                let handle = 0x7f00_0000_0000 + (t << 32) + (i << 4);
                hook(handle, 1);
                hook(handle, 0);
            }
        });
    }
    // SAFETY: blocks SIGTERM on this thread only, so the kernel hands it to a looping one.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
    std::thread::sleep(delay);
    // SAFETY: signals this process.
    unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
    std::thread::sleep(Duration::from_secs(10));
}

/// #32: the exit path must never wait on a lock that a signal could have interrupted. Stream
/// callbacks took the stream registry's lock on the program's threads, and the final write took
/// it too, without a deadline: a SIGTERM whose handler interrupted a callback holding it would
/// leave the writer waiting until the handler gave up (2 s), the trace ending "running". Now the
/// callbacks append to their thread's feed and take no lock (`xtask/tests/tidy.rs` checks that
/// `recorder/` names none). This test guards the final write where signals land on threads doing
/// nothing but stream callbacks: twelve times, at delays from 10 to 65 ms, every process ends by
/// SIGTERM well inside the handler's 2 s, with the end and the streams written. It does not show
/// the old lock's hazard, whose window was too short to hit: the library of commit 5c262bc, given
/// the same hook, passed it 60 times of 60.
#[test]
fn a_signal_that_interrupts_a_stream_callback_still_flushes() {
    for round in 0..12u64 {
        let delay_us = 10_000 + round * 5_000;
        let started = Instant::now();
        let run = run_child_with(
            &format!("threads=1;calls=1;then=term_in_callbacks;delay_us={delay_us}"),
            &[(nppbench_trace::protocol::TEST_STREAM_EVENTS, "1")],
        );
        let took = started.elapsed();
        assert_eq!(
            run.status.signal(),
            Some(libc::SIGTERM),
            "round {round}: {:?}",
            run.status
        );
        assert_eq!(
            run.trace.end,
            TraceEnd::Signal {
                signal: libc::SIGTERM,
                name: "SIGTERM".into(),
            },
            "round {round}: the final write happened"
        );
        assert!(!run.trace.streams.is_empty(), "round {round}: the streams were read");
        assert!(
            run.trace.capture.callback_overhead.is_none_or(|c| c.calls > 0),
            "round {round}"
        );
        assert!(
            took < Duration::from_millis(1_800 + delay_us / 1_000),
            "round {round}: {took:?}"
        );
    }
}

/// #32: a thread-per-call service, 10,000 threads one after another, each creating its stream
/// (the test hook, as CUPTI's callback would tell it) and then calling: no call and no stream is
/// lost, each stream is its creating thread's, and none is blamed on a call it was not made in.
/// The GPU's counterpart is `lifecycle_program threads 10000` (docs/seam-runs.sh).
#[test]
fn ten_thousand_threads_each_creating_a_stream_and_calling_lose_nothing() {
    let n = 10_000;
    let run = run_child_with(
        &format!("threads={n};calls=1;one_at_a_time=1;symbols=nppiConvert_8u32f_C1R_Ctx;stream_per_thread=1"),
        &[(nppbench_trace::protocol::TEST_STREAM_EVENTS, "1")],
    );
    assert!(run.status.success(), "{:?}", run.status);
    let t = &run.trace;
    assert_eq!(t.overhead.calls, n as u64);
    assert_eq!((t.call_sites.len(), t.call_sites[0].threads), (1, n as u32));
    assert_eq!(t.streams.len(), n);
    let calling: BTreeSet<i64> = run.records.iter().map(|r| r.tid).collect();
    let creating: BTreeSet<i64> = t.streams.iter().map(|s| s.tid).collect();
    assert_eq!(creating, calling, "each stream is the thread's that created it");
    let handles: BTreeSet<u64> = t.streams.iter().map(|s| s.handle).collect();
    let expected: BTreeSet<u64> = (0..n).map(nppbench_trace_standin::caller::stream_of_thread).collect();
    assert_eq!(handles, expected);
    assert!(
        t.streams
            .iter()
            .all(|s| s.call_site.is_none() && s.destroyed_s.is_none())
    );
    assert_eq!(t.call_sites[0].streams_created, 0, "made before the call, not in it");
}
