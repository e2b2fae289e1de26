//! The lifecycle traces made on an H200 with NPP 13.0.1 (#32): a program ended by SIGTERM, one
//! that forks without exec and calls on in both processes (`reports/trace/lifecycle-*/`, by
//! `crates/trace/gpu-evidence/lifecycle_program.cu`); and what the recorder's race question costs
//! (`reports/trace/ask-pending-ab/`, an H100).

use std::path::Path;

use nppbench_model::{TraceEnd, TraceFile};

/// A committed trace: `file` in `dir` under reports/trace/.
fn committed(dir: &str, file: &str) -> TraceFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/trace")
        .join(dir)
        .join(file);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

fn calls(t: &TraceFile) -> u64 {
    t.call_sites.iter().map(|s| s.calls).sum()
}

/// `lifecycle_program term 100`'s trace in `dir` under reports/trace/: every call kept, and the
/// end told as SIGTERM.
pub(super) fn sigterm_kept_every_call(dir: &str) -> TraceFile {
    let t = committed(dir, "trace.json");
    assert_eq!(calls(&t), 100);
    assert_eq!(
        t.end,
        TraceEnd::Signal {
            signal: 15,
            name: "SIGTERM".into()
        }
    );
    t
}

/// `lifecycle_program fork 10`'s traces in `dir`: the parent's calls, and a child's trace that
/// records nothing and says why. Returns the parent's.
pub(super) fn forked_child_recorded_nothing(dir: &str) -> TraceFile {
    let t = committed(dir, "trace.json");
    assert_eq!(calls(&t), 20, "the parent's calls, before the fork and after");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/trace")
        .join(dir);
    let children: Vec<String> = std::fs::read_dir(&path)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(TraceFile::DESCENDANT_PREFIX))
        .collect();
    assert_eq!(children.len(), 1, "{children:?}");
    let child = committed(dir, &children[0]);
    assert!(child.call_sites.is_empty());
    assert!(child.capture.calls_missing.unwrap().contains("forked child of process"));
    t
}

#[test]
fn a_program_ended_by_sigterm_kept_every_call() {
    sigterm_kept_every_call("lifecycle-term");
}

#[test]
fn a_forked_child_recorded_nothing_and_said_so() {
    forked_child_recorded_nothing("lifecycle-fork");
}

/// What asking the driver whether the caller's stream still has work queued (#29's race
/// question, `cuStreamQuery` before each call that can race) costs the recorder: the seed's
/// program (100 threads, a call each, then 100 calls more) traced three times with the question
/// and three times without (`NPPBENCH_TRACE_ASK_PENDING=0`), interleaved on one H100
/// (`reports/trace/ask-pending-ab/`). Without it a call costs 252 to 425 ns to record; with it
/// 1,737 to 5,191 ns: the question is the recording's cost, on a thread's first call and after.
#[test]
fn the_race_question_is_what_a_recorded_call_costs() {
    let per_call = |ask: u32, i: u32| {
        let t = committed("ask-pending-ab", &format!("ask-{ask}-{i}/trace.json"));
        assert_eq!(calls(&t), 200);
        let asked: u64 = t.call_sites.iter().map(|s| s.calls_pending_asked).sum();
        assert_eq!(asked > 0, ask == 1, "ask {ask} run {i}: {asked} calls asked");
        t.overhead.recording_ns as f64 / t.overhead.calls as f64
    };
    let off: Vec<f64> = (1..=3).map(|i| per_call(0, i)).collect();
    let on: Vec<f64> = (1..=3).map(|i| per_call(1, i)).collect();
    let (off_max, on_min) = (
        off.iter().copied().fold(0.0, f64::max),
        on.iter().copied().fold(f64::MAX, f64::min),
    );
    assert!(off_max < 500.0, "without the question: {off:?} ns a call");
    assert!(on_min > 3.0 * off_max, "with it: {on:?} against {off:?}");
    // A page of a trace made without the question says that the race was not asked about.
    const UNASKED: &str = "The race was not asked about";
    let off = super::render(&committed("ask-pending-ab", "ask-0-1/trace.json"), &[]);
    assert!(off.index_html.contains(UNASKED));
    let on = super::render(&committed("ask-pending-ab", "ask-1-1/trace.json"), &[]);
    assert!(!on.index_html.contains(UNASKED));
}
