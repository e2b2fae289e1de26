//! scenarios.csv: one row per scenario. The columns named in the README keep their names and
//! meanings; new columns are only ever added.

use serde::Serialize;

use crate::view::{class_name, fmt};
use nppbench_analysis::{MemoryAnalysis, RunAnalysis, ThroughputAnalysis};

/// One row. Field order is column order.
#[derive(Debug, Serialize)]
pub(crate) struct Row {
    pub(crate) npp_version: String,
    pub(crate) kind: &'static str,
    pub(crate) scenario_id: String,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) src_stride: u32,
    pub(crate) dst_stride: u32,
    pub(crate) padded_from: String,
    pub(crate) stream: String,
    pub(crate) threading: String,
    pub(crate) status: String,
    pub(crate) threads_spawned: String,
    pub(crate) calls: String,
    pub(crate) leak_mib_per_thread: String,
    pub(crate) leak_mib_per_thread_ci_low: String,
    pub(crate) leak_mib_per_thread_ci_high: String,
    pub(crate) leak_mib_per_call: String,
    pub(crate) leak_r2: String,
    pub(crate) leak_class: String,
    pub(crate) growth_mib: String,
    pub(crate) latency_us: String,
    pub(crate) kernel_gbps: String,
    pub(crate) kernel_median_us: String,
    pub(crate) hidden_streams_per_thread: String,
    pub(crate) streams_never_destroyed: String,
    pub(crate) copy_ceiling_gbps: String,
    pub(crate) pct_of_copy_ceiling: String,
    pub(crate) reference_kernel_gbps: String,
    pub(crate) gpu: String,
    pub(crate) driver_version: String,
    /// The median of single kernel records, not of calls: where a call launches several
    /// kernels this mixes them (see `kernel_per_call_us`).
    pub(crate) kernel_record_median_us: String,
    pub(crate) kernels_per_call: String,
    // Added with the atlas and per-call timing (schema 2).
    pub(crate) primitive: String,
    pub(crate) context: String,
    pub(crate) gpu_uuid: String,
    /// Kernel time per call (CUPTI, the kernels of a call summed), median over passes, µs.
    pub(crate) kernel_per_call_us: String,
    /// GB/s at `kernel_per_call_us`.
    pub(crate) kernel_per_call_gbps: String,
    /// The same with L2 flushed before each call.
    pub(crate) cold_per_call_us: String,
    /// GB/s at `cold_per_call_us`, and as a percentage of the copy ceiling (measured on buffers
    /// far larger than L2: the like-for-like figure; `pct_of_copy_ceiling` is at the CUDA-event
    /// time, warm).
    pub(crate) cold_per_call_gbps: String,
    pub(crate) pct_of_copy_ceiling_cold: String,
    /// Host latency per call (launch and synchronise), median over passes, µs.
    pub(crate) host_latency_us: String,
    /// Throughput passes measured (each a fresh process).
    pub(crate) passes: String,
    /// Device-state samples read while the GPU throttled, of those read.
    pub(crate) throttled_samples: String,
    pub(crate) device_samples: String,
    /// Declared `nStreamFlags` of the context and the stream's real flags (memory scenarios).
    pub(crate) declared_stream_flags: String,
    pub(crate) real_stream_flags: String,
    /// The ordering rounds (memory scenarios): `races`, `ordered` or `not measured`; rounds,
    /// wrong rounds, the most wrong pixels of a round, and the wrong columns and rows (`a-b`).
    pub(crate) race_class: String,
    pub(crate) race_rounds: String,
    pub(crate) race_wrong_rounds: String,
    pub(crate) race_wrong_pixels: String,
    pub(crate) race_columns: String,
    pub(crate) race_rows: String,
    /// The kernels, copies and fills of the rounds' first call that CUPTI saw on a stream other
    /// than the caller's (empty where not recorded); 0 with no round made: ordered by the stream.
    pub(crate) race_first_call_elsewhere: String,
    /// The synchronised calls' output (memory scenarios): `right`, `wrong`, `reference_miss`
    /// (a miss of nppbench's own reference, not NPP's defect), `faults` or `not_measured`; the
    /// wrong pixels (empty where an older run counted only the first), the first wrong sample
    /// (`row,pixel,channel: actual where expected`), and the wrong columns and rows (`a-b`).
    pub(crate) output_class: String,
    pub(crate) wrong_pixels: String,
    pub(crate) first_wrong: String,
    pub(crate) wrong_columns: String,
    pub(crate) wrong_rows: String,
}

fn o(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(String::new, |v| fmt(v, digits))
}

pub(crate) fn rows(a: &RunAnalysis<'_>) -> Vec<Row> {
    let mut out: Vec<Row> = a.memory.iter().map(|m| memory_row(a, m)).collect();
    out.extend(a.throughput.iter().map(|t| throughput_row(a, t)));
    out
}

/// A row with the run's columns filled and every scenario column empty.
fn blank(
    a: &RunAnalysis<'_>,
    kind: &'static str,
    id: &str,
    g: &nppbench_model::Geometry,
    stream: String,
    st: String,
) -> Row {
    let env = &a.run.environment;
    let ceiling = o(a.ceiling_gbps, 1);
    Row {
        npp_version: env.npp.full_version(),
        kind,
        scenario_id: id.to_owned(),
        width: g.width,
        height: g.height,
        src_stride: g.src_stride,
        dst_stride: g.dst_stride,
        padded_from: g.padded_from.map_or_else(String::new, |w| w.to_string()),
        stream,
        threading: String::new(),
        status: st,
        threads_spawned: String::new(),
        calls: String::new(),
        leak_mib_per_thread: String::new(),
        leak_mib_per_thread_ci_low: String::new(),
        leak_mib_per_thread_ci_high: String::new(),
        leak_mib_per_call: String::new(),
        leak_r2: String::new(),
        leak_class: String::new(),
        growth_mib: String::new(),
        latency_us: String::new(),
        kernel_gbps: String::new(),
        kernel_median_us: String::new(),
        hidden_streams_per_thread: String::new(),
        streams_never_destroyed: String::new(),
        copy_ceiling_gbps: ceiling.clone(),
        pct_of_copy_ceiling: String::new(),
        reference_kernel_gbps: String::new(),
        gpu: env.gpu.name.clone(),
        driver_version: env.driver_version.clone().unwrap_or_default(),
        kernel_record_median_us: String::new(),
        kernels_per_call: String::new(),
        primitive: String::new(),
        context: String::new(),
        gpu_uuid: env.gpu.uuid.clone(),
        kernel_per_call_us: String::new(),
        kernel_per_call_gbps: String::new(),
        cold_per_call_us: String::new(),
        cold_per_call_gbps: String::new(),
        pct_of_copy_ceiling_cold: String::new(),
        host_latency_us: String::new(),
        passes: String::new(),
        throttled_samples: String::new(),
        device_samples: String::new(),
        declared_stream_flags: String::new(),
        real_stream_flags: String::new(),
        race_class: String::new(),
        race_rounds: String::new(),
        race_wrong_rounds: String::new(),
        race_wrong_pixels: String::new(),
        race_columns: String::new(),
        race_rows: String::new(),
        race_first_call_elsewhere: String::new(),
        output_class: String::new(),
        wrong_pixels: String::new(),
        first_wrong: String::new(),
        wrong_columns: String::new(),
        wrong_rows: String::new(),
    }
}

/// The per-call columns of a throughput scenario (warm and cold kernel time, host latency).
fn per_call(r: &mut Row, t: &ThroughputAnalysis<'_>) {
    r.kernel_per_call_us = o(t.kernel_per_call_us, 3);
    r.kernel_per_call_gbps = o(t.kernel_gbps, 1);
    r.cold_per_call_us = o(t.cold_per_call_us, 3);
    r.cold_per_call_gbps = o(t.cold_gbps, 1);
    r.pct_of_copy_ceiling_cold = o(t.cold_pct_of_ceiling, 1);
    r.host_latency_us = o(t.host_latency_us, 2);
    r.passes = t.pass_kernel_ns.len().max(t.pass_event_ns.len()).to_string();
    if t.device_samples > 0 {
        r.throttled_samples = t.throttled_samples.to_string();
        r.device_samples = t.device_samples.to_string();
    }
}

fn memory_row(a: &RunAnalysis<'_>, m: &MemoryAnalysis<'_>) -> Row {
    let s = &m.record.scenario;
    let tp = a.throughput_for(m);
    let mut r = blank(
        a,
        "memory",
        &s.id,
        &s.geometry,
        s.stream.to_string(),
        m.record.outcome.status().as_str().to_owned(),
    );
    r.threading = s.threading.to_string();
    if m.class.is_some() {
        r.threads_spawned = m.threads_spawned.to_string();
        r.calls = m.calls.to_string();
        r.leak_class = class_name(m.class).to_owned();
        r.growth_mib = fmt(m.total_growth_mib(), 2);
    }
    r.leak_mib_per_thread = o(m.per_thread.map(|f| f.slope), 4);
    r.leak_mib_per_thread_ci_low = o(m.per_thread.map(|f| f.slope_ci.0), 4);
    r.leak_mib_per_thread_ci_high = o(m.per_thread.map(|f| f.slope_ci.1), 4);
    r.leak_mib_per_call = o(m.per_call.map(|f| f.slope), 4);
    r.leak_r2 = o(m.per_thread.or(m.per_call).map(|f| f.r2), 4);
    r.latency_us = o(m.latency_us, 2);
    r.hidden_streams_per_thread = o(m.hidden_per_thread.map(|f| f.slope), 3);
    r.streams_never_destroyed = m.streams_never_destroyed.map_or_else(String::new, |n| n.to_string());
    r.kernel_gbps = o(tp.and_then(|t| t.gbps), 1);
    r.kernel_median_us = o(tp.and_then(|t| t.median_us), 3);
    r.pct_of_copy_ceiling = o(tp.and_then(|t| t.pct_of_ceiling), 1);
    r.reference_kernel_gbps = o(tp.and_then(|t| t.reference_gbps), 1);
    r.kernel_record_median_us = o(tp.and_then(|t| t.kernel_only_us), 3);
    r.kernels_per_call = o(tp.and_then(|t| t.kernels_per_call), 2);
    r.primitive = s.primitive.to_string();
    r.context = s.context.to_string();
    if let Some(gpu) = &m.record.gpu {
        r.gpu_uuid = gpu.clone();
    }
    if let Some(t) = tp {
        per_call(&mut r, t);
    }
    if let Some(c) = m.record.result.as_ref().and_then(|r| r.context) {
        r.declared_stream_flags = c.declared_flags.to_string();
        r.real_stream_flags = c.stream_flags.to_string();
    }
    let span = |v: Option<[u32; 2]>| v.map_or_else(String::new, |[a, b]| format!("{a}-{b}"));
    r.output_class = m.output.as_str().to_owned();
    if let Some(f) = m.output.facts() {
        r.wrong_pixels = f.pixels.map(|n| n.to_string()).unwrap_or_default();
        r.first_wrong = f.first.map_or_else(String::new, |w| {
            format!("{},{},{}: {} where {}", w.row, w.pixel, w.channel, w.actual, w.expected)
        });
        r.wrong_columns = span(f.columns);
        r.wrong_rows = span(f.rows);
    }
    r.race_class = m.race.as_str().to_owned();
    if let Some(o) = m.rounds() {
        r.race_rounds = o.rounds.to_string();
        r.race_wrong_rounds = o.wrong_rounds.to_string();
        r.race_wrong_pixels = o.wrong_pixels.to_string();
        r.race_columns = span(o.columns);
        r.race_rows = span(o.rows);
        r.race_first_call_elsewhere = o.first_call.map(|c| c.elsewhere.to_string()).unwrap_or_default();
    }
    r
}

fn throughput_row(a: &RunAnalysis<'_>, t: &ThroughputAnalysis<'_>) -> Row {
    let s = &t.record.scenario;
    let mut r = blank(
        a,
        "throughput",
        &s.id,
        &s.geometry,
        s.stream.to_string(),
        t.outcome.status().as_str().to_owned(),
    );
    r.kernel_gbps = o(t.gbps, 1);
    r.kernel_median_us = o(t.median_us, 3);
    r.pct_of_copy_ceiling = o(t.pct_of_ceiling, 1);
    r.reference_kernel_gbps = o(t.reference_gbps, 1);
    r.kernel_record_median_us = o(t.kernel_only_us, 3);
    r.kernels_per_call = o(t.kernels_per_call, 2);
    r.primitive = s.primitive.to_string();
    r.context = s.context.to_string();
    if let Some(gpu) = t.gpu {
        r.gpu_uuid = gpu.to_owned();
    }
    per_call(&mut r, t);
    r
}

/// atlas.csv: one row per function of each run that measured several (the atlas table).
#[derive(Debug, Serialize)]
pub(crate) struct AtlasCsvRow {
    pub(crate) npp_version: String,
    pub(crate) gpu: String,
    pub(crate) primitive: String,
    pub(crate) library: String,
    pub(crate) operation: String,
    pub(crate) verdict: String,
    pub(crate) rule: String,
    pub(crate) mib_per_thread: String,
    pub(crate) streams_per_thread: String,
    pub(crate) kernels_per_call: String,
    pub(crate) kernel_gbps: String,
    pub(crate) pct_of_copy_ceiling: String,
    pub(crate) scenarios: String,
    pub(crate) held_out: String,
    pub(crate) held_out_classes: String,
}

pub(crate) fn atlas_rows(run: &crate::view::RunView) -> Vec<AtlasCsvRow> {
    let dash = |s: &str| if s == "—" { String::new() } else { s.to_owned() };
    run.atlas
        .iter()
        .map(|r| AtlasCsvRow {
            npp_version: run.npp_version.clone(),
            gpu: run.gpu_name.clone(),
            primitive: r.primitive.clone(),
            library: r.library.clone(),
            operation: r.operation.clone(),
            verdict: r.verdict.clone(),
            rule: r.rule.clone(),
            mib_per_thread: dash(&r.mib_per_thread),
            streams_per_thread: dash(&r.streams_per_thread),
            kernels_per_call: dash(&r.kernels_per_call),
            kernel_gbps: dash(&r.gbps),
            pct_of_copy_ceiling: dash(&r.pct_of_ceiling),
            scenarios: r.scenarios.clone(),
            held_out: r.held_out.clone(),
            held_out_classes: r.held_out_classes.clone(),
        })
        .collect()
}
