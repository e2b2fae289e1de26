//! What a run is expected to take, said before it starts: the matrix's scenarios and settings,
//! times the costs of a scenario measured on an H100 (docs/performance.md; the memory and
//! throughput costs are fitted to the atlas runs with heads of batches,
//! `reports/batches/atlas-npp-13.0.1-heads-after.json.gz` and
//! `reports/h100-preset-atlas-npp-13.0.1/run.json`, which left the tree: `cargo xtask evidence`
//! brings them back). A plan, not a measurement: run.json records what each phase took.

use std::time::Duration;

use nppbench_model::Matrix;

/// One call of a memory scenario: its new host thread, NPP's call and the memory reading after
/// it, with eight probe processes at once on one GPU (the driver serialises much of it: twelve
/// at once take no less time), its share of the scenarios measured again alone, and, on one GPU,
/// of the driver's time that the ordering rounds beside the memory phase take. Fitted again once
/// quiet scenarios stopped at half the minimum and memory was read only where the rule judges:
/// the atlas's 10,431 memory scenarios on one H100, 560 probe-seconds over 8 probes
/// (`reports/performance/h100-GPU-09e538c5-quiet-stop/atlas-after.json.gz`), with the calls below
/// and a process start every 64 scenarios (0.0055 s before, fitted to the runs named above; the
/// test below holds the estimate to that run).
const MEMORY_CALL_S: f64 = 0.0029;
/// A memory scenario's set-up in a process that is already running: buffers, patterns, the
/// reference output, the baseline.
const MEMORY_SETUP_S: f64 = 0.010;
/// A probe process's start: CUDA context, NVML and CUPTI (the driver makes one context at a
/// time host-wide).
const PROCESS_START_S: f64 = 0.4;
/// A memory scenario's ordering rounds in an ordering probe, with eight probes at once on one
/// GPU: its set-up, a first call and four rounds (fitted to the ordering phase of
/// `reports/batches/atlas-npp-13.0.1-ordering-after.json.gz`: 29.0 s for 7,198 scenarios, an H200).
const ORDERING_SCENARIO_S: f64 = 0.030;
/// A throughput scenario's time beyond criterion's warm-up and measurement: set-up, CUPTI's
/// kernel records, host latency and the output check.
const THROUGHPUT_OVERHEAD_S: f64 = 0.045;

/// A run's expected time, phase by phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Expected {
    pub memory: Duration,
    /// The ordering rounds of the memory scenarios.
    pub ordering: Duration,
    /// Whether the rounds run beside the memory phase (on one GPU), inside its time, rather than
    /// after it.
    pub ordering_beside: bool,
    pub throughput: Duration,
}

impl Expected {
    /// The memory phase's time, with the rounds beside it where they run there.
    pub fn memory_phase(&self) -> Duration {
        if self.ordering_beside {
            self.memory.max(self.ordering)
        } else {
            self.memory
        }
    }

    pub fn total(&self) -> Duration {
        self.memory_phase()
            + if self.ordering_beside {
                Duration::ZERO
            } else {
                self.ordering
            }
            + self.throughput
    }
}

/// The expected time of `memory_scenarios` memory scenarios and `throughput_scenarios`
/// throughput scenario-passes of `matrix`, on `gpus` GPUs, `jobs` memory processes at once,
/// `per_process` memory scenarios a process at most, and `ordering_jobs` ordering probes at once
/// beside the memory phase on one GPU (`Jobs::ordering_beside`).
pub fn expected(
    matrix: &Matrix,
    memory_scenarios: usize,
    throughput_scenarios: usize,
    gpus: usize,
    jobs: u32,
    per_process: u32,
    ordering_jobs: u32,
) -> Expected {
    let s = &matrix.settings;
    // A scenario whose class settles stops after `min_calls`; most do, a few go on.
    let calls = f64::from(s.calls.min(s.min_calls.saturating_add(2)).max(1) + 1);
    let memory_one = MEMORY_SETUP_S + calls * MEMORY_CALL_S;
    let processes = memory_scenarios.div_ceil(per_process.max(1) as usize);
    let memory_s = (memory_scenarios as f64 * memory_one + processes as f64 * PROCESS_START_S) / f64::from(jobs.max(1));
    let timed_s = (s.warm_up_ms + s.measurement_ms) as f64 / 1e3 * if s.cold { 2.0 } else { 1.0 };
    let passes = s.repeat.max(1) as usize;
    let throughput_s = throughput_scenarios as f64 * (timed_s + THROUGHPUT_OVERHEAD_S) / gpus.max(1) as f64
        + if throughput_scenarios > 0 {
            passes as f64 * PROCESS_START_S
        } else {
            0.0
        };
    // On one GPU the rounds run beside the memory phase (`ordering_phase::memory_with_rounds_beside`).
    let ordering_beside = gpus <= 1;
    let ordering_jobs = if ordering_beside {
        ordering_jobs.max(1)
    } else {
        jobs.max(1)
    };
    let ordering_processes = memory_scenarios.div_ceil(super::ordering_phase::MAX_PER_PROCESS as usize);
    let ordering_s = (memory_scenarios as f64 * ORDERING_SCENARIO_S + ordering_processes as f64 * PROCESS_START_S)
        / f64::from(ordering_jobs);
    Expected {
        memory: Duration::from_secs_f64(memory_s),
        ordering: Duration::from_secs_f64(ordering_s),
        ordering_beside,
        throughput: Duration::from_secs_f64(throughput_s),
    }
}

#[cfg(test)]
mod tests {
    use nppbench_model::Preset;

    use super::*;

    #[test]
    fn more_processes_at_once_and_larger_batches_expect_less_time() {
        let atlas = Preset::Atlas.matrix().unwrap();
        let n = atlas.memory.len();
        let base = expected(&atlas, n, 0, 1, 8, 64, 4);
        assert!(base.throughput.is_zero());
        assert!(expected(&atlas, n, 0, 1, 16, 64, 4).memory < base.memory);
        assert!(expected(&atlas, n, 0, 1, 8, 1, 4).memory > base.memory * 5);
        let quick = Preset::Quick.matrix().unwrap();
        let tp = expected(&quick, 0, quick.throughput.len() * 3, 1, 8, 64, 4);
        assert!(tp.throughput > Duration::from_secs(1), "{tp:?}");
        assert!(expected(&quick, 0, quick.throughput.len() * 3, 2, 8, 64, 4).throughput < tp.throughput);
        // On two GPUs the rounds come after the memory phase; on one, beside it.
        assert!(base.ordering_beside && base.total() < base.memory + base.ordering);
        let two = expected(&atlas, n, 0, 2, 8, 64, 4);
        assert!(!two.ordering_beside && two.total() == two.memory + two.ordering);
        // Fewer ordering probes beside the memory phase: longer rounds, the same memory phase.
        let fewer = expected(&atlas, n, 0, 1, 8, 64, 2);
        assert!(fewer.ordering > base.ordering && fewer.memory == base.memory);
    }

    /// The memory call's cost is fitted to this run: the atlas's memory scenarios expect, within
    /// a tenth, the probes' time the run took over its probes (its memory phase, which the
    /// rounds beside it may lengthen, is not what is fitted).
    #[test]
    fn the_atlas_memory_estimate_is_the_run_it_was_fitted_to() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/performance/h100-GPU-09e538c5-quiet-stop/atlas-after.json.gz");
        let run = nppbench_model::RunFile::read(&path).unwrap();
        let probe_s: f64 = run.memory.iter().filter_map(|r| r.wall_ms).sum::<f64>() / 1e3;
        let atlas = Preset::Atlas.matrix().unwrap();
        let jobs = run.jobs.as_ref().unwrap().jobs;
        let e = expected(
            &atlas,
            run.memory.len(),
            0,
            1,
            jobs,
            64,
            run.jobs.as_ref().unwrap().ordering_beside(),
        );
        let ratio = e.memory.as_secs_f64() / (probe_s / f64::from(jobs));
        assert!(
            (0.9..1.1).contains(&ratio),
            "expected {:?} against {probe_s:.0} probe-seconds",
            e.memory
        );
    }
}
