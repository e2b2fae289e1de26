//! The settle rule as probes now run it, replayed over committed runs whose probes read memory
//! after every call and stopped by the rule before it (NPP 12.2.3, 13.0.1 and 13.2.0, an H100 and
//! an H200): reading only where the rule judges (`nppbench_stats::settle::reads_at`) and
//! stopping quiet scenarios at half the minimum (`settle::quiet_from`) must give every scenario
//! the class its whole series has, never later, and the pages must judge the thinned, shortened
//! series as they judge the whole one.

use std::path::Path;

use nppbench_analysis::LeakClass;
use nppbench_analysis::evidence::conclusive;
use nppbench_analysis::memory::analyse_memory;
use nppbench_model::{MemoryRecord, Outcome, RunFile};
use nppbench_stats::settle::{Progress, reads_at, settled};

/// The first call after which the rule settles over the calls in `read` (the others not read),
/// and its class.
fn first_settled(
    record: &MemoryRecord,
    calls: &[u32],
    growth: &[f64],
    read: impl Fn(u32) -> bool,
    min_calls: u32,
) -> Option<(u32, LeakClass)> {
    let s = &record.scenario;
    let streams = record.result.as_ref()?.streams.as_ref().map(|st| st.created.as_slice());
    let (mut kept_calls, mut kept) = (Vec::new(), Vec::new());
    for (&c, &g) in calls.iter().zip(growth) {
        if read(c) {
            kept_calls.push(c);
            kept.push(g);
        }
        let class = settled(Progress {
            calls: &kept_calls,
            growth_mib: &kept,
            made: c,
            planned: s.calls,
            streams_created: streams.map(|st| &st[..c as usize]),
            thread_bound: s.threading.thread_bound(),
            min_calls,
        });
        if let Some(class) = class {
            return Some((c, class));
        }
    }
    None
}

/// `record` as a probe that reads only where the rule judges, and stops after call `made`,
/// would have written it.
fn thinned(record: &MemoryRecord, min_calls: u32, made: u32) -> MemoryRecord {
    let mut r = record.clone();
    let s = &r.scenario;
    let (calls, bound) = (s.calls, s.threading.thread_bound());
    let result = r.result.as_mut().expect("a result");
    let samples = &mut result.samples;
    for i in 0..samples.len() {
        if !reads_at(samples.call[i], calls, min_calls, bound) {
            samples.process_used_bytes[i] = None;
            samples.device_used_bytes[i] = None;
        }
    }
    let keep = made as usize;
    samples.call.truncate(keep);
    samples.threads_spawned.truncate(keep);
    samples.elapsed_ms.truncate(keep);
    samples.latency_us.truncate(keep);
    samples.process_used_bytes.truncate(keep);
    samples.device_used_bytes.truncate(keep);
    samples.reading_us.truncate(keep);
    result.settled_after = Some(made);
    r
}

/// Replays every answered scenario of the run at `path`; returns the scenarios, the calls made
/// and the readings, before and now.
fn replay(path: &str) -> (usize, (u32, u32), (usize, usize)) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports").join(path);
    let run = RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let min_calls = run.matrix.settings.min_calls;
    let (mut replayed, mut calls, mut readings) = (0, (0, 0), (0, 0));
    for record in &run.memory {
        if !matches!(record.outcome, Outcome::Ok) {
            continue;
        }
        let m = analyse_memory(record);
        let s = &record.scenario;
        if m.growth_calls.len() as u32 != m.calls || m.class.is_none() {
            continue;
        }
        let read = |c| reads_at(c, s.calls, min_calls, s.threading.thread_bound());
        let now = first_settled(record, &m.growth_calls, &m.growth_mib, read, min_calls);
        // Where the rule now settles nowhere, the scenario made its planned calls.
        let (made, class) = now.unwrap_or((s.calls, m.class.unwrap()));
        assert!(made <= m.calls, "{}: settled after {made} calls, not {}", s.id, m.calls);
        if now.is_some() {
            assert_eq!(
                Some(class),
                m.class,
                "{}: settled otherwise than its whole series",
                s.id
            );
        }
        let thin = thinned(record, min_calls, made);
        let judged = analyse_memory(&thin);
        assert_eq!(judged.class, m.class, "{}: judged otherwise, thinned", s.id);
        assert_eq!(
            conclusive(&judged),
            conclusive(&m),
            "{}: evidence otherwise, thinned",
            s.id
        );
        replayed += 1;
        calls = (calls.0 + m.calls, calls.1 + made);
        readings = (
            readings.0 + m.growth_calls.len(),
            readings.1 + judged.growth_calls.len(),
        );
    }
    (replayed, calls, readings)
}

#[test]
fn the_rule_as_probes_run_it_gives_each_scenario_its_whole_series_class() {
    let (n, calls, readings) = replay("h100-atlas-bisected-npp-13.0.1/run-1-npp-13.0.1.json.gz");
    assert!(n > 7_000, "{n} scenarios replayed");
    // About two fifths fewer calls and a quarter of the readings (the figures derived here alone).
    eprintln!("atlas, H100, NPP 13.0.1: calls {calls:?}, readings {readings:?}");
    assert!(f64::from(calls.1) < 0.65 * f64::from(calls.0), "{calls:?}");
    assert!((readings.1 as f64) < 0.3 * readings.0 as f64, "{readings:?}");
    for other in [
        "h100-atlas-npp-12.2.3/run-1-npp-12.2.3.json.gz",
        "wrong-pixels/h200-GPU-fd1537c9/wrong-npp-13.2.0.json.gz",
    ] {
        let (n, calls, readings) = replay(other);
        eprintln!("{other}: {n} scenarios, calls {calls:?}, readings {readings:?}");
        assert!(n > 2_000, "{other}: {n} scenarios replayed");
    }
}
