//! Which scenarios each chart draws, chosen from the analysed run: the view only labels and
//! formats what is selected here.

use std::collections::BTreeMap;

use nppbench_model::{Geometry, StreamKind, Threading};

use crate::thresholds::LAUNCH_BOUND_PIXELS;
use crate::{MemoryAnalysis, RunAnalysis, ThroughputAnalysis};
use nppbench_stats::median;

/// The geometries of the leaking scenarios, in first-seen order.
pub fn leak_geometries(a: &RunAnalysis<'_>) -> Vec<Geometry> {
    let mut out: Vec<Geometry> = Vec::new();
    for m in a.leaking() {
        if !out.contains(&m.record.scenario.geometry) {
            out.push(m.record.scenario.geometry);
        }
    }
    out
}

/// The scenarios a leaking geometry's memory timeline draws: the geometry's own, and the
/// unbounded-thread scenarios of its padded-ROI variant.
pub fn timeline<'b, 'a>(a: &'b RunAnalysis<'a>, g: &Geometry) -> Vec<&'b MemoryAnalysis<'a>> {
    a.memory
        .iter()
        .filter(|m| {
            let s = &m.record.scenario;
            s.geometry == *g
                || s.geometry.padded_from == Some(g.width)
                    && s.geometry.src_stride == g.src_stride
                    && s.geometry.height == g.height
                    && s.threading.thread_bound().is_none()
        })
        .collect()
}

/// The scenarios of one geometry.
pub fn of_geometry<'b, 'a>(a: &'b RunAnalysis<'a>, g: &Geometry) -> Vec<&'b MemoryAnalysis<'a>> {
    a.memory.iter().filter(|m| m.record.scenario.geometry == *g).collect()
}

/// The leak grid: geometries (rows) × stream kind and threading model (columns).
pub struct Grid<'b, 'a> {
    pub rows: Vec<Geometry>,
    pub columns: Vec<(StreamKind, Threading)>,
    /// `cells[row][column]`; `None` where that combination was not measured.
    pub cells: Vec<Vec<Option<&'b MemoryAnalysis<'a>>>>,
}

pub fn leak_grid<'b, 'a>(a: &'b RunAnalysis<'a>) -> Grid<'b, 'a> {
    let mut columns: Vec<(StreamKind, Threading)> = Vec::new();
    for m in &a.memory {
        let key = (m.record.scenario.stream, m.record.scenario.threading);
        if !columns.contains(&key) {
            columns.push(key);
        }
    }
    columns.sort();
    let rows: Vec<Geometry> = a
        .run
        .matrix
        .geometries()
        .into_iter()
        .filter(|g| a.memory.iter().any(|m| m.record.scenario.geometry == *g))
        .collect();
    let cells = rows
        .iter()
        .map(|g| {
            columns
                .iter()
                .map(|(k, t)| {
                    a.memory.iter().find(|m| {
                        let s = &m.record.scenario;
                        s.geometry == *g && s.stream == *k && s.threading == *t
                    })
                })
                .collect()
        })
        .collect();
    Grid { rows, columns, cells }
}

/// Throughput scenarios of a megapixel and more with a figure, grouped by geometry in
/// first-seen order: the launch-bound ones are left to the table.
pub fn throughput_groups<'b, 'a>(a: &'b RunAnalysis<'a>) -> Vec<(Geometry, Vec<&'b ThroughputAnalysis<'a>>)> {
    let mut groups: Vec<(Geometry, Vec<&ThroughputAnalysis<'a>>)> = Vec::new();
    for t in &a.throughput {
        let g = t.record.scenario.geometry;
        if t.gbps.is_none() || g.pixels() < LAUNCH_BOUND_PIXELS {
            continue;
        }
        match groups.iter_mut().find(|(x, _)| x.label() == g.label()) {
            Some((_, members)) => members.push(t),
            None => groups.push((g, vec![t])),
        }
    }
    groups
}

/// Host latency per call by threading model (sorted by name) and stream kind: the median over
/// the first leaking geometry's scenarios, or over every geometry when nothing leaks.
pub struct Latency {
    pub geometry: Option<Geometry>,
    pub groups: Vec<(String, Vec<(StreamKind, f64)>)>,
}

pub fn latency(a: &RunAnalysis<'_>) -> Latency {
    let geometry = leak_geometries(a).first().copied();
    let mut by: BTreeMap<String, BTreeMap<StreamKind, Vec<f64>>> = BTreeMap::new();
    for m in a
        .memory
        .iter()
        .filter(|m| geometry.is_none_or(|g| m.record.scenario.geometry == g))
    {
        if let Some(l) = m.latency_us {
            let s = &m.record.scenario;
            by.entry(s.threading.to_string())
                .or_default()
                .entry(s.stream)
                .or_default()
                .push(l);
        }
    }
    let groups = by
        .into_iter()
        .map(|(t, per)| {
            (
                t,
                per.into_iter()
                    .filter_map(|(k, v)| median(&v).map(|m| (k, m)))
                    .collect(),
            )
        })
        .collect();
    Latency { geometry, groups }
}
