//! The ordering phase's supervision, against a stand-in probe (a shell script, no GPU) that
//! answers, crashes or hangs where a scenario's id tells it to.

use std::path::Path;

use super::*;
use crate::runner::stand_in;

/// A stand-in ordering probe: answers each scenario of its request in order with one racing
/// round; aborts at an id holding `crash` and hangs at `hang`. Each process appends its
/// scenarios' ids to `calls.log`, a line per process.
const PROBE: &str = r#"#!/bin/sh
# probe --request R --answer A
dir=$(dirname "$0")
ids=$(grep -o '"id":"[^"]*"' "$3" | cut -d'"' -f4)
grep -o '"race_rounds":"[^"]*"' "$3" >> "$dir/race_rounds.log"
echo $ids >> "$dir/calls.log"
for id in $ids; do
  case "$id" in *crash*) kill -ABRT $$ ;; *hang*) sleep 60 ;; esac
  printf '{"id":"%s","rounds":{"rounds":4,"wrong_rounds":1,"wrong_pixels":14,"delay_cycles":1},"wall_ms":1.0}\n' "$id" >> "$5"
done
"#;

fn queued(names: &[&str]) -> VecDeque<Queued> {
    stand_in::scenarios(names).into_iter().enumerate().collect()
}

/// Workers of `jobs` on one GPU's queue of `names`, `max` scenarios a process at most, with the
/// stand-in probe installed in `dir`.
fn workers<'a>(dir: &Path, exe: &'a Path, stop: &'a AtomicBool, names: &[&str], max: u32, jobs: u32) -> Workers<'a> {
    let gpu = (0, "GPU-test".to_owned());
    Workers {
        probe_exe: exe,
        pids_file: dir.join("pids"),
        timeout: Duration::from_secs(1),
        queues: shared_out(vec![(gpu.clone(), queued(names))], jobs),
        gpus: vec![gpu],
        jobs: jobs as usize,
        max_per_process: max,
        started: AtomicU32::new(0),
        work_dir: dir.to_owned(),
        npp_dir: None,
        race_rounds: nppbench_model::RaceRounds::Always,
        stop,
    }
}

/// Each record index's rounds as they came, and the processes' scenarios, one line each.
type Supervised = (Vec<(usize, OrderingRounds)>, Vec<String>);

/// Runs `names` through one worker, `max` scenarios a process, with the stand-in probe.
fn supervise(dir: &Path, names: &[&str], max: u32) -> Supervised {
    supervise_among(dir, names, max, 1)
}

/// [`supervise`] with `jobs` workers sharing the queue (one runs here: the share is what counts).
fn supervise_among(dir: &Path, names: &[&str], max: u32, jobs: u32) -> Supervised {
    let exe = stand_in::install(dir, PROBE);
    let stop = AtomicBool::new(false);
    let workers = workers(dir, &exe, &stop, names, max, jobs);
    let (tx, rx) = mpsc::channel();
    workers.work(0, &tx);
    drop(tx);
    collect(dir, rx.into_iter())
}

/// Runs `names` through `jobs` workers at once, as the phase does.
fn supervise_all(dir: &Path, names: &[&str], jobs: u32) -> Supervised {
    let exe = stand_in::install(dir, PROBE);
    let stop = AtomicBool::new(false);
    let workers = workers(dir, &exe, &stop, names, MAX_PER_PROCESS, jobs);
    let mut rounds = Vec::new();
    let interrupted = supervise::supervise(
        workers.jobs,
        &stop,
        |w, tx| workers.work(w, tx),
        |item| {
            rounds.push(item);
            Ok(())
        },
    )
    .unwrap();
    assert!(!interrupted);
    let (_, processes) = collect(dir, std::iter::empty());
    (rounds, processes)
}

fn collect(dir: &Path, done: impl Iterator<Item = Done>) -> Supervised {
    let rounds = done
        .map(|d| match d {
            supervise::Done::Item((i, r)) => (i, r),
            supervise::Done::Interrupted => panic!("interrupted"),
            supervise::Done::Error(e) => panic!("{e}"),
        })
        .collect();
    let log = std::fs::read_to_string(dir.join("calls.log")).unwrap();
    (rounds, log.lines().map(str::to_owned).collect())
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("s{i}")).collect()
}

#[test]
fn a_crash_in_an_ordering_probe_costs_only_its_scenarios_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let (rounds, processes) = supervise(dir.path(), &["a", "b", "crash", "c", "d"], 8);
    assert_eq!(rounds.len(), 5, "{rounds:?}");
    for (i, r) in &rounds {
        if *i == 2 {
            let why = r.not_measured.as_deref().unwrap_or_default();
            assert!(
                why.contains("stopped at this scenario") && why.contains("crash"),
                "{why}"
            );
            assert_eq!(r.rounds, 0);
        } else {
            assert_eq!((r.rounds, r.wrong_rounds, &r.not_measured), (4, 1, &None), "{i}: {r:?}");
        }
    }
    // The rest of the crashed process's scenarios went to a fresh one; the one at fault did not.
    assert_eq!(processes, ["a b crash c d", "c d"]);
    // Each probe was told where to make rounds, as the run was.
    let asked = std::fs::read_to_string(dir.path().join("race_rounds.log")).unwrap();
    assert_eq!(asked.lines().collect::<Vec<_>>(), [r#""race_rounds":"always""#; 2]);
}

#[test]
fn a_hung_ordering_probe_costs_only_its_scenarios_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let (rounds, processes) = supervise(dir.path(), &["a", "hang", "b"], 8);
    let hung = rounds.iter().find(|(i, _)| *i == 1).unwrap();
    let why = hung.1.not_measured.as_deref().unwrap_or_default();
    assert!(why.contains("timeout") || why.contains("timed out"), "{why}");
    assert!(rounds.iter().any(|(i, r)| *i == 2 && r.rounds == 4), "{rounds:?}");
    assert_eq!(processes, ["a hang b", "b"]);
}

#[test]
fn ordering_probes_take_an_equal_share_up_to_their_most() {
    let dir = tempfile::tempdir().unwrap();
    let (rounds, processes) = supervise(dir.path(), &["a", "b", "c", "d", "e"], 2);
    assert_eq!(rounds.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    assert_eq!(processes, ["a b", "c d", "e"]);
}

#[test]
fn an_ordering_probe_takes_several_scenarios_where_there_are_as_many() {
    // Five scenarios among eight workers: an equal share would be one a process, each paying
    // a probe's start; at least MIN_PER_PROCESS go to one.
    let dir = tempfile::tempdir().unwrap();
    let (rounds, processes) = supervise_among(dir.path(), &["a", "b", "c", "d", "e"], 256, 8);
    assert_eq!(rounds.len(), 5);
    assert_eq!(processes, ["a b c d e"]);
}

#[test]
fn scenarios_that_differ_only_in_threading_share_their_rounds() {
    use nppbench_model::{StreamKind, Threading};
    let mut s = stand_in::scenarios(&[
        "blocking/single",
        "blocking/thread",
        "blocking/pool",
        "nb/own",
        "nb/thread",
        "pt/thread",
    ]);
    s[0].threading = Threading::Single;
    s[2].threading = Threading::Pool(4);
    // A thread with its own stream runs on a non-blocking one: as a non-blocking scenario does.
    s[3].threading = Threading::ThreadPerCallOwnStream;
    s[4].stream = StreamKind::NonBlocking;
    s[5].stream = StreamKind::PerThreadDefault;
    let groups: Vec<Vec<String>> = by_configuration(s.iter()).into_iter().map(|(_, ids)| ids).collect();
    assert_eq!(
        groups,
        [
            vec!["blocking/single", "blocking/thread", "blocking/pool"],
            vec!["nb/own", "nb/thread"],
            vec!["pt/thread"],
        ]
    );
    // Another geometry is another configuration.
    let mut wider = s[0].clone();
    wider.geometry = nppbench_model::Geometry::new(nppbench_model::Primitive::CONVERT_8U32F_C1R, 1918, 1080, 1920);
    wider.id = "wider".into();
    assert_eq!(by_configuration([&s[0], &wider].into_iter()).len(), 2);
}

#[test]
fn each_ordering_worker_starts_one_probe_for_its_whole_share() {
    // 300 configurations among four workers: four probes, one each (before #45, an equal share
    // of what was left, at most 256: twelve probes here, 40 for the atlas's 7,076).
    let dir = tempfile::tempdir().unwrap();
    let names = names(300);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (rounds, processes) = supervise_all(dir.path(), &names, 4);
    assert_eq!(processes.len(), 4, "{processes:#?}");
    let mut answered: Vec<usize> = rounds.iter().map(|(i, _)| *i).collect();
    answered.sort_unstable();
    assert_eq!(answered, (0..300).collect::<Vec<_>>());
    assert!(rounds.iter().all(|(_, r)| r.rounds == 4 && r.not_measured.is_none()));
    let sizes: Vec<usize> = processes.iter().map(|p| p.split(' ').count()).collect();
    assert!(sizes.iter().all(|n| (60..=90).contains(n)), "{sizes:?}");
}

#[test]
fn a_fault_in_a_whole_share_costs_one_configuration_and_its_rest_goes_to_a_fresh_probe() {
    let dir = tempfile::tempdir().unwrap();
    let mut names = names(100);
    names[30] = "crash".to_owned();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (rounds, processes) = supervise_all(dir.path(), &names, 4);
    assert_eq!(rounds.len(), 100);
    let lost: Vec<usize> = rounds
        .iter()
        .filter(|(_, r)| r.not_measured.is_some())
        .map(|(i, _)| *i)
        .collect();
    assert_eq!(lost, [30]);
    // Four shares, and one fresh probe for what followed the crash in its share.
    assert_eq!(processes.len(), 5, "{processes:#?}");
    let crashed = processes.iter().find(|p| p.contains("crash")).unwrap();
    let rest = crashed.split_once("crash").unwrap().1.trim();
    assert!(
        !rest.is_empty() && processes.iter().any(|p| p == rest),
        "{processes:#?}"
    );
}

#[test]
fn a_share_is_dealt_in_stretches_that_keep_a_geometry_together() {
    // Twenty geometries of five configurations each, in matrix order, between two workers: each
    // takes a part of every stretch of the queue, and each geometry goes whole to one of them.
    let mut queue = queued(&names(100).iter().map(String::as_str).collect::<Vec<_>>());
    for (i, s) in queue.iter_mut() {
        let width = 31 + (*i / 5) as u32;
        s.geometry = nppbench_model::Geometry::new(s.primitive, width, 31, 64);
    }
    let (taken, left) = deal(queue, 2, usize::MAX);
    assert_eq!(taken.len() + left.len(), 100);
    let order = |part: &[usize]| part.windows(2).all(|w| w[0] < w[1]);
    let taken: Vec<usize> = taken.iter().map(|(i, _)| *i).collect();
    let left: Vec<usize> = left.iter().map(|(i, _)| *i).collect();
    assert!(order(&taken) && order(&left));
    for geometry in 0..20 {
        let runs = |part: &[usize]| part.iter().filter(|i| **i / 5 == geometry).count();
        assert!(matches!((runs(&taken), runs(&left)), (5, 0) | (0, 5)), "{taken:?}");
    }
    // Stretches of two geometries (at least six, 100 / 2 / 8), one in two: the first part starts
    // the queue, and both have a part of its last quarter.
    assert!((40..=60).contains(&taken.len()), "{taken:?}");
    assert_eq!(taken[0], 0);
    assert!(
        taken.iter().any(|i| *i >= 75) && left.iter().any(|i| *i >= 75),
        "{taken:?}"
    );
}

#[test]
fn the_last_take_after_every_share_is_the_whole_rest() {
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let names = names(40);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let workers = workers(dir.path(), dir.path(), &stop, &names, MAX_PER_PROCESS, 2);
    let first = workers.take("GPU-test");
    let second = workers.take("GPU-test");
    assert_eq!((first.len(), second.len()), (20, 20));
    // A fault in the first share sends its rest back: taken whole, in one fresh probe.
    workers.give_back("GPU-test", first[5..].to_vec());
    assert_eq!(workers.take("GPU-test").len(), 15);
    assert!(workers.take("GPU-test").is_empty());
}
