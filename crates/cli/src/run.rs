//! `nppbench run`: a matrix measured by the engine's child probes, each run.json written, and
//! what a failed or interrupted run leaves behind.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use nppbench_engine::{RunError, RunOptions};
use nppbench_model::{Matrix, RepeatAuto, RunFile};

use crate::args::{Repeat, RunArgs};
use crate::exit::{Interrupted, bad_input, unavailable};
use crate::progress::Reporter;
use crate::runs::{check_npp_dir, check_out_dir};

pub(crate) fn run(args: RunArgs) -> anyhow::Result<()> {
    let mut matrix = match &args.matrix {
        Some(path) => Matrix::from_file(path),
        None => args.preset.matrix(),
    }
    .map_err(bad_input)?;
    if let Some(shard) = args.shard {
        matrix.keep_shard(shard);
        if matrix.memory.is_empty() && matrix.throughput.is_empty() {
            return Err(bad_input(format!(
                "--shard {shard}: the matrix {} has no scenario in this shard; give fewer shards",
                matrix.name
            )));
        }
    }
    match args.repeat {
        Some(Repeat::Passes(k)) => {
            matrix.settings.repeat = k;
            matrix.settings.repeat_auto = None;
        }
        Some(Repeat::Auto) => {
            matrix.settings.repeat = matrix
                .settings
                .repeat
                .max(nppbench_analysis::compare::MIN_PASSES as u32);
            matrix.settings.repeat_auto.get_or_insert(RepeatAuto::DEFAULT);
        }
        None => {}
    }
    for dir in &args.npp {
        check_npp_dir(dir)?;
    }
    let npp_dirs = if args.npp.is_empty() {
        vec![None]
    } else {
        args.npp.iter().cloned().map(Some).collect()
    };
    let out = args.out;
    check_out_dir(&out)?;
    let opts = RunOptions {
        matrix,
        npp_dirs,
        devices: args.devices,
        jobs: args.jobs,
        batch: args.batch,
        seed: args.seed,
        probe_connections: args.probe_connections,
        probe_exe: std::env::current_exe().context("locating the nppbench binary for its child probes")?,
        out_dir: out.clone(),
        command: std::env::args().collect(),
        resume: args.resume,
        memory_readings: args.memory_readings,
        race_rounds: args.race_rounds,
        ordering_jobs: args.ordering_jobs,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let handler_stop = stop.clone();
    ctrlc::set_handler(move || handler_stop.store(true, Ordering::SeqCst))
        .context("installing the Ctrl-C and SIGTERM handler")?;
    let progress = Reporter::new();
    let runs = match nppbench_engine::run(&opts, &progress, &stop) {
        Ok(runs) => runs,
        Err(e @ RunError::Input(_)) => return Err(bad_input(e)),
        Err(e @ RunError::Environment(_)) => return Err(unavailable(e).context("nothing was measured")),
        Err(e) => return Err(e).context("nothing was measured"),
    };
    let mut paths = Vec::new();
    for (i, run) in runs.into_iter().enumerate() {
        paths.push((run.interrupted, write(&opts, i, run)?));
    }
    for (_, path) in &paths {
        println!("{}", path.display());
    }
    if paths.iter().any(|(interrupted, _)| *interrupted) {
        return Err(Interrupted(out.display().to_string()).into());
    }
    Ok(())
}

/// Writes the `i`th run's run.json and tidies its folder: the journal goes once the run is
/// complete, the probes' work folder once nothing failed.
fn write(opts: &RunOptions, i: usize, mut run: RunFile) -> anyhow::Result<std::path::PathBuf> {
    let dir = opts.run_dir(i);
    // The writing phase is timed on the first write and recorded in the second.
    let t = std::time::Instant::now();
    nppbench_engine::write_run_json(&run, &dir)?;
    run.phases.push(nppbench_model::PhaseTime {
        phase: "writing".into(),
        wall_s: t.elapsed().as_secs_f64(),
    });
    let path = nppbench_engine::write_run_json(&run, &dir)?;
    if !run.interrupted {
        let _ = std::fs::remove_file(opts.journal_path(i));
    }
    let failed_here = run
        .memory
        .iter()
        .map(|r| &r.outcome)
        .chain(run.throughput.iter().map(|r| &r.outcome))
        .filter(|o| o.is_failed())
        .count();
    if failed_here == 0 && !run.interrupted {
        let _ = std::fs::remove_dir_all(opts.work_dir(i));
    } else if failed_here > 0 {
        eprintln!(
            "{failed_here} scenario(s) failed; their reasons are in {} and the probes' logs in {}",
            path.display(),
            opts.work_dir(i).display()
        );
    }
    Ok(path)
}
