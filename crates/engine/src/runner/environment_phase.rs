//! The environment phase: what the matrix measures without (its notes, said first), then for
//! each NPP version one probe that describes the GPUs, driver and NPP (or, with `--resume`, the
//! journal of the interrupted run), the check that the matrix fits the devices, and the
//! version's journal opened.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use nppbench_model::{Environment, Matrix};

use super::child::Child;
use super::journal::{self, Journal, JournalEntry, Resumed};
use super::{Progress, RunError, RunOptions, Version, io_error};
use crate::protocol::{EnvironmentReply, Request};

/// Says, before anything starts, each note of the matrix: what it gives that a function does
/// not have and is measured without (a reduction's `dst_stride`), and where it was written.
pub(super) fn say_notes(matrix: &Matrix, progress: &dyn Progress) {
    for note in &matrix.notes {
        progress.note(&format!("note: {note}"));
    }
}

/// Opens version `index` of the run: its environment probed (or read back with its records
/// from the journal when resuming), checked against the matrix, and its journal opened. Returns
/// the version and the matrix it runs (the journal's when resuming).
pub(super) fn open_version(
    opts: &RunOptions,
    index: usize,
    npp_dir: &Option<PathBuf>,
    progress: &dyn Progress,
    stop: &AtomicBool,
) -> Result<(Version, Matrix), RunError> {
    let work_dir = opts.work_dir(index);
    std::fs::create_dir_all(&work_dir).map_err(io_error("creating work folder", &work_dir))?;
    let journal_path = opts.journal_path(index);
    let resumed = if opts.resume {
        let r = journal::read(&journal_path)?;
        progress.note(&format!(
            "resuming matrix {:?}: {} memory and {} throughput records already done",
            r.matrix.name,
            r.memory.len(),
            r.throughput.len()
        ));
        r
    } else {
        progress.note(&format!(
            "probing the GPUs, driver and NPP{}",
            npp_dir
                .as_ref()
                .map_or(String::new(), |d| format!(" in {}", d.display()))
        ));
        let environment = environment(opts, index, npp_dir.clone(), stop)?;
        check_fits(&opts.matrix, &environment)?;
        Resumed {
            started_at: jiff::Timestamp::now().to_string(),
            environment,
            matrix: opts.matrix.clone(),
            memory: Vec::new(),
            throughput: Vec::new(),
        }
    };
    let mut journal = Journal::open(journal_path, opts.resume)?;
    if !opts.resume {
        journal.append(&JournalEntry::Header {
            started_at: resumed.started_at.clone(),
            command: opts.command.clone(),
            environment: Box::new(resumed.environment.clone()),
            matrix: Box::new(resumed.matrix.clone()),
        })?;
    }
    let version = Version {
        index,
        npp_dir: npp_dir.clone(),
        started_at: resumed.started_at,
        environment: resumed.environment,
        journal,
        memory: resumed.memory,
        throughput: resumed.throughput,
    };
    Ok((version, resumed.matrix))
}

fn environment(
    opts: &RunOptions,
    index: usize,
    npp_dir: Option<PathBuf>,
    stop: &AtomicBool,
) -> Result<Environment, RunError> {
    let child = Child {
        work_dir: opts.work_dir(index),
        probe_exe: &opts.probe_exe,
        stop,
        name: "environment".to_owned(),
        pids_file: opts.probe_pids_path(),
        env: &[],
    };
    let request = Request::Environment {
        npp_dir,
        devices: opts.devices.clone(),
    };
    let exit = child.run(&request, Duration::from_secs(120))?;
    match child.answer().map(|a| serde_json::from_str::<EnvironmentReply>(&a)) {
        Some(Ok(EnvironmentReply::Ok(env))) => Ok(*env),
        Some(Ok(EnvironmentReply::Err(e))) => Err(RunError::Environment(e)),
        Some(Ok(EnvironmentReply::BadDevices(e))) => Err(RunError::Input(e)),
        _ => Err(RunError::Environment(format!(
            "the environment probe failed: {}",
            child.failure(&exit)
        ))),
    }
}

/// Rejects, before any scenario runs, a matrix whose buffers cannot fit in a device's free
/// memory.
pub(super) fn check_fits(matrix: &Matrix, env: &Environment) -> Result<(), RunError> {
    for gpu in env.all_gpus() {
        let free = gpu.gpu.memory_free_bytes_at_start;
        for (p, g) in matrix.buffers() {
            let need = g.buffer_bytes(p);
            if need > free / 2 {
                return Err(RunError::Input(format!(
                    "geometry {} of {p} needs {} MiB of device memory for its buffers, more than half of the {} MiB free on {} (GPU {}); use a smaller geometry",
                    g.label(),
                    need >> 20,
                    free >> 20,
                    gpu.gpu.name,
                    gpu.gpu.ordinal
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Mutex;

    use nppbench_model::Outcome;

    use super::*;
    use crate::runner::Expected;

    /// The notes a run was told.
    #[derive(Default)]
    struct Notes(Mutex<Vec<String>>);

    impl Progress for Notes {
        fn begin(&self, _: usize, _: usize, _: Expected) {}
        fn done(&self, _: &str, _: &Outcome) {}
        fn note(&self, message: &str) {
            self.0.lock().unwrap().push(message.to_owned());
        }
        fn finish(&self) {}
    }

    #[test]
    fn a_reductions_ignored_dst_stride_is_said_before_the_run() {
        let text = "name = \"t\"\nprimitive = \"Mean_8u_C1R\"\nstreams = [\"blocking\"]\nthreading = [\"single\"]\n[[geometry]]\nwidth = 1\nheight = 100\nsrc_stride = 1\ndst_stride = 1\n";
        let matrix = Matrix::from_toml(text, Path::new("m.toml")).unwrap();
        let notes = Notes::default();
        say_notes(&matrix, &notes);
        let said = notes.0.into_inner().unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("note: m.toml:9:14: dst_stride 1 is ignored for Mean_8u_C1R"),
            "{said:?}"
        );
    }
}
