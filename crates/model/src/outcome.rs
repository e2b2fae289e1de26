//! How a scenario ended: [`Outcome`] with its evidence, [`Status`] its kind alone (ordered, worst
//! last), and [`FailureKind`] for a failure.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ModelError;

/// What kind of fault failed a scenario: reports and `compare` count failures by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// A CUDA driver, NVML or CUPTI call failed.
    Gpu,
    /// The device ran out of memory.
    OutOfMemory,
    /// NPP returned an error status.
    Npp,
    /// NPP (or a library it needs) could not be loaded.
    Load,
    /// The output differs from the CPU reference.
    Mismatch,
    /// A host thread could not be spawned, panicked or exited early.
    Thread,
    /// The probe ran past its timeout and was killed.
    Timeout,
    /// The probe died (a signal, an exit without an answer).
    Crash,
    /// The scenario asks for something impossible (a geometry NPP cannot take).
    Input,
    /// Recorded before failures had kinds, or none of the above.
    #[default]
    Other,
}

impl FailureKind {
    pub const ALL: [FailureKind; 10] = [
        FailureKind::Gpu,
        FailureKind::OutOfMemory,
        FailureKind::Npp,
        FailureKind::Load,
        FailureKind::Mismatch,
        FailureKind::Thread,
        FailureKind::Timeout,
        FailureKind::Crash,
        FailureKind::Input,
        FailureKind::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Gpu => "GPU error",
            FailureKind::OutOfMemory => "out of memory",
            FailureKind::Npp => "NPP error",
            FailureKind::Load => "load error",
            FailureKind::Mismatch => "wrong output",
            FailureKind::Thread => "thread error",
            FailureKind::Timeout => "timeout",
            FailureKind::Crash => "crash",
            FailureKind::Input => "bad input",
            FailureKind::Other => "other",
        }
    }
}

/// How a scenario ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    /// The probe failed: a crash, a timeout, a CUDA or NPP error, or a wrong output.
    Failed {
        reason: String,
        #[serde(default)]
        kind: FailureKind,
    },
    /// A leaking scenario stopped early because its process grew past the memory budget.
    StoppedAtBudget {
        budget_mib: u64,
    },
    /// This NPP lacks the primitive or its library: nothing to measure, and no fault.
    NotMeasured {
        reason: String,
    },
}

impl Outcome {
    pub fn is_failed(&self) -> bool {
        matches!(self, Outcome::Failed { .. })
    }

    /// A failed outcome of `kind`.
    pub fn failed(kind: FailureKind, reason: impl Into<String>) -> Outcome {
        Outcome::Failed {
            reason: reason.into(),
            kind,
        }
    }

    /// How it ended, without the evidence: the value run.json's `status` field holds.
    pub fn status(&self) -> Status {
        match self {
            Outcome::Ok => Status::Ok,
            Outcome::NotMeasured { .. } => Status::NotMeasured,
            Outcome::StoppedAtBudget { .. } => Status::StoppedAtBudget,
            Outcome::Failed { .. } => Status::Failed,
        }
    }

    /// The kind of failure, for a failed outcome.
    pub fn failure_kind(&self) -> Option<FailureKind> {
        match self {
            Outcome::Failed { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}

/// How a scenario ended, without the evidence: one of an [`Outcome`]'s variants, by name. Ordered
/// from best to worst, so that the worst of several is their maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// This NPP lacks the primitive or its library.
    NotMeasured,
    /// A leak stopped at the memory budget.
    StoppedAtBudget,
    Failed,
}

impl Status {
    /// Every status, best first.
    pub const ALL: [Status; 4] = [Status::Ok, Status::NotMeasured, Status::StoppedAtBudget, Status::Failed];

    /// The name run.json's `status` field and scenarios.csv's `status` column use.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::NotMeasured => "not_measured",
            Status::StoppedAtBudget => "stopped_at_budget",
            Status::Failed => "failed",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Status::ALL.into_iter().find(|k| k.as_str() == s).ok_or_else(|| {
            ModelError::invalid(
                format!("status {s:?}"),
                "unknown; use one of ok, not_measured, stopped_at_budget, failed",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_ordered_worst_last() {
        let mut shuffled = [Status::Failed, Status::Ok, Status::StoppedAtBudget, Status::NotMeasured];
        shuffled.sort();
        assert_eq!(shuffled, Status::ALL);
        assert_eq!(Status::ALL.into_iter().max(), Some(Status::Failed));
        assert!(Status::Ok < Status::NotMeasured && Status::StoppedAtBudget < Status::Failed);
    }

    #[test]
    fn a_status_round_trips_through_its_name_and_json() {
        let names: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(names, ["ok", "not_measured", "stopped_at_budget", "failed"]);
        for s in Status::ALL {
            assert_eq!(s.as_str().parse::<Status>().unwrap(), s);
            assert_eq!(s.to_string(), s.as_str());
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<Status>(&format!("\"{s}\"")).unwrap(), s);
        }
        let err = "passed".parse::<Status>().unwrap_err().to_string();
        assert!(err.contains("stopped_at_budget"), "{err}");
    }

    #[test]
    fn an_outcomes_status_is_the_tag_run_json_writes() {
        let outcomes = [
            Outcome::Ok,
            Outcome::NotMeasured {
                reason: "no nppif".into(),
            },
            Outcome::StoppedAtBudget { budget_mib: 8 },
            Outcome::failed(FailureKind::Timeout, "timed out"),
        ];
        for (o, expected) in outcomes.iter().zip(Status::ALL) {
            assert_eq!(o.status(), expected);
            let json = serde_json::to_value(o).unwrap();
            assert_eq!(json["status"], expected.as_str());
        }
    }
}
