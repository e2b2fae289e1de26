//! Memory scenarios measured many to a probe process judge as a fresh process per scenario
//! judges them (issue #30): the committed atlas of NPP 13.0.1 measured both ways, back to back
//! on one H100 (`reports/batches/`).

use std::path::Path;

use nppbench_analysis::{LeakClass, MemoryAnalysis, RunAnalysis};
use nppbench_model::RunFile;

fn load(name: &str) -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/batches")
        .join(name);
    RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn differences() {
    let alone = load("atlas-npp-13.0.1-process-per-scenario.json");
    for name in [
        "atlas-npp-13.0.1-batched-seed-1.json",
        "atlas-npp-13.0.1-batched-seed-2.json",
    ] {
        let batched = load(name);
        let (a, b) = (RunAnalysis::new(&alone), RunAnalysis::new(&batched));
        let mut n = 0;
        for m in &a.memory {
            let x = b
                .memory
                .iter()
                .find(|x| x.record.scenario.id == m.record.scenario.id)
                .unwrap();
            let per = |m: &MemoryAnalysis| {
                m.streams_never_destroyed
                    .map(|k| (f64::from(k) / f64::from(m.threads_spawned.max(1)) * 10.0).round())
            };
            if m.class != x.class || per(m) != per(x) {
                n += 1;
                eprintln!(
                    "{:?} {:?} {}",
                    m.record.scenario.threading, m.record.scenario.stream, m.threads_spawned
                );
                eprintln!(
                    "{name} {} {:?}/{:?} {:?}/{:?} {:?} calls {}/{}",
                    m.record.scenario.id,
                    m.class,
                    x.class,
                    m.streams_never_destroyed,
                    x.streams_never_destroyed,
                    x.record.batch,
                    m.calls,
                    x.calls
                );
            }
        }
        eprintln!("{name}: {n} differ of {}", a.memory.len());
    }
}

#[test]
fn bounded_and_streams() {
    let alone = load("atlas-npp-13.0.1-process-per-scenario.json");
    let a = RunAnalysis::new(&alone);
    let mut t = std::collections::BTreeMap::new();
    for m in &a.memory {
        let th = m.record.scenario.threading;
        if th.thread_bound().is_none() {
            continue;
        }
        let kept = m.streams_never_destroyed.unwrap_or(0) > 0;
        *t.entry((format!("{th}"), format!("{:?}", m.class), kept)).or_insert(0) += 1;
    }
    for (k, v) in t {
        eprintln!("{k:?} {v}");
    }
    let batched = load("atlas-npp-13.0.1-batched-seed-1.json");
    let b = RunAnalysis::new(&batched);
    let mut t = std::collections::BTreeMap::new();
    for m in &b.memory {
        let th = m.record.scenario.threading;
        if th.thread_bound().is_none() {
            continue;
        }
        let kept = m.streams_never_destroyed.unwrap_or(0) > 0;
        *t.entry((format!("{th}"), format!("{:?}", m.class), kept)).or_insert(0) += 1;
    }
    for (k, v) in t {
        eprintln!("B {k:?} {v}");
    }
}
