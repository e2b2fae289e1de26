//! `nppbench compare`: runs judged against the first, and the gating policy: which gates apply,
//! when a shared GPU keeps them from applying, and runs that do not compare (exit 4 unless
//! `--allow-partial`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use nppbench_analysis::compare::{Status, Thresholds};
use nppbench_model::RunFile;
use nppbench_report::compare_view;

use crate::args::CompareArgs;
use crate::exit::{DoesNotCompare, GateFailed, bad_input};
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
        return Err(bad_input(one_run(&args.runs, &paths)));
    }
    if !gates.is_empty() && !args.allow_shared_gpu {
        refuse_shared_gpus(&paths, &loaded)?;
    }
    let r = compare_view::render(&loaded, &run_names(&args.runs, &paths), t, &gates, args.allow_partial)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let page = out.join("compare.html");
    write(&page, &r.compare_html)?;
    write(&out.join("summary.md"), &r.summary_md)?;
    let json = serde_json::to_string_pretty(&r.json).context("serialising compare.json")?;
    write(&out.join("compare.json"), &json)?;
    print!("{}", r.summary_md);
    println!("{}", page.display());
    match r.status {
        Status::Partial => Err(DoesNotCompare(page.display().to_string()).into()),
        Status::Fail => Err(GateFailed(r.json.what_tripped().join("; "), page.display().to_string()).into()),
        Status::Pass | Status::Changed | Status::NoChange => Ok(()),
    }
}

/// What compare says when the paths given hold one run.
fn one_run(given: &[PathBuf], found: &[PathBuf]) -> String {
    let run = found.first().map_or_else(|| "none".into(), |p| p.display().to_string());
    match given {
        [one] if one == Path::new(&run) => {
            format!("compare needs two runs or more; {run} is one: give another run to compare it with")
        }
        [one] => format!(
            "compare needs two runs or more; {} holds one, {run}: give another run to compare it with",
            one.display()
        ),
        several => format!(
            "compare needs two runs or more; {} hold one between them, {run}",
            several
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Each run's name, from the file or folder it was given by: the file's name without `.json`
/// (`quick-1`), the folder's for a folder's `run.json` (`baseline`), the folder's and the file's
/// for a folder of several runs (`versions/run-1-npp-13.0.1`).
fn run_names(given: &[PathBuf], found: &[PathBuf]) -> Vec<String> {
    let stem = |p: &Path| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = name.trim_end_matches(".gz").trim_end_matches(".json").to_owned();
        match (name.as_str(), p.parent().and_then(Path::file_name)) {
            ("run" | "", Some(folder)) => folder.to_string_lossy().into_owned(),
            _ => name,
        }
    };
    found
        .iter()
        .map(|path| {
            let Some(arg) = given.iter().find(|g| path.starts_with(g)) else {
                return stem(path);
            };
            let several = found.iter().filter(|p| p.starts_with(arg)).count() > 1;
            match path.strip_prefix(arg) {
                Ok(rest) if several && !rest.as_os_str().is_empty() => {
                    format!("{}/{}", stem(arg), stem(rest))
                }
                _ if path == arg => stem(path),
                _ => stem(arg),
            }
        })
        .collect()
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
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
