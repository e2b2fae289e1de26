//! One run's section of the page: its verdict and fixes (worded in `prose`), charts, environment
//! and tables.

use nppbench_model::{Outcome, RunFile};
use serde::Serialize;

use super::prose::{fix_view, verdict_view};
use super::{alignment, class_name, fmt, opt, run_json_name, status};
use crate::analysis::selection;
use crate::analysis::{MemoryAnalysis, Probe, RunAnalysis, ThroughputAnalysis};
use crate::charts;
use crate::findings;
use crate::stats::LeakClass;

#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    pub anchor: String,
    /// `NPP 13.0.1.2 · H200 · driver 580.159.04`.
    pub label: String,
    pub npp_version: String,
    pub gpu_name: String,
    pub heading: String,
    /// `LEAKS` or `NO LEAK`.
    pub status: String,
    pub interrupted: bool,
    /// What a reader must know before trusting the figures: a shared GPU, a test hook.
    pub warnings: Vec<String>,
    pub verdict: VerdictView,
    /// Each primitive's leak rule.
    pub rules: Vec<RuleView>,
    pub fixes: Vec<FixView>,
    /// Several primitives: one row each (the atlas), and a section each.
    pub atlas: Vec<AtlasRow>,
    pub functions: Vec<FunctionView>,
    pub environment: Vec<EnvEntry>,
    pub charts: Vec<ChartView>,
    pub memory: Vec<MemoryRow>,
    pub throughput: Vec<ThroughputRow>,
    /// Columns shown only where they vary.
    pub many_primitives: bool,
    pub many_contexts: bool,
    pub many_gpus: bool,
    /// Over this many memory rows, the full table is left to scenarios.csv.
    pub full_tables: bool,
    pub timing: super::timing::TimingView,
    pub gpus: Vec<super::timing::GpuRow>,
    pub gpu_disagreements: Vec<String>,
    pub failures: Vec<FailureRow>,
    pub not_measured: Vec<FailureRow>,
    pub reproduce: String,
    pub run_json: String,
}

/// One primitive's leak rule, in words.
#[derive(Debug, Clone, Serialize)]
pub struct RuleView {
    pub primitive: String,
    pub library: String,
    pub leaks: bool,
    pub sentence: String,
    pub support: String,
    pub equivalents: Vec<String>,
    pub counter_examples: Vec<String>,
}

/// One function of the atlas.
#[derive(Debug, Clone, Serialize)]
pub struct AtlasRow {
    pub anchor: String,
    pub primitive: String,
    pub library: String,
    pub operation: String,
    /// `leaks`, `no leak`, `not measured`.
    pub verdict: String,
    pub rule: String,
    pub mib_per_thread: String,
    pub streams_per_thread: String,
    pub kernels_per_call: String,
    pub gbps: String,
    pub pct_of_ceiling: String,
    pub scenarios: String,
}

/// One function's section of an atlas page: its rule and its scenarios.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionView {
    pub anchor: String,
    pub primitive: String,
    pub symbol: String,
    pub library: String,
    pub operation: String,
    pub docs: String,
    pub rule: RuleView,
    pub memory: Vec<MemoryRow>,
    pub throughput: Vec<ThroughputRow>,
}

/// One line of the environment list.
#[derive(Debug, Clone, Serialize)]
pub struct EnvEntry {
    pub name: String,
    pub value: String,
}

/// A failed (or not measured) scenario: its id, the kind of fault and why.
#[derive(Debug, Clone, Serialize)]
pub struct FailureRow {
    pub scenario: String,
    pub kind: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerdictView {
    pub headline: String,
    pub leak_found: bool,
    pub never: Vec<String>,
    pub details: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FixView {
    pub title: String,
    pub effect: String,
    pub works: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartView {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub svg: String,
}

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

fn memory_row(m: &MemoryAnalysis<'_>) -> MemoryRow {
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

fn throughput_row(t: &ThroughputAnalysis<'_>, ceiling: Option<f64>) -> ThroughputRow {
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
            t.kernels
                .iter()
                .map(|(name, us)| format!("{} {} µs", short_kernel(name), fmt(*us, 2)))
                .collect::<Vec<_>>()
                .join("; ")
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
        pct_of_ceiling: super::ceiling_pct_text(t.ceiling_pct(ceiling)),
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

pub(super) fn rule_view_of(r: &crate::analysis::rules::Rule) -> RuleView {
    let w = super::prose::rule_words(r);
    RuleView {
        primitive: r.primitive.to_string(),
        library: r.primitive.row().library.to_string(),
        leaks: r.leaking > 0,
        sentence: w.sentence,
        support: w.support,
        equivalents: w.equivalents,
        counter_examples: w.counter_examples,
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
    // Wide grids are split so that every part keeps the page's width and legible text.
    let parts = col_labels.len().div_ceil(charts::leak_grid::MAX_COLUMNS).max(1);
    for part in 0..parts {
        let range =
            part * charts::leak_grid::MAX_COLUMNS..((part + 1) * charts::leak_grid::MAX_COLUMNS).min(col_labels.len());
        let part_cells: Vec<Vec<Option<charts::leak_grid::Cell>>> = cells
            .iter()
            .map(|row| {
                row[range.clone()]
                    .iter()
                    .map(|c| {
                        c.as_ref().map(|c| charts::leak_grid::Cell {
                            class: c.class,
                            text: c.text.clone(),
                        })
                    })
                    .collect()
            })
            .collect();
        charts.push(ChartView {
            id: format!("{anchor}-grid-{part}"),
            title: if parts == 1 {
                "Leak slope by geometry, stream kind and threading model".into()
            } else {
                format!("Leak slope by geometry, stream kind and threading model ({} of {parts})", part + 1)
            },
            caption: "Red cells leak: the number is MiB per new thread (per call for single-threaded scenarios). b = bounded, f = flat.".into(),
            svg: charts::leak_grid::render(&row_labels, &col_labels[range], &part_cells)?,
        });
    }
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
                    let (gbps, ci) = super::upgrade::kernel_mark(t).or_else(|| t.gbps.map(|g| (g, t.gbps_ci)))?;
                    Some(charts::throughput::Bar {
                        stream: t.record.scenario.stream,
                        gbps,
                        ci,
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
            caption: "Images of a megapixel and more (smaller ones are launch-bound: see the table). Bytes read plus written per second of kernel time per call (CUPTI records, the kernels of a call summed), back to back with the L2 cache warm; whiskers: the 95% interval of the median over passes (three or more), else over the first pass's calls. Black ticks: nppbench's reference kernel (CUDA events, warm). Grey line: the device-to-device copy ceiling, measured on buffers far larger than L2, so an image that fits in L2 can pass it warm; the tables give the cold figure (L2 flushed before each call) against it.".into(),
            svg: charts::throughput::render(
                &format!("{} kernel throughput", a.run.matrix.primitives[0]),
                &groups,
                a.ceiling_gbps,
            )?,
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

/// The charts of a run that measured several functions: the atlas at a glance (each function's
/// best kernel throughput as a share of the copy ceiling, coloured by whether it leaks).
fn charts_for_atlas(bars: &[charts::atlas_overview::Bar], anchor: &str) -> Result<Vec<ChartView>, String> {
    if bars.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![ChartView {
        id: format!("{anchor}-atlas"),
        title: "Every function: throughput and leak".into(),
        caption: "Each function's fastest measured scenario: bytes read plus written per second of kernel time per call with the L2 cache flushed before each call (CUPTI kernel records), as a share of the device-to-device copy ceiling (measured on buffers far larger than L2). Red: some scenario of the function leaks per new thread; green: none does; no bar: throughput not measured.".into(),
        svg: charts::atlas_overview::render("Kernel throughput, % of the copy ceiling", bars)?,
    }])
}

/// Over this many memory scenarios, a page keeps the compact table and leaves every column to
/// scenarios.csv.
const FULL_TABLE_LIMIT: usize = 400;

pub(crate) fn run_view(a: &RunAnalysis<'_>, index: usize, total: usize) -> Result<RunView, String> {
    let run = a.run;
    let anchor = format!("run-{}", index + 1);
    let v = findings::verdict(a);
    let outcome_rows = |want: fn(&Outcome) -> Option<(String, String)>| -> Vec<FailureRow> {
        run.memory
            .iter()
            .map(|m| (&m.scenario.id, &m.outcome))
            .chain(run.throughput.iter().map(|t| (&t.scenario.id, &t.outcome)))
            .filter_map(|(id, o)| {
                want(o).map(|(kind, reason)| FailureRow {
                    scenario: id.clone(),
                    kind,
                    reason,
                })
            })
            .collect()
    };
    let failures = outcome_rows(|o| match o {
        Outcome::Failed { reason, kind } => Some((kind.as_str().to_owned(), reason.clone())),
        _ => None,
    });
    let mut not_measured = outcome_rows(|o| match o {
        Outcome::NotMeasured { reason } => Some(("not measured".to_owned(), reason.clone())),
        _ => None,
    });
    not_measured.extend(run.matrix.skipped.iter().map(|s| FailureRow {
        scenario: "(matrix)".into(),
        kind: "not measured".into(),
        reason: s.clone(),
    }));
    let rules = a.rules();
    let primitives = a.primitives();
    let many_primitives = primitives.len() > 1;
    let memory: Vec<MemoryRow> = a.memory.iter().map(memory_row).collect();
    let throughput: Vec<ThroughputRow> = a.throughput.iter().map(|t| throughput_row(t, a.ceiling_gbps)).collect();
    let (atlas, functions, bars) = if many_primitives {
        super::atlas::rows(a, &rules, &memory, &throughput)
    } else {
        (Vec::new(), Vec::new(), Vec::new())
    };
    let mut contexts: Vec<_> = run.memory.iter().map(|m| m.scenario.context).collect();
    contexts.sort();
    contexts.dedup();
    let leaking = v.leaking > 0;
    Ok(RunView {
        heading: run.short_label(),
        label: run.short_label(),
        npp_version: run.environment.npp.full_version(),
        gpu_name: run.environment.gpu.name.clone(),
        status: if leaking { "LEAKS" } else { "NO LEAK" }.to_owned(),
        interrupted: run.interrupted,
        warnings: super::prose::warnings(a),
        verdict: verdict_view(&v, a),
        rules: rules.iter().map(rule_view_of).collect(),
        fixes: findings::fixes(a).iter().map(fix_view).collect(),
        atlas,
        functions,
        environment: environment(run),
        charts: if many_primitives {
            charts_for_atlas(&bars, &anchor)?
        } else {
            charts_for(a, &anchor)?
        },
        full_tables: memory.len() <= FULL_TABLE_LIMIT,
        memory: if many_primitives { Vec::new() } else { memory },
        throughput: if many_primitives { Vec::new() } else { throughput },
        many_primitives,
        many_contexts: contexts.len() > 1,
        many_gpus: run.environment.gpus.len() > 1,
        timing: super::timing::timing(a),
        gpus: super::timing::gpus(a),
        gpu_disagreements: super::timing::disagreements(a),
        failures,
        not_measured,
        reproduce: reproduce(run),
        run_json: run_json_name(index, run, total),
        anchor,
    })
}

/// The command that makes this run again: the recorded command line, with the binary as
/// `nppbench` and the output folder kept.
///
/// The measuring machine's own paths say nothing on another machine: the output folder becomes
/// `DIR`, an NPP folder `NPP_DIR` (the version is in the environment), a matrix file
/// `MATRIX.toml` (its contents are in run.json).
pub(crate) fn reproduce(run: &RunFile) -> String {
    let placeholder = |flag: &str| match flag {
        "--out" => Some("DIR"),
        "--npp" => Some("NPP_DIR"),
        "--matrix" => Some("MATRIX.toml"),
        _ => None,
    };
    let mut words = vec!["nppbench".to_owned()];
    let mut args = run.command.iter().skip(1);
    while let Some(arg) = args.next() {
        if let Some((flag, _)) = arg.split_once('=')
            && let Some(p) = placeholder(flag)
        {
            words.push(format!("{flag}={p}"));
        } else if let Some(p) = placeholder(arg) {
            words.push(arg.clone());
            if args.next().is_some() {
                words.push(p.to_owned());
            }
        } else {
            words.push(arg.clone());
        }
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn reproduce_shows_no_path_of_the_measuring_machine() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h200-full-npp-13.0.1/run.json");
        let mut run = nppbench_model::RunFile::read(&path).unwrap();
        run.command = [
            "/home/ci/target/release/nppbench",
            "run",
            "--matrix=/home/ci/m.toml",
            "--npp",
            "/opt/npp-12.2.3.2",
            "--repeat",
            "5",
            "--out",
            "/srv/out/run-7",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            super::reproduce(&run),
            "nppbench run --matrix=MATRIX.toml --npp NPP_DIR --repeat 5 --out DIR"
        );
    }
}
