//! The history at fleet scale (targets: ingest under 10 s, page under 2 s): 1,000 generated runs
//! of 300 scenarios each, on four generated runners, ingested into a fresh database, then the
//! page rendered from it (load, change points, fleet view, charts, templates).
//!
//! Generated data, labelled as such: every run is a clone of the committed real H200 run
//! (reports/h200-full-npp-13.0.1) with its figures varied: ±1% jitter per pass, NPP and driver
//! changing every 250 and 400 runs with a 6% step in half the scenarios, one runner 10% slower;
//! and 66 of the 300 scenarios are copies of real ones under new ids (`#generated-N`). A load
//! for the database and the renderer, not a measurement to read.

#![forbid(unsafe_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use nppbench_history::changes::{Settings, analyse};
use nppbench_history::{Db, History, RunRow};
use nppbench_model::RunFile;
use nppbench_report::history_view;

const RUNS: usize = 1000;
const SCENARIOS: usize = 300;
const RUNNERS: usize = 4;

/// The committed run with generated copies of throughput scenarios until it has 300 scenarios.
fn generated_base() -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/h200-full-npp-13.0.1/run.json.gz");
    let mut run = RunFile::read(&path).unwrap();
    let throughput = run.throughput.clone();
    let distinct = |run: &RunFile| {
        let tp: std::collections::BTreeSet<&str> = run.throughput.iter().map(|t| t.scenario.id.as_str()).collect();
        run.memory.len() + tp.len()
    };
    let mut copy = 0;
    'fill: loop {
        copy += 1;
        let mut ids: Vec<String> = throughput.iter().map(|t| t.scenario.id.clone()).collect();
        ids.dedup();
        for id in ids {
            if distinct(&run) >= SCENARIOS {
                break 'fill;
            }
            for t in throughput.iter().filter(|t| t.scenario.id == id) {
                let mut t = t.clone();
                t.scenario.id = format!("{id}#generated-{copy}");
                run.throughput.push(t);
            }
        }
    }
    assert_eq!(distinct(&run), SCENARIOS);
    run
}

/// Generated jitter in [−1, 1], fixed by its inputs (a 64-bit LCG step over a mix of them).
fn jitter(a: usize, b: usize) -> f64 {
    let x = ((a as u64) << 32 ^ b as u64)
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    2.0 * ((x >> 11) as f64 / (1u64 << 53) as f64) - 1.0
}

/// Generated run `i`: the base on runner `i % 4`, its figures varied (see the file's note).
fn generated_run(base: &RunFile, i: usize) -> RunFile {
    let mut run = base.clone();
    let runner = i % RUNNERS;
    let minute = i as u64;
    run.started_at = format!(
        "2027-01-{:02}T{:02}:{:02}:00Z",
        1 + minute / 1440,
        (minute / 60) % 24,
        minute % 60
    );
    run.finished_at = run.started_at.clone();
    let env = &mut run.environment;
    env.host.hostname = format!("generated-runner-{runner}");
    let uuid = format!("GPU-generated-{runner}");
    env.gpu.uuid = uuid.clone();
    for g in &mut env.gpus {
        g.gpu.uuid = uuid.clone();
    }
    let era = i / 250;
    env.npp.version = format!("13.{era}.0");
    env.driver_version = Some(format!("58{}.0", i / 400));
    for m in &mut run.memory {
        m.gpu = Some(uuid.clone());
    }
    for (k, t) in run.throughput.iter_mut().enumerate() {
        t.gpu = Some(uuid.clone());
        let step = if k % 2 == 0 { 1.0 + 0.06 * era as f64 } else { 1.0 };
        let slow_runner = if runner == 3 { 1.10 } else { 1.0 };
        let factor = step * slow_runner * (1.0 + 0.01 * jitter(i, k));
        if let Some(r) = &mut t.result {
            r.kernel.median.point_ns *= factor;
            if let Some(c) = &mut r.per_call {
                c.median_ns *= factor;
            }
        }
    }
    run
}

fn history(c: &mut Criterion) {
    let base = generated_base();
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("history");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(1));
    // Ingest: the report's analysis of each run and its transaction, not the generation.
    let mut built = None;
    let mut fresh = 0;
    group.bench_function("ingest 1000 generated runs x 300 scenarios", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // A fresh database every time: a run already there would be skipped.
                fresh += 1;
                let path = dir.path().join(format!("history-{fresh}.db"));
                let mut db = Db::open(&path).unwrap();
                for i in 0..RUNS {
                    let run = generated_run(&base, i);
                    let start = Instant::now();
                    let rows = nppbench_history::rows::scenario_rows(&run);
                    db.add(&RunRow::of(&run), &rows).unwrap();
                    total += start.elapsed();
                }
                built = Some(path);
            }
            total
        })
    });
    let db = Db::open(built.as_ref().unwrap()).unwrap();
    assert_eq!(db.counts().unwrap().0, RUNS as u64);
    group.bench_function("render the page of 1000 generated runs", |b| {
        b.iter(|| {
            let h = History::load(&db).unwrap();
            let f = analyse(&h, &Settings::default());
            history_view::render(&h, &f, &[]).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, history);
criterion_main!(benches);
