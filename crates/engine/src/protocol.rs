//! What the parent and a child probe exchange: the subcommand that starts a probe, the
//! `NPPBENCH_*` variables either side reads, and the request and answer JSON files.

use std::path::PathBuf;

use nppbench_model::{
    Environment, MemoryResult, MemoryScenario, OrderingRounds, Outcome, RaceRounds, Settings, ThroughputScenario,
};
use serde::{Deserialize, Serialize};

/// The hidden subcommand of the `nppbench` binary that runs one child probe.
pub const PROBE_SUBCOMMAND: &str = "probe";

/// Names the file of the run's probe pids to each probe (set by the parent): a probe that sees
/// one of them on the GPU knows it for a sibling, even one already gone from `/proc`.
pub(crate) const PROBE_PIDS_ENV: &str = "NPPBENCH_PROBE_PIDS";

/// The test hook for calibration: `NPPBENCH_DELAY_CYCLES=N` queues N SM clock cycles of GPU
/// work after every timed call of a throughput probe, a known slowdown for `compare` to find.
/// Inherited by the probes; run.json says so ([`TEST_HOOKS`]).
pub(crate) const DELAY_CYCLES_ENV: &str = "NPPBENCH_DELAY_CYCLES";

/// The same hook scaled to the image: `NPPBENCH_DELAY_CYCLES_PER_MPIXEL=N` adds N cycles per
/// million pixels of the call's ROI to the delay (alone, it is the whole delay). A fixed delay
/// is a shrinking part of a growing image's time (3 to 4% at 4K, under 1.2% at 8K on an H100);
/// this one keeps a known slowdown of a few percent at every size.
pub(crate) const DELAY_CYCLES_PER_MPIXEL_ENV: &str = "NPPBENCH_DELAY_CYCLES_PER_MPIXEL";

/// A test hook for the fault tests: `NPPBENCH_FAULT=KIND@TEXT` makes the probe of every scenario
/// whose id contains TEXT crash, hang, run out of memory or poison its CUDA context. Inherited
/// by the probes; run.json says so ([`TEST_HOOKS`]).
pub(crate) const FAULT_ENV: &str = "NPPBENCH_FAULT";

/// The test hooks a run records in run.json when they are set, in this order.
pub(crate) const TEST_HOOKS: [&str; 3] = [DELAY_CYCLES_ENV, DELAY_CYCLES_PER_MPIXEL_ENV, FAULT_ENV];

/// `NPPBENCH_CLEAN_EXIT=1`: a probe tears its CUDA resources down and exits normally, for a
/// profiler that reports at exit (such as Nsight Compute). Inherited by the probes.
pub(crate) const CLEAN_EXIT_ENV: &str = "NPPBENCH_CLEAN_EXIT";

/// `NPPBENCH_REQUIRE_GPU=1`: a GPU test fails instead of skipping where there is no GPU (set on
/// the GPU machine). Read by the tests' guard, not by a probe.
pub(crate) const REQUIRE_GPU_ENV: &str = "NPPBENCH_REQUIRE_GPU";

/// Which GPUs a run measures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Devices {
    /// Every GPU of the machine.
    All,
    /// These ordinals (`--devices 0,2`); the default is `[0]`.
    List(Vec<u32>),
}

/// What a child probe is asked to do.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "probe", rename_all = "snake_case")]
pub(crate) enum Request {
    /// Describe the GPUs, driver, NPP and host; measure each GPU's copy ceiling.
    Environment { npp_dir: Option<PathBuf>, devices: Devices },
    /// Run memory scenarios in order on GPU `device`, each on host threads made for it, one
    /// [`MemoryLine`] each, appended as it finishes.
    Memory {
        npp_dir: Option<PathBuf>,
        device: u32,
        scenarios: Vec<MemoryScenario>,
        memory_budget_mib: u64,
        min_calls: u32,
        /// nppbench's own pid: probes it started are siblings, not other processes.
        parent_pid: u32,
    },
    /// Make the ordering rounds of memory scenarios in order on GPU `device`, from the probe's
    /// own thread, one [`OrderingLine`] each, appended as it finishes.
    Ordering {
        npp_dir: Option<PathBuf>,
        device: u32,
        scenarios: Vec<MemoryScenario>,
        /// Where to make rounds (absent: where the first call split, the default).
        #[serde(default)]
        race_rounds: RaceRounds,
    },
    /// Run throughput scenarios in order on GPU `device`, one JSON line of
    /// [`nppbench_model::ThroughputRecord`] each.
    Throughput {
        npp_dir: Option<PathBuf>,
        device: u32,
        pass: u32,
        scenarios: Vec<ThroughputScenario>,
        settings: Settings,
        criterion_dir: PathBuf,
        parent_pid: u32,
    },
}

/// The environment probe's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EnvironmentReply {
    Ok(Box<Environment>),
    /// The GPU, driver or NPP cannot be used.
    Err(String),
    /// The devices asked for do not exist.
    BadDevices(String),
}

/// A memory probe's answer for one scenario.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct MemoryReply {
    pub(crate) outcome: Outcome,
    pub(crate) result: Option<MemoryResult>,
}

/// One line of a memory probe's answer: a scenario measured, or why the probe stopped before
/// the end of its scenarios although nothing went wrong (the parent gives the rest to a fresh
/// process). A probe that stops for a fault writes no line for the scenario at fault: the parent
/// measures that one again in a process of its own.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MemoryLine {
    Scenario {
        id: String,
        reply: Box<MemoryReply>,
        /// The scenario's wall time in the probe, its process's start included for the first.
        wall_ms: f64,
    },
    Stopped {
        reason: String,
    },
}

/// One line of an ordering probe's answer: a scenario's rounds. A probe that stops at a fault
/// writes no line for the scenario at fault.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct OrderingLine {
    pub(crate) id: String,
    pub(crate) rounds: OrderingRounds,
    /// The scenario's wall time in the probe, its process's start included for the first.
    pub(crate) wall_ms: f64,
}
