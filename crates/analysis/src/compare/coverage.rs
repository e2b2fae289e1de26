//! Whether two runs compare at all: how much of the base has a counterpart in the candidate, and
//! whether they measured the same functions under the same matrix. A comparison that does not
//! compare gets no verdict unless the caller asks to judge what pairs.

use std::collections::BTreeSet;

use nppbench_model::{Primitive, RunFile};

use crate::RunAnalysis;

pub use crate::thresholds::MIN_COVERAGE;

/// How far a candidate covers the base, and what else tells the two runs apart.
#[derive(Debug, Clone, PartialEq)]
pub struct Coverage {
    /// The base's scenarios: its memory and throughput ids, each once.
    pub base_scenarios: usize,
    /// Of those, the ones the candidate measured too (the same id).
    pub paired: usize,
    /// The candidate's scenarios, each once.
    pub candidate_scenarios: usize,
    /// The functions each run asked for or measured, sorted.
    pub base_functions: Vec<Primitive>,
    pub candidate_functions: Vec<Primitive>,
    /// The names of the matrices (the preset's name for a preset).
    pub base_matrix: String,
    pub candidate_matrix: String,
    /// The matrices' scenarios or settings differ (whatever their names).
    pub matrices_differ: bool,
}

/// Why two runs do not compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// Under [`MIN_COVERAGE`] of the base's scenarios have a counterpart in the candidate.
    TooFewPaired { paired: usize, base: usize },
    /// The runs measured different functions.
    Functions,
    /// The runs come from matrices of different names (`quick` against `atlas`).
    MatrixName,
}

impl Coverage {
    /// The share of the base's scenarios with a counterpart (1 for a base of none).
    pub fn share(&self) -> f64 {
        if self.base_scenarios == 0 {
            1.0
        } else {
            self.paired as f64 / self.base_scenarios as f64
        }
    }

    pub fn functions_differ(&self) -> bool {
        self.base_functions != self.candidate_functions
    }

    pub fn matrix_names_differ(&self) -> bool {
        self.base_matrix != self.candidate_matrix
    }

    /// Why the runs do not compare; empty where they do.
    pub fn mismatches(&self) -> Vec<Mismatch> {
        let mut out = Vec::new();
        if self.share() < MIN_COVERAGE {
            out.push(Mismatch::TooFewPaired {
                paired: self.paired,
                base: self.base_scenarios,
            });
        }
        if self.functions_differ() {
            out.push(Mismatch::Functions);
        }
        if self.matrix_names_differ() {
            out.push(Mismatch::MatrixName);
        }
        out
    }

    /// Whether the two runs compare: enough of the base paired, the same functions and matrix.
    pub fn compares(&self) -> bool {
        self.mismatches().is_empty()
    }
}

/// A run's scenario ids (memory and throughput), each once.
pub(super) fn scenario_ids(run: &RunFile) -> BTreeSet<&str> {
    run.memory
        .iter()
        .map(|m| m.scenario.id.as_str())
        .chain(run.throughput.iter().map(|t| t.scenario.id.as_str()))
        .collect()
}

pub(super) fn coverage(b: &RunAnalysis<'_>, c: &RunAnalysis<'_>) -> Coverage {
    let (base, cand) = (b.run, c.run);
    let (bi, ci) = (scenario_ids(base), scenario_ids(cand));
    let (bm, cm) = (&base.matrix, &cand.matrix);
    Coverage {
        base_scenarios: bi.len(),
        paired: bi.intersection(&ci).count(),
        candidate_scenarios: ci.len(),
        base_functions: b.all_primitives(),
        candidate_functions: c.all_primitives(),
        base_matrix: bm.name.clone(),
        candidate_matrix: cm.name.clone(),
        matrices_differ: bm.memory != cm.memory || bm.throughput != cm.throughput || bm.settings != cm.settings,
    }
}
