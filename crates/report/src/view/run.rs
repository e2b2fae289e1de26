//! One run's section of the page: its verdict and fixes (worded in `prose`), charts, environment
//! and tables.

use nppbench_model::{Outcome, RunFile};
use serde::Serialize;

use super::prose::{fix_view, verdict_view};
use super::{alignment, class_name, fmt, opt, run_json_name, status};
use crate::analysis::selection;
use crate::analysis::{MemoryAnalysis, Probe, RunAnalysis};
use crate::charts;
use crate::findings;
use crate::stats::LeakClass;

#[derive(Debug, Serialize)]
pub struct RunView {
    pub anchor: String,
    pub npp_version: String,
    pub heading: String,
    pub interrupted: bool,
    /// What a reader must know before trusting the figures: a shared GPU, a test hook.
    pub warnings: Vec<String>,
    pub verdict: VerdictView,
    pub fixes: Vec<FixView>,
    pub environment: Vec<EnvEntry>,
    pub charts: Vec<ChartView>,
    pub memory: Vec<MemoryRow>,
    pub throughput: Vec<ThroughputRow>,
    pub failures: Vec<FailureRow>,
    pub reproduce: String,
    pub run_json: String,
}

/// One line of the environment list.
#[derive(Debug, Serialize)]
pub struct EnvEntry {
    pub name: String,
    pub value: String,
}

/// A failed scenario: its id, the kind of fault and why.
#[derive(Debug, Serialize)]
pub struct FailureRow {
    pub scenario: String,
    pub kind: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct VerdictView {
    pub headline: String,
    pub leak_found: bool,
    pub shared: Vec<String>,
    pub never: Vec<String>,
    pub details: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct FixView {
    pub title: String,
    pub effect: String,
    pub works: bool,
}

#[derive(Debug, Serialize)]
pub struct ChartView {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub svg: String,
}

#[derive(Debug, Serialize)]
pub struct MemoryRow {
    pub id: String,
    pub geometry: String,
    pub alignment: String,
    pub stream: String,
    pub threading: String,
    pub status: String,
    pub class: String,
    pub threads: String,
    pub calls: String,
    pub growth_mib: String,
    pub per_thread: String,
    pub per_thread_ci: String,
    pub per_call: String,
    pub r2: String,
    pub hidden_per_thread: String,
    pub never_destroyed: String,
    pub latency_us: String,
    pub probe: String,
}

#[derive(Debug, Serialize)]
pub struct ThroughputRow {
    pub id: String,
    pub geometry: String,
    pub alignment: String,
    pub stream: String,
    pub status: String,
    pub median_us: String,
    pub kernel_only_us: String,
    pub kernels_per_call: String,
    pub gbps: String,
    pub gbps_ci: String,
    pub pct_of_ceiling: String,
    pub reference_gbps: String,
    pub reference_path: String,
}

fn memory_row(m: &MemoryAnalysis<'_>) -> MemoryRow {
    let s = &m.record.scenario;
    MemoryRow {
        id: s.id.clone(),
        geometry: s.geometry.label(),
        alignment: alignment(s.primitive, &s.geometry),
        stream: s.stream.to_string(),
        threading: s.threading.to_string(),
        status: status(&m.record.outcome),
        class: class_name(m.class).to_owned(),
        threads: m.threads_spawned.to_string(),
        calls: m.calls.to_string(),
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
        latency_us: opt(m.latency_us, 1),
        probe: match m.probe {
            Probe::Process => "process (NVML)".into(),
            Probe::Device => "device-wide".into(),
        },
    }
}

fn environment(run: &RunFile) -> Vec<EnvEntry> {
    let e = &run.environment;
    let api = e.cuda_driver_api_version;
    let entries: Vec<(String, String)> = vec![
        (
            "GPU".into(),
            format!(
                "{} ({} SMs, {} MiB, compute {})",
                e.gpu.name,
                e.gpu.sm_count,
                e.gpu.memory_total_bytes >> 20,
                e.gpu.compute_capability
            ),
        ),
        ("GPU UUID".into(), e.gpu.uuid.clone()),
        (
            "Driver".into(),
            e.driver_version.clone().unwrap_or_else(|| "unknown (no NVML)".into()),
        ),
        (
            "CUDA driver API".into(),
            format!("{}.{}", api / 1000, (api % 1000) / 10),
        ),
        ("NPP".into(), e.npp.version.clone()),
        ("NPP libraries".into(), e.npp.libraries.join(", ")),
        (
            "Copy ceiling".into(),
            e.copy_ceiling_bytes_per_s.map_or_else(
                || "not measured".into(),
                |b| format!("{} GB/s (device-to-device, read + written)", fmt(b / 1e9, 0)),
            ),
        ),
        (
            "Per-process memory probe".into(),
            if e.process_memory_probe {
                "NVML".into()
            } else {
                "unavailable: device-wide figures used".into()
            },
        ),
        (
            "Host".into(),
            format!("{} — {}, kernel {}", e.host.hostname, e.host.os, e.host.kernel),
        ),
        (
            "CPU".into(),
            format!("{} ({} logical cores)", e.host.cpu.model, e.host.cpu.logical_cores),
        ),
        (
            "nppbench".into(),
            format!("{} ({})", run.tool.version, run.tool.git_commit),
        ),
        (
            "Matrix".into(),
            format!("{} — {}", run.matrix.name, run.matrix.description),
        ),
        (
            "Run".into(),
            format!("{} → {} ({} s)", run.started_at, run.finished_at, fmt(run.wall_s, 1)),
        ),
    ];
    entries
        .into_iter()
        .map(|(name, value)| EnvEntry { name, value })
        .collect()
}

fn charts_for(a: &RunAnalysis<'_>, anchor: &str) -> Result<Vec<ChartView>, String> {
    let mut charts = Vec::new();
    let leak_geometries = selection::leak_geometries(a);
    // Memory timelines, two at most: the grid shows every geometry; these show the shape.
    for (i, g) in leak_geometries.iter().enumerate().take(2) {
        let title = format!(
            "Memory growth, {} ({})",
            g.label(),
            alignment(a.run.matrix.primitives[0], g)
        );
        charts.push(ChartView {
            id: format!("{anchor}-memory-{i}"),
            caption: "Solid lines: a new host thread for every call, one line per stream kind. Dashed: the fixes measured for this geometry on the blocking stream (a single thread, pools, each thread with its own non-blocking stream, the padded ROI).".into(),
            svg: charts::memory_timeline::render(&title, &selection::timeline(a, g))?,
            title,
        });
    }
    // The leak grid.
    let grid = selection::leak_grid(a);
    let cells: Vec<Vec<Option<charts::leak_grid::Cell>>> = grid
        .cells
        .iter()
        .map(|row| {
            row.iter()
                .map(|m| {
                    m.map(|m| charts::leak_grid::Cell {
                        class: m.class,
                        text: match m.class {
                            Some(LeakClass::Leak) => opt(m.per_thread.or(m.per_call).map(|f| f.slope), 1),
                            Some(c) => c.as_str().chars().next().map(String::from).unwrap_or_default(),
                            None => "×".into(),
                        },
                    })
                })
                .collect()
        })
        .collect();
    let row_labels: Vec<String> = grid.rows.iter().map(|g| g.label()).collect();
    let col_labels: Vec<String> = grid.columns.iter().map(|(k, t)| format!("{k} / {t}")).collect();
    charts.push(ChartView {
        id: format!("{anchor}-grid"),
        title: "Leak slope by geometry, stream kind and threading model".into(),
        caption: "Red cells leak: the number is MiB per new thread (per call for single-threaded scenarios). b = bounded, f = flat.".into(),
        svg: charts::leak_grid::render(&row_labels, &col_labels, &cells)?,
    });
    // Hidden streams, for the first leaking geometry: the leak and its fixes.
    if let Some(g) = leak_geometries.first() {
        let scenarios = selection::of_geometry(a, g);
        if scenarios
            .iter()
            .any(|m| m.hidden_streams_total().is_some_and(|h| h > 0.0))
        {
            charts.push(ChartView {
                id: format!("{anchor}-streams"),
                title: format!("Streams NPP creates, {}", g.label()),
                caption: "Counted with CUPTI's resource callbacks (streams nppbench makes itself are left out); none of them is destroyed before the process exits. Solid: a new thread per call on each stream kind; dashed: the other threading models on the same geometry.".into(),
                svg: charts::hidden_streams::render(&format!("Streams created by NPP, {}", g.label()), &scenarios)?,
            });
        }
    }
    // Throughput.
    let groups: Vec<(String, Vec<charts::throughput::Bar>)> = selection::throughput_groups(a)
        .into_iter()
        .map(|(g, members)| {
            let bars = members
                .into_iter()
                .filter_map(|t| {
                    Some(charts::throughput::Bar {
                        stream: t.record.scenario.stream,
                        gbps: t.gbps?,
                        ci: t.gbps_ci,
                        reference_gbps: t.reference_gbps,
                    })
                })
                .collect();
            (g.label(), bars)
        })
        .collect();
    if !groups.is_empty() {
        charts.push(ChartView {
            id: format!("{anchor}-throughput"),
            title: "Throughput by geometry and stream kind".into(),
            caption: "Images of a megapixel and more (smaller ones are launch-bound: see the table). Kernel time from CUDA events around batches of calls (criterion median, whiskers: its 95% interval); black ticks: nppbench's reference kernel; grey line: the device-to-device copy ceiling.".into(),
            svg: charts::throughput::render("NPP convert 8u→32f throughput", &groups, a.ceiling_gbps)?,
        });
    }
    // Latency by threading model.
    let latency = selection::latency(a);
    if !latency.groups.is_empty() {
        charts.push(ChartView {
            id: format!("{anchor}-latency"),
            title: "Host latency per call by threading model".into(),
            caption: "Launch plus stream synchronisation, measured on the calling thread, median over the calls (warm-up call excluded); thread creation is not included. For a leaking geometry when there is one, else the median over all geometries.".into(),
            svg: charts::latency::render(
                &match latency.geometry {
                    Some(g) => format!("Latency per call (µs), {}", g.label()),
                    None => "Latency per call (µs), median over geometries".to_owned(),
                },
                &latency.groups,
            )?,
        });
    }
    Ok(charts)
}

pub(crate) fn run_view(a: &RunAnalysis<'_>, index: usize, total: usize) -> Result<RunView, String> {
    let run = a.run;
    let anchor = format!("run-{}", index + 1);
    let v = findings::verdict(a);
    let failures = run
        .memory
        .iter()
        .map(|m| (&m.scenario.id, &m.outcome))
        .chain(run.throughput.iter().map(|t| (&t.scenario.id, &t.outcome)))
        .filter_map(|(id, o)| match o {
            Outcome::Failed { reason, kind } => Some(FailureRow {
                scenario: id.clone(),
                kind: kind.as_str().to_owned(),
                reason: reason.clone(),
            }),
            _ => None,
        })
        .collect();
    Ok(RunView {
        heading: format!(
            "NPP {} on {} (driver {})",
            a.npp_version(),
            run.environment.gpu.name,
            run.environment.driver_version.as_deref().unwrap_or("unknown")
        ),
        npp_version: a.npp_version().to_owned(),
        interrupted: run.interrupted,
        warnings: super::prose::warnings(a),
        verdict: verdict_view(&v, a),
        fixes: findings::fixes(a).iter().map(fix_view).collect(),
        environment: environment(run),
        charts: charts_for(a, &anchor)?,
        memory: a.memory.iter().map(memory_row).collect(),
        throughput: a
            .throughput
            .iter()
            .map(|t| {
                let s = &t.record.scenario;
                let r = t.record.result.as_ref();
                ThroughputRow {
                    id: s.id.clone(),
                    geometry: s.geometry.label(),
                    alignment: alignment(s.primitive, &s.geometry),
                    stream: s.stream.to_string(),
                    status: status(&t.record.outcome),
                    median_us: opt(t.median_us, 2),
                    kernel_only_us: opt(t.kernel_only_us, 2),
                    kernels_per_call: opt(t.kernels_per_call, 0),
                    gbps: opt(t.gbps, 1),
                    gbps_ci: t
                        .gbps_ci
                        .map_or_else(|| "—".into(), |(lo, hi)| format!("{} … {}", fmt(lo, 1), fmt(hi, 1))),
                    pct_of_ceiling: opt(t.pct_of_ceiling, 1),
                    reference_gbps: opt(t.reference_gbps, 1),
                    reference_path: r.and_then(|r| r.reference.as_ref()).map_or_else(
                        || {
                            r.and_then(|r| r.reference_not_measured.clone())
                                .unwrap_or_else(|| "—".into())
                        },
                        |x| x.path.clone(),
                    ),
                }
            })
            .collect(),
        failures,
        reproduce: reproduce(run),
        run_json: run_json_name(index, run, total),
        anchor,
    })
}

/// The command that makes this run again: the recorded command line, with the binary as
/// `nppbench` and the output folder kept.
fn reproduce(run: &RunFile) -> String {
    let mut words: Vec<String> = run.command.iter().skip(1).cloned().collect();
    words.insert(0, "nppbench".into());
    words.join(" ")
}
