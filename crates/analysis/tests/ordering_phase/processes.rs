//! What spares the memory phase processes, and what did not (issue #30, session 43): pools whose
//! threads were kept until their process ended judged otherwise, in more processes (`pools`); an
//! NPP error answered in its batch judges as one that ended its process (`faults`), on a second
//! H100 too (`confirm`); the atlas of both versions with its rounds ran within 10 minutes
//! (`atlas-two-versions-*`).

use std::collections::BTreeSet;

use nppbench_model::{FailureKind, Outcome, RunFile};

use super::{leaks_compared, load, memory_rate, races_compared, same_answers, streams_compared};

/// The atlas preset with `--keep-pool-threads` (build d94ed15: each pool's threads parked until
/// their process ended, so that no pool of 16 on the per-thread default stream had to head a
/// process) and without, back to back on one H100 (`gpu-pools.txt`). The option was taken out.
const POOLS: [&str; 2] = [
    "atlas-npp-13.0.1-pools-default.json.gz",
    "atlas-npp-13.0.1-pools-kept.json.gz",
];

/// Probe processes a run's memory phase started.
fn processes(r: &RunFile) -> usize {
    let ids: BTreeSet<u32> = r
        .memory
        .iter()
        .filter_map(|m| Some(m.batch.as_ref()?.process))
        .collect();
    ids.len()
}

/// Kept threads grew more scenarios without a stream kept, each then measured again alone: more
/// processes, a slower phase, and 13 pools of 4 on the per-thread default stream read bounded
/// where the default read them flat (threads that hold their stream's memory leave the next pool
/// none to reuse). Races, stream counts and every other class are the same.
#[test]
fn keeping_pool_threads_took_more_processes_and_moved_pools_of_four() {
    let (default, kept) = (load(POOLS[0]), load(POOLS[1]));
    assert_eq!(default.environment.gpu.uuid, kept.environment.gpu.uuid, "one GPU");
    assert_eq!(default.memory.len(), kept.memory.len(), "the same matrix");
    assert_eq!(
        (
            default.jobs.as_ref().is_some_and(|j| j.batching.is_some()),
            processes(&default),
            processes(&kept)
        ),
        (true, 370, 551)
    );
    let (d, k) = (memory_rate(&default), memory_rate(&kept));
    assert!(k < 0.9 * d, "{d} against {k} scenarios a second");
    let (differ, runtime) = leaks_compared(POOLS[0], POOLS[1]);
    assert!(differ.is_empty(), "{differ:#?}");
    assert_eq!(runtime.len(), 13, "{runtime:#?}");
    assert!(
        runtime
            .iter()
            .all(|r| r.contains("/pool:4: Some(Flat) against Some(Bounded)")),
        "{runtime:#?}"
    );
    assert!(streams_compared(POOLS[0], POOLS[1]).is_empty());
    let (races, unstable, compared, counts) = races_compared(POOLS[0], POOLS[1]);
    assert!(races.is_empty() && compared > 7_000, "{races:?} {compared}");
    assert_eq!((unstable.len(), counts), (7, (730, 729)));
}

/// The atlas preset by build d94ed15 (every NPP error status ended its probe process:
/// the scenario measured again alone, the rest of its batch in a fresh process) and by the build
/// that answers such an error in its batch where the context still works after it
/// (`probe/batch.rs`), back to back on one H100 (`gpu-faults.txt`).
const FAULTS: [&str; 2] = [
    "atlas-npp-13.0.1-faults-cur.json.gz",
    "atlas-npp-13.0.1-faults-new.json.gz",
];

/// The 25 scenarios of MinMax with a context filled with zeros (NPP_CUDA_KERNEL_EXECUTION_ERROR)
/// are answered in their batches: 65 fewer processes, over 100 memory scenarios a second, the
/// same answers, and the same scenarios failed with the same kinds. An error that poisoned the
/// context (AddC_8u_C3RSfs's misaligned address) still ends its process: measured again alone.
#[test]
fn an_npp_error_answered_in_its_batch_spares_processes_and_changes_no_answer() {
    same_answers(FAULTS, &[], (7, (733, 728)));
    let (cur, new) = (load(FAULTS[0]), load(FAULTS[1]));
    assert_eq!(cur.environment.gpu.uuid, new.environment.gpu.uuid, "one GPU");
    assert_eq!((processes(&cur), processes(&new)), (366, 301));
    let (c, n) = (memory_rate(&cur), memory_rate(&new));
    assert!(n >= 100.0 && n > 1.05 * c, "{c} against {n} scenarios a second");
    let failures = |r: &RunFile| -> Vec<(String, FailureKind)> {
        let mut v: Vec<_> = r
            .memory
            .iter()
            .filter_map(|m| match &m.outcome {
                Outcome::Failed { kind, .. } => Some((m.scenario.id.clone(), *kind)),
                _ => None,
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(failures(&cur), failures(&new));
    let place = |kind: FailureKind| -> Vec<u32> {
        new.memory
            .iter()
            .filter(|m| matches!(&m.outcome, Outcome::Failed { kind: k, .. } if *k == kind))
            .map(|m| m.batch.as_ref().unwrap().size)
            .collect()
    };
    let npp = place(FailureKind::Npp);
    assert_eq!(npp.len(), 25);
    assert!(npp.iter().filter(|size| **size > 1).count() >= 24, "{npp:?}");
    assert_eq!(
        place(FailureKind::Gpu),
        [1, 1, 1, 1],
        "poisoned contexts, measured again alone"
    );
}

/// Both NPP versions' atlas presets in one run with their race rounds (`gpu-two-versions.txt`):
/// 14,762 memory scenarios, each with its ordering rounds, within 10 minutes on one H100.
#[test]
fn the_atlas_of_two_versions_with_its_race_rounds_takes_under_ten_minutes() {
    let runs = [
        load("atlas-two-versions-npp-13.0.1.json.gz"),
        load("atlas-two-versions-npp-12.2.3.json.gz"),
    ];
    let versions: Vec<_> = runs.iter().map(|r| r.environment.npp.version.as_str()).collect();
    assert_eq!(versions, ["13.0.1", "12.2.3"]);
    // One command, whose run took the one wall time both record.
    assert_eq!(runs[0].command, runs[1].command, "one run");
    assert_eq!(runs[0].wall_s, runs[1].wall_s, "one run");
    assert_eq!(runs[0].environment.gpu.uuid, runs[1].environment.gpu.uuid);
    assert!(runs[0].wall_s < 600.0, "{}", runs[0].wall_s);
    for r in &runs {
        assert_eq!(r.memory.len(), 7_381);
        let with_rounds = r
            .memory
            .iter()
            .filter(|m| m.result.as_ref().is_some_and(|x| x.ordering.is_some()))
            .count();
        let measured = r.memory.iter().filter(|m| m.result.is_some()).count();
        assert_eq!(with_rounds, measured, "every measured scenario has its rounds");
    }
}

/// The committed build's atlas on another H100 (`atlas-npp-13.0.1-confirm.json.gz`,
/// `gpu-confirm.txt`, GPU-4ba8fd07): over 100 memory scenarios a second there too, in about as
/// many processes, with the answers of the run above on GPU-05c7e12a (the unstable function
/// apart).
#[test]
fn on_another_h100_the_committed_build_makes_over_100_memory_scenarios_a_second() {
    let (there, here) = (load(FAULTS[1]), load("atlas-npp-13.0.1-confirm.json.gz"));
    assert_ne!(there.environment.gpu.uuid, here.environment.gpu.uuid, "another GPU");
    assert_eq!(processes(&here), 302);
    let rate = memory_rate(&here);
    assert!(rate >= 100.0, "{rate}");
    same_answers([FAULTS[1], "atlas-npp-13.0.1-confirm.json.gz"], &[], (3, (728, 729)));
}
