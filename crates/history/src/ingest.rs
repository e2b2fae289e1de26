//! From run.json to the rows the database keeps: one [`RunRow`] per run (its environment and
//! identity) and one [`ScenarioRow`] per scenario and GPU, throughput passes aggregated.
//!
//! Memory figures (leak class, MiB per thread, NPP's streams per thread) are the report's
//! analysis of the raw samples: the caller hands them in (`rows_of` in [`prepare`]), so that a
//! scenario has the same class here as on its run's page and this crate never re-derives it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nppbench_model::{Outcome, RunFile, ThroughputRecord};
use nppbench_stats::LeakClass;

use crate::HistoryError;
use crate::db::{Added, Db};

/// A run's identity and environment.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRow {
    /// What makes a run the same run however often it is added: see [`RunRow::key_of`].
    pub key: String,
    /// RFC 3339, as run.json has it.
    pub started_at: String,
    pub finished_at: String,
    pub host: String,
    /// The first GPU's model (`NVIDIA H200`).
    pub gpu_model: String,
    /// Every GPU the run measured, in order.
    pub gpu_uuids: Vec<String>,
    /// The model of each GPU of `gpu_uuids`, in the same order.
    pub gpu_models: Vec<String>,
    pub driver_version: Option<String>,
    /// `cuDriverGetVersion`: 13000 for CUDA 13.0.
    pub cuda_driver_api_version: i32,
    pub npp_version: String,
    pub tool_version: String,
    pub tool_commit: String,
    pub matrix_name: String,
    /// The run.json schema version the file was written with.
    pub run_schema_version: u32,
    pub interrupted: bool,
    pub test_hooks: Vec<String>,
}

impl RunRow {
    pub fn of(run: &RunFile) -> RunRow {
        let env = &run.environment;
        let (gpu_uuids, gpu_models) = env.all_gpus().into_iter().map(|g| (g.gpu.uuid, g.gpu.name)).unzip();
        RunRow {
            key: RunRow::key_of(run),
            started_at: run.started_at.clone(),
            finished_at: run.finished_at.clone(),
            host: env.host.hostname.clone(),
            gpu_model: env.gpu.name.clone(),
            gpu_uuids,
            gpu_models,
            driver_version: env.driver_version.clone(),
            cuda_driver_api_version: env.cuda_driver_api_version,
            npp_version: env.npp.version.clone(),
            tool_version: run.tool.version.clone(),
            tool_commit: run.tool.git_commit.clone(),
            matrix_name: run.matrix.name.clone(),
            run_schema_version: run.schema_version,
            interrupted: run.interrupted,
            test_hooks: run.test_hooks.clone(),
        }
    }

    /// nppbench's commit, the start time, the host, the GPUs, NPP and the matrix: a copy of a
    /// run.json under another name is the same run; a re-run is not (its start time differs).
    pub fn key_of(run: &RunFile) -> String {
        let uuids: Vec<String> = run.environment.all_gpus().into_iter().map(|g| g.gpu.uuid).collect();
        [
            run.tool.git_commit.as_str(),
            run.started_at.as_str(),
            run.environment.host.hostname.as_str(),
            &uuids.join(","),
            run.environment.npp.version.as_str(),
            run.matrix.name.as_str(),
        ]
        .join("|")
    }

    /// The model of the GPU with `uuid` (the first GPU's for a UUID the run does not list).
    pub fn model_of(&self, uuid: &str) -> &str {
        self.gpu_uuids
            .iter()
            .position(|u| u == uuid)
            .and_then(|i| self.gpu_models.get(i))
            .unwrap_or(&self.gpu_model)
    }
}

/// What a scenario measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Throughput,
    Memory,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Throughput => "throughput",
            Kind::Memory => "memory",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        [Kind::Throughput, Kind::Memory].into_iter().find(|k| k.as_str() == s)
    }
}

/// Where a throughput scenario's kernel time per call came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// CUPTI's kernel records: the kernels of one call, summed (`per_call`).
    Cupti,
    /// CUDA events around batches of calls (criterion's median), where CUPTI gave none.
    Events,
}

impl Timing {
    pub fn as_str(self) -> &'static str {
        match self {
            Timing::Cupti => "cupti",
            Timing::Events => "events",
        }
    }

    pub fn parse(s: &str) -> Option<Timing> {
        [Timing::Cupti, Timing::Events].into_iter().find(|k| k.as_str() == s)
    }
}

/// A throughput scenario on one GPU, its passes aggregated.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ThroughputFigures {
    /// Passes with a result.
    pub passes: u32,
    /// Kernel time per call: the median over passes of each pass's median, nanoseconds.
    pub kernel_ns: f64,
    /// The fastest and slowest pass: the interval the history judges noise by.
    pub kernel_ns_min: f64,
    pub kernel_ns_max: f64,
    pub timing: Timing,
    /// GB/s (10⁹ bytes read plus written per second) at `kernel_ns`.
    pub gbps: Option<f64>,
    /// Host latency of a call (launch plus synchronise), median over passes, µs.
    pub host_latency_us: Option<f64>,
    pub kernels_per_call: Option<u32>,
}

/// A memory scenario's judgement, as the report's analysis gives it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MemoryFigures {
    /// `None` when the scenario failed before any sample.
    pub class: Option<LeakClass>,
    /// MiB per new host thread, with its 95% interval.
    pub mib_per_thread: Option<f64>,
    pub mib_per_thread_ci: Option<(f64, f64)>,
    /// Streams NPP created per new host thread.
    pub hidden_streams_per_thread: Option<f64>,
    pub threads_spawned: u32,
}

/// One scenario on one GPU of one run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ScenarioRow {
    pub kind: Kind,
    /// The key that pairs a scenario across runs (derived from its axes).
    pub scenario_id: String,
    pub primitive: String,
    /// The geometry's key (`31x31-s32-d128`).
    pub geometry: String,
    pub stream: String,
    pub context: String,
    /// Memory scenarios only.
    pub threading: Option<String>,
    pub gpu_uuid: String,
    /// `ok`, `failed`, `stopped_at_budget` or `not_measured` (the worst pass's, for throughput).
    pub status: String,
    pub throughput: Option<ThroughputFigures>,
    pub memory: Option<MemoryFigures>,
}

/// The status word of an outcome, as run.json spells it.
pub fn status_of(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Ok => "ok",
        Outcome::Failed { .. } => "failed",
        Outcome::StoppedAtBudget { .. } => "stopped_at_budget",
        Outcome::NotMeasured { .. } => "not_measured",
    }
}

fn status_rank(status: &str) -> u8 {
    match status {
        "ok" => 0,
        "not_measured" => 1,
        "stopped_at_budget" => 2,
        _ => 3,
    }
}

/// The throughput rows of a run: per scenario and GPU, the median over passes of each pass's
/// kernel time per call (CUPTI's `per_call.median_ns`; criterion's event-timed median where a
/// pass has none), the number of passes, and the fastest and slowest pass as the interval.
pub fn throughput_rows(run: &RunFile) -> Vec<ScenarioRow> {
    let first_gpu = &run.environment.gpu.uuid;
    let mut groups: BTreeMap<(&str, &str), Vec<&ThroughputRecord>> = BTreeMap::new();
    for r in &run.throughput {
        let gpu = r.gpu.as_deref().unwrap_or(first_gpu);
        groups.entry((r.scenario.id.as_str(), gpu)).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|((_, gpu), passes)| {
            let s = &passes[0].scenario;
            let status = passes
                .iter()
                .map(|p| status_of(&p.outcome))
                .max_by_key(|s| status_rank(s))
                .unwrap_or("ok");
            ScenarioRow {
                kind: Kind::Throughput,
                scenario_id: s.id.clone(),
                primitive: s.primitive.to_string(),
                geometry: s.geometry.key(),
                stream: s.stream.to_string(),
                context: s.context.to_string(),
                threading: None,
                gpu_uuid: gpu.to_owned(),
                status: status.to_owned(),
                throughput: aggregate_passes(&passes),
                memory: None,
            }
        })
        .collect()
}

fn aggregate_passes(passes: &[&ThroughputRecord]) -> Option<ThroughputFigures> {
    let results: Vec<_> = passes.iter().filter_map(|p| p.result.as_ref()).collect();
    let first = results.first()?;
    let cupti = results.iter().all(|r| r.per_call.is_some());
    let times: Vec<f64> = results
        .iter()
        .map(|r| match (&r.per_call, cupti) {
            (Some(c), true) => c.median_ns,
            _ => r.kernel.median.point_ns,
        })
        .filter(|t| t.is_finite() && *t > 0.0)
        .collect();
    let kernel_ns = nppbench_stats::median(&times)?;
    let latencies: Vec<f64> = results
        .iter()
        .filter_map(|r| r.host_latency.map(|h| h.median_us))
        .collect();
    Some(ThroughputFigures {
        passes: times.len() as u32,
        kernel_ns,
        kernel_ns_min: times.iter().copied().fold(f64::INFINITY, f64::min),
        kernel_ns_max: times.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        timing: if cupti { Timing::Cupti } else { Timing::Events },
        gbps: (first.bytes_per_call > 0).then(|| first.bytes_per_call as f64 / kernel_ns),
        host_latency_us: nppbench_stats::median(&latencies),
        kernels_per_call: first.per_call.as_ref().map(|c| c.kernels_per_call),
    })
}

/// A run read, checked and turned into rows, ready to be added.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub path: PathBuf,
    pub run: RunRow,
    pub rows: Vec<ScenarioRow>,
}

/// Reads `path` and turns it into rows with `rows_of` (every scenario row of a run; see the
/// module's note). A run made with test hooks is refused unless `allow_test_hooks`.
pub fn prepare(
    path: &Path,
    allow_test_hooks: bool,
    rows_of: impl Fn(&RunFile) -> Vec<ScenarioRow>,
) -> Result<Prepared, HistoryError> {
    let run = RunFile::read(path)?;
    if !run.test_hooks.is_empty() && !allow_test_hooks {
        return Err(HistoryError::TestHooks {
            path: path.to_owned(),
            hooks: run.test_hooks.join(", "),
        });
    }
    Ok(Prepared {
        path: path.to_owned(),
        run: RunRow::of(&run),
        rows: rows_of(&run),
    })
}

/// What adding one file did.
#[derive(Debug, Clone)]
pub struct AddReport {
    pub path: PathBuf,
    pub run: RunRow,
    pub added: Added,
}

/// Adds the runs `paths` name (files, or folders searched with [`find_runs`]). Every file is
/// read and checked before the database is touched: one that is refused (not JSON, not an
/// nppbench run, another schema version, test hooks) leaves the database exactly as it was.
/// Then each run is added in a transaction of its own; one already there changes nothing.
pub fn add_paths(
    db: &mut Db,
    paths: &[PathBuf],
    allow_test_hooks: bool,
    rows_of: impl Fn(&RunFile) -> Vec<ScenarioRow>,
) -> Result<Vec<AddReport>, HistoryError> {
    let mut files = Vec::new();
    for p in paths {
        files.extend(find_runs(p)?);
    }
    let prepared = files
        .iter()
        .map(|f| prepare(f, allow_test_hooks, &rows_of))
        .collect::<Result<Vec<_>, _>>()?;
    prepared
        .into_iter()
        .map(|p| {
            let added = db.add(&p.run, &p.rows)?;
            Ok(AddReport {
                path: p.path,
                run: p.run,
                added,
            })
        })
        .collect()
}

/// The folder nppbench keeps a run's work in while it runs: never a finished run.
const WORK_DIR: &str = ".nppbench-work";

/// The run files `path` names: itself when a file, else every `run.json` and `run-*.json` under
/// it (recursively, `.nppbench-work` folders skipped), sorted.
pub fn find_runs(path: &Path) -> Result<Vec<PathBuf>, HistoryError> {
    let meta = std::fs::metadata(path).map_err(|source| HistoryError::Io {
        path: path.to_owned(),
        source,
    })?;
    if !meta.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let mut found = Vec::new();
    let mut stack = vec![path.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|source| HistoryError::Io {
            path: dir.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| HistoryError::Io {
                path: dir.clone(),
                source,
            })?;
            let p = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != WORK_DIR {
                    stack.push(p);
                }
            } else if is_run_file_name(&name) {
                found.push(p);
            }
        }
    }
    if found.is_empty() {
        return Err(HistoryError::NoRuns { path: path.to_owned() });
    }
    found.sort();
    Ok(found)
}

fn is_run_file_name(name: &str) -> bool {
    name == "run.json" || (name.starts_with("run-") && name.ends_with(".json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_file_names() {
        assert!(is_run_file_name("run.json"));
        assert!(is_run_file_name("run-2-npp-13.0.1.json"));
        assert!(!is_run_file_name("quick-npp-13.0.1-1.json"));
        assert!(!is_run_file_name("run.json.tmp"));
        assert!(!is_run_file_name("summary.md"));
    }

    #[test]
    fn folders_are_searched_recursively_without_work_folders() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for f in [
            "a/run.json",
            "b/c/run-1-x.json",
            "b/c/notes.json",
            "d/.nppbench-work/run.json",
        ] {
            let path = p.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}").unwrap();
        }
        let found: Vec<String> = find_runs(p)
            .unwrap()
            .iter()
            .map(|f| f.strip_prefix(p).unwrap().display().to_string())
            .collect();
        assert_eq!(found, ["a/run.json", "b/c/run-1-x.json"]);
        let empty = p.join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(matches!(find_runs(&empty), Err(HistoryError::NoRuns { .. })));
    }
}
