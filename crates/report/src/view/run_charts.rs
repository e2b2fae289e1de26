//! The charts of one run's section: for a run of one function its memory timelines, leak grid,
//! NPP's streams, throughput and latency; for an atlas, every function at a glance.

use nppbench_analysis::{LeakClass, RunAnalysis, selection};
use nppbench_model::Geometry;
use serde::Serialize;

use super::format::{alignment, opt};
use crate::charts;

#[derive(Debug, Clone, Serialize)]
pub struct ChartView {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub svg: String,
}

/// The charts of a run of one function: memory timelines, the leak grid, NPP's streams,
/// throughput and latency, each where the run measured what it draws.
pub(super) fn charts_for(a: &RunAnalysis<'_>, anchor: &str) -> Result<Vec<ChartView>, String> {
    let mut charts = Vec::new();
    let leak_geometries = selection::leak_geometries(a);
    memory_timelines(a, anchor, &leak_geometries, &mut charts)?;
    leak_grids(a, anchor, &mut charts)?;
    hidden_streams(a, anchor, &leak_geometries, &mut charts)?;
    throughput(a, anchor, &mut charts)?;
    latency(a, anchor, &mut charts)?;
    Ok(charts)
}

/// Memory timelines, two at most: the grid shows every geometry; these show the shape.
fn memory_timelines(
    a: &RunAnalysis<'_>,
    anchor: &str,
    leak_geometries: &[Geometry],
    charts: &mut Vec<ChartView>,
) -> Result<(), String> {
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
    Ok(())
}

/// The leak grid, split where wide so that every part keeps the page's width and legible text.
fn leak_grids(a: &RunAnalysis<'_>, anchor: &str, charts: &mut Vec<ChartView>) -> Result<(), String> {
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
    let col_labels: Vec<String> = grid.columns.iter().map(|&(k, t)| charts::threading_on(t, k)).collect();
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
    Ok(())
}

/// Hidden streams, for the first leaking geometry: the leak and its fixes.
fn hidden_streams(
    a: &RunAnalysis<'_>,
    anchor: &str,
    leak_geometries: &[Geometry],
    charts: &mut Vec<ChartView>,
) -> Result<(), String> {
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
    Ok(())
}

/// Kernel throughput by geometry and stream kind.
fn throughput(a: &RunAnalysis<'_>, anchor: &str, charts: &mut Vec<ChartView>) -> Result<(), String> {
    let groups: Vec<(String, Vec<charts::throughput::Bar>)> = selection::throughput_groups(a)
        .into_iter()
        .map(|(g, members)| {
            let bars = members
                .into_iter()
                .filter_map(|t| {
                    let (gbps, ci) = t.kernel_gbps_interval().or_else(|| t.gbps.map(|g| (g, t.gbps_ci)))?;
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
            id: format!("{anchor}-throughput-chart"),
            title: "Throughput by geometry and stream kind".into(),
            caption: "Images of a megapixel and more (smaller ones are launch-bound: see the table). Bytes read plus written per second of kernel time per call (CUPTI records, the kernels of a call summed), back to back with the L2 cache warm; whiskers: the 95% interval of the median over passes (three or more), else over the first pass's calls. Black ticks: nppbench's reference kernel (CUDA events, warm). Grey line: the device-to-device copy ceiling, measured on buffers far larger than L2, so an image that fits in L2 can pass it warm; the tables give the cold figure (L2 flushed before each call) against it.".into(),
            svg: charts::throughput::render(
                &format!("{} kernel throughput", a.run.matrix.primitives[0]),
                &groups,
                a.ceiling_gbps,
            )?,
        });
    }
    Ok(())
}

/// Host latency per call by threading model.
fn latency(a: &RunAnalysis<'_>, anchor: &str, charts: &mut Vec<ChartView>) -> Result<(), String> {
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
                &latency
                    .groups
                    .iter()
                    .map(|(name, per_stream)| {
                        // One name per threading model, as every other chart gives it.
                        let name = name
                            .parse()
                            .map_or_else(|_| name.clone(), charts::threading_name);
                        (name, per_stream.clone())
                    })
                    .collect::<Vec<_>>(),
            )?,
        });
    }
    Ok(())
}

/// The charts of a run that measured several functions: the atlas at a glance (each function's
/// best kernel throughput as a share of the copy ceiling, coloured by whether it leaks).
pub(super) fn charts_for_atlas(bars: &[charts::atlas_overview::Bar], anchor: &str) -> Result<Vec<ChartView>, String> {
    if bars.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![ChartView {
        id: format!("{anchor}-atlas-chart"),
        title: "Every function: throughput and leak".into(),
        caption: "Each function's fastest measured scenario: bytes read plus written per second of kernel time per call with the L2 cache flushed before each call (CUPTI kernel records), as a share of the device-to-device copy ceiling (measured on buffers far larger than L2). Red: some scenario of the function leaks per new thread; green: none does; no bar: throughput not measured.".into(),
        svg: charts::atlas_overview::render("Kernel throughput, % of the copy ceiling", bars)?,
    }])
}
