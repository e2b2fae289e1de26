//! The interposer in a process's life beyond its calls: how it ends (a catchable signal, SIGKILL
//! while NVML still loads), a fork without exec, and what it asks the driver before a call that
//! can race. Part of the `interpose` test binary (its child and helpers are in `main.rs`).

use super::*;

/// #29 item 5: a call that can race (declared blocking, not the legacy stream) records whether
/// its stream still had work queued, as the driver the program loaded says (`cuStreamQuery`;
/// the stand-in says so for handles with bit 5 set); a call declared non-blocking, or on the
/// legacy stream, is not asked.
#[test]
fn calls_that_can_race_record_whether_their_stream_had_work_pending() {
    let pending: u64 = 0x7f00_1234_5020;
    let idle: u64 = 0x7f00_1234_5000;
    let count = |spec: &str| {
        let run = run_child(&format!(
            "threads=3;calls=4;symbols=nppiConvert_8u32f_C1R_Ctx;driver=1;setup_ms=200;{spec}"
        ));
        assert!(run.status.success(), "{spec}: {:?}", run.status);
        let s = &run.trace.call_sites[0];
        (s.calls, s.calls_pending_asked, s.calls_with_work_pending)
    };
    assert!(nppbench_trace_standin::driver::pending_for(pending));
    assert_eq!(count(&format!("stream={pending}")), (12, 12, 12));
    assert_eq!(count(&format!("stream={idle}")), (12, 12, 0));
    assert_eq!(count(&format!("stream={pending};flags=1")), (12, 0, 0));
    assert_eq!(count("stream=0"), (12, 0, 0));
    // Switched off, for an A/B of what the question costs.
    let run = run_child_with(
        &format!("threads=3;calls=4;symbols=nppiConvert_8u32f_C1R_Ctx;driver=1;setup_ms=200;stream={pending}"),
        &[(nppbench_trace::protocol::ASK_PENDING, "0")],
    );
    assert_eq!(run.trace.call_sites[0].calls_pending_asked, 0);
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
