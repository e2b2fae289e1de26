//! The outcome of a comparison, decided once: PARTIAL, FAIL, PASS, CHANGED or NO CHANGE, from
//! the comparisons, the gates asked for and whether judging what pairs was asked for. The page,
//! summary.md, compare.json and `nppbench compare`'s exit status all show this one decision.

use serde::Serialize;

use super::{Change, Comparison, Gate, MemoryChange};

/// A comparison's outcome, as the page's badge, compare.json's `status` and the exit status
/// give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A candidate does not compare with the base, and judging what pairs was not asked for.
    Partial,
    /// A gate asked for trips.
    Fail,
    /// Gates were asked for and none trips.
    Pass,
    /// No gates asked for; something changed.
    Changed,
    /// No gates asked for; nothing changed.
    NoChange,
}

impl Status {
    pub fn words(self) -> &'static str {
        match self {
            Status::Partial => "PARTIAL",
            Status::Fail => "FAIL",
            Status::Pass => "PASS",
            Status::Changed => "CHANGED",
            Status::NoChange => "NO CHANGE",
        }
    }
}

impl MemoryChange {
    /// Whether the scenario changed between the runs: its output, leak, streams or race.
    pub fn changed(&self) -> bool {
        self.new_wrong
            || self.wrong_gone
            || self.new_leak
            || self.fixed_leak
            || self.more_streams
            || self.new_race
            || self.race_gone
    }
}

impl Comparison {
    /// Whether it is judged: it compares, or judging what pairs was asked for.
    pub fn judged(&self, allow_partial: bool) -> bool {
        self.compares() || allow_partial
    }

    /// Whether anything changed: a throughput scenario faster or slower, a memory scenario
    /// [`MemoryChange::changed`].
    pub fn changed(&self) -> bool {
        self.throughput
            .iter()
            .any(|x| matches!(x.verdict, Change::Faster | Change::Slower))
            || self.memory.iter().any(MemoryChange::changed)
    }
}

/// The outcome of every candidate against the base: PARTIAL where one does not compare (unless
/// `allow_partial`), else FAIL or PASS where gates were asked for, else CHANGED or NO CHANGE.
pub fn outcome(comparisons: &[Comparison], gates: &[Gate], allow_partial: bool) -> Status {
    let partial = comparisons.iter().any(|c| !c.compares());
    let failed = comparisons
        .iter()
        .any(|c| !c.tripped_if_judged(gates, c.judged(allow_partial)).is_empty());
    let changed = comparisons.iter().any(Comparison::changed);
    match (partial && !allow_partial, gates.is_empty(), failed, changed) {
        (true, ..) => Status::Partial,
        (false, false, true, _) => Status::Fail,
        (false, false, false, _) => Status::Pass,
        (false, true, _, true) => Status::Changed,
        (false, true, _, false) => Status::NoChange,
    }
}
