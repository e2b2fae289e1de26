//! The rows of a run's scenario tables, one per memory scenario and one per throughput scenario
//! and GPU, every figure formatted; the atlas groups them by function.

use nppbench_analysis::{MemoryAnalysis, Probe, ThroughputAnalysis};
use serde::Serialize;

use super::format::{alignment, class_name, fmt, opt, status};

#[derive(Debug, Clone, Serialize)]
pub struct MemoryRow {
    pub id: String,
    pub primitive: String,
    pub geometry: String,
    pub alignment: String,
    pub stream: String,
    pub context: String,
    pub threading: String,
    pub status: String,
    pub class: String,
    pub threads: String,
    pub calls: String,
    pub settled: String,
    pub growth_mib: String,
    pub per_thread: String,
    pub per_thread_ci: String,
    pub per_call: String,
    pub r2: String,
    pub hidden_per_thread: String,
    pub never_destroyed: String,
    pub declared_flags: String,
    pub latency_us: String,
    pub probe: String,
    pub gpu: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ThroughputRow {
    pub id: String,
    pub primitive: String,
    pub geometry: String,
    pub alignment: String,
    pub stream: String,
    pub context: String,
    pub gpu: String,
    pub status: String,
    pub passes: String,
    pub median_us: String,
    pub kernel_per_call_us: String,
    pub kernel_per_call_ci: String,
    pub kernels_per_call: String,
    /// Each kernel of a call and its median µs, where a call launches more than one.
    pub kernels: String,
    pub cold_us: String,
    pub host_latency_us: String,
    pub kernel_only_us: String,
    pub gbps: String,
    pub gbps_ci: String,
    pub kernel_gbps: String,
    /// At the cold kernel time (see `ThroughputAnalysis::ceiling_pct`).
    pub pct_of_ceiling: String,
    pub cold_gbps: String,
    pub throttled: String,
    pub sm_mhz: String,
    pub reference_gbps: String,
    pub reference_path: String,
}

pub(super) fn memory_row(m: &MemoryAnalysis<'_>) -> MemoryRow {
    let s = &m.record.scenario;
    let result = m.record.result.as_ref();
    MemoryRow {
        id: s.id.clone(),
        primitive: s.primitive.to_string(),
        geometry: s.geometry.label(),
        alignment: alignment(s.primitive, &s.geometry),
        stream: s.stream.to_string(),
        context: s.context.to_string(),
        threading: s.threading.to_string(),
        status: status(&m.record.outcome),
        class: class_name(m.class).to_owned(),
        threads: m.threads_spawned.to_string(),
        calls: m.calls.to_string(),
        settled: result
            .and_then(|r| r.settled_after)
            .map_or_else(|| "—".into(), |n| format!("after {n}")),
        growth_mib: if m.class.is_some() {
            fmt(m.total_growth_mib(), 1)
        } else {
            "—".into()
        },
        per_thread: opt(m.per_thread.map(|f| f.slope), 2),
        per_thread_ci: m.per_thread.map_or_else(
            || "—".into(),
            |f| format!("{} … {}", fmt(f.slope_ci.0, 2), fmt(f.slope_ci.1, 2)),
        ),
        per_call: opt(m.per_call.map(|f| f.slope), 2),
        r2: opt(m.per_thread.or(m.per_call).map(|f| f.r2), 3),
        hidden_per_thread: opt(m.hidden_per_thread.map(|f| f.slope), 2),
        never_destroyed: m
            .streams_never_destroyed
            .map_or_else(|| "not measured".into(), |n| n.to_string()),
        declared_flags: result.and_then(|r| r.context).map_or_else(
            || "—".into(),
            |c| format!("declared {}, stream {}", c.declared_flags, c.stream_flags),
        ),
        latency_us: opt(m.latency_us, 1),
        probe: match m.probe {
            Probe::Process => "process (NVML)".into(),
            Probe::Device => "device-wide".into(),
        },
        gpu: m.record.gpu.clone().unwrap_or_default(),
    }
}

pub(super) fn throughput_row(t: &ThroughputAnalysis<'_>, ceiling: Option<f64>) -> ThroughputRow {
    let s = &t.record.scenario;
    let first = t.passes.iter().find_map(|p| p.result.as_ref());
    ThroughputRow {
        id: s.id.clone(),
        primitive: s.primitive.to_string(),
        geometry: s.geometry.label(),
        alignment: alignment(s.primitive, &s.geometry),
        stream: s.stream.to_string(),
        context: s.context.to_string(),
        gpu: t.gpu.map(str::to_owned).unwrap_or_default(),
        status: status(t.outcome),
        passes: format!(
            "{} of {}",
            t.pass_kernel_ns.len().max(t.pass_event_ns.len()),
            t.passes.len()
        ),
        median_us: opt(t.median_us, 2),
        kernel_per_call_us: opt(t.kernel_per_call_us, 2),
        kernel_per_call_ci: t
            .kernel_per_call_ci_us
            .map_or_else(|| "—".into(), |(lo, hi)| format!("{} … {}", fmt(lo, 2), fmt(hi, 2))),
        kernels_per_call: opt(t.kernels_per_call, 0),
        kernels: if t.kernels.len() > 1 {
            let kernels = t
                .kernels
                .iter()
                .map(|(name, us)| format!("{} {} µs", short_kernel(name), fmt(*us, 2)))
                .collect::<Vec<_>>()
                .join("; ");
            match &t.layout {
                Some(l) => format!("{kernels}; {}", super::format::layout_text(l)),
                None => kernels,
            }
        } else {
            String::new()
        },
        cold_us: opt(t.cold_per_call_us, 2),
        host_latency_us: opt(t.host_latency_us, 1),
        kernel_only_us: opt(t.kernel_only_us, 2),
        gbps: opt(t.gbps, 1),
        gbps_ci: t
            .gbps_ci
            .map_or_else(|| "—".into(), |(lo, hi)| format!("{} … {}", fmt(lo, 1), fmt(hi, 1))),
        kernel_gbps: opt(t.kernel_gbps, 1),
        pct_of_ceiling: super::format::ceiling_pct_text(t.ceiling_pct(ceiling)),
        cold_gbps: opt(t.cold_gbps, 1),
        throttled: if t.device_samples == 0 {
            "—".into()
        } else {
            format!("{} of {}", t.throttled_samples, t.device_samples)
        },
        sm_mhz: opt(t.sm_mhz, 0),
        reference_gbps: opt(t.reference_gbps, 1),
        reference_path: first.and_then(|r| r.reference.as_ref()).map_or_else(
            || {
                first
                    .and_then(|r| r.reference_not_measured.clone())
                    .unwrap_or_else(|| "—".into())
            },
            |x| match &x.measured_in {
                // Measured once for the geometry, in another scenario of the same pass.
                Some(id) if id != &t.record.scenario.id => format!("{}, measured with {id}", x.path),
                _ => x.path.clone(),
            },
        ),
    }
}

/// A kernel's readable name: the function's name out of its C++ mangling where it can be found.
fn short_kernel(mangled: &str) -> String {
    // `_Z29ForEachTupleDWordInLargeImageIf…`: a length, then that many characters.
    let rest = mangled.strip_prefix("_Z").unwrap_or(mangled);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    match digits.parse::<usize>() {
        Ok(n) if rest.len() >= digits.len() + n => rest[digits.len()..digits.len() + n].to_owned(),
        _ => mangled.chars().take(40).collect(),
    }
}
