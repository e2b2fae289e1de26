//! From a run's raw records to the figures a reader needs: leak slopes and classes, hidden
//! streams, latency, throughput against the copy ceiling. No formatting happens here.

pub mod rules;
pub mod selection;

use std::collections::BTreeMap;

use nppbench_model::{FailureKind, GpuProcess, MemoryRecord, Outcome, RunFile, ThroughputRecord, ThroughputResult};

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

/// One throughput scenario on one GPU, over its passes (each a fresh process).
#[derive(Debug, Clone)]
pub struct ThroughputAnalysis<'a> {
    /// The first pass's record: the scenario, and the first pass's detail.
    pub record: &'a ThroughputRecord,
    /// Every pass's record, in pass order.
    pub passes: Vec<&'a ThroughputRecord>,
    /// The GPU it ran on (`None` in runs made before runs could use several).
    pub gpu: Option<&'a str>,
    /// `ok` when every pass measured; else the first pass's outcome that did not.
    pub outcome: &'a Outcome,
    /// Each measured pass's median time per call from CUDA events around batches, ns.
    pub pass_event_ns: Vec<f64>,
    /// Each measured pass's kernel time per call (CUPTI, the kernels of a call summed), ns.
    pub pass_kernel_ns: Vec<f64>,
    /// Each measured pass's median host latency per call, µs.
    pub pass_latency_us: Vec<f64>,
    /// Each measured pass's cold kernel time per call (L2 flushed before each call), ns.
    pub pass_cold_ns: Vec<f64>,
    /// GB/s (10⁹ bytes read plus written per second) at the median over passes of the event
    /// time per call.
    pub gbps: Option<f64>,
    /// GB/s at the ends of the first pass's 95% interval of its median (slow end first).
    pub gbps_ci: Option<(f64, f64)>,
    pub pct_of_ceiling: Option<f64>,
    pub reference_gbps: Option<f64>,
    /// Event time per call, median over passes, µs.
    pub median_us: Option<f64>,
    /// Kernel time per call (CUPTI), median over passes, µs; with the first pass's 95% interval
    /// of its median over calls.
    pub kernel_per_call_us: Option<f64>,
    pub kernel_per_call_ci_us: Option<(f64, f64)>,
    /// GB/s at the kernel time per call: what the kernels alone achieve.
    pub kernel_gbps: Option<f64>,
    /// Cold kernel time per call, median over passes, µs.
    pub cold_per_call_us: Option<f64>,
    /// GB/s at the cold kernel time per call: what the kernels achieve from DRAM, comparable with
    /// the copy ceiling (measured on buffers far larger than L2).
    pub cold_gbps: Option<f64>,
    /// Host latency per call, median over passes, µs.
    pub host_latency_us: Option<f64>,
    /// The median of single kernels' durations (not of calls): what runs before per-call
    /// grouping reported as "kernel alone"; kept for scenarios.csv's old column.
    pub kernel_only_us: Option<f64>,
    /// Kernels NPP launched per call (CUPTI's records over the calls).
    pub kernels_per_call: Option<f64>,
    /// Each kernel of a call and its median duration (first pass), µs.
    pub kernels: Vec<(String, f64)>,
    /// Criterion samples read while the GPU throttled, and samples read, over every pass.
    pub throttled_samples: u32,
    pub device_samples: u32,
    /// The median SM clock over the samples, MHz.
    pub sm_mhz: Option<f64>,
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

/// Each process once (by pid and GPU), in first-seen order.
fn each_once<'p>(seen: impl Iterator<Item = &'p GpuProcess>) -> Vec<GpuProcess> {
    let mut out: Vec<GpuProcess> = Vec::new();
    for p in seen {
        if !out.iter().any(|q| q.pid == p.pid && q.gpu_uuid == p.gpu_uuid) {
            out.push(p.clone());
        }
    }
    out
}

impl ThroughputAnalysis<'_> {
    /// Percent of the copy ceiling at the cold kernel time (L2 flushed before each call, as the
    /// ceiling's own buffers are far larger than L2), with `true`; else at the warm kernel time,
    /// with `false` (runs made before cold timing).
    pub fn ceiling_pct(&self, ceiling_gbps: Option<f64>) -> Option<(f64, bool)> {
        let c = ceiling_gbps?;
        match (self.cold_gbps, self.kernel_gbps) {
            (Some(g), _) => Some((100.0 * g / c, true)),
            (None, Some(g)) => Some((100.0 * g / c, false)),
            _ => None,
        }
    }
}

impl<'a> RunAnalysis<'a> {
    pub fn new(run: &'a RunFile) -> Self {
        let ceiling_gbps = run.environment.copy_ceiling_bytes_per_s.map(|b| b / 1e9);
        // Passes grouped by scenario and GPU, in the order the scenarios first appear.
        let mut groups: Vec<(&str, Option<&str>, Vec<&ThroughputRecord>)> = Vec::new();
        for t in &run.throughput {
            let key = (t.scenario.id.as_str(), t.gpu.as_deref());
            match groups.iter_mut().find(|(id, gpu, _)| (*id, *gpu) == key) {
                Some((_, _, passes)) => passes.push(t),
                None => groups.push((key.0, key.1, vec![t])),
            }
        }
        let gpus = run.environment.all_gpus();
        let ceiling_of = |gpu: Option<&str>| {
            gpu.and_then(|u| gpus.iter().find(|g| g.gpu.uuid == u))
                .and_then(|g| g.copy_ceiling_bytes_per_s)
                .map(|b| b / 1e9)
                .or(ceiling_gbps)
        };
        RunAnalysis {
            run,
            memory: run.memory.iter().map(analyse_memory).collect(),
            throughput: groups
                .into_iter()
                .map(|(_, gpu, mut passes)| {
                    passes.sort_by_key(|t| t.pass);
                    analyse_throughput(passes, gpu, ceiling_of(gpu))
                })
                .collect(),
            ceiling_gbps,
        }
    }

    /// Other processes seen on the GPUs while the run measured (at its start, or around any
    /// scenario), each once; empty for a GPU nppbench had to itself.
    pub fn shared_with(&self) -> Vec<GpuProcess> {
        let env = &self.run.environment.other_processes;
        let mem = self
            .run
            .memory
            .iter()
            .filter_map(|m| m.result.as_ref())
            .flat_map(|r| &r.other_processes);
        each_once(env.iter().chain(mem).chain(self.beside_throughput()))
    }

    /// The other processes seen beside any throughput record, as often as seen.
    fn beside_throughput(&self) -> impl Iterator<Item = &GpuProcess> {
        self.run
            .throughput
            .iter()
            .filter_map(|t| t.result.as_ref())
            .flat_map(|r| &r.other_processes)
    }

    /// The other processes that may have touched what a gate judges: those on the GPU when the
    /// run started, beside any throughput record, or beside a memory scenario measured device-wide
    /// (per-process memory, NVML's, is not touched by another process). Empty: the gates may be
    /// applied.
    pub fn sharing_that_touches_gates(&self) -> Vec<GpuProcess> {
        let env = &self.run.environment.other_processes;
        let device_wide = self
            .memory
            .iter()
            .filter(|m| m.probe == Probe::Device)
            .filter_map(|m| m.record.result.as_ref())
            .flat_map(|r| &r.other_processes);
        each_once(env.iter().chain(self.beside_throughput()).chain(device_wide))
    }

    /// Throughput records taken while another process was on the GPU.
    pub fn shared_throughput(&self) -> usize {
        self.run
            .throughput
            .iter()
            .filter(|t| t.result.as_ref().is_some_and(|r| !r.other_processes.is_empty()))
            .count()
    }

    /// Memory scenarios measured while another process was on the GPU.
    pub fn shared_memory(&self) -> usize {
        self.run
            .memory
            .iter()
            .filter(|m| m.result.as_ref().is_some_and(|r| !r.other_processes.is_empty()))
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

    /// The NPP version as fetched (`12.2.3.2`), where the library files tell it.
    pub fn npp_version(&self) -> String {
        self.run.environment.npp.full_version()
    }

    pub fn leaking(&self) -> impl Iterator<Item = &MemoryAnalysis<'a>> {
        self.memory.iter().filter(|m| m.class == Some(LeakClass::Leak))
    }

    /// The throughput of the same primitive, geometry, stream kind and context filling as a
    /// memory scenario (on its GPU where several were measured).
    pub fn throughput_for(&self, m: &MemoryAnalysis<'_>) -> Option<&ThroughputAnalysis<'a>> {
        let s = &m.record.scenario;
        let same = |t: &&ThroughputAnalysis<'a>| {
            let ts = &t.record.scenario;
            ts.primitive == s.primitive && ts.geometry == s.geometry && ts.stream == s.stream && ts.context == s.context
        };
        let gpu = m.record.gpu.as_deref();
        self.throughput
            .iter()
            .filter(same)
            .find(|t| gpu.is_none() || t.gpu == gpu)
            .or_else(|| self.throughput.iter().find(same))
    }

    /// The leak rule of each primitive, from its measured memory scenarios (see [`rules`]).
    pub fn rules(&self) -> Vec<rules::Rule> {
        self.primitives()
            .into_iter()
            .map(|p| {
                let cases: Vec<rules::Case> = self
                    .memory
                    .iter()
                    .filter(|m| m.record.scenario.primitive == p && m.class.is_some())
                    .map(|m| {
                        let s = &m.record.scenario;
                        rules::Case {
                            id: s.id.clone(),
                            primitive: p,
                            geometry: s.geometry,
                            stream: s.stream,
                            context: s.context,
                            threading: s.threading,
                            declared_non_blocking: m
                                .record
                                .result
                                .as_ref()
                                .and_then(|r| r.context)
                                .map(|c| c.declared_flags & 1 == 1),
                            leaks: m.class == Some(LeakClass::Leak),
                        }
                    })
                    .collect();
                rules::discover(p, &cases)
            })
            .collect()
    }

    /// The primitives of the run, in catalogue order.
    /// The primitives the matrix asked for and those measured, each once, sorted: a function the
    /// run could not measure keeps its row.
    pub fn all_primitives(&self) -> Vec<nppbench_model::Primitive> {
        let mut out = self.run.matrix.primitives.clone();
        out.extend(self.primitives());
        out.sort();
        out.dedup();
        out
    }

    pub fn primitives(&self) -> Vec<nppbench_model::Primitive> {
        let mut out: Vec<nppbench_model::Primitive> = self
            .memory
            .iter()
            .map(|m| m.record.scenario.primitive)
            .chain(self.throughput.iter().map(|t| t.record.scenario.primitive))
            .collect();
        out.sort();
        out.dedup();
        out
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

fn analyse_throughput<'a>(
    passes: Vec<&'a ThroughputRecord>,
    gpu: Option<&'a str>,
    ceiling_gbps: Option<f64>,
) -> ThroughputAnalysis<'a> {
    let record = passes[0];
    let outcome = passes
        .iter()
        .map(|t| &t.outcome)
        .find(|o| !matches!(o, Outcome::Ok))
        .unwrap_or(&record.outcome);
    let results: Vec<&ThroughputResult> = passes.iter().filter_map(|t| t.result.as_ref()).collect();
    let pass_event_ns: Vec<f64> = results.iter().map(|r| r.kernel.median.point_ns).collect();
    // Kernel time per call: the kernels of each call summed (runs made before per-call grouping
    // recorded all kernel time over the calls, a per-call mean).
    let pass_kernel_ns: Vec<f64> = results
        .iter()
        .filter_map(|r| {
            r.per_call
                .as_ref()
                .map(|c| c.median_ns)
                .or_else(|| r.kernel_records.map(|k| k.per_call_ns))
        })
        .collect();
    let pass_latency_us: Vec<f64> = results
        .iter()
        .filter_map(|r| r.host_latency.map(|h| h.median_us))
        .collect();
    let pass_cold_ns: Vec<f64> = results
        .iter()
        .filter_map(|r| r.cold.as_ref().map(|c| c.median_ns))
        .collect();
    let first = results.first().copied();
    let bytes = first.map_or(0.0, |r| r.bytes_per_call as f64);
    let gbps_at = |ns: f64| (ns > 0.0 && bytes > 0.0).then(|| bytes / ns);
    let event_ns = median(&pass_event_ns);
    let kernel_ns = median(&pass_kernel_ns);
    let gbps = event_ns.and_then(gbps_at);
    let samples: Vec<&nppbench_model::DeviceSample> = results
        .iter()
        .filter_map(|r| r.device.as_ref())
        .flat_map(|d| &d.samples)
        .collect();
    let clocks: Vec<f64> = samples.iter().map(|s| f64::from(s.sm_mhz)).collect();
    ThroughputAnalysis {
        record,
        gpu,
        outcome,
        gbps,
        gbps_ci: first.and_then(|r| gbps_at(r.kernel.median.upper_ns).zip(gbps_at(r.kernel.median.lower_ns))),
        pct_of_ceiling: gbps.zip(ceiling_gbps).map(|(g, c)| 100.0 * g / c),
        reference_gbps: results
            .iter()
            .find_map(|r| r.reference.as_ref())
            .and_then(|x| gbps_at(x.kernel.median.point_ns)),
        median_us: event_ns.map(|ns| ns / 1e3),
        kernel_per_call_us: kernel_ns.map(|ns| ns / 1e3),
        kernel_per_call_ci_us: first
            .and_then(|r| r.per_call.as_ref())
            .map(|c| (c.lower_ns / 1e3, c.upper_ns / 1e3)),
        kernel_gbps: kernel_ns.and_then(gbps_at),
        cold_per_call_us: median(&pass_cold_ns).map(|ns| ns / 1e3),
        cold_gbps: median(&pass_cold_ns).and_then(gbps_at),
        host_latency_us: median(&pass_latency_us),
        kernel_only_us: first.and_then(|r| r.kernel_records).map(|k| k.median_ns / 1e3),
        kernels_per_call: first.and_then(|r| {
            r.per_call.as_ref().map(|c| f64::from(c.kernels_per_call)).or_else(|| {
                r.kernel_records
                    .map(|k| f64::from(k.kernels) / f64::from(k.launches.max(1)))
            })
        }),
        kernels: first
            .and_then(|r| r.per_call.as_ref())
            .map(|c| c.kernels.iter().map(|k| (k.name.clone(), k.median_ns / 1e3)).collect())
            .unwrap_or_default(),
        throttled_samples: results
            .iter()
            .filter_map(|r| r.device.as_ref())
            .map(|d| d.throttled_samples)
            .sum(),
        device_samples: samples.len() as u32,
        sm_mhz: median(&clocks),
        passes,
        pass_event_ns,
        pass_kernel_ns,
        pass_latency_us,
        pass_cold_ns,
    }
}
