//! A whole run judged: its memory and throughput scenarios, the processes that shared its GPUs,
//! its failures by kind, its primitives and each primitive's leak rule.

use std::collections::BTreeMap;

use nppbench_model::{FailureKind, GpuProcess, Outcome, RunFile, ThroughputRecord};
use nppbench_stats::LeakClass;

use crate::memory::{MemoryAnalysis, Probe, analyse_memory};
use crate::throughput::{ThroughputAnalysis, analyse_throughput};

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
        // A memory scenario whose output was judged (wrong, a fault, a miss of nppbench's own
        // reference) is a class, not a failure, however an older run filed it.
        let outcomes = self
            .memory
            .iter()
            .filter(|m| !m.output.judged())
            .map(|m| &m.record.outcome)
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

    /// The median MiB per new thread over `primitive`'s scenarios (those `keep` accepts) that leak
    /// in this run; 0 where none leaks; `None` where none was measured.
    pub fn median_leak_slope(&self, primitive: nppbench_model::Primitive, keep: impl Fn(&str) -> bool) -> Option<f64> {
        let measured: Vec<&MemoryAnalysis<'a>> = self
            .memory
            .iter()
            .filter(|m| m.record.scenario.primitive == primitive && keep(&m.record.scenario.id))
            .filter(|m| m.class.is_some())
            .collect();
        if measured.is_empty() {
            return None;
        }
        let slopes: Vec<f64> = measured
            .iter()
            .filter(|m| m.class == Some(LeakClass::Leak))
            .filter_map(|m| m.per_thread.map(|f| f.slope))
            .collect();
        Some(nppbench_stats::median(&slopes).unwrap_or(0.0))
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
