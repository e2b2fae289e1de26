//! What the parent and a child probe exchange, as JSON files.

use std::path::PathBuf;

use nppbench_model::{Environment, MemoryResult, MemoryScenario, Outcome, Settings, ThroughputScenario};
use serde::{Deserialize, Serialize};

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
    /// Run one memory scenario on GPU `device`.
    Memory {
        npp_dir: Option<PathBuf>,
        device: u32,
        scenario: MemoryScenario,
        memory_budget_mib: u64,
        min_calls: u32,
        /// nppbench's own pid: probes it started are siblings, not other processes.
        parent_pid: u32,
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

/// A memory probe's answer.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct MemoryReply {
    pub(crate) outcome: Outcome,
    pub(crate) result: Option<MemoryResult>,
}
