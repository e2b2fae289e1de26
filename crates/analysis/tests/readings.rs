//! Reading memory only where the settle rule judges (`nppbench_stats::settle::reads_at`),
//! replayed over a committed atlas run whose probes read after every call (one H100,
//! GPU-f5e58df3, NPP 13.0.1): each scenario must settle at the same call with the same class,
//! and the pages must judge its thinned series as they judge the whole one.

use std::path::Path;

use nppbench_analysis::LeakClass;
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

/// `record` as a probe that reads only where the rule judges would have written it: the figures
/// of the other calls blanked.
fn thinned(record: &MemoryRecord, min_calls: u32) -> MemoryRecord {
    let mut r = record.clone();
    let s = &r.scenario;
    let (calls, bound) = (s.calls, s.threading.thread_bound());
    let samples = &mut r.result.as_mut().expect("a result").samples;
    for i in 0..samples.len() {
        if !reads_at(samples.call[i], calls, min_calls, bound) {
            samples.process_used_bytes[i] = None;
            samples.device_used_bytes[i] = None;
        }
    }
    r
}

#[test]
fn reading_where_the_rule_judges_settles_as_reading_every_call() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let path = reports.join("performance/h100-GPU-f5e58df3-reading-time/atlas-after.json.gz");
    let run = RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let min_calls = run.matrix.settings.min_calls;
    let (mut replayed, mut every, mut thin) = (0, 0, 0);
    for record in &run.memory {
        if !matches!(record.outcome, Outcome::Ok) {
            continue;
        }
        let m = analyse_memory(record);
        let s = &record.scenario;
        assert_eq!(m.growth_calls.len() as u32, m.calls, "{}: read after every call", s.id);
        let whole = first_settled(record, &m.growth_calls, &m.growth_mib, |_| true, min_calls);
        // The replay is the rule the probe ran.
        let settled_after = record.result.as_ref().and_then(|r| r.settled_after);
        assert_eq!(whole.map(|w| w.0), settled_after, "{}", s.id);
        let read = |c| reads_at(c, s.calls, min_calls, s.threading.thread_bound());
        let sparse = first_settled(record, &m.growth_calls, &m.growth_mib, read, min_calls);
        assert_eq!(sparse, whole, "{}: settles otherwise read where the rule judges", s.id);
        let t = thinned(record, min_calls);
        let judged = analyse_memory(&t);
        assert_eq!(
            judged.class, m.class,
            "{}: the thinned series is judged otherwise",
            s.id
        );
        replayed += 1;
        every += m.growth_calls.len();
        thin += judged.growth_calls.len();
    }
    assert!(replayed > 10_000, "{replayed} scenarios replayed");
    let share = thin as f64 / every as f64;
    assert!(share < 0.7, "{thin} of {every} readings kept");
}
