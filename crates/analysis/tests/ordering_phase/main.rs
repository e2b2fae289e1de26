//! The rounds made beside the memory phase, once per configuration, judge as the ordering phase
//! after it did (issue #30): build 151cde0 against build faec88f, back to back on one H100
//! (`reports/batches/atlas-npp-13.0.1-beside-{before,after}.json.gz`, `gpu-beside.txt`). (The pairs
//! that showed the ordering rounds in probes of their own judging as the rounds in the memory
//! probes, pools at the heads of batches, and a probe reading its process's memory alone, judging
//! as the builds before, left the tree with issue #46; they are in git at 9cbff37 and c433f41,
//! and docs/performance.md keeps their figures.) And a census after each scenario from its last reading judges as
//! the census that listed again: build efb5959 against the build of that change, on a third
//! H100 (`atlas-npp-13.0.1-census-{before,after}.json.gz`, `gpu-census.txt`). What spared
//! processes, and what did not, is in `processes.rs`.

use std::collections::BTreeSet;
use std::path::Path;

use nppbench_analysis::RunAnalysis;
use nppbench_analysis::evidence::conclusive;
use nppbench_analysis::memory::RaceClass;
use nppbench_model::{RunFile, StreamKind};

mod processes;

fn load(name: &str) -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/batches")
        .join(name);
    RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The one function whose race and leak classes change between processes in the committed
/// atlases (docs/atlas.md): its scenarios are left out of both comparisons.
const UNSTABLE: &str = "AddC_8u_C3RSfs";

/// The race classes of two atlases compared: the scenarios whose race both measured and that
/// differ (the unstable function apart), those of the unstable function that differ, how many
/// were compared, and each run's races.
fn races_compared(before: &str, after: &str) -> (Vec<String>, BTreeSet<String>, usize, (usize, usize)) {
    let (before, after) = (load(before), load(after));
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
    let races = |r: &RunAnalysis<'_>| r.memory.iter().filter(|m| m.race == RaceClass::Races).count();
    (differ, unstable, compared, (races(&a), races(&b)))
}

/// The conclusive leak classes of two atlases compared (the unstable function apart): those that
/// differ, and of them the pools on the per-thread default stream that kept no NPP stream (each
/// with both classes and its place in the second run's batch).
fn leaks_compared(before: &str, after: &str) -> (Vec<String>, Vec<String>) {
    let (before, after) = (load(before), load(after));
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
            let place = n.record.batch.as_ref().map(|b| b.position);
            runtime.push(format!("{id}: {:?} against {:?} at {place:?}", m.class, n.class));
        } else {
            differ.push(format!("{id}: {:?} against {:?}", m.class, n.class));
        }
    }
    (differ, runtime)
}

/// The rounds beside the memory phase, once per configuration (305 scenarios share another's),
/// find the races the ordering phase after it found: 730 and 730. One scenario differs outside the
/// unstable function: Compare_8u_C1R 130x226 on a blocking stream, wrong in 1 of 4 rounds beside
/// (column 128, past the last full chunk) and in 0 of 4 after: a race that shows in some rounds.
#[test]
fn rounds_beside_the_memory_phase_find_the_races_the_phase_after_it_found() {
    let (differ, unstable, compared, races) = races_compared(
        "atlas-npp-13.0.1-beside-before.json.gz",
        "atlas-npp-13.0.1-beside-after.json.gz",
    );
    assert!(compared > 7_000, "{compared}");
    assert_eq!(
        differ,
        ["mem/Compare_8u_C1R/130x226-s512-d256/blocking/from_stream/thread_per_call: Ordered against Races"]
    );
    assert_eq!(unstable.len(), 7, "{unstable:?}");
    assert_eq!(races, (730, 730));
    let after = load("atlas-npp-13.0.1-beside-after.json.gz");
    let shared = after
        .memory
        .iter()
        .filter(|m| {
            m.result
                .as_ref()
                .and_then(|r| r.ordering.as_ref())
                .is_some_and(|o| o.shared_from.is_some())
        })
        .count();
    assert_eq!(shared, 305);
}

/// Leak classes with the rounds beside the memory phase: as the memory phase alone judged them,
/// but for two per-thread-default pools of the gap above.
#[test]
fn rounds_beside_the_memory_phase_leave_the_leak_classes_as_they_were() {
    let (differ, runtime) = leaks_compared(
        "atlas-npp-13.0.1-beside-before.json.gz",
        "atlas-npp-13.0.1-beside-after.json.gz",
    );
    assert!(differ.is_empty(), "{} differ:\n{}", differ.len(), differ.join("\n"));
    assert_eq!(runtime.len(), 2, "{runtime:?}");
}

/// The conclusive scenarios (the unstable function apart) whose NPP streams kept per new thread,
/// to a tenth, differ between two atlases: a scenario that stopped one call later keeps one
/// thread's streams more, not a different number per thread.
fn streams_compared(before: &str, after: &str) -> Vec<String> {
    let (before, after) = (load(before), load(after));
    let (a, b) = (RunAnalysis::new(&before), RunAnalysis::new(&after));
    let per_thread = |m: &nppbench_analysis::MemoryAnalysis<'_>| {
        m.streams_never_destroyed
            .map(|k| (f64::from(k) / f64::from(m.threads_spawned.max(1)) * 10.0).round() as i64)
    };
    let mut differ = Vec::new();
    for m in &a.memory {
        let id = &m.record.scenario.id;
        let n = b.memory.iter().find(|x| &x.record.scenario.id == id).unwrap();
        if m.record.scenario.primitive.name() == UNSTABLE || !conclusive(m) || !conclusive(n) {
            continue;
        }
        if per_thread(m) != per_thread(n) {
            differ.push(format!("{id}: {:?} against {:?}", per_thread(m), per_thread(n)));
        }
    }
    differ
}

/// Two atlases of one matrix judge alike: every conclusive leak class and every count of NPP
/// streams kept per thread the same, and every race class but `races_differ` (the unstable
/// function apart); `expected` is what the committed runs hold: scenarios of the unstable
/// function whose race differs, and how many scenarios race in each run.
fn same_answers(pair: [&str; 2], races_differ: &[&str], expected: (usize, (usize, usize))) {
    let (differ, runtime) = leaks_compared(pair[0], pair[1]);
    assert!(differ.is_empty(), "{} differ:\n{}", differ.len(), differ.join("\n"));
    assert!(runtime.is_empty(), "{runtime:#?}");
    let streams = streams_compared(pair[0], pair[1]);
    assert!(streams.is_empty(), "{streams:#?}");
    let (races, unstable, compared, counts) = races_compared(pair[0], pair[1]);
    assert!(compared > 7_000, "{compared}");
    assert_eq!(races, races_differ, "{pair:?}");
    assert_eq!((unstable.len(), counts), expected, "{pair:?}: {unstable:?}");
}

/// Memory scenarios a second: the run's memory scenarios over its memory phase (with the rounds
/// beside it).
fn memory_rate(r: &RunFile) -> f64 {
    r.memory.len() as f64 / r.phases.iter().find(|p| p.phase == "memory").unwrap().wall_s
}

/// HEAD before the census change (build efb5959) and after it, the atlas preset of that build
/// back to back on a third H100 (`gpu-census.txt`), committed gzip-compressed.
const CENSUS: [&str; 2] = [
    "atlas-npp-13.0.1-census-before.json.gz",
    "atlas-npp-13.0.1-census-after.json.gz",
];

/// A memory probe's census after each scenario takes the compute processes its last reading
/// listed, and lists the graphics processes in one query, where it listed both lists again in
/// four (`probe/processes.rs`): every conclusive leak class, every count of NPP streams kept per
/// thread and every race class is the same (the unstable function apart), and every scenario
/// still says how many probes ran beside it.
#[test]
fn the_census_from_the_last_reading_judges_every_scenario_as_listing_again_did() {
    same_answers(CENSUS, &[], (7, (727, 728)));
    // The census still sees the probes beside a scenario: none only in the run's last process,
    // a scenario measured again alone once every other probe had ended.
    let after = load(CENSUS[1]);
    let last = after
        .memory
        .iter()
        .filter_map(|m| m.batch.as_ref())
        .map(|b| b.process)
        .max();
    let alone: Vec<_> = after
        .memory
        .iter()
        .filter(|m| m.result.as_ref().is_some_and(|r| r.concurrent_probes == 0))
        .collect();
    assert!(after.memory.iter().filter(|m| m.result.is_some()).count() > 7_000);
    assert!(
        alone.iter().all(|m| m.batch.as_ref().map(|b| b.process) == last),
        "{:?}",
        alone.iter().map(|m| &m.scenario.id).collect::<Vec<_>>()
    );
}

/// The census from the last reading spares each scenario three queries of the driver: the time
/// a probe spends on a scenario outside its set-up and its calls (its stream made, the census
/// after its calls) fell from 30.3 to 20.9 s over the run, and the memory phase not at all (75.4
/// and 75.9 s: 97.9 and 97.3 scenarios a second on this H100): the phase waits on what the
/// driver does one at a time (contexts), not on the probes' own time (docs/performance.md).
#[test]
fn the_census_from_the_last_reading_spares_the_probes_time_and_not_the_phase() {
    let (before, after) = (load(CENSUS[0]), load(CENSUS[1]));
    assert_eq!(before.environment.gpu.uuid, after.environment.gpu.uuid, "one GPU");
    assert_eq!(before.memory.len(), after.memory.len(), "the same matrix");
    let outside_s = |r: &RunFile| {
        r.memory
            .iter()
            .filter_map(|m| Some(m.wall_ms? - m.result.as_ref()?.wall_ms - m.result.as_ref()?.startup_ms))
            .sum::<f64>()
            / 1e3
    };
    let (a, b) = (outside_s(&before), outside_s(&after));
    assert!(b < 0.75 * a, "{a} s against {b} s");
    let ratio = memory_rate(&after) / memory_rate(&before);
    assert!(
        (0.97..1.03).contains(&ratio),
        "{} {}",
        memory_rate(&before),
        memory_rate(&after)
    );
}
