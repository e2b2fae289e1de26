//! The child side: one probe per process, reading a request file and writing its answer.
//!
//! Every failure a probe can see (CUDA, NPP, a wrong output) is written into its answer as a
//! failed outcome with its kind; only a crash or a hang leaves the parent to explain what
//! happened.

mod criterion_files;
mod faults;
mod fixture;
mod memory;
mod processes;
mod threads;
mod throughput;

use std::path::Path;

use anyhow::Context;
use nppbench_model::Outcome;

use crate::protocol::{MemoryReply, Request};

pub(crate) use throughput::DELAY_HOOK;

/// Wall times of a probe's steps, each recorded as it finishes.
pub(crate) struct Steps(Vec<nppbench_model::PhaseTime>, std::time::Instant);

impl Steps {
    pub(crate) fn new() -> Steps {
        Steps(Vec::new(), std::time::Instant::now())
    }

    pub(crate) fn done(&mut self, step: &str) {
        self.0.push(nppbench_model::PhaseTime {
            phase: step.to_owned(),
            wall_s: self.1.elapsed().as_secs_f64(),
        });
        self.1 = std::time::Instant::now();
    }
}

/// Other processes on a GPU (NVML's list less this process, its parent and the parent's other
/// children).
pub(crate) fn other_processes(
    nvml: Option<&nppbench_gpu::ProcessMemoryProbe>,
    uuid: &str,
    parent_pid: u32,
) -> Vec<nppbench_model::GpuProcess> {
    processes::census(nvml, uuid, parent_pid).others
}

pub(crate) use processes::merge as merge_processes;

/// GPU resources a probe used, kept alive past its answer: dropping them tears down the CUDA
/// context (slow, and serialised in the driver across processes), so a probe process ends
/// without dropping them ([`crate::end_probe`]).
pub struct Resources {
    _held: Vec<Box<dyn std::any::Any>>,
}

impl Resources {
    pub(crate) fn new(held: Vec<Box<dyn std::any::Any>>) -> Resources {
        Resources { _held: held }
    }
}

/// Runs the probe described by the JSON file `request` and writes its answer to `response`.
/// Returns what the probe still holds (see [`Resources`]).
pub fn run_probe(request: &Path, response: &Path) -> anyhow::Result<Resources> {
    let text =
        std::fs::read_to_string(request).with_context(|| format!("reading probe request {}", request.display()))?;
    let request: Request =
        serde_json::from_str(&text).with_context(|| format!("parsing probe request {}", request.display()))?;
    // Written whole, then renamed into place: the parent takes an answer that exists as
    // complete, and may go on before this process has exited.
    let write = |json: String| {
        let tmp = response.with_extension("tmp");
        std::fs::write(&tmp, json).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, response).with_context(|| format!("renaming {} into place", tmp.display()))
    };
    match request {
        Request::Environment { npp_dir, devices } => {
            let reply = crate::env::capture(npp_dir.as_deref(), &devices);
            write(serde_json::to_string(&reply)?)?;
            Ok(Resources::new(Vec::new()))
        }
        Request::Memory {
            npp_dir,
            device,
            scenario,
            memory_budget_mib,
            min_calls,
            parent_pid,
        } => {
            let ask = memory::Ask {
                npp_dir: npp_dir.as_deref(),
                device,
                scenario: &scenario,
                budget_mib: memory_budget_mib,
                min_calls,
                parent_pid,
            };
            let (reply, resources) = match memory::run(&ask) {
                Ok((result, stopped, resources)) => (
                    MemoryReply {
                        outcome: if stopped {
                            Outcome::StoppedAtBudget {
                                budget_mib: memory_budget_mib,
                            }
                        } else {
                            Outcome::Ok
                        },
                        result: Some(result),
                    },
                    resources,
                ),
                Err(e) => (
                    MemoryReply {
                        outcome: e.outcome(),
                        result: None,
                    },
                    Resources::new(Vec::new()),
                ),
            };
            write(serde_json::to_string(&reply)?)?;
            Ok(resources)
        }
        Request::Throughput {
            npp_dir,
            device,
            pass,
            scenarios,
            settings,
            criterion_dir,
            parent_pid,
        } => throughput::run(
            &throughput::Ask {
                npp_dir: npp_dir.as_deref(),
                device,
                pass,
                scenarios: &scenarios,
                settings: &settings,
                criterion_dir: &criterion_dir,
                parent_pid,
            },
            response,
        ),
    }
}
