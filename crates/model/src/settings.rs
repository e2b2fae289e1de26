//! How long and how hard each scenario of a matrix measures, and the guards around it.

use serde::{Deserialize, Serialize};

/// How long and how hard each scenario measures, and the guards around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Calls per memory scenario, after one warm-up call: the most a scenario makes.
    pub calls: u32,
    /// Calls a memory scenario makes at least before its class may be settled early (see
    /// `nppbench_stats::settle`); `calls` or more turns early stopping off.
    #[serde(default = "default_min_calls")]
    pub min_calls: u32,
    /// Criterion warm-up per throughput scenario, in milliseconds.
    pub warm_up_ms: u64,
    /// Criterion measurement time per throughput scenario, in milliseconds.
    pub measurement_ms: u64,
    /// Criterion samples per throughput scenario (at least 10).
    pub samples: usize,
    /// Criterion bootstrap resamples.
    pub resamples: usize,
    /// Independent passes over the throughput scenarios, each in a fresh process: the variance
    /// between runs that `compare` tests on.
    #[serde(default = "one")]
    pub repeat: u32,
    /// Also time each throughput scenario with the L2 cache flushed before every call.
    #[serde(default)]
    pub cold: bool,
    /// A child probe still running after this long is killed and its scenario recorded as failed.
    pub scenario_timeout_s: u64,
    /// A memory scenario whose process grows by more than this stops, recorded as stopped at budget.
    pub memory_budget_mib: u64,
}

fn default_min_calls() -> u32 {
    u32::MAX
}

fn one() -> u32 {
    1
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            calls: 32,
            min_calls: 12,
            warm_up_ms: 50,
            measurement_ms: 200,
            samples: 20,
            resamples: 20_000,
            repeat: 1,
            cold: true,
            scenario_timeout_s: 60,
            memory_budget_mib: 4096,
        }
    }
}
