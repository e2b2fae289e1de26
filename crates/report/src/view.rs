//! View models: every figure the pages show, formatted, so templates hold no arithmetic.

use std::collections::BTreeMap;

use nppbench_model::{Geometry, Outcome, RunFile, StreamKind};
use serde::Serialize;

use crate::analysis::{MemoryAnalysis, Probe, RunAnalysis};
use crate::charts;
use crate::findings::{self, Fix, Verdict};
use crate::stats::LeakClass;

#[derive(Debug, Serialize)]
pub struct Page {
    pub title: String,
    pub generated_by: String,
    pub runs: Vec<RunView>,
    /// Present when several runs are rendered together.
    pub comparison: Option<Comparison>,
}

#[derive(Debug, Serialize)]
pub struct RunView {
    pub anchor: String,
    pub npp_version: String,
    pub heading: String,
    pub interrupted: bool,
    pub verdict: VerdictView,
    pub fixes: Vec<FixView>,
    pub environment: Vec<(String, String)>,
    pub charts: Vec<ChartView>,
    pub memory: Vec<MemoryRow>,
    pub throughput: Vec<ThroughputRow>,
    pub failures: Vec<(String, String)>,
    pub reproduce: String,
    pub run_json: String,
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

/// Several runs side by side: one row per scenario, one column per run.
#[derive(Debug, Serialize)]
pub struct Comparison {
    pub versions: Vec<String>,
    pub memory: Vec<ComparisonRow>,
    pub throughput: Vec<ComparisonRow>,
    pub differences: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ComparisonRow {
    pub scenario: String,
    pub cells: Vec<String>,
    pub differs: bool,
}

pub(crate) fn fmt(v: f64, digits: usize) -> String {
    format!("{v:.digits$}")
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "—".to_owned(), |v| fmt(v, digits))
}

pub(crate) fn alignment(g: &Geometry) -> String {
    let w = if g.width_aligned() { "aligned" } else { "unaligned" };
    let s = if g.src_stride_aligned() { "aligned" } else { "unaligned" };
    let pad = if g.padded_from.is_some() { ", padded ROI" } else { "" };
    format!("width {w}, stride {s}{pad}")
}

fn status(o: &Outcome) -> String {
    match o {
        Outcome::Ok => "ok".to_owned(),
        Outcome::Failed { .. } => "failed".to_owned(),
        Outcome::StoppedAtBudget { budget_mib } => format!("stopped at {budget_mib} MiB budget"),
    }
}

pub(crate) fn class_name(class: Option<LeakClass>) -> &'static str {
    class.map_or("failed", LeakClass::as_str)
}

fn memory_row(m: &MemoryAnalysis<'_>) -> MemoryRow {
    let s = &m.record.scenario;
    MemoryRow {
        id: s.id.clone(),
        geometry: s.geometry.label(),
        alignment: alignment(&s.geometry),
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

fn verdict_view(v: &Verdict, a: &RunAnalysis<'_>) -> VerdictView {
    let gpu = &a.run.environment.gpu.name;
    let headline = if v.leaking == 0 {
        format!(
            "No configuration leaks: none of the {} measured memory scenarios grows without bound on {gpu} with NPP {}.",
            v.measured,
            a.npp_version()
        )
    } else {
        format!(
            "{} of {} configurations leak GPU memory on {gpu} with NPP {}.",
            v.leaking,
            v.measured,
            a.npp_version()
        )
    };
    let mut details = Vec::new();
    if let Some(r) = v.per_thread_range {
        details.push(format!(
            "Each new calling thread adds {} MiB of GPU memory that stays until the process exits.",
            number_range(r, 2)
        ));
    }
    if let Some(r) = v.hidden_range {
        details.push(format!(
            "In the leaking configurations NPP creates {} CUDA streams per new thread (counted with CUPTI) and destroys none of them.",
            number_range(r, 1)
        ));
    }
    if !v.stream_hoarders.is_empty() {
        details.push(format!(
            "The scenarios whose NPP creates streams for every new thread and never destroys them: {}.",
            v.stream_hoarders.join("; ")
        ));
    }
    if let (Some(l), Some(o)) = (v.kernels_per_call_leaking, v.kernels_per_call_other) {
        details.push(format!(
            "On the leaking geometries NPP launches {} kernel(s) per call, against {} on the others (CUPTI's kernel records), whatever the stream.",
            number_range(l, 0),
            number_range(o, 0)
        ));
    }
    if v.failed > 0 {
        details.push(format!(
            "{} scenario(s) failed; their reasons are listed under Failures.",
            v.failed
        ));
    }
    VerdictView {
        headline,
        leak_found: v.leaking > 0,
        shared: v.shared.clone(),
        never: v.never.clone(),
        details,
    }
}

/// `83–142%`, or `100%` when both ends round to the same.
fn percent_range((lo, hi): (f64, f64)) -> String {
    let (lo, hi) = (fmt(lo * 100.0, 0), fmt(hi * 100.0, 0));
    if lo == hi {
        format!("{lo}%")
    } else {
        format!("{lo}–{hi}%")
    }
}

/// `1.6 to 1.7`, or `1.6` when both ends round to the same.
fn number_range((lo, hi): (f64, f64), digits: usize) -> String {
    let (lo, hi) = (fmt(lo, digits), fmt(hi, digits));
    if lo == hi { lo } else { format!("{lo} to {hi}") }
}

fn fix_view(f: &Fix) -> FixView {
    let mut effect = format!(
        "Measured beside {} leaking configuration(s): {} of them no longer leak",
        f.compared, f.fixed
    );
    effect.push_str(&format!(
        " (largest remaining growth {} MiB)",
        fmt(f.worst_growth_mib, 1)
    ));
    if let Some(r) = f.throughput_ratio {
        effect.push_str(&format!(
            "; kernel throughput at 1080p and above: {} of what it was",
            percent_range(r)
        ));
    }
    if let Some(r) = f.latency_ratio {
        effect.push_str(&format!("; host latency per call: {} of what it was", percent_range(r)));
    }
    effect.push('.');
    FixView {
        title: f.title.to_owned(),
        effect,
        works: f.fixed == f.compared,
    }
}

fn environment(run: &RunFile) -> Vec<(String, String)> {
    let e = &run.environment;
    let api = e.cuda_driver_api_version;
    vec![
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
    ]
}

fn charts_for(a: &RunAnalysis<'_>, anchor: &str) -> Result<Vec<ChartView>, String> {
    let mut charts = Vec::new();
    // Memory timelines: each geometry with a leak, its scenarios on one chart.
    let mut leak_geometries: Vec<Geometry> = Vec::new();
    for m in a.leaking() {
        if !leak_geometries.contains(&m.record.scenario.geometry) {
            leak_geometries.push(m.record.scenario.geometry);
        }
    }
    // Two charts at most: the grid shows every geometry; these show the shape.
    for (i, g) in leak_geometries.iter().enumerate().take(2) {
        let scenarios: Vec<&MemoryAnalysis<'_>> = a
            .memory
            .iter()
            .filter(|m| {
                m.record.scenario.geometry == *g
                    || m.record.scenario.geometry.padded_from == Some(g.width)
                        && m.record.scenario.geometry.src_stride == g.src_stride
                        && m.record.scenario.geometry.height == g.height
                        && m.record.scenario.threading.thread_bound().is_none()
            })
            .collect();
        let title = format!("Memory growth, {} ({})", g.label(), alignment(g));
        charts.push(ChartView {
            id: format!("{anchor}-memory-{i}"),
            caption: "Solid lines: a new host thread for every call, one line per stream kind. Dashed: the fixes measured for this geometry on the blocking stream (a single thread, pools, each thread with its own non-blocking stream, the padded ROI).".into(),
            svg: charts::memory_timeline::render(&title, &scenarios)?,
            title,
        });
    }
    // The leak grid.
    let geometries = a.run.matrix.geometries();
    let mut columns: Vec<(StreamKind, nppbench_model::Threading)> = Vec::new();
    for m in &a.memory {
        let key = (m.record.scenario.stream, m.record.scenario.threading);
        if !columns.contains(&key) {
            columns.push(key);
        }
    }
    columns.sort();
    let rows: Vec<Geometry> = geometries
        .into_iter()
        .filter(|g| a.memory.iter().any(|m| m.record.scenario.geometry == *g))
        .collect();
    let cells: Vec<Vec<Option<charts::leak_grid::Cell>>> = rows
        .iter()
        .map(|g| {
            columns
                .iter()
                .map(|(k, t)| {
                    a.memory
                        .iter()
                        .find(|m| {
                            m.record.scenario.geometry == *g
                                && m.record.scenario.stream == *k
                                && m.record.scenario.threading == *t
                        })
                        .map(|m| charts::leak_grid::Cell {
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
    let row_labels: Vec<String> = rows.iter().map(Geometry::label).collect();
    let col_labels: Vec<String> = columns.iter().map(|(k, t)| format!("{k} / {t}")).collect();
    charts.push(ChartView {
        id: format!("{anchor}-grid"),
        title: "Leak slope by geometry, stream kind and threading model".into(),
        caption: "Red cells leak: the number is MiB per new thread (per call for single-threaded scenarios). b = bounded, f = flat.".into(),
        svg: charts::leak_grid::render(&row_labels, &col_labels, &cells)?,
    });
    // Hidden streams, for the first leaking geometry: the leak and its fixes.
    if let Some(g) = leak_geometries.first() {
        let scenarios: Vec<&MemoryAnalysis<'_>> =
            a.memory.iter().filter(|m| m.record.scenario.geometry == *g).collect();
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
    let mut groups: Vec<(String, Vec<charts::throughput::Bar>)> = Vec::new();
    for t in &a.throughput {
        let Some(gbps) = t.gbps else { continue };
        if t.record.scenario.geometry.pixels() < crate::findings::THROUGHPUT_MIN_PIXELS {
            continue;
        }
        let label = t.record.scenario.geometry.label();
        let bar = charts::throughput::Bar {
            stream: t.record.scenario.stream,
            gbps,
            ci: t.gbps_ci,
            reference_gbps: t.reference_gbps,
        };
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, bars)) => bars.push(bar),
            None => groups.push((label, vec![bar])),
        }
    }
    if !groups.is_empty() {
        charts.push(ChartView {
            id: format!("{anchor}-throughput"),
            title: "Throughput by geometry and stream kind".into(),
            caption: "Images of a megapixel and more (smaller ones are launch-bound: see the table). Kernel time from CUDA events around batches of calls (criterion median, whiskers: its 95% interval); black ticks: nppbench's reference kernel; grey line: the device-to-device copy ceiling.".into(),
            svg: charts::throughput::render("NPP convert 8u→32f throughput", &groups, a.ceiling_gbps)?,
        });
    }
    // Latency by threading model, for the first leaking geometry (else the median over all).
    let mut latency: BTreeMap<String, BTreeMap<StreamKind, Vec<f64>>> = BTreeMap::new();
    let latency_geometry = leak_geometries.first();
    for m in a
        .memory
        .iter()
        .filter(|m| latency_geometry.is_none_or(|g| m.record.scenario.geometry == *g))
    {
        if let Some(l) = m.latency_us {
            let s = &m.record.scenario;
            latency
                .entry(s.threading.to_string())
                .or_default()
                .entry(s.stream)
                .or_default()
                .push(l);
        }
    }
    let latency_groups: Vec<(String, Vec<(StreamKind, f64)>)> = latency
        .into_iter()
        .map(|(t, per)| {
            (
                t,
                per.into_iter()
                    .filter_map(|(k, v)| crate::stats::median(&v).map(|m| (k, m)))
                    .collect(),
            )
        })
        .collect();
    if !latency_groups.is_empty() {
        charts.push(ChartView {
            id: format!("{anchor}-latency"),
            title: "Host latency per call by threading model".into(),
            caption: "Launch plus stream synchronisation, measured on the calling thread, median over the calls (warm-up call excluded); thread creation is not included. For a leaking geometry when there is one, else the median over all geometries.".into(),
            svg: charts::latency::render(
                &match latency_geometry {
                    Some(g) => format!("Latency per call (µs), {}", g.label()),
                    None => "Latency per call (µs), median over geometries".to_owned(),
                },
                &latency_groups,
            )?,
        });
    }
    Ok(charts)
}

/// The run.json link of run `index` of `total` rendered together.
pub fn run_json_name(index: usize, run: &RunFile, total: usize) -> String {
    if total == 1 {
        "run.json".to_owned()
    } else {
        format!("run-{}-npp-{}.json", index + 1, run.environment.npp.version)
    }
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
            Outcome::Failed { reason } => Some((id.clone(), reason.clone())),
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
                    alignment: alignment(&s.geometry),
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

pub(crate) fn comparison(analyses: &[RunAnalysis<'_>]) -> Option<Comparison> {
    if analyses.len() < 2 {
        return None;
    }
    let versions: Vec<String> = analyses.iter().map(|a| format!("NPP {}", a.npp_version())).collect();
    let mut differences = Vec::new();
    let mut memory = Vec::new();
    for m in &analyses[0].memory {
        let id = &m.record.scenario.id;
        let cells_of: Vec<Option<&MemoryAnalysis<'_>>> = analyses
            .iter()
            .map(|a| a.memory.iter().find(|x| &x.record.scenario.id == id))
            .collect();
        let classes: Vec<&str> = cells_of
            .iter()
            .map(|c| c.map_or("not run", |c| class_name(c.class)))
            .collect();
        let differs = classes.iter().any(|c| *c != classes[0]);
        if differs {
            differences.push(format!(
                "{id}: {}",
                versions
                    .iter()
                    .zip(&classes)
                    .map(|(v, c)| format!("{v} {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        memory.push(ComparisonRow {
            scenario: id.clone(),
            cells: cells_of
                .iter()
                .map(|c| match c {
                    None => "not run".into(),
                    Some(c) => match (c.class, c.per_thread.or(c.per_call)) {
                        (Some(LeakClass::Leak), Some(f)) => format!("leak {} MiB", fmt(f.slope, 2)),
                        (class, _) => class_name(class).to_owned(),
                    },
                })
                .collect(),
            differs,
        });
    }
    let mut throughput = Vec::new();
    for t in &analyses[0].throughput {
        let id = &t.record.scenario.id;
        let values: Vec<Option<f64>> = analyses
            .iter()
            .map(|a| {
                a.throughput
                    .iter()
                    .find(|x| &x.record.scenario.id == id)
                    .and_then(|x| x.gbps)
            })
            .collect();
        let base = values[0];
        let differs = values.iter().any(|v| match (v, base) {
            (Some(v), Some(b)) => (v / b - 1.0).abs() > 0.05,
            _ => true,
        });
        throughput.push(ComparisonRow {
            scenario: id.clone(),
            cells: values
                .iter()
                .map(|v| v.map_or_else(|| "—".into(), |v| format!("{} GB/s", fmt(v, 0))))
                .collect(),
            differs,
        });
    }
    Some(Comparison {
        versions,
        memory,
        throughput,
        differences,
    })
}
