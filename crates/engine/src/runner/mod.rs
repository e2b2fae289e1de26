//! The parent side: runs every scenario of a matrix in child probes, keeps whatever they
//! finish, and assembles the run.

mod child;
mod journal;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nppbench_model::{
    Environment, Matrix, MemoryRecord, MemoryScenario, Outcome, RunFile, SCHEMA_VERSION, ThroughputRecord,
    ThroughputScenario,
};

use self::child::{Child, Exit};
use self::journal::{Journal, JournalEntry, Resumed};
use crate::protocol::{EnvironmentReply, MemoryReply, Request};

/// What `nppbench run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub matrix: Matrix,
    /// `--npp DIR`; `None` searches the default places.
    pub npp_dir: Option<PathBuf>,
    /// The binary that runs child probes (`nppbench` itself).
    pub probe_exe: PathBuf,
    /// Where run.json and the journal are written; the probes' files go in a folder inside it.
    pub out_dir: PathBuf,
    /// The command line, recorded in run.json.
    pub command: Vec<String>,
    /// Continue the interrupted run whose journal is in `out_dir`, skipping what it finished.
    pub resume: bool,
}

impl RunOptions {
    /// The probes' request, answer and log files.
    pub fn work_dir(&self) -> PathBuf {
        self.out_dir.join(".nppbench-work")
    }

    /// Every finished scenario, appended as it finishes: what `--resume` continues from.
    pub fn journal_path(&self) -> PathBuf {
        self.out_dir.join("run.journal.jsonl")
    }
}

/// Told about each scenario as it finishes.
pub trait Progress {
    fn begin(&self, total: usize);
    fn done(&self, id: &str, outcome: &Outcome);
    fn note(&self, message: &str);
    fn finish(&self);
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The GPU, driver or NPP cannot be used: nothing was measured.
    #[error("{0}")]
    Environment(String),
    /// The matrix asks for something this GPU cannot do: nothing was measured.
    #[error("{0}")]
    Input(String),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io_error(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> RunError + use<> {
    let path = path.to_owned();
    move |source| RunError::Io { what, path, source }
}

/// One run in progress: what it was asked, where it reports, and what it has finished.
struct Session<'a> {
    opts: &'a RunOptions,
    progress: &'a dyn Progress,
    stop: &'a AtomicBool,
    journal: Journal,
    memory: Vec<MemoryRecord>,
    throughput: Vec<ThroughputRecord>,
}

impl Session<'_> {
    fn child(&self, name: String) -> Child<'_> {
        Child {
            opts: self.opts,
            stop: self.stop,
            name,
        }
    }

    fn interrupted(&self, exit: &Exit) -> bool {
        matches!(exit, Exit::Interrupted) || self.stop.load(Ordering::SeqCst)
    }

    fn finish_memory(&mut self, record: MemoryRecord) -> Result<(), RunError> {
        self.progress.done(&record.scenario.id, &record.outcome);
        self.journal.append(&JournalEntry::Memory(Box::new(record.clone())))?;
        self.memory.push(record);
        Ok(())
    }

    fn finish_throughput(&mut self, record: ThroughputRecord) -> Result<(), RunError> {
        self.progress.done(&record.scenario.id, &record.outcome);
        self.journal
            .append(&JournalEntry::Throughput(Box::new(record.clone())))?;
        self.throughput.push(record);
        Ok(())
    }

    /// Runs memory scenarios, each in a fresh child. Returns whether the run was interrupted.
    fn run_memory(&mut self, matrix: &Matrix, todo: &[&MemoryScenario]) -> Result<bool, RunError> {
        let settings = &matrix.settings;
        for (i, scenario) in todo.iter().enumerate() {
            let child = self.child(format!("memory-{i}"));
            let request = Request::Memory {
                npp_dir: self.opts.npp_dir.clone(),
                scenario: (*scenario).clone(),
                memory_budget_mib: settings.memory_budget_mib,
            };
            let exit = child.run(&request, Duration::from_secs(settings.scenario_timeout_s))?;
            if self.interrupted(&exit) {
                return Ok(true);
            }
            let reply = child
                .answer()
                .and_then(|a| serde_json::from_str::<MemoryReply>(&a).ok())
                .unwrap_or_else(|| MemoryReply {
                    outcome: child.failure(&exit).outcome(),
                    result: None,
                });
            self.finish_memory(MemoryRecord {
                scenario: (*scenario).clone(),
                outcome: reply.outcome,
                result: reply.result,
            })?;
        }
        Ok(false)
    }

    /// Runs the throughput scenarios in one child, restarting past any scenario that kills it.
    /// Returns whether the run was interrupted.
    fn run_throughput(&mut self, matrix: &Matrix, todo: &[ThroughputScenario]) -> Result<bool, RunError> {
        let settings = &matrix.settings;
        let criterion_dir = self.opts.work_dir().join("criterion");
        let mut remaining = todo;
        let mut attempt = 0;
        while !remaining.is_empty() {
            let child = self.child(format!("throughput-{attempt}"));
            attempt += 1;
            let _ = std::fs::remove_dir_all(&criterion_dir);
            let request = Request::Throughput {
                npp_dir: self.opts.npp_dir.clone(),
                scenarios: remaining.to_vec(),
                settings: settings.clone(),
                criterion_dir: criterion_dir.clone(),
            };
            let exit = child.run(&request, Duration::from_secs(settings.scenario_timeout_s))?;
            let answers: Vec<ThroughputRecord> = child
                .answer()
                .unwrap_or_default()
                .lines()
                .map_while(|l| serde_json::from_str(l).ok())
                .collect();
            let failure = (!self.interrupted(&exit)).then(|| child.failure(&exit));
            for record in answers.into_iter().take(remaining.len()) {
                self.finish_throughput(record)?;
                remaining = &remaining[1..];
            }
            let Some(failure) = failure else {
                return Ok(true);
            };
            if let Some(next) = remaining.first() {
                self.finish_throughput(ThroughputRecord {
                    scenario: next.clone(),
                    outcome: failure.outcome(),
                    result: None,
                })?;
                remaining = &remaining[1..];
            }
        }
        Ok(false)
    }
}

/// Runs the whole matrix (or, with `resume`, what an interrupted run left). Scenario faults are
/// recorded in the result; only a fault that leaves nothing to measure (no GPU, no NPP, a matrix
/// too large for the device) is an error. When `stop` is set, the probe running is killed and
/// the finished scenarios are returned with `interrupted` set.
pub fn run(opts: &RunOptions, progress: &dyn Progress, stop: &AtomicBool) -> Result<RunFile, RunError> {
    let work_dir = opts.work_dir();
    std::fs::create_dir_all(&work_dir).map_err(io_error("creating work folder", &work_dir))?;
    let clock = Instant::now();
    let journal_path = opts.journal_path();

    let resumed = if opts.resume {
        let r = journal::read(&journal_path)?;
        progress.note(&format!(
            "resuming matrix {:?}: {} memory and {} throughput scenarios already done",
            r.matrix.name,
            r.memory.len(),
            r.throughput.len()
        ));
        r
    } else {
        progress.note("probing the GPU, driver and NPP");
        let environment = environment(opts, stop)?;
        check_fits(&opts.matrix, &environment)?;
        Resumed {
            started_at: jiff::Timestamp::now().to_string(),
            environment,
            matrix: opts.matrix.clone(),
            memory: Vec::new(),
            throughput: Vec::new(),
        }
    };
    let Resumed {
        started_at,
        environment,
        matrix,
        memory,
        throughput,
    } = resumed;
    let mut journal = Journal::open(journal_path, opts.resume)?;
    if !opts.resume {
        journal.append(&JournalEntry::Header {
            started_at: started_at.clone(),
            command: opts.command.clone(),
            environment: Box::new(environment.clone()),
            matrix: Box::new(matrix.clone()),
        })?;
    }

    let done_tp: BTreeSet<&str> = throughput.iter().map(|r| r.scenario.id.as_str()).collect();
    let todo_tp: Vec<ThroughputScenario> = matrix
        .throughput
        .iter()
        .filter(|s| !done_tp.contains(s.id.as_str()))
        .cloned()
        .collect();
    let done_mem: BTreeSet<&str> = memory.iter().map(|r| r.scenario.id.as_str()).collect();
    let todo_mem: Vec<&MemoryScenario> = matrix
        .memory
        .iter()
        .filter(|s| !done_mem.contains(s.id.as_str()))
        .collect();
    progress.begin(todo_tp.len() + todo_mem.len());

    let mut session = Session {
        opts,
        progress,
        stop,
        journal,
        memory,
        throughput,
    };
    let interrupted = session.run_throughput(&matrix, &todo_tp)? || session.run_memory(&matrix, &todo_mem)?;
    progress.finish();
    let Session {
        mut memory,
        mut throughput,
        ..
    } = session;
    // Report scenarios in matrix order, whatever order a resumed run finished them in.
    let order = |ids: &[&str], id: &str| ids.iter().position(|x| *x == id).unwrap_or(usize::MAX);
    let memory_ids: Vec<&str> = matrix.memory.iter().map(|s| s.id.as_str()).collect();
    memory.sort_by_key(|r| order(&memory_ids, &r.scenario.id));
    let throughput_ids: Vec<&str> = matrix.throughput.iter().map(|s| s.id.as_str()).collect();
    throughput.sort_by_key(|r| order(&throughput_ids, &r.scenario.id));
    Ok(RunFile {
        schema_version: SCHEMA_VERSION,
        tool: crate::tool_info(),
        command: opts.command.clone(),
        started_at,
        finished_at: jiff::Timestamp::now().to_string(),
        wall_s: clock.elapsed().as_secs_f64(),
        interrupted,
        environment,
        matrix,
        memory,
        throughput,
    })
}

fn environment(opts: &RunOptions, stop: &AtomicBool) -> Result<Environment, RunError> {
    let child = Child {
        opts,
        stop,
        name: "environment".to_owned(),
    };
    let request = Request::Environment {
        npp_dir: opts.npp_dir.clone(),
    };
    let exit = child.run(&request, Duration::from_secs(120))?;
    match child.answer().map(|a| serde_json::from_str::<EnvironmentReply>(&a)) {
        Some(Ok(EnvironmentReply::Ok(env))) => Ok(*env),
        Some(Ok(EnvironmentReply::Err(e))) => Err(RunError::Environment(e)),
        _ => Err(RunError::Environment(format!(
            "the environment probe failed: {}",
            child.failure(&exit)
        ))),
    }
}

/// Rejects, before any scenario runs, a matrix whose buffers cannot fit in the device's free memory.
fn check_fits(matrix: &Matrix, env: &Environment) -> Result<(), RunError> {
    let free = env.gpu.memory_free_bytes_at_start;
    for g in matrix.geometries() {
        let need = g.src_bytes().saturating_add(g.dst_bytes());
        if need > free / 2 {
            return Err(RunError::Input(format!(
                "geometry {} needs {} MiB of device memory for its two buffers, more than half of the {} MiB free on {}; use a smaller geometry",
                g.label(),
                need >> 20,
                free >> 20,
                env.gpu.name
            )));
        }
    }
    Ok(())
}

/// Writes `DIR/run.json` atomically: a temporary file in the same folder, then a rename.
pub fn write_run_json(run: &RunFile, dir: &Path) -> Result<PathBuf, RunError> {
    std::fs::create_dir_all(dir).map_err(io_error("creating output folder", dir))?;
    let path = dir.join("run.json");
    let tmp = dir.join(".run.json.tmp");
    let json = serde_json::to_string_pretty(run).expect("run files serialise");
    std::fs::write(&tmp, json).map_err(io_error("writing", &tmp))?;
    std::fs::rename(&tmp, &path).map_err(io_error("renaming into place", &path))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use nppbench_model::{Preset, RunFile};

    use super::*;

    /// The environment of a committed real run, with its free memory set to `free` bytes (an
    /// altered copy: the check's arithmetic is under test, not the machine).
    fn environment_with_free(free: u64) -> Environment {
        let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
        let run = RunFile::read(&RunFile::find_in(&reports)[0]).unwrap();
        let mut env = run.environment;
        env.gpu.memory_free_bytes_at_start = free;
        env
    }

    #[test]
    fn a_matrix_too_large_for_the_free_memory_is_bad_input() {
        let full = Preset::Full.matrix().unwrap();
        // 8K frames need 5 × 7680 × 4320 ≈ 158 MiB for their two buffers.
        let err = check_fits(&full, &environment_with_free(200 << 20)).unwrap_err();
        assert!(matches!(err, RunError::Input(_)));
        let msg = err.to_string();
        assert!(
            msg.contains("needs") && msg.contains("MiB free on NVIDIA H100"),
            "{msg}"
        );
        assert!(check_fits(&full, &environment_with_free(80 << 30)).is_ok());
    }
}
