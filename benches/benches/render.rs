//! Rendering a report of 1,000 scenarios (target: at most 1 s). The scenarios are the committed
//! real run's records repeated under new ids until there are 1,000: a load for the renderer,
//! not a measurement to read.

#![forbid(unsafe_code)]

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use nppbench_model::RunFile;

fn thousand_scenarios() -> RunFile {
    let paths = RunFile::find_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports"));
    let mut run = RunFile::read(&paths[0]).unwrap();
    let (memory, throughput) = (run.memory.clone(), run.throughput.clone());
    let mut copy = 0;
    while run.memory.len() + run.throughput.len() < 1000 {
        copy += 1;
        for mut m in memory.iter().cloned() {
            m.scenario.id = format!("{}#{copy}", m.scenario.id);
            run.memory.push(m);
        }
        for mut t in throughput.iter().cloned() {
            t.scenario.id = format!("{}#{copy}", t.scenario.id);
            run.throughput.push(t);
        }
    }
    let extra = run.memory.len() + run.throughput.len() - 1000;
    run.memory.truncate(run.memory.len() - extra);
    run
}

fn render(c: &mut Criterion) {
    let run = thousand_scenarios();
    assert_eq!(run.memory.len() + run.throughput.len(), 1000);
    let runs = [run];
    c.bench_function("render 1000 scenarios", |b| {
        b.iter(|| nppbench_report::render(&runs).unwrap())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = render
}
criterion_main!(benches);
