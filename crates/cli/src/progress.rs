//! Progress while a run measures: a bar on a terminal, one plain line per scenario otherwise.

use std::io::IsTerminal;
use std::sync::OnceLock;

use indicatif::{ProgressBar, ProgressStyle};
use nppbench_engine::Progress;
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
    fn begin(&self, total: usize) {
        if !std::io::stderr().is_terminal() {
            eprintln!("running {total} scenarios");
            return;
        }
        let bar = ProgressBar::new(total as u64).with_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
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
