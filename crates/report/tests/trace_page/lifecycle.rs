//! The lifecycle traces made on an H200 with NPP 13.0.1 (#32): a program ended by SIGTERM, one
//! that forks without exec and calls on in both processes, and one of 10,000 threads that each
//! create a stream and make a call (`reports/trace/lifecycle-*/`, by
//! `crates/trace/gpu-evidence/lifecycle_program.cu`).

use std::path::Path;

use nppbench_model::{TraceEnd, TraceFile};

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

#[test]
fn a_program_ended_by_sigterm_kept_every_call() {
    let t = committed("lifecycle-term", "trace.json");
    assert_eq!(calls(&t), 100);
    assert_eq!(
        t.end,
        TraceEnd::Signal {
            signal: 15,
            name: "SIGTERM".into()
        }
    );
}

#[test]
fn a_forked_child_recorded_nothing_and_said_so() {
    let t = committed("lifecycle-fork", "trace.json");
    assert_eq!(calls(&t), 20, "the parent's calls, before the fork and after");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/trace/lifecycle-fork");
    let children: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(TraceFile::DESCENDANT_PREFIX))
        .collect();
    assert_eq!(children.len(), 1, "{children:?}");
    let child = committed("lifecycle-fork", &children[0]);
    assert!(child.call_sites.is_empty());
    assert!(child.capture.calls_missing.unwrap().contains("forked child of process"));
}

#[test]
fn ten_thousand_threads_each_with_a_stream_and_a_call_lost_no_call() {
    let t = committed("lifecycle-threads", "trace.json");
    assert_eq!(calls(&t), 10_000);
    assert_eq!(t.call_sites[0].threads, 10_000);
    assert_eq!(t.end, TraceEnd::Exited { code: Some(0) });
}
