//! A memory probe process: its scenarios in order, one answer line each, appended as each
//! finishes, so that a crash loses only the scenario under way.
//!
//! A fault that may have left the process unsound (a CUDA or NPP error, a thread that died) ends
//! the process without a line for its scenario: the parent measures that one again in a process
//! of its own, and the rest in another. Only a process given one scenario answers with the fault
//! itself; a fault that cannot have touched the context (a function this NPP lacks, a geometry it
//! cannot take, a wrong output) is answered where it happens, and so is an error status of NPP's
//! after which the context still works (with a context filled with zeros MinMax returns
//! NPP_CUDA_KERNEL_EXECUTION_ERROR in every process: 25 scenarios of the atlas, each of which
//! cost two processes). The process also stops, saying why, once the streams its scenarios left
//! behind have grown it by more than the memory budget.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use nppbench_model::{MemoryScenario, Outcome};

use super::Resources;
use super::memory::{Ask, Process};
use crate::error::ProbeError;
use crate::protocol::{MemoryLine, MemoryReply};

/// What a memory probe process is asked.
pub(crate) struct Batch<'a> {
    pub(crate) npp_dir: Option<&'a Path>,
    pub(crate) device: u32,
    pub(crate) scenarios: &'a [MemoryScenario],
    pub(crate) budget_mib: u64,
    pub(crate) min_calls: u32,
    pub(crate) parent_pid: u32,
}

/// How a process ends: every scenario answered, stopped cleanly, or at a fault left to the
/// parent.
pub(crate) enum Ended {
    Done(Resources),
    /// A fault in a scenario of several: the process exits without answering it, holding what
    /// it held.
    Fault(ProbeError, Resources),
}

/// Appends answer lines to the answer file, each whole in one write.
struct Answers(std::fs::File);

impl Answers {
    fn line(&mut self, line: &MemoryLine) -> anyhow::Result<()> {
        let mut text = serde_json::to_string(line)?;
        text.push('\n');
        self.0
            .write_all(text.as_bytes())
            .context("writing a memory answer line")?;
        Ok(())
    }

    /// `scenario`'s answer, its wall time counted from `since`.
    fn scenario(&mut self, scenario: &MemoryScenario, reply: MemoryReply, since: Instant) -> anyhow::Result<()> {
        self.line(&MemoryLine::Scenario {
            id: scenario.id.clone(),
            reply: Box::new(reply),
            wall_ms: since.elapsed().as_secs_f64() * 1e3,
        })
    }
}

/// The answer of a scenario that a fault kept from being measured.
fn failed(e: ProbeError) -> MemoryReply {
    MemoryReply {
        outcome: e.outcome(),
        result: None,
    }
}

/// Runs `batch`, appending its lines to `answer`.
pub(crate) fn run(batch: &Batch<'_>, answer: &Path) -> anyhow::Result<Ended> {
    // Emptied first (an answer file left from an earlier probe is not this one's), then written
    // line by line through this one handle.
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(answer)
        .with_context(|| format!("opening {}", answer.display()))?;
    let mut answers = Answers(file);
    let alone = batch.scenarios.len() == 1;
    let mut clock = Instant::now();
    let mut process = match Process::open(batch.device) {
        Ok(p) => p,
        Err(e) if alone => {
            answers.scenario(&batch.scenarios[0], failed(e), clock)?;
            return Ok(Ended::Done(Resources::new(Vec::new())));
        }
        Err(e) => return Ok(Ended::Fault(e, Resources::new(Vec::new()))),
    };
    let start_bytes = process.judged_bytes().unwrap_or(0);
    let budget_bytes = batch.budget_mib.saturating_mul(1 << 20);
    for (i, scenario) in batch.scenarios.iter().enumerate() {
        let ask = Ask {
            npp_dir: batch.npp_dir,
            scenario,
            budget_mib: batch.budget_mib,
            min_calls: batch.min_calls,
            parent_pid: batch.parent_pid,
        };
        let (reply, stopped) = match process.measure(&ask) {
            Ok((result, stopped)) => (
                MemoryReply {
                    outcome: if stopped {
                        Outcome::StoppedAtBudget {
                            budget_mib: batch.budget_mib,
                        }
                    } else {
                        Outcome::Ok
                    },
                    result: Some(result),
                },
                stopped,
            ),
            Err(e) if alone || e.leaves_process_sound() => (failed(e), false),
            Err(e) if e.is_npp_status() && process.context_works() => (failed(e), false),
            Err(e) => return Ok(Ended::Fault(e.context(&scenario.id), process.into_resources())),
        };
        answers.scenario(scenario, reply, clock)?;
        clock = Instant::now();
        let left = batch.scenarios.len() - i - 1;
        if left == 0 {
            break;
        }
        let grown = process.judged_bytes().unwrap_or(0).saturating_sub(start_bytes);
        if stopped || grown > budget_bytes {
            answers.line(&MemoryLine::Stopped {
                reason: format!(
                    "the streams its scenarios kept grew the process by {} MiB, past the {} MiB budget; {left} scenario(s) left for a fresh process",
                    grown >> 20,
                    batch.budget_mib
                ),
            })?;
            break;
        }
    }
    Ok(Ended::Done(process.into_resources()))
}
