//! `nppbench compare`: runs judged against the first, and the gating policy: which gates apply,
//! and when a shared GPU keeps them from applying.

use std::path::{Path, PathBuf};

use anyhow::Context;
use nppbench_analysis::compare::Thresholds;
use nppbench_model::RunFile;

use crate::args::CompareArgs;
use crate::exit::{GateFailed, bad_input, gate_list};
use crate::runs::{check_out_dir, read_runs};

pub(crate) fn compare(args: CompareArgs) -> anyhow::Result<()> {
    let t = Thresholds {
        noise_pct: args.noise_pct,
        latency_noise_pct: args.latency_noise_pct,
        alpha: args.alpha,
        gate_min_pixels: args.gate_min_pixels,
    };
    let gates = args.fail_on.clone();
    if !((0.0..100.0).contains(&t.noise_pct) && t.alpha > 0.0 && t.alpha < 1.0) {
        return Err(bad_input("--noise-pct must be in [0, 100) and --alpha in (0, 1)"));
    }
    let out = args.out.as_path();
    check_out_dir(out)?;
    let (paths, loaded): (Vec<PathBuf>, Vec<RunFile>) = read_runs(&args.runs)?.into_iter().unzip();
    if loaded.len() < 2 {
        return Err(bad_input(format!(
            "compare needs two runs or more; {} hold(s) only {}",
            args.runs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            paths.first().map_or_else(|| "none".into(), |p| p.display().to_string())
        )));
    }
    if !gates.is_empty() && !args.allow_shared_gpu {
        refuse_shared_gpus(&paths, &loaded)?;
    }
    let r = nppbench_report::render_compare(&loaded, t, &gates)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let page = out.join("compare.html");
    std::fs::write(&page, &r.compare_html).with_context(|| format!("writing {}", page.display()))?;
    write_summary(out, &r.summary_md)?;
    print!("{}", r.summary_md);
    println!("{}", page.display());
    if r.failed {
        return Err(GateFailed(gate_list(&gates), page.display().to_string()).into());
    }
    Ok(())
}

fn write_summary(out: &Path, summary_md: &str) -> anyhow::Result<()> {
    std::fs::write(out.join("summary.md"), summary_md)
        .with_context(|| format!("writing {}", out.join("summary.md").display()))
}

/// Gates are not applied to a run measured beside another process on its GPU, where that could
/// disturb the figures they judge: bad input, unless `--allow-shared-gpu`.
fn refuse_shared_gpus(paths: &[PathBuf], runs: &[RunFile]) -> anyhow::Result<()> {
    for (path, run) in paths.iter().zip(runs) {
        let shared = nppbench_analysis::RunAnalysis::new(run).sharing_that_touches_gates();
        if let Some(p) = shared.first() {
            return Err(bad_input(format!(
                "{} was measured on a GPU shared with other processes (PID {} {}{}) at its start, beside its throughput or beside device-wide memory figures; those figures may be disturbed, so the gates are not applied: re-run it on an idle GPU, or pass --allow-shared-gpu to gate anyway",
                path.display(),
                p.pid,
                p.name,
                if shared.len() > 1 {
                    format!(", and {} more", shared.len() - 1)
                } else {
                    String::new()
                }
            )));
        }
    }
    Ok(())
}
