//! The history read back as series: one per scenario, GPU model and runner host, one point per
//! run, oldest first. Several GPUs of one model in one run make one point (their median; the
//! worst class and status), and keep their own figures for the fleet view.

use std::collections::HashMap;

use nppbench_analysis::LeakClass;
use nppbench_model::Status;

use crate::HistoryError;
use crate::db::{Db, StoredRun};
use crate::rows::{Kind, MemoryFigures, ThroughputFigures};

/// What makes a series: the scenario (its axes), the GPU model and the runner host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct SeriesKey {
    pub primitive: String,
    pub geometry: String,
    pub kind: Kind,
    pub stream: String,
    pub context: String,
    pub threading: Option<String>,
    pub gpu_model: String,
    pub host: String,
    pub scenario_id: String,
}

/// One GPU's figures at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuFigures {
    pub gpu_uuid: String,
    pub status: Status,
    pub throughput: Option<ThroughputFigures>,
    pub memory: Option<MemoryFigures>,
}

/// One run's figures in a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Index into [`History::runs`].
    pub run: usize,
    /// The worst status of its GPUs (`ok` when every one was).
    pub status: Status,
    /// Kernel time per call (throughput): the median over this run's GPUs of the model, ns.
    pub kernel_ns: Option<f64>,
    /// The fastest and slowest pass over those GPUs.
    pub kernel_ns_range: Option<(f64, f64)>,
    /// The leak class (memory): the worst of those GPUs'.
    pub class: Option<LeakClass>,
    pub gpus: Vec<GpuFigures>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub key: SeriesKey,
    pub points: Vec<Point>,
}

/// Every run and every series of a history.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Oldest first.
    pub runs: Vec<StoredRun>,
    /// Ordered by primitive, geometry, kind, stream, context, threading, model, host.
    pub series: Vec<Series>,
}

impl History {
    pub fn load(db: &Db) -> Result<History, HistoryError> {
        let runs = db.runs()?;
        let index: HashMap<i64, usize> = runs.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        let mut grouped: HashMap<SeriesKey, Vec<(usize, GpuFigures)>> = HashMap::new();
        db.for_each_result(|stored| {
            let Some(&run) = index.get(&stored.run_id) else {
                return;
            };
            let r = stored.row;
            let key = SeriesKey {
                primitive: r.primitive,
                geometry: r.geometry,
                kind: r.kind,
                stream: r.stream,
                context: r.context,
                threading: r.threading,
                gpu_model: stored.gpu_model,
                host: runs[run].run.host.clone(),
                scenario_id: r.scenario_id,
            };
            grouped.entry(key).or_default().push((
                run,
                GpuFigures {
                    gpu_uuid: r.gpu_uuid,
                    status: r.status,
                    throughput: r.throughput,
                    memory: r.memory,
                },
            ));
        })?;
        let mut series: Vec<Series> = grouped
            .into_iter()
            .map(|(key, mut figures)| {
                figures.sort_by(|a, b| (a.0, &a.1.gpu_uuid).cmp(&(b.0, &b.1.gpu_uuid)));
                let mut points: Vec<Point> = Vec::new();
                for (run, f) in figures {
                    match points.last_mut() {
                        Some(p) if p.run == run => p.gpus.push(f),
                        _ => points.push(Point {
                            run,
                            status: Status::Ok,
                            kernel_ns: None,
                            kernel_ns_range: None,
                            class: None,
                            gpus: vec![f],
                        }),
                    }
                }
                points.iter_mut().for_each(combine);
                Series { key, points }
            })
            .collect();
        series.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(History { runs, series })
    }

    /// The runs a series' points were taken in.
    pub fn run_of(&self, point: &Point) -> &StoredRun {
        &self.runs[point.run]
    }
}

/// A point's figures from its GPUs'.
fn combine(p: &mut Point) {
    p.status = p.gpus.iter().map(|g| g.status).max().unwrap_or(Status::Ok);
    let t: Vec<&ThroughputFigures> = p.gpus.iter().filter_map(|g| g.throughput.as_ref()).collect();
    let times: Vec<f64> = t.iter().map(|t| t.kernel_ns).collect();
    p.kernel_ns = nppbench_analysis::median(&times);
    p.kernel_ns_range = (!t.is_empty()).then(|| {
        (
            t.iter().map(|t| t.kernel_ns_min).fold(f64::INFINITY, f64::min),
            t.iter().map(|t| t.kernel_ns_max).fold(f64::NEG_INFINITY, f64::max),
        )
    });
    // LeakClass orders leak first: the least is the worst.
    p.class = p.gpus.iter().filter_map(|g| g.memory.as_ref()?.class).min();
}
