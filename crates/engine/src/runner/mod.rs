//! The parent side: runs every scenario of a matrix in child probes, for each NPP version asked
//! for, keeps whatever they finish, and assembles one run per version.
//!
//! Phases, in order: the environment (one probe per version: GPUs, driver, NPP, copy ceilings);
//! throughput (`settings.repeat` passes, each a fresh probe per GPU, the versions interleaved
//! pass by pass so that drift hits all alike); memory (batches of scenarios, a fresh probe each, `jobs` at
//! once, spread over the GPUs).

mod child;
mod environment_phase;
mod expected;
mod journal;
mod memory_phase;
mod ordering_phase;
#[cfg(test)]
mod stand_in;
mod supervise;
mod throughput_phase;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use nppbench_model::{
    Environment, Jobs, Matrix, MemoryReadings, MemoryRecord, OrderingRounds, Outcome, PhaseTime, RaceRounds, RunFile,
    SCHEMA_VERSION, ThroughputRecord,
};

pub use self::expected::{Expected, expected};
use self::journal::{Journal, JournalEntry};
pub use self::memory_phase::planned_batches;
use crate::protocol::{Devices, TEST_HOOKS};

/// What `nppbench run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub matrix: Matrix,
    /// The NPP versions to measure, one run each: `--npp DIR` (repeatable); `[None]` searches
    /// the default places.
    pub npp_dirs: Vec<Option<PathBuf>>,
    /// The GPUs to measure on.
    pub devices: Devices,
    /// Memory probes at once (`--jobs`); `None` chooses from the machine.
    pub jobs: Option<u32>,
    /// `CUDA_DEVICE_MAX_CONNECTIONS` for the memory probes (`--probe-connections`, default 1);
    /// `None` leaves them the environment's. See [`nppbench_model::ProbeConnections`].
    pub probe_connections: Option<u32>,
    /// The most memory scenarios one probe process measures (`--batch`; 1: a fresh process
    /// each); `None`: the default, 64.
    pub batch: Option<u32>,
    /// The seed that shuffles the memory scenarios into processes (`--seed`); `None` draws one,
    /// which run.json records.
    pub seed: Option<u64>,
    /// The binary that runs child probes (`nppbench` itself).
    pub probe_exe: PathBuf,
    /// Where run.json and the journal are written (for several versions, `runs/N/` inside).
    pub out_dir: PathBuf,
    /// The command line, recorded in run.json.
    pub command: Vec<String>,
    /// Continue the interrupted run whose journals are in `out_dir`, skipping what it finished.
    pub resume: bool,
    /// How the memory probes read their own memory (`--memory-readings`).
    pub memory_readings: MemoryReadings,
    /// Where the ordering rounds are made (`--race-rounds`).
    pub race_rounds: RaceRounds,
    /// Ordering probes at once beside the memory probes on one GPU (`--ordering-jobs`); `None`:
    /// half the memory probes.
    pub ordering_jobs: Option<u32>,
}

impl RunOptions {
    /// Where version `i`'s run.json and journal go: `out_dir` for one version, `out_dir/runs/N`
    /// for several.
    pub fn run_dir(&self, i: usize) -> PathBuf {
        if self.npp_dirs.len() <= 1 {
            self.out_dir.clone()
        } else {
            self.out_dir.join("runs").join((i + 1).to_string())
        }
    }

    /// The probes' request, answer and log files of version `i`.
    pub fn work_dir(&self, i: usize) -> PathBuf {
        self.run_dir(i).join(".nppbench-work")
    }

    /// The pids of every probe this run started, one a line (see `NPPBENCH_PROBE_PIDS`).
    pub fn probe_pids_path(&self) -> PathBuf {
        self.work_dir(0).join("probes.pids")
    }

    /// Every finished scenario of version `i`, appended as it finishes: what `--resume`
    /// continues from.
    pub fn journal_path(&self, i: usize) -> PathBuf {
        self.run_dir(i).join("run.journal.jsonl")
    }
}

/// Told about each scenario as it finishes.
pub trait Progress: Sync {
    /// The run is about to measure `memory` memory scenarios and `throughput` throughput
    /// scenario-passes, expected to take `expected`.
    fn begin(&self, memory: usize, throughput: usize, expected: Expected);
    fn done(&self, id: &str, outcome: &Outcome);
    fn note(&self, message: &str);
    fn finish(&self);
    /// More scenarios than `begin` said (`--repeat auto`'s added passes).
    fn extend(&self, _more: usize) {}
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The GPU, driver or NPP cannot be used: nothing was measured.
    #[error("{0}")]
    Environment(String),
    /// The matrix or the options ask for something this machine cannot do: nothing was measured.
    #[error("{0}")]
    Input(String),
    #[error("{what} {path}")]
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

/// One NPP version's run in progress: its environment, its journal, and what it has finished.
struct Version {
    index: usize,
    npp_dir: Option<PathBuf>,
    started_at: String,
    environment: Environment,
    journal: Journal,
    memory: Vec<MemoryRecord>,
    throughput: Vec<ThroughputRecord>,
}

impl Version {
    fn finish_memory(&mut self, progress: &dyn Progress, record: MemoryRecord) -> Result<(), RunError> {
        progress.done(&record.scenario.id, &record.outcome);
        self.journal.append(&JournalEntry::Memory(Box::new(record.clone())))?;
        self.memory.push(record);
        Ok(())
    }

    /// Memory record `i`'s ordering rounds.
    fn finish_rounds(&mut self, progress: &dyn Progress, i: usize, rounds: OrderingRounds) -> Result<(), RunError> {
        let Some(record) = self.memory.get_mut(i) else {
            return Ok(());
        };
        let outcome = match &rounds.not_measured {
            Some(reason) => Outcome::NotMeasured { reason: reason.clone() },
            None => Outcome::Ok,
        };
        progress.done(&format!("ordering rounds of {}", record.scenario.id), &outcome);
        self.journal
            .append(&ordering_phase::journal_entry(&record.scenario.id, &rounds))?;
        if let Some(result) = record.result.as_mut() {
            result.ordering = Some(rounds);
        }
        Ok(())
    }

    fn finish_throughput(&mut self, progress: &dyn Progress, record: ThroughputRecord) -> Result<(), RunError> {
        progress.done(&record.scenario.id, &record.outcome);
        self.journal
            .append(&JournalEntry::Throughput(Box::new(record.clone())))?;
        self.throughput.push(record);
        Ok(())
    }

    /// The throughput scenario-passes this version has yet to run: every throughput scenario on
    /// each GPU in each of `passes` passes, less the records already in.
    fn throughput_remaining(&self, matrix: &Matrix, passes: u32) -> usize {
        let tp = matrix.throughput.len() * self.gpus().len() * passes as usize;
        tp.saturating_sub(self.throughput.len())
    }

    /// The memory scenarios this version has yet to run.
    fn memory_remaining(&self, matrix: &Matrix) -> usize {
        let done_mem: BTreeSet<&str> = self.memory.iter().map(|r| r.scenario.id.as_str()).collect();
        matrix
            .memory
            .iter()
            .filter(|s| !done_mem.contains(s.id.as_str()))
            .count()
    }

    /// The GPUs of this version's environment, as ordinals and UUIDs.
    fn gpus(&self) -> Vec<(u32, String)> {
        self.environment
            .all_gpus()
            .iter()
            .map(|g| (g.gpu.ordinal, g.gpu.uuid.clone()))
            .collect()
    }
}

/// Test hooks set in this process's environment, as run.json records them.
fn test_hooks() -> Vec<String> {
    TEST_HOOKS
        .into_iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| format!("{k}={v}")))
        .collect()
}

/// Runs the whole matrix for every version (or, with `resume`, what an interrupted run left).
/// Scenario faults are recorded in the result; only a fault that leaves nothing to measure (no
/// GPU, no NPP, a matrix or `--jobs` too large for the device) is an error. When `stop` is set,
/// the probes running are killed and the finished scenarios are returned with `interrupted` set.
pub fn run(opts: &RunOptions, progress: &dyn Progress, stop: &AtomicBool) -> Result<Vec<RunFile>, RunError> {
    let clock = Instant::now();
    let mut phases = Vec::new();
    let mut versions = Vec::new();
    let mut matrix = opts.matrix.clone();
    environment_phase::say_notes(&matrix, progress);
    let t = Instant::now();
    for (index, npp_dir) in opts.npp_dirs.iter().enumerate() {
        let (version, its_matrix) = environment_phase::open_version(opts, index, npp_dir, progress, stop)?;
        // A resumed run goes on with the matrix its journal holds.
        matrix = its_matrix;
        versions.push(version);
    }
    phases.push(PhaseTime {
        phase: "environment".into(),
        wall_s: t.elapsed().as_secs_f64(),
    });
    let jobs = memory_phase::layout(opts, &matrix, &versions[0].environment, progress)?;

    let passes = matrix.settings.repeat.max(1);
    let memory_left: usize = versions.iter().map(|v| v.memory_remaining(&matrix)).sum();
    let throughput_left: usize = versions.iter().map(|v| v.throughput_remaining(&matrix, passes)).sum();
    let per_process = jobs.batching.as_ref().map_or(1, |b| b.max_per_process);
    let gpus = versions[0].gpus().len();
    progress.begin(
        memory_left,
        throughput_left,
        expected(
            &matrix,
            memory_left,
            throughput_left,
            gpus,
            jobs.jobs,
            per_process,
            jobs.ordering_beside(),
        ),
    );

    let t = Instant::now();
    let mut interrupted = false;
    'passes: for pass in 1..=passes {
        for v in &mut versions {
            if throughput_phase::run_pass(opts, &matrix, v, pass, progress, stop)? {
                interrupted = true;
                break 'passes;
            }
        }
    }
    if !interrupted && let Some(auto) = matrix.settings.repeat_auto {
        interrupted = throughput_phase::more_passes(opts, &matrix, &mut versions, passes, auto, progress, stop)?;
    }
    phases.push(PhaseTime {
        phase: "throughput".into(),
        wall_s: t.elapsed().as_secs_f64(),
    });
    let t = Instant::now();
    let mut beside = 0.0;
    if !interrupted {
        (interrupted, beside) =
            ordering_phase::memory_with_rounds_beside(opts, &matrix, &mut versions, &jobs, progress, stop)?;
    }
    phases.push(PhaseTime {
        phase: "memory".into(),
        wall_s: t.elapsed().as_secs_f64(),
    });
    // Inside the memory phase's time: the rounds made beside it.
    phases.extend((beside > 0.0).then(|| PhaseTime {
        phase: "ordering_beside_memory".into(),
        wall_s: beside,
    }));
    let t = Instant::now();
    if !interrupted {
        let rounds: usize = versions.iter().map(ordering_phase::remaining).sum();
        progress.extend(rounds);
        for v in &mut versions {
            if ordering_phase::run(opts, &matrix, v, &jobs, progress, stop)? {
                interrupted = true;
                break;
            }
        }
    }
    phases.push(PhaseTime {
        phase: "ordering".into(),
        wall_s: t.elapsed().as_secs_f64(),
    });
    progress.finish();

    let ending = Ending {
        opts,
        matrix: &matrix,
        wall_s: clock.elapsed().as_secs_f64(),
        interrupted,
        phases,
        jobs,
        test_hooks: test_hooks(),
    };
    Ok(versions.into_iter().map(|v| ending.run_file(v)).collect())
}

/// What every version's run.json shares at the end of a run.
struct Ending<'a> {
    opts: &'a RunOptions,
    matrix: &'a Matrix,
    wall_s: f64,
    interrupted: bool,
    phases: Vec<PhaseTime>,
    jobs: Jobs,
    test_hooks: Vec<String>,
}

impl Ending<'_> {
    /// Version `v`'s run.json, its scenarios in matrix order (passes in order), whatever order
    /// they finished in.
    fn run_file(&self, v: Version) -> RunFile {
        let Version {
            started_at,
            environment,
            mut memory,
            mut throughput,
            ..
        } = v;
        let matrix = self.matrix;
        let order = |ids: &[&str], id: &str| ids.iter().position(|x| *x == id).unwrap_or(usize::MAX);
        let memory_ids: Vec<&str> = matrix.memory.iter().map(|s| s.id.as_str()).collect();
        memory.sort_by_key(|r| order(&memory_ids, &r.scenario.id));
        let throughput_ids: Vec<&str> = matrix.throughput.iter().map(|s| s.id.as_str()).collect();
        throughput.sort_by_key(|r| (r.pass, order(&throughput_ids, &r.scenario.id), r.gpu.clone()));
        RunFile {
            schema_version: SCHEMA_VERSION,
            tool: crate::provenance::tool_info(),
            command: self.opts.command.clone(),
            started_at,
            finished_at: jiff::Timestamp::now().to_string(),
            wall_s: self.wall_s,
            interrupted: self.interrupted,
            environment,
            matrix: matrix.clone(),
            memory,
            throughput,
            phases: self.phases.clone(),
            jobs: Some(self.jobs.clone()),
            test_hooks: self.test_hooks.clone(),
        }
    }
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

    use super::environment_phase::check_fits;
    use super::*;

    /// The environment of a committed real run, with the free memory of each of its GPUs set to
    /// `free` bytes (an altered copy: the check's arithmetic is under test, not the machine; a
    /// newer run lists its GPUs in `gpus` as well as the first in `gpu`).
    fn environment_with_free(free: u64) -> Environment {
        let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
        let run = RunFile::read(&RunFile::find_in(&reports)[0]).unwrap();
        let mut env = run.environment;
        env.gpu.memory_free_bytes_at_start = free;
        for g in &mut env.gpus {
            g.gpu.memory_free_bytes_at_start = free;
        }
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

    #[test]
    fn more_jobs_than_memory_allows_is_bad_input() {
        let quick = Preset::Quick.matrix().unwrap();
        let env = environment_with_free(8 << 30);
        let err = memory_phase::jobs(Some(64), &quick, &env, memory_phase::batching(None, 1)).unwrap_err();
        assert!(matches!(err, RunError::Input(_)));
        let msg = err.to_string();
        assert!(msg.contains("--jobs 64") && msg.contains("at most"), "{msg}");
        let chosen = memory_phase::jobs(None, &quick, &env, memory_phase::batching(None, 1)).unwrap();
        assert!(chosen.jobs >= 1 && !chosen.reason.is_empty(), "{chosen:?}");
        assert_eq!(
            memory_phase::jobs(Some(1), &quick, &env, memory_phase::batching(None, 1))
                .unwrap()
                .jobs,
            1
        );
    }
}
