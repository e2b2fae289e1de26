//! `--repeat auto`'s rule on real passes (an H100, GPU-159df63b, the quick preset): what it asks
//! more passes of, and what it does not.

use std::path::Path;

use nppbench_analysis::compare::Thresholds;
use nppbench_analysis::settle::passes_settled;
use nppbench_model::{RunFile, ThroughputResult};

fn run() -> RunFile {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/calibration/GPU-159df63b/quick/quick-1.json.gz");
    RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first `n` passes of scenario `id`.
fn passes<'r>(run: &'r RunFile, id: &str, n: usize) -> Vec<&'r ThroughputResult> {
    let p: Vec<&ThroughputResult> = run
        .throughput
        .iter()
        .filter(|t| t.scenario.id == id)
        .filter_map(|t| t.result.as_ref())
        .take(n)
        .collect();
    assert_eq!(p.len(), n, "{id}");
    p
}

/// A 1 µs kernel's passes read 1056 or 1088 ns: a tick of the GPU's 32 ns clock apart. Their
/// interval over three passes was wider than the band however they fell, so every such scenario
/// took a fourth pass (a process) in almost every quick run; passes within two ticks are settled.
#[test]
fn passes_a_tick_apart_are_settled() {
    let run = run();
    let small = passes(&run, "tp/Convert_8u32f_C1R/32x35-s36-d144/blocking/from_stream", 3);
    let ns: Vec<f64> = small.iter().map(|r| r.per_call.as_ref().unwrap().median_ns).collect();
    assert_eq!(ns, [1056.0, 1088.0, 1056.0], "the passes this test is about");
    assert!(passes_settled(&small, Thresholds::default()));
    // Altered copy: the same passes three ticks apart are not.
    let mut apart: Vec<ThroughputResult> = small.iter().map(|r| (*r).clone()).collect();
    apart[1].per_call.as_mut().unwrap().median_ns = 1056.0 + 3.0 * 32.0;
    let apart: Vec<&ThroughputResult> = apart.iter().collect();
    assert!(!passes_settled(&apart, Thresholds::default()));
}

/// Where the calls' kernels ran at once in some passes and in turn in others, each layout is
/// pinned apart: the busy time over all calls (6767, 6848, 6272 ns) is not, the in-turn time of
/// the same passes (6849, 6848, 6816 ns) is.
#[test]
fn passes_of_two_layouts_are_settled_on_each_layout() {
    let run = run();
    let mixed = passes(
        &run,
        "tp/Convert_8u32f_C1R/1918x1080-s1920-d7680/per_thread_default/from_stream",
        3,
    );
    let busy: Vec<f64> = mixed
        .iter()
        .map(|r| r.per_call.as_ref().unwrap().layout.as_ref().unwrap().busy_median_ns)
        .collect();
    assert_eq!(busy, [6767.5, 6848.0, 6272.0], "the passes this test is about");
    assert!(passes_settled(&mixed, Thresholds::default()));
    // Two passes are not enough of either.
    assert!(!passes_settled(&mixed[..2], Thresholds::default()));
}
