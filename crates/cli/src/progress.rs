//! Progress while a run measures: a bar on a terminal, one plain line per scenario otherwise.

use std::io::IsTerminal;
use std::sync::OnceLock;

use indicatif::{ProgressBar, ProgressStyle};
use nppbench_engine::{Expected, Progress};
use nppbench_model::Outcome;

/// A progress bar on a terminal, one plain line per scenario otherwise.
pub(crate) struct Reporter {
    bar: OnceLock<ProgressBar>,
}

impl Reporter {
    pub(crate) fn new() -> Self {
        Reporter { bar: OnceLock::new() }
    }
}

impl Progress for Reporter {
    fn begin(&self, memory: usize, throughput: usize, expected: Expected) {
        let total = memory + throughput;
        eprintln!("{}", plan(memory, throughput, expected));
        if !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::new(total as u64).with_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len}, about {eta} left {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        let _ = self.bar.set(bar);
    }

    fn done(&self, id: &str, outcome: &Outcome) {
        let status = match outcome {
            Outcome::Ok => "ok".to_owned(),
            Outcome::StoppedAtBudget { budget_mib } => format!("stopped at the {budget_mib} MiB budget"),
            Outcome::NotMeasured { reason } => format!("not measured: {reason}"),
            Outcome::Failed { reason, kind } => format!("FAILED ({}): {reason}", kind.as_str()),
        };
        match self.bar.get() {
            Some(bar) => {
                if outcome.is_failed() || matches!(outcome, Outcome::StoppedAtBudget { .. }) {
                    bar.println(format!("{id}: {status}"));
                }
                bar.set_message(id.to_owned());
                bar.inc(1);
            }
            None => eprintln!("{id}: {status}"),
        }
    }

    fn note(&self, message: &str) {
        eprintln!("{message}");
    }

    fn finish(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }

    fn extend(&self, more: usize) {
        if let Some(bar) = self.bar.get() {
            bar.inc_length(more as u64);
        }
    }
}

/// What a run is about to do and how long it is expected to take, in one line.
fn plan(memory: usize, throughput: usize, expected: Expected) -> String {
    let phases = if expected.ordering_beside {
        format!(
            "{} memory, with its ordering rounds beside it",
            seconds(expected.memory_phase())
        )
    } else {
        format!(
            "{} memory, {} ordering rounds",
            seconds(expected.memory),
            seconds(expected.ordering)
        )
    };
    format!(
        "running {} scenarios ({memory} memory, each with its ordering rounds, {throughput} throughput scenario-passes): expected about {} ({phases}, {} throughput; from H100 figures, docs/performance.md)",
        memory + throughput,
        seconds(expected.total()),
        seconds(expected.throughput)
    )
}

/// A duration as a person reads it: `45 s`, `6 min 12 s`.
fn seconds(d: std::time::Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    if s < 60 {
        format!("{s} s")
    } else {
        format!("{} min {} s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_plan_says_how_many_scenarios_and_how_long() {
        let e = Expected {
            memory: Duration::from_secs_f64(40.4),
            ordering: Duration::from_secs(9),
            ordering_beside: false,
            throughput: Duration::from_secs(12),
        };
        assert_eq!(
            plan(4331, 122, e),
            "running 4453 scenarios (4331 memory, each with its ordering rounds, 122 throughput scenario-passes): expected about 1 min 1 s (40 s memory, 9 s ordering rounds, 12 s throughput; from H100 figures, docs/performance.md)"
        );
        let beside = Expected {
            ordering_beside: true,
            ..e
        };
        assert_eq!(
            plan(4331, 122, beside),
            "running 4453 scenarios (4331 memory, each with its ordering rounds, 122 throughput scenario-passes): expected about 52 s (40 s memory, with its ordering rounds beside it, 12 s throughput; from H100 figures, docs/performance.md)"
        );
        assert_eq!(seconds(Duration::from_secs(372)), "6 min 12 s");
    }
}
