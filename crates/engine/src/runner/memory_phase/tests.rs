//! The memory phase's supervision of batches, against a stand-in probe (a shell script, no GPU)
//! that answers, crashes, hangs or stops where a scenario's id tells it to.

use std::path::Path;

use nppbench_model::{FailureKind, Outcome, Preset, Threading};

use super::plan::shuffled;
use super::*;
use crate::runner::stand_in;

/// A stand-in memory probe: answers each scenario of its request in order, as a probe's answer
/// lines; aborts at an id holding `crash`, hangs at `hang`, and stops cleanly, saying so, after
/// `full` (as a probe whose kept streams passed the budget does); at an id holding `grew` it
/// answers with the result in `grew.json` beside it. Each process appends its scenarios' ids to
/// `calls.log`, a line per process.
const PROBE: &str = r#"#!/bin/sh
# probe --request R --answer A
dir=$(dirname "$0")
ids=$(grep -o '"id":"[^"]*"' "$3" | cut -d'"' -f4)
echo $ids >> "$dir/calls.log"
for id in $ids; do
  case "$id" in *crash*) kill -ABRT $$ ;; *hang*) sleep 60 ;; esac
  case "$id" in *grew*) r=$(cat "$dir/grew.json") ;; *) r=null ;; esac
  printf '{"scenario":{"id":"%s","reply":{"outcome":{"status":"ok"},"result":%s},"wall_ms":1.0}}\n' "$id" "$r" >> "$5"
  case "$id" in *full*) printf '{"stopped":{"reason":"full"}}\n' >> "$5"; exit 0 ;; esac
done
"#;

/// Runs `names` through one worker, `max` scenarios a process (shuffled by `seed`, if any), with
/// the stand-in probe; returns
/// the records in the order they came and the processes' scenarios, one line each.
fn supervise(dir: &Path, names: &[&str], max: u32, seed: Option<u64>) -> (Vec<MemoryRecord>, Vec<String>) {
    let exe = stand_in::install(dir, PROBE);
    let mut matrix = Preset::Quick.matrix().unwrap();
    matrix.settings.scenario_timeout_s = 1;
    let opts = RunOptions {
        matrix: matrix.clone(),
        npp_dirs: vec![None],
        devices: crate::protocol::Devices::All,
        jobs: Some(1),
        batch: Some(max),
        seed: Some(0),
        probe_connections: None,
        probe_exe: exe,
        out_dir: dir.to_owned(),
        command: Vec::new(),
        resume: false,
        memory_readings: nppbench_model::MemoryReadings::Own,
        race_rounds: nppbench_model::RaceRounds::WhereSplit,
        ordering_jobs: None,
    };
    let mut all = stand_in::scenarios(names);
    // `ptd-poolN…`: a pool of N threads on the per-thread default stream.
    for s in &mut all {
        if let Some(n) =
            s.id.strip_prefix("ptd-pool")
                .and_then(|r| r.split('-').next()?.parse().ok())
        {
            s.stream = nppbench_model::StreamKind::PerThreadDefault;
            s.threading = Threading::Pool(n);
        }
    }
    let stop = AtomicBool::new(false);
    let workers = Workers {
        opts: &opts,
        settings: &matrix.settings,
        queue: Mutex::new(Queue::new(all.iter().enumerate().collect())),
        jobs: 1,
        max_per_process: max,
        seed,
        started: AtomicU32::new(0),
        work_dir: dir.to_owned(),
        npp_dir: None,
        env: Vec::new(),
        stop: &stop,
    };
    let (tx, rx) = mpsc::channel();
    workers.work((0, "GPU-test".to_owned()), &tx);
    drop(tx);
    let records = rx
        .into_iter()
        .map(|d| match d {
            supervise::Done::Item(r) => *r,
            supervise::Done::Interrupted => panic!("interrupted"),
            supervise::Done::Error(e) => panic!("{e}"),
        })
        .collect();
    let log = std::fs::read_to_string(dir.join("calls.log")).unwrap();
    (records, log.lines().map(str::to_owned).collect())
}

fn ok(records: &[MemoryRecord], id: &str) -> bool {
    records.iter().any(|r| r.scenario.id == id && r.outcome == Outcome::Ok)
}

#[test]
fn a_crash_in_the_middle_of_a_batch_costs_only_its_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["a", "b", "crash", "c", "d"];
    let (records, processes) = supervise(dir.path(), &names, 8, None);
    assert_eq!(records.len(), 5, "{records:?}");
    for id in ["a", "b", "c", "d"] {
        assert!(ok(&records, id), "{id}: {records:?}");
    }
    let crashed = records.iter().find(|r| r.scenario.id == "crash").unwrap();
    match &crashed.outcome {
        Outcome::Failed { kind, reason } => {
            assert_eq!(*kind, FailureKind::Crash);
            assert!(reason.contains("SIGABRT"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // The batch, the scenario at fault alone, then the rest of the batch in a fresh process.
    assert_eq!(processes, ["a b crash c d", "crash", "c d"]);
    let c = records.iter().find(|r| r.scenario.id == "c").unwrap();
    assert_eq!(
        c.batch,
        Some(BatchPlace {
            process: 2,
            position: 0,
            size: 2,
            alone_because: None,
            class_in_batch: None,
        })
    );
}

#[test]
fn a_hang_in_a_batch_times_out_alone_and_the_rest_complete() {
    let dir = tempfile::tempdir().unwrap();
    let (records, processes) = supervise(dir.path(), &["a", "hang", "b"], 8, None);
    assert!(ok(&records, "a") && ok(&records, "b"), "{records:?}");
    let hung = records.iter().find(|r| r.scenario.id == "hang").unwrap();
    assert!(
        matches!(
            &hung.outcome,
            Outcome::Failed {
                kind: FailureKind::Timeout,
                ..
            }
        ),
        "{:?}",
        hung.outcome
    );
    assert_eq!(processes, ["a hang b", "hang", "b"]);
}

#[test]
fn a_batch_stopped_by_its_kept_memory_goes_on_in_a_fresh_process_without_blame() {
    let dir = tempfile::tempdir().unwrap();
    let (records, processes) = supervise(dir.path(), &["a", "full", "b", "c"], 8, None);
    assert_eq!(records.len(), 4);
    assert!(records.iter().all(|r| r.outcome == Outcome::Ok), "{records:?}");
    assert_eq!(processes, ["a full b c", "b c"]);
}

#[test]
fn batches_take_an_equal_share_of_what_is_left_up_to_the_most_a_process_takes() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..10).map(|i| format!("s{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (records, processes) = supervise(dir.path(), &names, 4, None);
    assert_eq!(records.len(), 10);
    let sizes: Vec<usize> = processes.iter().map(|p| p.split(' ').count()).collect();
    assert_eq!(sizes, [4, 4, 2]);
    assert_eq!(batch_size(4331, 8, 64), 64);
    assert_eq!(batch_size(100, 8, 64), 13);
    assert_eq!(batch_size(3, 8, 64), 1);
    assert_eq!(batch_size(0, 8, 64), 1);
    assert_eq!(batch_size(10, 1, 1), 1);
}

#[test]
fn a_seed_shuffles_each_batch_and_the_same_seed_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..12).map(|i| format!("s{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (_, once) = supervise(dir.path(), &names, 6, Some(3));
    assert_eq!(once.len(), 2);
    assert_ne!(once[0], "s0 s1 s2 s3 s4 s5", "shuffled");
    let mut first: Vec<&str> = once[0].split(' ').collect();
    first.sort_unstable();
    assert_eq!(
        first,
        ["s0", "s1", "s2", "s3", "s4", "s5"],
        "batches keep matrix order between them"
    );
    let dir = tempfile::tempdir().unwrap();
    let (_, again) = supervise(dir.path(), &names, 6, Some(3));
    assert_eq!(once, again);
}

#[test]
fn the_same_seed_gives_the_same_order_and_another_seed_another() {
    let items: Vec<u32> = (0..100).collect();
    let a = shuffled(items.clone(), 7);
    assert_eq!(a, shuffled(items.clone(), 7));
    assert_ne!(a, items, "shuffled");
    assert_ne!(a, shuffled(items.clone(), 8));
    let mut sorted = a.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, items, "a permutation");
}

/// A record of `threading` whose process grew by `grown_mib` over `calls` calls after the
/// warm-up, keeping `kept` streams (generated values, not a measurement).
fn grown(threading: Threading, calls: usize, grown_mib: u64, kept: u32) -> MemoryRecord {
    let mut record = MemoryRecord {
        scenario: stand_in::scenarios(&["s"]).remove(0),
        outcome: Outcome::Ok,
        result: None,
        gpu: None,
        wall_ms: None,
        batch: None,
    };
    record.scenario.threading = threading;
    let base = 1u64 << 30;
    let used: Vec<Option<u64>> = (0..=calls)
        .map(|i| Some(base + if i == 0 { 0 } else { grown_mib << 20 }))
        .collect();
    let result = nppbench_model::MemoryResult {
        baseline: nppbench_model::MemoryReading {
            device_used_bytes: None,
            process_used_bytes: Some(base),
        },
        samples: nppbench_model::MemorySeries {
            call: (1..=calls as u32 + 1).collect(),
            threads_spawned: vec![1; calls + 1],
            elapsed_ms: vec![0.0; calls + 1],
            latency_us: vec![0.0; calls + 1],
            // Not read where this process's figure was (as the probes write it).
            device_used_bytes: vec![None; calls + 1],
            process_used_bytes: used,
            reading_us: Vec::new(),
        },
        wall_ms: 0.0,
        startup_ms: 0.0,
        startup: Vec::new(),
        after_calls: Vec::new(),
        correctness: nppbench_model::Correctness {
            pixels_checked: 1,
            padding_bytes_checked: 0,
            max_abs_error: 0.0,
            wrong: None,
            aligned_twin: None,
        },
        streams: Some(nppbench_model::StreamCounts {
            never_destroyed: kept,
            ..Default::default()
        }),
        streams_not_measured: None,
        settled_after: None,
        warm_up_launch_us: None,
        context: None,
        concurrent_probes: 0,
        other_processes: Vec::new(),
        buffer_addresses: Vec::new(),
        ordering: None,
        readings_shared: false,
    };
    record.result = Some(result);
    record
}

#[test]
fn growth_that_depends_on_the_process_is_measured_again_alone_and_nothing_else_is() {
    let pool = Threading::Pool(2);
    assert!(page_bound(&grown(pool, 10, 2, 9)).is_some(), "one page, streams kept");
    assert!(page_bound(&grown(pool, 10, 0, 9)).is_some(), "no page, streams kept");
    // Flat in its batch (one page or less) without a stream: flat alone too (the rule's note).
    assert!(page_bound(&grown(pool, 10, 2, 0)).is_none(), "one page, no stream");
    assert!(
        page_bound(&grown(Threading::ThreadPerCall, 10, 2, 0)).is_none(),
        "one page, no stream"
    );
    assert!(page_bound(&grown(pool, 10, 6, 0)).is_some(), "three pages, no stream");
    assert!(page_bound(&grown(pool, 10, 0, 0)).is_none(), "flat, nothing kept");
    assert!(
        page_bound(&grown(pool, 10, 4, 9)).is_none(),
        "two pages: bounded either way"
    );
    // A pool of 2 tells its class past 4 calls, the warm-up counted (`evidence::conclusive`).
    assert!(
        page_bound(&grown(pool, 3, 2, 9)).is_none(),
        "too few calls to tell its class"
    );
    assert!(
        page_bound(&grown(pool, 3, 2, 0)).is_none(),
        "too few calls to tell its class"
    );
    assert!(
        page_bound(&grown(pool, 4, 2, 9)).is_some(),
        "5 calls tell a pool of 2's class"
    );
    assert!(
        page_bound(&grown(Threading::ThreadPerCall, 10, 2, 9)).is_none(),
        "a leak's first page"
    );
    assert!(
        page_bound(&grown(Threading::ThreadPerCall, 10, 4, 0)).is_some(),
        "grew, no stream"
    );
    assert!(page_bound(&grown(Threading::ThreadPerCall, 10, 0, 0)).is_none());
    assert!(page_bound(&grown(Threading::Single, 10, 2, 9)).is_none());
    // A pool of 16 on the per-thread default stream that did not grow tells nothing in a batch;
    // one of 4 that did not grow is flat there as alone.
    let ptd = |threading| {
        let mut r = grown(threading, 40, 0, 0);
        r.scenario.stream = nppbench_model::StreamKind::PerThreadDefault;
        r
    };
    assert!(page_bound(&ptd(Threading::Pool(16))).is_some(), "a pool of 16");
    assert!(page_bound(&ptd(Threading::Pool(4))).is_none(), "a pool of 4");
}

#[test]
fn pools_on_the_per_thread_default_stream_head_batches_the_largest_first() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "s0",
        "s1",
        "s2",
        "s3",
        "s4",
        "s5",
        "ptd-pool2-a",
        "s6",
        "ptd-pool16-a",
        "s7",
        "ptd-pool4-a",
        "s8",
    ];
    let (records, processes) = supervise(dir.path(), &names, 4, None);
    assert_eq!(records.len(), 12);
    assert_eq!(
        processes,
        ["ptd-pool16-a s0 s1 s2", "ptd-pool4-a s3 s4 s5", "ptd-pool2-a s6 s7 s8"]
    );
    // Every pool that must head a batch heads one, alone where nothing is left to fill it;
    // smaller heads left once the rest is gone are batched like any other.
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "s0",
        "s1",
        "ptd-pool16-a",
        "ptd-pool16-b",
        "ptd-pool4-a",
        "ptd-pool16-c",
        "ptd-pool16-d",
        "ptd-pool4-b",
    ];
    let (_, processes) = supervise(dir.path(), &names, 2, None);
    assert_eq!(
        processes,
        [
            "ptd-pool16-a s0",
            "ptd-pool16-b s1",
            "ptd-pool16-c",
            "ptd-pool16-d",
            "ptd-pool4-a ptd-pool4-b"
        ]
    );
    // The rest is shared among the pools that must head a batch, however large a batch may be.
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "ptd-pool16-a",
        "s0",
        "s1",
        "s2",
        "ptd-pool16-b",
        "s3",
        "s4",
        "s5",
        "ptd-pool16-c",
        "s6",
        "s7",
        "s8",
    ];
    let (_, processes) = supervise(dir.path(), &names, 64, None);
    assert_eq!(
        processes,
        [
            "ptd-pool16-a s0 s1 s2",
            "ptd-pool16-b s3 s4 s5",
            "ptd-pool16-c s6 s7 s8"
        ]
    );
    // A seed shuffles the rest of a batch, never its head.
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = ["ptd-pool16-a".to_owned()]
        .into_iter()
        .chain((0..7).map(|i| format!("s{i}")))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (_, processes) = supervise(dir.path(), &names, 8, Some(3));
    assert!(processes[0].starts_with("ptd-pool16-a "), "{processes:?}");
    assert_ne!(processes[0], "ptd-pool16-a s0 s1 s2 s3 s4 s5 s6", "shuffled");
}

/// A scenario that grew without keeping a stream is measured again alone where it came later in
/// its batch, and not where it came first: the first scenario meets the process as it would
/// alone (`queue.rs`). The growth is generated, not measured.
#[test]
fn a_scenario_that_headed_its_batch_is_not_measured_again_alone() {
    let dir = tempfile::tempdir().unwrap();
    let result = grown(Threading::Pool(16), 40, 4, 0).result;
    std::fs::write(dir.path().join("grew.json"), serde_json::to_string(&result).unwrap()).unwrap();
    let (records, processes) = supervise(dir.path(), &["ptd-pool16-grew", "s0", "grew-later", "s1"], 4, None);
    assert_eq!(processes, ["ptd-pool16-grew s0 grew-later s1", "grew-later"]);
    let place = |id: &str| {
        records
            .iter()
            .find(|r| r.scenario.id == id)
            .unwrap()
            .batch
            .clone()
            .unwrap()
    };
    assert_eq!(
        (place("ptd-pool16-grew").position, place("ptd-pool16-grew").size),
        (0, 4)
    );
    assert!(place("ptd-pool16-grew").alone_because.is_none());
    assert_eq!(place("grew-later").size, 1);
    assert!(place("grew-later").alone_because.is_some());
    // The class its batch gave is kept beside the one alone: the stand-in answers both with the
    // same result, so they agree.
    let alone = records.iter().find(|r| r.scenario.id == "grew-later").unwrap();
    let class = analyse_memory(alone).class.map(|c| c.as_str().to_owned());
    assert!(class.is_some());
    assert_eq!(place("grew-later").class_in_batch, class);
    assert!(place("ptd-pool16-grew").class_in_batch.is_none());
}
