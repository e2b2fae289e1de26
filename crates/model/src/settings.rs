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
    /// `--repeat auto`: after `repeat` passes, a scenario whose passes still disagree too much for
    /// a comparison to settle gets more passes, each a fresh process timing only the scenarios
    /// that need one. `None`: exactly `repeat` passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_auto: Option<RepeatAuto>,
    /// Also time each throughput scenario with the L2 cache flushed before every call.
    #[serde(default)]
    pub cold: bool,
    /// A child probe still running after this long is killed and its scenario recorded as failed.
    pub scenario_timeout_s: u64,
    /// A memory scenario whose process grows by more than this stops, recorded as stopped at budget.
    pub memory_budget_mib: u64,
}

/// How far `--repeat auto` may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepeatAuto {
    /// Passes a scenario gets at most, the first `repeat` included.
    pub max_passes: u32,
    /// Wall time the added passes may take in all, seconds; a pass under way is finished.
    pub budget_s: u64,
}

impl RepeatAuto {
    /// `--repeat auto`'s bounds where a matrix names none: 20 passes, two minutes.
    pub const DEFAULT: RepeatAuto = RepeatAuto {
        max_passes: 20,
        budget_s: 120,
    };
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
            repeat_auto: None,
            cold: true,
            scenario_timeout_s: 60,
            memory_budget_mib: 4096,
        }
    }
}
