//! The child side: one probe per process, reading a request file and writing its answer.
//!
//! Every failure a probe can see (CUDA, NPP, a wrong output) is written into its answer as a
//! failed outcome with its kind; only a crash or a hang leaves the parent to explain what
//! happened.

mod batch;
mod environment;
mod faults;
mod memory;
pub(crate) use memory::shared_stream_kind;
mod ordering;
mod processes;
mod rounds;
mod setup;
mod threads;
mod throughput;

/// The GPU clock cycles an ordering round's caller's stream spins before the late write.
pub(crate) const ORDERING_DELAY_CYCLES: u64 = ordering::DELAY_CYCLES;
pub(crate) use ordering::one_connection;

use std::path::Path;

use anyhow::Context;

use crate::protocol::{CLEAN_EXIT_ENV, Request};

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

    /// Adds steps timed elsewhere (a [`setup::Setup`]'s own), the clock starting again from now:
    /// what passed between the last of them and now is in none.
    pub(crate) fn append(&mut self, steps: Vec<nppbench_model::PhaseTime>) {
        self.0.extend(steps);
        self.1 = std::time::Instant::now();
    }

    /// The steps recorded so far.
    pub(crate) fn into_inner(self) -> Vec<nppbench_model::PhaseTime> {
        self.0
    }
}

/// GPU resources a probe used, kept alive past its answer: dropping them tears down the CUDA
/// context (slow, and serialised in the driver across processes), so a probe process ends
/// without dropping them ([`end_probe`]).
pub struct Resources {
    _held: Vec<Box<dyn std::any::Any>>,
    /// The probe's exit status: 0, or [`FAULT_EXIT`].
    code: i32,
}

/// The exit status of a memory probe that stopped at a fault without answering its scenario
/// (the parent measures it again alone).
pub(crate) const FAULT_EXIT: i32 = 3;

impl Resources {
    pub(crate) fn new(held: Vec<Box<dyn std::any::Any>>) -> Resources {
        Resources { _held: held, code: 0 }
    }
}

/// Ends a probe process once its answer is written, without tearing down the CUDA resources it
/// still holds (see [`nppbench_gpu::exit_now`]): the kernel driver reclaims them.
/// With `NPPBENCH_CLEAN_EXIT=1` (for a profiler that reports at exit, such as Nsight Compute) it
/// tears everything down and exits normally instead.
pub fn end_probe(resources: Resources) -> ! {
    let code = resources.code;
    if std::env::var_os(CLEAN_EXIT_ENV).is_some_and(|v| v == "1") {
        drop(resources);
        std::process::exit(code);
    }
    std::mem::forget(resources);
    nppbench_gpu::exit_now(code)
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
            let reply = environment::capture(npp_dir.as_deref(), &devices);
            write(serde_json::to_string(&reply)?)?;
            Ok(Resources::new(Vec::new()))
        }
        Request::Memory {
            npp_dir,
            device,
            scenarios,
            memory_budget_mib,
            min_calls,
            parent_pid,
        } => {
            let ask = batch::Batch {
                npp_dir: npp_dir.as_deref(),
                device,
                scenarios: &scenarios,
                budget_mib: memory_budget_mib,
                min_calls,
                parent_pid,
            };
            match batch::run(&ask, response)? {
                batch::Ended::Done(resources) => Ok(resources),
                batch::Ended::Fault(e, mut resources) => {
                    eprintln!(
                        "{} ({}); the scenario is measured again in a process of its own",
                        e.message,
                        e.kind.as_str()
                    );
                    resources.code = FAULT_EXIT;
                    Ok(resources)
                }
            }
        }
        Request::Ordering {
            npp_dir,
            device,
            scenarios,
            race_rounds,
        } => {
            let ask = rounds::Batch {
                npp_dir: npp_dir.as_deref(),
                device,
                scenarios: &scenarios,
                race_rounds,
            };
            match rounds::run(&ask, response)? {
                rounds::Ended::Done(resources) => Ok(resources),
                rounds::Ended::Fault(e, mut resources) => {
                    eprintln!(
                        "{} ({}); the scenario's rounds are recorded as not measured",
                        e.message,
                        e.kind.as_str()
                    );
                    resources.code = FAULT_EXIT;
                    Ok(resources)
                }
            }
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
