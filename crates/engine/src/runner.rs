//! The parent side: runs every scenario of a matrix in child probes, keeps whatever they
//! finish, and assembles the run.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nppbench_model::{
    Environment, Matrix, MemoryRecord, MemoryScenario, Outcome, RunFile, SCHEMA_VERSION, ThroughputRecord,
    ThroughputScenario,
};
use serde::{Deserialize, Serialize};

use crate::PROBE_SUBCOMMAND;
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

/// How a child probe ended.
enum Exit {
    Status(ExitStatus),
    TimedOut(Duration),
    /// The run was interrupted (Ctrl-C, SIGTERM) and the probe killed.
    Interrupted,
}

/// A child probe: its files in the work folder.
struct Child<'a> {
    opts: &'a RunOptions,
    stop: &'a AtomicBool,
    name: String,
}

impl Child<'_> {
    fn path(&self, ext: &str) -> PathBuf {
        self.opts.work_dir().join(format!("{}.{ext}", self.name))
    }

    /// Writes the request, starts the probe and waits for it. The deadline is `timeout` from
    /// the start, moved on whenever the answer file grows (a probe that streams answers).
    fn run(&self, request: &Request, timeout: Duration) -> Result<Exit, RunError> {
        let req = self.path("request.json");
        let resp = self.path("answer.json");
        let json = serde_json::to_string(request).expect("requests serialise");
        std::fs::write(&req, json).map_err(io_error("writing probe request", &req))?;
        let _ = std::fs::remove_file(&resp);
        let log = self.path("log");
        let stdout = std::fs::File::create(&log).map_err(io_error("creating probe log", &log))?;
        let err = self.path("stderr");
        let stderr = std::fs::File::create(&err).map_err(io_error("creating probe log", &err))?;
        let mut child = Command::new(&self.opts.probe_exe)
            .arg(PROBE_SUBCOMMAND)
            .arg("--request")
            .arg(&req)
            .arg("--answer")
            .arg(&resp)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            // Its own process group: a Ctrl-C reaches nppbench, which decides what to stop.
            .process_group(0)
            .spawn()
            .map_err(io_error("starting probe", &self.opts.probe_exe))?;
        let mut deadline = Instant::now() + timeout;
        let mut seen_len = 0;
        loop {
            if let Some(status) = child
                .try_wait()
                .map_err(io_error("waiting for probe", &self.opts.probe_exe))?
            {
                return Ok(Exit::Status(status));
            }
            let len = std::fs::metadata(&resp).map_or(0, |m| m.len());
            if len != seen_len {
                seen_len = len;
                deadline = Instant::now() + timeout;
            }
            let stop = self.stop.load(Ordering::SeqCst);
            if stop || Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(if stop {
                    Exit::Interrupted
                } else {
                    Exit::TimedOut(timeout)
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn answer(&self) -> Option<String> {
        std::fs::read_to_string(self.path("answer.json")).ok()
    }

    /// Why the probe gave no answer, with the end of what it printed to stderr.
    fn failure(&self, exit: &Exit) -> String {
        let why = match exit {
            Exit::TimedOut(t) => format!("timed out after {} s and was killed", t.as_secs()),
            Exit::Interrupted => "interrupted".to_owned(),
            Exit::Status(status) => describe_status(status),
        };
        let mut tail = String::new();
        if let Ok(mut f) = std::fs::File::open(self.path("stderr")) {
            let _ = f.read_to_string(&mut tail);
        }
        let tail: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = tail[tail.len().saturating_sub(3)..].join(" | ");
        if tail.is_empty() { why } else { format!("{why}: {tail}") }
    }
}

fn describe_status(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        let name = match sig {
            4 => " (SIGILL)",
            6 => " (SIGABRT)",
            7 => " (SIGBUS)",
            8 => " (SIGFPE)",
            9 => " (SIGKILL)",
            11 => " (SIGSEGV)",
            15 => " (SIGTERM)",
            _ => "",
        };
        return format!("the probe was killed by signal {sig}{name}");
    }
    match status.code() {
        Some(0) => "the probe exited without an answer".to_owned(),
        Some(c) => format!("the probe exited with status {c}"),
        None => "the probe ended abnormally".to_owned(),
    }
}

/// The journal: a header, then one line per finished scenario.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum JournalEntry {
    Header {
        started_at: String,
        command: Vec<String>,
        environment: Box<Environment>,
        matrix: Box<Matrix>,
    },
    Memory(Box<MemoryRecord>),
    Throughput(Box<ThroughputRecord>),
}

struct Journal {
    file: std::fs::File,
    path: PathBuf,
}

impl Journal {
    fn append(&mut self, entry: &JournalEntry) -> Result<(), RunError> {
        let line = serde_json::to_string(entry).expect("journal entries serialise");
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .map_err(io_error("appending to journal", &self.path))
    }
}

/// What an interrupted run had finished, read back from its journal.
struct Resumed {
    started_at: String,
    environment: Environment,
    matrix: Matrix,
    memory: Vec<MemoryRecord>,
    throughput: Vec<ThroughputRecord>,
}

fn read_journal(path: &Path) -> Result<Resumed, RunError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        RunError::Input(format!(
            "cannot resume: {} ({e}); --resume continues a run that was interrupted, in the same --out folder",
            path.display()
        ))
    })?;
    let mut lines = text.lines();
    let header = lines.next().and_then(|l| serde_json::from_str::<JournalEntry>(l).ok());
    let Some(JournalEntry::Header {
        started_at,
        environment,
        matrix,
        ..
    }) = header
    else {
        return Err(RunError::Input(format!(
            "cannot resume: {} has no header line",
            path.display()
        )));
    };
    let mut resumed = Resumed {
        started_at,
        environment: *environment,
        matrix: *matrix,
        memory: Vec::new(),
        throughput: Vec::new(),
    };
    // A line cut short by the interruption is the last one; it and anything after is dropped.
    for entry in lines.map_while(|l| serde_json::from_str::<JournalEntry>(l).ok()) {
        match entry {
            JournalEntry::Memory(r) => resumed.memory.push(*r),
            JournalEntry::Throughput(r) => resumed.throughput.push(*r),
            JournalEntry::Header { .. } => {}
        }
    }
    Ok(resumed)
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
        let r = read_journal(&journal_path)?;
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
        mut memory,
        mut throughput,
    } = resumed;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(opts.resume)
        .write(true)
        .truncate(!opts.resume)
        .open(&journal_path)
        .map_err(io_error("opening journal", &journal_path))?;
    let mut journal = Journal {
        file,
        path: journal_path,
    };
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
    let done_mem: BTreeSet<String> = memory.iter().map(|r| r.scenario.id.clone()).collect();
    let todo_mem: Vec<&MemoryScenario> = matrix.memory.iter().filter(|s| !done_mem.contains(&s.id)).collect();
    progress.begin(todo_tp.len() + todo_mem.len());

    let interrupted = run_throughput(opts, &matrix, &todo_tp, progress, stop, &mut journal, &mut throughput)?
        || run_memory(opts, &matrix, &todo_mem, progress, stop, &mut journal, &mut memory)?;
    progress.finish();
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

/// Runs memory scenarios, each in a fresh child. Returns whether the run was interrupted.
fn run_memory(
    opts: &RunOptions,
    matrix: &Matrix,
    todo: &[&MemoryScenario],
    progress: &dyn Progress,
    stop: &AtomicBool,
    journal: &mut Journal,
    records: &mut Vec<MemoryRecord>,
) -> Result<bool, RunError> {
    let settings = &matrix.settings;
    for (i, scenario) in todo.iter().enumerate() {
        let child = Child {
            opts,
            stop,
            name: format!("memory-{i}"),
        };
        let request = Request::Memory {
            npp_dir: opts.npp_dir.clone(),
            scenario: (*scenario).clone(),
            memory_budget_mib: settings.memory_budget_mib,
        };
        let exit = child.run(&request, Duration::from_secs(settings.scenario_timeout_s))?;
        if matches!(exit, Exit::Interrupted) || stop.load(Ordering::SeqCst) {
            return Ok(true);
        }
        let reply = child
            .answer()
            .and_then(|a| serde_json::from_str::<MemoryReply>(&a).ok())
            .unwrap_or_else(|| MemoryReply {
                outcome: Outcome::Failed {
                    reason: child.failure(&exit),
                },
                result: None,
            });
        progress.done(&scenario.id, &reply.outcome);
        let record = MemoryRecord {
            scenario: (*scenario).clone(),
            outcome: reply.outcome,
            result: reply.result,
        };
        journal.append(&JournalEntry::Memory(Box::new(record.clone())))?;
        records.push(record);
    }
    Ok(false)
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

/// Runs the throughput scenarios in one child, restarting past any scenario that kills it.
/// Returns whether the run was interrupted.
fn run_throughput(
    opts: &RunOptions,
    matrix: &Matrix,
    todo: &[ThroughputScenario],
    progress: &dyn Progress,
    stop: &AtomicBool,
    journal: &mut Journal,
    records: &mut Vec<ThroughputRecord>,
) -> Result<bool, RunError> {
    let settings = &matrix.settings;
    let criterion_dir = opts.work_dir().join("criterion");
    let mut remaining = todo;
    let mut attempt = 0;
    while !remaining.is_empty() {
        let child = Child {
            opts,
            stop,
            name: format!("throughput-{attempt}"),
        };
        attempt += 1;
        let _ = std::fs::remove_dir_all(&criterion_dir);
        let request = Request::Throughput {
            npp_dir: opts.npp_dir.clone(),
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
        for record in answers.into_iter().take(remaining.len()) {
            progress.done(&record.scenario.id, &record.outcome);
            journal.append(&JournalEntry::Throughput(Box::new(record.clone())))?;
            records.push(record);
            remaining = &remaining[1..];
        }
        if matches!(exit, Exit::Interrupted) || stop.load(Ordering::SeqCst) {
            return Ok(true);
        }
        if let Some(next) = remaining.first() {
            let outcome = Outcome::Failed {
                reason: child.failure(&exit),
            };
            progress.done(&next.id, &outcome);
            let record = ThroughputRecord {
                scenario: next.clone(),
                outcome,
                result: None,
            };
            journal.append(&JournalEntry::Throughput(Box::new(record.clone())))?;
            records.push(record);
            remaining = &remaining[1..];
        }
    }
    Ok(false)
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
