//! `nppbench design`: the next round of an atlas. From the runs given, a matrix of the scenarios
//! one factor away from where each function's rule is weak (not earned, or unstable); measure it
//! with `nppbench run --matrix` and pool the run with the atlas. No GPU needed.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use nppbench_analysis::RunAnalysis;
use nppbench_analysis::design::bisect::bisection_round;
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
    /// Instead, the next round of the threshold search: for each function, the widths and heights
    /// between a leaking scenario and a non-leaking one that differ in that quantity alone, where
    /// the rest of its leak rule still holds. Repeat (measure, pool, design again) until it
    /// proposes nothing: then every boundary searched is found to the pixel or row.
    #[arg(long, conflicts_with = "per_function")]
    bisect: bool,
    /// With --bisect: the families (scenarios that differ in the searched quantity alone)
    /// searched per function and quantity.
    #[arg(long, value_name = "N", default_value_t = 2, requires = "bisect", value_parser = clap::value_parser!(u32).range(1..=100))]
    families: u32,
}

pub(crate) fn design(args: DesignArgs) -> anyhow::Result<()> {
    let loaded = read_runs(&args.atlas)?;
    let version = one_npp_version(&loaded, None)?;
    let analyses: Vec<RunAnalysis<'_>> = loaded.iter().map(|(_, r)| RunAnalysis::new(r)).collect();
    let evidence = pool(&analyses.iter().collect::<Vec<_>>());
    let rules = evidence.rules();
    let calls = loaded[0].1.matrix.settings.calls;
    let scenarios = if args.bisect {
        bisection_round(&evidence, &rules, args.families as usize, calls)
    } else {
        next_round(&evidence, &rules, args.per_function as usize, calls)
    };
    if scenarios.is_empty() {
        // No file: a loop of rounds stops where none is written.
        let _ = std::fs::remove_file(&args.out);
        println!(
            "nothing to measure: {} (NPP {version}); {} not written",
            if args.bisect {
                "every boundary searched is found"
            } else {
                "no function's rule is weak"
            },
            args.out.display()
        );
        return Ok(());
    }
    let text = if args.bisect {
        matrix_toml(
            "atlas-bisect",
            "The threshold search's next round: widths and heights between a leaking and a non-leaking scenario that differ in that alone",
            &scenarios,
            calls,
        )
    } else {
        matrix_toml(
            "atlas-next",
            "The next round: scenarios one factor away from where the rules are weak",
            &scenarios,
            calls,
        )
    };
    std::fs::write(&args.out, text).with_context(|| format!("writing {}", args.out.display()))?;
    let functions: std::collections::BTreeSet<_> = scenarios.iter().map(|s| s.primitive).collect();
    println!(
        "{}: {} scenarios for {} function(s) {} (NPP {})",
        args.out.display(),
        scenarios.len(),
        functions.len(),
        if args.bisect {
            "with a boundary still open"
        } else {
            "whose rule is weak"
        },
        version
    );
    Ok(())
}
