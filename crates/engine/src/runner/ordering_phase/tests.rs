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
echo $ids >> "$dir/calls.log"
for id in $ids; do
  case "$id" in *crash*) kill -ABRT $$ ;; *hang*) sleep 60 ;; esac
  printf '{"id":"%s","rounds":{"rounds":4,"wrong_rounds":1,"wrong_pixels":14,"delay_cycles":1},"wall_ms":1.0}\n' "$id" >> "$5"
done
"#;

fn queued(names: &[&str]) -> VecDeque<Queued> {
    stand_in::scenarios(names).into_iter().enumerate().collect()
}

/// Runs `names` through one worker, `max` scenarios a process, with the stand-in probe; returns
/// each record index's rounds as they came, and the processes' scenarios, one line each.
fn supervise(dir: &Path, names: &[&str], max: u32) -> (Vec<(usize, OrderingRounds)>, Vec<String>) {
    supervise_among(dir, names, max, 1)
}

/// [`supervise`] with `jobs` workers sharing the queue (one runs here: the share is what counts).
fn supervise_among(dir: &Path, names: &[&str], max: u32, jobs: u32) -> (Vec<(usize, OrderingRounds)>, Vec<String>) {
    let exe = stand_in::install(dir, PROBE);
    let stop = AtomicBool::new(false);
    let workers = Workers {
        probe_exe: &exe,
        pids_file: dir.join("pids"),
        timeout: Duration::from_secs(1),
        queues: [("GPU-test".to_owned(), Mutex::new(queued(names)))]
            .into_iter()
            .collect(),
        jobs,
        max_per_process: max,
        started: AtomicU32::new(0),
        work_dir: dir.to_owned(),
        npp_dir: None,
        stop: &stop,
    };
    let (tx, rx) = mpsc::channel();
    workers.work((0, "GPU-test".to_owned()), &tx);
    drop(tx);
    let rounds = rx
        .into_iter()
        .map(|d| match d {
            supervise::Done::Item((i, r)) => (i, r),
            supervise::Done::Interrupted => panic!("interrupted"),
            supervise::Done::Error(e) => panic!("{e}"),
        })
        .collect();
    let log = std::fs::read_to_string(dir.join("calls.log")).unwrap();
    (rounds, log.lines().map(str::to_owned).collect())
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
