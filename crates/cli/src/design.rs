//! `nppbench design`: the next round of an atlas. From the runs given, a matrix of the scenarios
//! one factor away from where each function's rule is weak (not earned, or unstable); measure it
//! with `nppbench run --matrix` and pool the run with the atlas. No GPU needed.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use nppbench_analysis::RunAnalysis;
use nppbench_analysis::design::{matrix_toml, next_round};
use nppbench_analysis::evidence::pool;

use crate::runs::{one_npp_version, read_runs};

#[derive(Args)]
pub(crate) struct DesignArgs {
    /// A run (run.json, or a folder holding runs) of the atlas; repeat it to pool several runs of
    /// one NPP version.
    #[arg(long, value_name = "RUN", required = true)]
    atlas: Vec<PathBuf>,
    /// The matrix file to write.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Scenarios proposed for each function whose rule is weak, at most.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=1000))]
    per_function: u32,
}

pub(crate) fn design(args: DesignArgs) -> anyhow::Result<()> {
    let loaded = read_runs(&args.atlas)?;
    let version = one_npp_version(&loaded, None)?;
    let analyses: Vec<RunAnalysis<'_>> = loaded.iter().map(|(_, r)| RunAnalysis::new(r)).collect();
    let evidence = pool(&analyses.iter().collect::<Vec<_>>());
    let rules = evidence.rules();
    let calls = loaded[0].1.matrix.settings.calls;
    let scenarios = next_round(&evidence, &rules, args.per_function as usize, calls);
    let text = matrix_toml("atlas-next", &scenarios, calls);
    std::fs::write(&args.out, text).with_context(|| format!("writing {}", args.out.display()))?;
    let functions: std::collections::BTreeSet<_> = scenarios.iter().map(|s| s.primitive).collect();
    println!(
        "{}: {} scenarios for {} function(s) whose rule is weak (NPP {})",
        args.out.display(),
        scenarios.len(),
        functions.len(),
        version
    );
    Ok(())
}
