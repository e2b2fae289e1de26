//! From a run's raw records to the figures a reader needs: leak slopes and classes, hidden
//! streams, latency, throughput against the copy ceiling. No formatting happens here.

pub mod selection;

use std::collections::BTreeMap;

use nppbench_model::{FailureKind, GpuProcess, MemoryRecord, Outcome, RunFile, ThroughputRecord};

use crate::stats::{Fit, LeakClass, classify, least_squares, median};

const MIB: f64 = 1024.0 * 1024.0;

/// Which memory probe a series was taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// This process, from NVML.
    Process,
    /// Device-wide used memory (`cuMemGetInfo`), where NVML gave no per-process figure.
    Device,
}

/// One memory scenario, judged.
#[derive(Debug, Clone)]
pub struct MemoryAnalysis<'a> {
    pub record: &'a MemoryRecord,
    pub probe: Probe,
    /// Growth over the first sample, MiB, one value per call.
    pub growth_mib: Vec<f64>,
    pub threads_spawned: u32,
    pub calls: u32,
    /// MiB per new thread: memory against threads spawned.
    pub per_thread: Option<Fit>,
    /// MiB per call: memory against calls.
    pub per_call: Option<Fit>,
    /// `None` when the scenario failed before any sample.
    pub class: Option<LeakClass>,
    /// Streams NPP (not nppbench) created, cumulative, one value per call.
    pub hidden_streams: Option<Vec<f64>>,
    /// Hidden streams against threads spawned.
    pub hidden_per_thread: Option<Fit>,
    pub streams_never_destroyed: Option<u32>,
    /// Median host latency of a call (launch + synchronise), warm-up call excluded, µs.
    pub latency_us: Option<f64>,
}

impl MemoryAnalysis<'_> {
    pub fn total_growth_mib(&self) -> f64 {
        self.growth_mib.last().copied().unwrap_or(0.0)
    }

    pub fn hidden_streams_total(&self) -> Option<f64> {
        self.hidden_streams.as_ref().and_then(|h| h.last().copied())
    }
}

/// One throughput scenario, in GB/s.
#[derive(Debug, Clone)]
pub struct ThroughputAnalysis<'a> {
    pub record: &'a ThroughputRecord,
    /// GB/s (10⁹ bytes read plus written per second) at criterion's median time per call.
    pub gbps: Option<f64>,
    /// GB/s at the ends of the median's 95% confidence interval (slow end first).
    pub gbps_ci: Option<(f64, f64)>,
    pub pct_of_ceiling: Option<f64>,
    pub reference_gbps: Option<f64>,
    pub median_us: Option<f64>,
    /// The kernel alone, from CUPTI's records: median duration, µs.
    pub kernel_only_us: Option<f64>,
    /// Kernels NPP launched per call (CUPTI's records over the calls).
    pub kernels_per_call: Option<f64>,
}

/// A whole run, judged.
#[derive(Debug, Clone)]
pub struct RunAnalysis<'a> {
    pub run: &'a RunFile,
    pub memory: Vec<MemoryAnalysis<'a>>,
    pub throughput: Vec<ThroughputAnalysis<'a>>,
    /// The device-to-device copy ceiling, GB/s.
    pub ceiling_gbps: Option<f64>,
}

impl<'a> RunAnalysis<'a> {
    pub fn new(run: &'a RunFile) -> Self {
        let ceiling_gbps = run.environment.copy_ceiling_bytes_per_s.map(|b| b / 1e9);
        RunAnalysis {
            run,
            memory: run.memory.iter().map(analyse_memory).collect(),
            throughput: run
                .throughput
                .iter()
                .map(|t| analyse_throughput(t, ceiling_gbps))
                .collect(),
            ceiling_gbps,
        }
    }

    /// Other processes seen on the GPUs while the run measured (at its start, or around any
    /// scenario), each once; empty for a GPU nppbench had to itself.
    pub fn shared_with(&self) -> Vec<GpuProcess> {
        let mut out: Vec<GpuProcess> = Vec::new();
        let env = &self.run.environment.other_processes;
        let mem = self.run.memory.iter().filter_map(|m| m.result.as_ref()).flat_map(|r| &r.other_processes);
        let tp = self.run.throughput.iter().filter_map(|t| t.result.as_ref()).flat_map(|r| &r.other_processes);
        for p in env.iter().chain(mem).chain(tp) {
            if !out.iter().any(|q| q.pid == p.pid && q.gpu_uuid == p.gpu_uuid) {
                out.push(p.clone());
            }
        }
        out
    }

    /// Throughput records taken while another process was on the GPU.
    pub fn shared_throughput(&self) -> usize {
        self.run
            .throughput
            .iter()
            .filter(|t| t.result.as_ref().is_some_and(|r| !r.other_processes.is_empty()))
            .count()
    }

    /// Failed scenarios (memory and throughput), counted by the kind of fault.
    pub fn failures_by_kind(&self) -> BTreeMap<FailureKind, usize> {
        let mut out = BTreeMap::new();
        let outcomes = self
            .run
            .memory
            .iter()
            .map(|m| &m.outcome)
            .chain(self.run.throughput.iter().map(|t| &t.outcome));
        for kind in outcomes.filter_map(Outcome::failure_kind) {
            *out.entry(kind).or_insert(0) += 1;
        }
        out
    }

    pub fn npp_version(&self) -> &str {
        &self.run.environment.npp.version
    }

    pub fn leaking(&self) -> impl Iterator<Item = &MemoryAnalysis<'a>> {
        self.memory.iter().filter(|m| m.class == Some(LeakClass::Leak))
    }

    /// The throughput of the same geometry and stream kind as a memory scenario.
    pub fn throughput_for(&self, m: &MemoryAnalysis<'_>) -> Option<&ThroughputAnalysis<'a>> {
        let s = &m.record.scenario;
        self.throughput
            .iter()
            .find(|t| t.record.scenario.geometry == s.geometry && t.record.scenario.stream == s.stream)
    }
}

fn analyse_memory(record: &MemoryRecord) -> MemoryAnalysis<'_> {
    let empty = MemoryAnalysis {
        record,
        probe: Probe::Device,
        growth_mib: Vec::new(),
        threads_spawned: 0,
        calls: 0,
        per_thread: None,
        per_call: None,
        class: None,
        hidden_streams: None,
        hidden_per_thread: None,
        streams_never_destroyed: None,
        latency_us: None,
    };
    let Some(result) = &record.result else {
        return empty;
    };
    let s = &result.samples;
    if s.is_empty() {
        return empty;
    }
    let process: Option<Vec<u64>> = s.process_used_bytes.iter().copied().collect();
    let (probe, bytes) = match process {
        Some(p) => (Probe::Process, p),
        None => (Probe::Device, s.device_used_bytes.clone()),
    };
    let first = bytes[0] as f64;
    let growth_mib: Vec<f64> = bytes.iter().map(|b| (*b as f64 - first) / MIB).collect();
    let threads: Vec<f64> = s.threads_spawned.iter().map(|&t| f64::from(t)).collect();
    let calls: Vec<f64> = s.call.iter().map(|&c| f64::from(c)).collect();
    let class = match record.outcome {
        Outcome::StoppedAtBudget { .. } => LeakClass::Leak,
        _ => classify(&growth_mib),
    };
    let hidden_streams: Option<Vec<f64>> = result.streams.as_ref().map(|st| {
        st.created
            .iter()
            .zip(&st.created_by_nppbench)
            .map(|(c, own)| f64::from(c.saturating_sub(*own)))
            .collect()
    });
    MemoryAnalysis {
        record,
        probe,
        per_thread: least_squares(&threads, &growth_mib),
        per_call: least_squares(&calls, &growth_mib),
        hidden_per_thread: hidden_streams.as_ref().and_then(|h| least_squares(&threads, h)),
        hidden_streams,
        streams_never_destroyed: result.streams.as_ref().map(|st| st.never_destroyed),
        threads_spawned: s.threads_spawned.last().copied().unwrap_or(0),
        calls: s.call.last().copied().unwrap_or(0),
        latency_us: median(&s.latency_us[1.min(s.latency_us.len())..]),
        class: Some(class),
        growth_mib,
    }
}

fn analyse_throughput(record: &ThroughputRecord, ceiling_gbps: Option<f64>) -> ThroughputAnalysis<'_> {
    let Some(r) = &record.result else {
        return ThroughputAnalysis {
            record,
            gbps: None,
            gbps_ci: None,
            pct_of_ceiling: None,
            reference_gbps: None,
            median_us: None,
            kernel_only_us: None,
            kernels_per_call: None,
        };
    };
    let bytes = r.bytes_per_call as f64;
    let gbps_at = |ns: f64| (ns > 0.0).then(|| bytes / ns);
    let median = &r.kernel.median;
    let gbps = gbps_at(median.point_ns);
    ThroughputAnalysis {
        record,
        gbps,
        gbps_ci: gbps_at(median.upper_ns).zip(gbps_at(median.lower_ns)),
        pct_of_ceiling: gbps.zip(ceiling_gbps).map(|(g, c)| 100.0 * g / c),
        reference_gbps: r.reference.as_ref().and_then(|x| gbps_at(x.kernel.median.point_ns)),
        median_us: Some(median.point_ns / 1e3),
        kernel_only_us: r.kernel_records.map(|k| k.median_ns / 1e3),
        kernels_per_call: r
            .kernel_records
            .map(|k| f64::from(k.kernels) / f64::from(k.launches.max(1))),
    }
}
