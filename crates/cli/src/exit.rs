//! Exit statuses: what each kind of failure exits with, and the errors that carry the kind.

use std::process::ExitCode;

/// Exit status of bad input, as clap gives a usage error.
const BAD_INPUT: u8 = 2;

/// Exit status of a comparison that trips a `--fail-on` gate.
const GATE_FAILED: u8 = 3;

/// Exit status of a run stopped by Ctrl-C or SIGTERM, as shells report a SIGINT.
const INTERRUPTED: u8 = 130;

/// Bad input: exit 2, like a usage error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BadInput(pub(crate) String);

pub(crate) fn bad_input(e: impl std::fmt::Display) -> anyhow::Error {
    BadInput(e.to_string()).into()
}

/// A comparison that trips a gate: the page is written, the exit status says so.
#[derive(Debug, thiserror::Error)]
#[error("the comparison fails on --fail-on {0}; see {1}")]
pub(crate) struct GateFailed(pub(crate) String, pub(crate) String);

/// `regression,leak`: gates as `--fail-on` takes them.
pub(crate) fn gate_list(gates: &[nppbench_analysis::compare::Gate]) -> String {
    gates.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

/// A run that stopped early: its run.json holds what finished.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: run.json holds the scenarios that finished; continue with `nppbench run --resume --out {0}`")]
pub(crate) struct Interrupted(pub(crate) String);

/// The exit status of a command that failed with `e`: 2 bad input, 3 a tripped gate, 130
/// interrupted, else 1.
pub(crate) fn exit_code(e: &anyhow::Error) -> ExitCode {
    if e.downcast_ref::<BadInput>().is_some() {
        ExitCode::from(BAD_INPUT)
    } else if e.downcast_ref::<Interrupted>().is_some() {
        ExitCode::from(INTERRUPTED)
    } else if e.downcast_ref::<GateFailed>().is_some() {
        ExitCode::from(GATE_FAILED)
    } else {
        ExitCode::FAILURE
    }
}
