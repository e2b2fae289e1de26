//! The rows the history keeps: one [`RunRow`] per run (its environment and identity) and one
//! [`ScenarioRow`] per scenario and GPU, every figure taken from `nppbench_analysis` (memory
//! scenarios judged, throughput passes aggregated), so a scenario reads the same here as on its
//! run's page and in its CSV.

use nppbench_analysis::compare::ThroughputPasses;
use nppbench_analysis::{LeakClass, MemoryAnalysis, RunAnalysis, ThroughputAnalysis, median};
use nppbench_model::{RunFile, Status};

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
    /// Each pass's figures and the image's size, as `compare` reads them: what the history
    /// judges two runs by (`nppbench_analysis::compare::judge_throughput`). `None` in results
    /// added before the history kept them (schema 2): such a result is not judged.
    pub per_pass: Option<ThroughputPasses>,
}

/// A memory scenario's judgement, as the analysis gives it.
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
    /// `ok`, `not_measured`, `stopped_at_budget` or `failed` (the worst pass's, for throughput).
    pub status: Status,
    pub throughput: Option<ThroughputFigures>,
    pub memory: Option<MemoryFigures>,
}

/// Every scenario row of `run`: its memory scenarios judged, its throughput scenarios with their
/// passes aggregated, one row per scenario and GPU.
pub fn scenario_rows(run: &RunFile) -> Vec<ScenarioRow> {
    let analysis = RunAnalysis::new(run);
    let first_gpu = &run.environment.gpu.uuid;
    let mut rows: Vec<ScenarioRow> = analysis.memory.iter().map(|m| memory_row(m, first_gpu)).collect();
    let mut throughput: Vec<ScenarioRow> = analysis
        .throughput
        .iter()
        .map(|t| throughput_row(t, first_gpu))
        .collect();
    throughput.sort_by(|a, b| (&a.scenario_id, &a.gpu_uuid).cmp(&(&b.scenario_id, &b.gpu_uuid)));
    rows.extend(throughput);
    rows
}

fn memory_row(m: &MemoryAnalysis<'_>, first_gpu: &str) -> ScenarioRow {
    let s = &m.record.scenario;
    ScenarioRow {
        kind: Kind::Memory,
        scenario_id: s.id.clone(),
        primitive: s.primitive.to_string(),
        geometry: s.geometry.key(),
        stream: s.stream.to_string(),
        context: s.context.to_string(),
        threading: Some(s.threading.to_string()),
        gpu_uuid: m.record.gpu.clone().unwrap_or_else(|| first_gpu.to_owned()),
        status: m.record.outcome.status(),
        throughput: None,
        memory: Some(MemoryFigures {
            class: m.class,
            mib_per_thread: m.per_thread.map(|f| f.slope),
            mib_per_thread_ci: m.per_thread.map(|f| f.slope_ci),
            hidden_streams_per_thread: m.hidden_per_thread.map(|f| f.slope),
            threads_spawned: m.threads_spawned,
        }),
    }
}

fn throughput_row(t: &ThroughputAnalysis<'_>, first_gpu: &str) -> ScenarioRow {
    let s = &t.record.scenario;
    ScenarioRow {
        kind: Kind::Throughput,
        scenario_id: s.id.clone(),
        primitive: s.primitive.to_string(),
        geometry: s.geometry.key(),
        stream: s.stream.to_string(),
        context: s.context.to_string(),
        threading: None,
        gpu_uuid: t.gpu.unwrap_or(first_gpu).to_owned(),
        status: t.passes.iter().map(|p| p.outcome.status()).max().unwrap_or(Status::Ok),
        throughput: throughput_figures(t),
        memory: None,
    }
}

/// A throughput scenario's history figures: the kernel time per call (warm) where every measured
/// pass has it, else the event time per call, each pass's figure as the analysis derives it; and
/// every per-pass figure the comparison rule reads.
fn throughput_figures(t: &ThroughputAnalysis<'_>) -> Option<ThroughputFigures> {
    let first = t.passes.iter().find_map(|p| p.result.as_ref())?;
    // Every pass with a result has an event time; the kernel time is taken where they all
    // have one too.
    let (pass_ns, timing) = if t.pass_kernel_ns.len() == t.pass_event_ns.len() {
        (&t.pass_kernel_ns, Timing::Cupti)
    } else {
        (&t.pass_event_ns, Timing::Events)
    };
    let times: Vec<f64> = pass_ns.iter().copied().filter(|t| t.is_finite() && *t > 0.0).collect();
    let kernel_ns = median(&times)?;
    Some(ThroughputFigures {
        passes: times.len() as u32,
        kernel_ns,
        kernel_ns_min: times.iter().copied().fold(f64::INFINITY, f64::min),
        kernel_ns_max: times.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        timing,
        gbps: nppbench_analysis::figure::gbps(first.bytes_per_call as f64, kernel_ns),
        host_latency_us: t.host_latency_us,
        kernels_per_call: first.per_call.as_ref().map(|c| c.kernels_per_call),
        per_pass: Some(ThroughputPasses::of(t)),
    })
}
