//! Exit statuses: what each kind of failure exits with, and the errors that carry the kind.

use std::process::ExitCode;

/// Exit status of bad input, as clap gives a usage error.
const BAD_INPUT: u8 = 2;

/// Exit status of a comparison that trips a `--fail-on` gate.
const GATE_FAILED: u8 = 3;

/// Exit status of a comparison whose runs do not compare, without `--allow-partial`.
const DOES_NOT_COMPARE: u8 = 4;

/// `nppbench compare --help`'s account of its exit statuses.
pub(crate) const COMPARE_EXIT_STATUS: &str = "\
Exit status:
  0  every candidate compares with the base and trips no gate asked for (or none was asked for)
  1  an error: a run unreadable, a file not written
  2  bad input: a usage error, an unknown gate, fewer than two runs, or gates asked of a run
     measured beside another process on its GPU (without --allow-shared-gpu)
  3  a candidate trips a --fail-on gate
  4  a candidate does not compare with the base: under 90% of the base's scenarios have a
     counterpart in it, or the runs measured other functions or matrices of other names
     (without --allow-partial, which judges what pairs and exits 0 or 3)
Under 0, 3 and 4 the pages, summary.md and compare.json are written.";

/// Exit status of a command this machine cannot carry out: no NVIDIA GPU or driver, or no NPP
/// where nppbench looked. One status for each, whichever command met it (`run`, `npp`, `cargo
/// xtask report`), and whether the place looked in was named (`--npp DIR`) or searched.
pub(crate) const UNAVAILABLE: u8 = 5;

/// Exit status of a run stopped by Ctrl-C or SIGTERM, as shells report a SIGINT.
const INTERRUPTED: u8 = 130;

/// `nppbench --help`'s account of the exit statuses of every command (README: exit statuses).
pub(crate) const EXIT_STATUS: &str = "\
Exit status, of every command:
  0  done
  1  an error: a file unreadable or not written, a probe that failed
  2  bad input: a usage error, a file or folder that does not exist, a matrix or run.json that
     cannot be read
  3  a --fail-on gate trips (compare, history report, trace)
  4  a candidate does not compare with the base (compare, without --allow-partial)
  5  this machine cannot measure: no NVIDIA GPU or driver, no NPP where nppbench looked
     (--npp DIR, $NPPBENCH_NPP_DIR, the toolkit, the system loader), or the probe that opens
     them failed
  130  interrupted (Ctrl-C, SIGTERM): run.json holds what finished
`nppbench trace` exits with the traced program's own status, or, where that is 0 and a
--fail-on gate trips, 3. `nppbench shield` exits with the program's own status, or, where that
is 0 and the program loaded no NPP or an NPP the atlas never measured, 2.";

/// Bad input: exit 2, like a usage error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BadInput(pub(crate) String);

pub(crate) fn bad_input(e: impl std::fmt::Display) -> anyhow::Error {
    BadInput(e.to_string()).into()
}

/// This machine cannot measure: no NVIDIA GPU or driver, or no NPP where nppbench looked.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unavailable(pub(crate) String);

pub(crate) fn unavailable(e: impl std::fmt::Display) -> anyhow::Error {
    Unavailable(e.to_string()).into()
}

/// A comparison that trips a gate: the page is written, the exit status says so. The first
/// field says what tripped: each gate, how many scenarios, the worst or first one.
#[derive(Debug, thiserror::Error)]
#[error("the comparison fails: {0}; see {1}")]
pub(crate) struct GateFailed(pub(crate) String, pub(crate) String);

/// The history's tripped lines (`gate: scenario on runner at run`), one per gate: `regression:
/// 2 scenarios, the first tp/… on … at …`.
pub(crate) fn tripped_by_gate(lines: &[String]) -> String {
    let mut gates: Vec<(&str, usize, &str)> = Vec::new();
    for line in lines {
        let (gate, what) = line.split_once(": ").unwrap_or((line.as_str(), ""));
        match gates.iter_mut().find(|(g, ..)| *g == gate) {
            Some((_, n, _)) => *n += 1,
            None => gates.push((gate, 1, what)),
        }
    }
    gates
        .iter()
        .map(|(gate, n, first)| {
            format!(
                "{gate}: {n} scenario{}, the first {first}",
                if *n == 1 { "" } else { "s" }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `regression,leak`: gates as `--fail-on` takes them.
pub(crate) fn gate_list(gates: &[nppbench_analysis::compare::Gate]) -> String {
    gates.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

/// A comparison whose runs do not compare: the pages say so first, the exit status says so.
#[derive(Debug, thiserror::Error)]
#[error(
    "a candidate does not compare with the base (see the headline of {0}): compare runs of one matrix, or pass --allow-partial to judge the scenarios that pair"
)]
pub(crate) struct DoesNotCompare(pub(crate) String);

/// A run that stopped early: its run.json holds what finished.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: run.json holds the scenarios that finished; continue with `nppbench run --resume --out {0}`")]
pub(crate) struct Interrupted(pub(crate) String);

/// A `call-catalogue` stopped early: `--out` holds the lines of the functions that finished.
#[derive(Debug, thiserror::Error)]
#[error(
    "interrupted: {out} holds the {lines} function lines written before the stop (every function that finished); the same command with --resume calls the others"
)]
pub(crate) struct CallsInterrupted {
    pub(crate) out: String,
    pub(crate) lines: usize,
}

/// The exit status of a command that failed with `e`: 2 bad input, 3 a tripped gate, 4 runs that
/// do not compare, 5 nothing to measure with, 130 interrupted, else 1.
pub(crate) fn exit_code(e: &anyhow::Error) -> ExitCode {
    if e.downcast_ref::<BadInput>().is_some() {
        ExitCode::from(BAD_INPUT)
    } else if e.downcast_ref::<Unavailable>().is_some() {
        ExitCode::from(UNAVAILABLE)
    } else if e.downcast_ref::<Interrupted>().is_some() || e.downcast_ref::<CallsInterrupted>().is_some() {
        ExitCode::from(INTERRUPTED)
    } else if e.downcast_ref::<GateFailed>().is_some() {
        ExitCode::from(GATE_FAILED)
    } else if e.downcast_ref::<DoesNotCompare>().is_some() {
        ExitCode::from(DOES_NOT_COMPARE)
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `compare --help` gives each status its code, and the coverage the analysis asks for.
    #[test]
    fn the_compare_help_names_every_exit_status() {
        for code in [0, 1, BAD_INPUT, GATE_FAILED, DOES_NOT_COMPARE] {
            assert!(
                COMPARE_EXIT_STATUS.contains(&format!("\n  {code}  ")),
                "{code} is not described"
            );
        }
        let pct = format!("{}%", (nppbench_analysis::compare::MIN_COVERAGE * 100.0).round());
        assert!(COMPARE_EXIT_STATUS.contains(&pct), "{pct}");
    }

    /// `nppbench --help` and README's table give every status its code, the same ones.
    #[test]
    fn the_help_and_readme_name_every_exit_status() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
        let table = &readme[readme.find("## Exit statuses").expect("README's exit statuses")..];
        for code in [0, 1, BAD_INPUT, GATE_FAILED, DOES_NOT_COMPARE, UNAVAILABLE, INTERRUPTED] {
            assert!(
                EXIT_STATUS.contains(&format!("\n  {code}  ")),
                "{code} is not in --help"
            );
            assert!(
                table.contains(&format!("\n| {code} |")),
                "{code} is not in README's table"
            );
        }
        let gpu = table
            .lines()
            .find(|l| l.starts_with(&format!("| {UNAVAILABLE} |")))
            .unwrap();
        assert!(gpu.contains("no NVIDIA GPU") && gpu.contains("no NPP"), "{gpu}");
    }
}
