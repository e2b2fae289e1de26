//! What the parent and a child probe exchange, as JSON files.

use std::path::PathBuf;

use nppbench_model::{Environment, MemoryResult, MemoryScenario, Outcome, Settings, ThroughputScenario};
use serde::{Deserialize, Serialize};

/// What a child probe is asked to do.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "probe", rename_all = "snake_case")]
pub(crate) enum Request {
    /// Describe the GPU, driver, NPP and host; measure the copy ceiling.
    Environment { npp_dir: Option<PathBuf> },
    /// Run one memory scenario.
    Memory {
        npp_dir: Option<PathBuf>,
        scenario: MemoryScenario,
        memory_budget_mib: u64,
    },
    /// Run throughput scenarios in order, one JSON line of [`nppbench_model::ThroughputRecord`] each.
    Throughput {
        npp_dir: Option<PathBuf>,
        scenarios: Vec<ThroughputScenario>,
        settings: Settings,
        criterion_dir: PathBuf,
    },
}

/// The environment probe's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EnvironmentReply {
    Ok(Box<Environment>),
    Err(String),
}

/// A memory probe's answer.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct MemoryReply {
    pub(crate) outcome: Outcome,
    pub(crate) result: Option<MemoryResult>,
}
