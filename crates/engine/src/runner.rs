//! The parent side: runs every scenario of a matrix in child probes, keeps whatever they
//! finish, and assembles the run.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nppbench_model::{
    Environment, Matrix, MemoryRecord, Outcome, RunFile, SCHEMA_VERSION, ThroughputRecord, ThroughputScenario,
};

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
    /// A folder for the probes' request, answer and log files.
    pub work_dir: PathBuf,
    /// The command line, recorded in run.json.
    pub command: Vec<String>,
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
}

/// A child probe: its files in the work folder.
struct Child<'a> {
    opts: &'a RunOptions,
    name: String,
}

impl Child<'_> {
    fn path(&self, ext: &str) -> PathBuf {
        self.opts.work_dir.join(format!("{}.{ext}", self.name))
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
            .spawn()
            .map_err(io_error("starting probe", &self.opts.probe_exe))?;
        let mut deadline = Instant::now() + timeout;
        let mut seen_len = 0;
        loop {
            if let Some(status) = child.try_wait().map_err(io_error("waiting for probe", &self.opts.probe_exe))? {
                return Ok(Exit::Status(status));
            }
            let len = std::fs::metadata(&resp).map_or(0, |m| m.len());
            if len != seen_len {
                seen_len = len;
                deadline = Instant::now() + timeout;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(Exit::TimedOut(timeout));
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

/// Runs the whole matrix. Scenario faults are recorded in the result; only a fault that leaves
/// nothing to measure (no GPU, no NPP, a matrix too large for the device) is an error.
pub fn run(opts: &RunOptions, progress: &dyn Progress) -> Result<RunFile, RunError> {
    std::fs::create_dir_all(&opts.work_dir).map_err(io_error("creating work folder", &opts.work_dir))?;
    let started_at = jiff::Timestamp::now();
    let clock = Instant::now();
    let matrix = &opts.matrix;
    let settings = &matrix.settings;

    progress.note("probing the GPU, driver and NPP");
    let environment = environment(opts)?;
    check_fits(matrix, &environment)?;

    progress.begin(matrix.throughput.len() + matrix.memory.len());
    let throughput = run_throughput(opts, progress)?;
    let mut memory = Vec::with_capacity(matrix.memory.len());
    for (i, scenario) in matrix.memory.iter().enumerate() {
        let child = Child {
            opts,
            name: format!("memory-{i}"),
        };
        let request = Request::Memory {
            npp_dir: opts.npp_dir.clone(),
            scenario: scenario.clone(),
            memory_budget_mib: settings.memory_budget_mib,
        };
        let exit = child.run(&request, Duration::from_secs(settings.scenario_timeout_s))?;
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
        memory.push(MemoryRecord {
            scenario: scenario.clone(),
            outcome: reply.outcome,
            result: reply.result,
        });
    }
    progress.finish();
    Ok(RunFile {
        schema_version: SCHEMA_VERSION,
        tool: crate::tool_info(),
        command: opts.command.clone(),
        started_at: started_at.to_string(),
        finished_at: jiff::Timestamp::now().to_string(),
        wall_s: clock.elapsed().as_secs_f64(),
        environment,
        matrix: matrix.clone(),
        memory,
        throughput,
    })
}

fn environment(opts: &RunOptions) -> Result<Environment, RunError> {
    let child = Child {
        opts,
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
fn run_throughput(opts: &RunOptions, progress: &dyn Progress) -> Result<Vec<ThroughputRecord>, RunError> {
    let settings = &opts.matrix.settings;
    let criterion_dir = opts.work_dir.join("criterion");
    let mut records: Vec<ThroughputRecord> = Vec::new();
    let mut remaining: &[ThroughputScenario] = &opts.matrix.throughput;
    let mut attempt = 0;
    while !remaining.is_empty() {
        let child = Child {
            opts,
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
            records.push(record);
            remaining = &remaining[1..];
        }
        if let Some(next) = remaining.first() {
            let outcome = Outcome::Failed {
                reason: child.failure(&exit),
            };
            progress.done(&next.id, &outcome);
            records.push(ThroughputRecord {
                scenario: next.clone(),
                outcome,
                result: None,
            });
            remaining = &remaining[1..];
        }
    }
    Ok(records)
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
