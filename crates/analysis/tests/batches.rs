//! Memory scenarios measured many to a probe process judge as a fresh process per scenario
//! judges them (issue #30): the atlas of NPP 13.0.1 measured batched (twice, two seeds) and with
//! a fresh process per scenario (the build before batches), back to back on one H100
//! (`reports/batches/`).

use std::collections::BTreeSet;
use std::path::Path;

use nppbench_analysis::evidence::{conclusive, pool};
use nppbench_analysis::{MemoryAnalysis, RunAnalysis};
use nppbench_model::RunFile;

fn load(path: &str) -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports").join(path);
    RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const FRESH: &str = "batches/atlas-npp-13.0.1-process-per-scenario.json";
const BATCHED: [&str; 2] = [
    "batches/atlas-npp-13.0.1-batched-seed-1.json",
    "batches/atlas-npp-13.0.1-batched-seed-2.json",
];

/// The functions whose classes change between fresh processes: the committed H100 atlas runs of
/// NPP 13.0.1 (each scenario a fresh process) and the fresh run beside the batched ones, pooled.
fn unstable_between_processes(fresh: &RunAnalysis<'_>) -> BTreeSet<String> {
    let dir = "h100-atlas-npp-13.0.1";
    let earlier: Vec<RunFile> = ["run-1-npp-13.0.1.json", "run-2-npp-13.0.1.json"]
        .iter()
        .map(|f| load(&format!("{dir}/{f}")))
        .collect();
    let earlier: Vec<RunAnalysis<'_>> = earlier.iter().map(RunAnalysis::new).collect();
    let mut all: Vec<&RunAnalysis<'_>> = earlier.iter().collect();
    all.push(fresh);
    let evidence = pool(&all);
    evidence.flips.iter().map(|f| f.primitive.name().to_owned()).collect()
}

/// NPP's streams kept per new thread, to a tenth: a scenario that stopped one call later keeps
/// one thread's streams more, not a different number per thread.
fn kept_per_thread(m: &MemoryAnalysis<'_>) -> Option<i64> {
    m.streams_never_destroyed
        .map(|k| (f64::from(k) / f64::from(m.threads_spawned.max(1)) * 10.0).round() as i64)
}

/// The scenarios of `b` judged otherwise than in `a` (class, or streams kept per thread), less
/// those of `unstable` functions and those too short to tell their class in either.
fn differences(a: &RunAnalysis<'_>, b: &RunAnalysis<'_>, unstable: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for m in &a.memory {
        let id = &m.record.scenario.id;
        let n = b.memory.iter().find(|x| &x.record.scenario.id == id).unwrap();
        if unstable.contains(m.record.scenario.primitive.name()) || !conclusive(m) || !conclusive(n) {
            continue;
        }
        if m.class != n.class || kept_per_thread(m) != kept_per_thread(n) {
            out.push(format!(
                "{id}: {:?} against {:?} ({:?})",
                m.class, n.class, n.record.batch
            ));
        }
    }
    out
}

#[test]
fn a_batched_atlas_judges_every_scenario_as_a_fresh_process_per_scenario_does() {
    let fresh_run = load(FRESH);
    assert!(
        fresh_run.jobs.as_ref().unwrap().batching.is_none(),
        "a fresh process each"
    );
    let fresh = RunAnalysis::new(&fresh_run);
    let unstable = unstable_between_processes(&fresh);
    assert_eq!(
        unstable.iter().map(String::as_str).collect::<Vec<_>>(),
        ["AddC_8u_C3RSfs"],
        "the one function known to change class between fresh processes (docs/performance.md)"
    );
    for path in BATCHED {
        let run = load(path);
        let batching = run.jobs.as_ref().unwrap().batching.clone().unwrap();
        assert_eq!(batching.max_per_process, 64, "{path}");
        assert_eq!(run.memory.len(), fresh_run.memory.len());
        let batched = RunAnalysis::new(&run);
        // Measured, and stopped before they could tell their class (failed ones have no class).
        let undecided: Vec<&MemoryAnalysis<'_>> = batched
            .memory
            .iter()
            .filter(|m| m.class.is_some() && !conclusive(m))
            .collect();
        assert!(
            undecided
                .iter()
                .all(|m| m.record.scenario.threading == nppbench_model::Threading::Pool(16)),
            "only pools of 16 stop before they can tell their class"
        );
        let left_undecided = undecided.len();
        let differ = differences(&fresh, &batched, &unstable);
        assert!(differ.is_empty(), "{path}: {differ:#?}");
        let alone = run
            .memory
            .iter()
            .filter(|m| m.batch.as_ref().is_some_and(|b| b.alone_because.is_some()));
        assert!(
            alone.clone().count() > 50,
            "{path}: pools whose growth depends on the process"
        );
        assert!(alone.clone().all(|m| m.batch.as_ref().unwrap().size == 1));
        eprintln!(
            "{path}: {} scenarios, judged as in fresh processes but AddC_8u_C3RSfs and {left_undecided} undecided pools of 16; {} measured again alone",
            run.memory.len(),
            alone.count()
        );
    }
}

#[test]
fn a_scenarios_class_does_not_depend_on_its_place_in_its_batch() {
    let fresh_run = load(FRESH);
    let fresh = RunAnalysis::new(&fresh_run);
    let unstable = unstable_between_processes(&fresh);
    let runs: Vec<RunFile> = BATCHED.iter().map(|p| load(p)).collect();
    let (one, two) = (RunAnalysis::new(&runs[0]), RunAnalysis::new(&runs[1]));
    assert!(differences(&one, &two, &unstable).is_empty());
    // The two seeds put scenarios in other places: every place from the first to the last holds
    // scenarios, and most scenarios moved.
    let place = |m: &MemoryAnalysis<'_>| m.record.batch.as_ref().map(|b| b.position);
    let moved = one
        .memory
        .iter()
        .zip(&two.memory)
        .filter(|(a, b)| place(a) != place(b))
        .count();
    assert!(
        moved * 10 > one.memory.len() * 9,
        "{moved} of {} moved",
        one.memory.len()
    );
    let places: BTreeSet<u32> = one.memory.iter().filter_map(place).collect();
    assert_eq!(places.len(), 64, "every place of a batch of 64 is taken");
}

#[test]
fn batches_measure_the_atlas_seven_times_faster() {
    let memory_s = |r: &RunFile| r.phases.iter().find(|p| p.phase == "memory").unwrap().wall_s;
    let fresh = load(FRESH);
    for path in BATCHED {
        let run = load(path);
        assert_eq!(run.environment.gpu.uuid, fresh.environment.gpu.uuid, "one GPU");
        let (a, b) = (memory_s(&fresh), memory_s(&run));
        eprintln!(
            "{path}: {b:.1} s against {a:.1} s, {:.0} against {:.0} scenarios a second",
            run.memory.len() as f64 / b,
            fresh.memory.len() as f64 / a
        );
        assert!(b * 6.0 < a, "{b} s against {a} s");
    }
}
