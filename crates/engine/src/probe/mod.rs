//! The child side: one probe per process, reading a request file and writing its answer.
//!
//! Every failure a probe can see (CUDA, NPP, a wrong output) is written into its answer as a
//! failed outcome with its kind; only a crash or a hang leaves the parent to explain what
//! happened.

mod criterion_files;
mod faults;
mod fixture;
mod memory;
mod threads;
mod throughput;

use std::path::Path;

use anyhow::Context;
use nppbench_model::Outcome;

use crate::protocol::{EnvironmentReply, MemoryReply, Request};

/// Runs the probe described by the JSON file `request` and writes its answer to `response`.
pub fn run_probe(request: &Path, response: &Path) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(request).with_context(|| format!("reading probe request {}", request.display()))?;
    let request: Request =
        serde_json::from_str(&text).with_context(|| format!("parsing probe request {}", request.display()))?;
    let write =
        |json: String| std::fs::write(response, json).with_context(|| format!("writing {}", response.display()));
    match request {
        Request::Environment { npp_dir } => {
            let reply = match crate::env::capture(npp_dir.as_deref()) {
                Ok(env) => EnvironmentReply::Ok(Box::new(env)),
                Err(e) => EnvironmentReply::Err(e),
            };
            write(serde_json::to_string(&reply)?)
        }
        Request::Memory {
            npp_dir,
            scenario,
            memory_budget_mib,
        } => {
            let reply = match memory::run(npp_dir.as_deref(), &scenario, memory_budget_mib) {
                Ok((result, stopped)) => MemoryReply {
                    outcome: if stopped {
                        Outcome::StoppedAtBudget {
                            budget_mib: memory_budget_mib,
                        }
                    } else {
                        Outcome::Ok
                    },
                    result: Some(result),
                },
                Err(e) => MemoryReply {
                    outcome: e.outcome(),
                    result: None,
                },
            };
            write(serde_json::to_string(&reply)?)
        }
        Request::Throughput {
            npp_dir,
            scenarios,
            settings,
            criterion_dir,
        } => throughput::run(npp_dir.as_deref(), &scenarios, &settings, &criterion_dir, response),
    }
}
