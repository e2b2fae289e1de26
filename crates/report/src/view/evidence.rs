//! Which rules each run's page states: the runs given are grouped by NPP version and GPU model,
//! each group's scenarios pooled (`nppbench_analysis::evidence`), and every run of a group
//! states the group's rules, saying what they were derived from.

use nppbench_analysis::RunAnalysis;
use nppbench_analysis::evidence::{FunctionRules, groups, pool};

/// The rules one run's page states, and their basis in words.
#[derive(Debug, Clone)]
pub(crate) struct RunEvidence {
    pub(crate) rules: Vec<FunctionRules>,
    pub(crate) basis: String,
    /// The run's group (NPP version and GPU model), numbered in first-seen order.
    pub(crate) group: usize,
    /// The rules' class against the group's held-out scenarios.
    pub(crate) held_out: nppbench_analysis::score::Score,
}

/// The rules of every run of a report.
pub(crate) struct Evidence {
    per_run: Vec<RunEvidence>,
}

impl Evidence {
    pub(crate) fn of(analyses: &[RunAnalysis<'_>]) -> Evidence {
        let mut per_run: Vec<Option<RunEvidence>> = vec![None; analyses.len()];
        for (group, (version, gpu, members)) in groups(analyses).into_iter().enumerate() {
            let runs: Vec<&RunAnalysis<'_>> = members.iter().map(|&i| &analyses[i]).collect();
            let pooled = pool(&runs);
            let held_out = pooled.cases.iter().filter(|c| c.held_out).count();
            let scenarios = format!(
                "{} scenarios ({} held out of the fit), {} changing class between processes, {} left out as too short to tell a pool's bounded growth from a leak",
                pooled.cases.len(),
                held_out,
                pooled.flips.len(),
                pooled.inconclusive
            );
            let basis = if members.len() == 1 {
                format!("Rules derived from this run's {scenarios}.")
            } else {
                format!(
                    "Rules derived from the {} runs of NPP {version} on {gpu} given together (runs {}): {scenarios}.",
                    members.len(),
                    members
                        .iter()
                        .map(|i| (i + 1).to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let rules = pooled.rules();
            let held_out = nppbench_analysis::score::held_out(&pooled, &rules);
            for &i in &members {
                per_run[i] = Some(RunEvidence {
                    rules: rules.clone(),
                    basis: basis.clone(),
                    group,
                    held_out: held_out.clone(),
                });
            }
        }
        Evidence {
            per_run: per_run
                .into_iter()
                .map(|e| e.expect("every run is in one group"))
                .collect(),
        }
    }

    pub(crate) fn of_run(&self, index: usize) -> &RunEvidence {
        &self.per_run[index]
    }

    /// Whether every run given is of one group (one NPP version and GPU model): one atlas.
    pub(crate) fn one_group(&self) -> bool {
        self.per_run.iter().all(|r| r.group == 0)
    }
}
