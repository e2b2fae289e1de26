//! The ordering rounds in probes of their own judge as the rounds in the memory probes judged
//! (issue #30): the atlas of NPP 13.0.1 measured by the build before the ordering phase (rounds
//! after each memory scenario, in its probe, connections inherited) and after (memory probes on
//! one connection, then the ordering phase), back to back on one H200
//! (`reports/batches/atlas-npp-13.0.1-ordering-{before,after}.json`, `gpu-ordering.txt`).

use std::collections::BTreeSet;
use std::path::Path;

use nppbench_analysis::RunAnalysis;
use nppbench_analysis::evidence::conclusive;
use nppbench_analysis::memory::RaceClass;
use nppbench_model::{RunFile, StreamKind};

fn load(name: &str) -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/batches")
        .join(name);
    RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The one function whose race and leak classes change between processes in the committed
/// atlases (docs/atlas.md): its scenarios are left out of both comparisons.
const UNSTABLE: &str = "AddC_8u_C3RSfs";

#[test]
fn the_ordering_phase_finds_the_races_the_rounds_in_the_memory_probes_found() {
    let (before, after) = (
        load("atlas-npp-13.0.1-ordering-before.json"),
        load("atlas-npp-13.0.1-ordering-after.json"),
    );
    let (a, b) = (RunAnalysis::new(&before), RunAnalysis::new(&after));
    assert_eq!(a.memory.len(), b.memory.len());
    let mut compared = 0;
    let mut differ = Vec::new();
    let mut unstable = BTreeSet::new();
    for m in &a.memory {
        let id = &m.record.scenario.id;
        let n = b.memory.iter().find(|x| &x.record.scenario.id == id).unwrap();
        let measured = |r: &RaceClass| matches!(r, RaceClass::Races | RaceClass::Ordered);
        if !measured(&m.race) || !measured(&n.race) {
            continue;
        }
        if m.record.scenario.primitive.name() == UNSTABLE {
            if m.race != n.race {
                unstable.insert(id.clone());
            }
            continue;
        }
        compared += 1;
        if m.race != n.race {
            differ.push(format!("{id}: {:?} against {:?}", m.race, n.race));
        }
    }
    assert!(compared > 7_000, "{compared}");
    assert!(differ.is_empty(), "{} differ:\n{}", differ.len(), differ.join("\n"));
    // What the one unstable function did, as docs/performance.md says it.
    assert_eq!(unstable.len(), 5, "{unstable:?}");
    let races = |r: &RunAnalysis<'_>| r.memory.iter().filter(|m| m.race == RaceClass::Races).count();
    assert_eq!((races(&a), races(&b)), (731, 732));
}

/// Leak classes agree but for one kind, in both directions (4 scenarios each way): a pool on the
/// per-thread default stream that kept no NPP stream. Measured alone in a fresh process it grows
/// 8 MiB (the CUDA runtime's per-thread default streams of its 16 threads: bounded); in a batch
/// whose earlier threads left that memory behind, none (flat). The batch's rule measures again
/// alone a scenario that grew without keeping a stream, not one that did not grow: a gap in
/// `page_bound`, open in #30. Any other difference fails.
#[test]
fn memory_probes_on_one_connection_judge_the_leak_as_on_the_drivers_default() {
    let (before, after) = (
        load("atlas-npp-13.0.1-ordering-before.json"),
        load("atlas-npp-13.0.1-ordering-after.json"),
    );
    let (a, b) = (RunAnalysis::new(&before), RunAnalysis::new(&after));
    let (mut differ, mut runtime) = (Vec::new(), Vec::new());
    for m in &a.memory {
        let id = &m.record.scenario.id;
        let n = b.memory.iter().find(|x| &x.record.scenario.id == id).unwrap();
        if m.record.scenario.primitive.name() == UNSTABLE || !conclusive(m) || !conclusive(n) {
            continue;
        }
        if m.class == n.class {
            continue;
        }
        let s = &m.record.scenario;
        let runtime_only = s.stream == StreamKind::PerThreadDefault
            && s.threading.thread_bound().is_some_and(|t| t >= 2)
            && m.streams_never_destroyed == Some(0)
            && n.streams_never_destroyed == Some(0);
        if runtime_only {
            runtime.push(id.clone());
        } else {
            differ.push(format!("{id}: {:?} against {:?}", m.class, n.class));
        }
    }
    assert!(differ.is_empty(), "{} differ:\n{}", differ.len(), differ.join("\n"));
    assert_eq!(runtime.len(), 8, "{runtime:?}");
}
