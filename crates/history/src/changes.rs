//! What the history says, as typed values with their evidence (worded by the report's
//! `history_view`): per series, the environment change at each point, the latest run judged
//! against the one before by compare's rule ([`crate::verdicts`]), the change points of kernel
//! time (PELT, `nppbench_analysis::change_points`: the trend, each with the verdict of its run
//! against the one before) and the environment change each lines up with, the leak class changes;
//! across runners of one GPU model, the ones whose latest figures disagree; and the `--fail-on`
//! gates.

mod fleet;
mod meaning;

pub use meaning::FigureMeaning;

use nppbench_analysis::LeakClass;
use nppbench_analysis::change_points::{self, ChangePoint};
use nppbench_analysis::compare::{Change, Thresholds};

use crate::rows::{Kind, RunRow};
use crate::series::{History, Series};
use crate::verdicts::{Step, judge_points, latest_pair};

/// The thresholds the history judges by.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Settings {
    /// Change points and fleet disagreements smaller than this, in percent of the level, are
    /// noise (the report's `thresholds::NOISE_PCT` in the CLI).
    pub noise_pct: f64,
    /// The finest shift a series of per-run medians can show, in percent of its level: the
    /// noise floor handed to the change-point method, so that a series that happens to repeat
    /// one value is not taken for a noiseless one.
    pub resolution_pct: f64,
    /// How one run is judged against another (slower, faster, the same, unsettled, not judged):
    /// compare's thresholds, `nppbench compare`'s defaults unless set.
    pub thresholds: Thresholds,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            noise_pct: 5.0,
            resolution_pct: 0.5,
            thresholds: Thresholds::default(),
        }
    }
}

/// A part of the environment that can change between two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvField {
    Npp,
    Driver,
    /// `cuDriverGetVersion`, as its integer (13000).
    CudaDriverApi,
    /// The GPUs of the series' model (UUIDs): the runner's card was swapped.
    Gpu,
    /// nppbench's commit.
    Nppbench,
    Matrix,
}

/// One part of the environment, before and after.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EnvChange {
    pub field: EnvField,
    pub from: String,
    pub to: String,
}

/// What changed from `prev` to `next`, for a series of `gpu_model` (only its GPUs count).
pub fn env_changes(prev: &RunRow, next: &RunRow, gpu_model: &str) -> Vec<EnvChange> {
    let gpus = |r: &RunRow| -> String {
        r.gpu_uuids
            .iter()
            .filter(|u| r.model_of(u) == gpu_model)
            .cloned()
            .collect::<Vec<_>>()
            .join(",")
    };
    let unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".to_owned());
    [
        (EnvField::Npp, prev.npp_version.clone(), next.npp_version.clone()),
        (
            EnvField::Driver,
            unknown(&prev.driver_version),
            unknown(&next.driver_version),
        ),
        (
            EnvField::CudaDriverApi,
            prev.cuda_driver_api_version.to_string(),
            next.cuda_driver_api_version.to_string(),
        ),
        (EnvField::Gpu, gpus(prev), gpus(next)),
        (EnvField::Nppbench, prev.tool_commit.clone(), next.tool_commit.clone()),
        (EnvField::Matrix, prev.matrix_name.clone(), next.matrix_name.clone()),
    ]
    .into_iter()
    .filter(|(_, a, b)| a != b)
    .map(|(field, from, to)| EnvChange { field, from, to })
    .collect()
}

/// Which way a change point moves the level of kernel time (the trend; whether the run is
/// slower or faster than the run before is its [`Shift::judged`], compare's verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// A higher level of kernel time.
    Slower,
    Faster,
}

/// The environment change a change point lines up with: at its point (`offset` 0), or at the
/// point before or after (−1, +1).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Alignment {
    pub point: usize,
    pub offset: i32,
    pub changes: Vec<EnvChange>,
}

/// A change point of a series' kernel time beyond the noise.
#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    /// The first point of the new level.
    pub point: usize,
    /// Its run (index into `History::runs`).
    pub run: usize,
    pub change: ChangePoint,
    pub direction: Direction,
    /// The change of kernel time, percent of the level before.
    pub shift_pct: f64,
    pub aligned: Option<Alignment>,
    /// Whether it is at the series' latest point: new since the previous run.
    pub latest: bool,
    /// Its run against the run of the point before, by compare's rule (one per GPU pair).
    pub judged: Vec<Step>,
}

/// A memory scenario whose leak class changed between two consecutive points.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClassChange {
    pub point: usize,
    pub run: usize,
    pub from: LeakClass,
    pub to: LeakClass,
    /// The environment changes at that point.
    pub changes: Vec<EnvChange>,
    pub latest: bool,
}

/// The findings of one series.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesFindings {
    /// Index into `History::series`.
    pub series: usize,
    /// Per point from the second on where anything changed: what changed since the point before.
    pub env: Vec<(usize, Vec<EnvChange>)>,
    pub shifts: Vec<Shift>,
    pub class_changes: Vec<ClassChange>,
    /// The noise σ the change points were judged with, ns (throughput series of 3 points or more).
    pub noise_ns: Option<f64>,
    /// The latest point against the point before it, by compare's rule (throughput; one per GPU
    /// pair; empty where the latest point has no figure or none came before).
    pub latest: Vec<Step>,
    /// The points at which the kernel time changed meaning (see [`FigureMeaning`]): no change
    /// point is drawn across one.
    pub figure_changes: Vec<usize>,
}

impl SeriesFindings {
    /// Whether the history page draws the series' group: a change point, a leak class that
    /// changed, a latest run slower or faster than the one before, or a latest step not judged
    /// though both sides have passes (why the gate could not judge it). An environment change
    /// alone is not: nearly every series of a fleet crosses one at the same level, and drawing
    /// each made the page 37.9 MB.
    pub fn says_something(&self) -> bool {
        !self.shifts.is_empty()
            || !self.class_changes.is_empty()
            || self.latest.iter().any(|s| {
                matches!(s.verdict(), Change::Slower | Change::Faster)
                    || s.judged.as_ref().is_some_and(|j| j.not_judged.is_some())
            })
    }

    /// The environment changes at `point` (none for the first).
    pub fn env_at(&self, point: usize) -> &[EnvChange] {
        self.env
            .iter()
            .find(|(p, _)| *p == point)
            .map_or(&[], |(_, c)| c.as_slice())
    }
}

/// A runner's latest figure for one scenario.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunnerFigure {
    pub host: String,
    pub gpu_uuid: String,
    /// The run it comes from (index into `History::runs`).
    pub run: usize,
    pub kernel_ns: f64,
    pub kernel_ns_range: (f64, f64),
    pub passes: u32,
}

/// Runners of one GPU model, on the same NPP and driver, whose latest kernel times for a
/// scenario differ beyond the noise: the fastest and slowest pass intervals do not overlap and
/// the medians differ by at least `noise_pct`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Disagreement {
    /// Index into `History::series` of one of the scenario's series (for its axes).
    pub series: usize,
    pub gpu_model: String,
    pub npp_version: String,
    pub driver_version: Option<String>,
    /// Runners compared.
    pub runners: usize,
    pub fastest: RunnerFigure,
    pub slowest: RunnerFigure,
    /// How much longer the slowest runner's kernel time is, percent of the fastest's.
    pub pct: f64,
}

/// Everything the history found.
#[derive(Debug, Clone, PartialEq)]
pub struct Findings {
    /// The thresholds these were judged by.
    pub settings: Settings,
    /// One per series, in `History::series` order.
    pub series: Vec<SeriesFindings>,
    /// Largest disagreement first.
    pub fleet: Vec<Disagreement>,
}

/// What changed at the latest point of each series, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LatestChanges {
    /// compare's verdicts of each throughput series' latest run against the run before (one per
    /// GPU pair): slower, faster, the same, unsettled.
    pub slower: usize,
    pub faster: usize,
    pub same: usize,
    pub unsettled: usize,
    /// Not judged: fewer than `MIN_PASSES` passes a side, or a result added before the history
    /// kept per-pass figures (those counted again in `without_passes`).
    pub unjudged: usize,
    pub without_passes: usize,
    /// Leak class changes, and those of them to `leak`.
    pub class_changes: usize,
    pub new_leaks: usize,
}

impl LatestChanges {
    pub fn total(&self) -> usize {
        self.slower + self.faster + self.class_changes
    }

    /// Something new goes the wrong way (a slower kernel, a new leak), gated or not.
    pub fn alarm(&self) -> bool {
        self.slower + self.new_leaks > 0
    }
}

impl Findings {
    /// Change points at the latest point of their series, with the series' index.
    pub fn new_shifts(&self) -> impl Iterator<Item = (usize, &Shift)> {
        self.series
            .iter()
            .flat_map(|f| f.shifts.iter().filter(|s| s.latest).map(move |s| (f.series, s)))
    }

    /// Each series' latest run judged against the run before, with the series' index.
    pub fn new_steps(&self) -> impl Iterator<Item = (usize, &Step)> {
        self.series
            .iter()
            .flat_map(|f| f.latest.iter().map(move |s| (f.series, s)))
    }

    /// What is new in the latest runs: compare's verdicts against the run before, and leak class
    /// changes.
    pub fn latest_changes(&self) -> LatestChanges {
        let count = |v: Change| self.new_steps().filter(|(_, s)| s.verdict() == v).count();
        let class_changes: Vec<LeakClass> = self.new_class_changes().map(|(_, c)| c.to).collect();
        LatestChanges {
            slower: count(Change::Slower),
            faster: count(Change::Faster),
            same: count(Change::Same),
            unsettled: count(Change::Unsettled),
            unjudged: count(Change::NotEnoughPasses),
            without_passes: self.new_steps().filter(|(_, s)| s.judged.is_none()).count(),
            new_leaks: class_changes.iter().filter(|c| **c == LeakClass::Leak).count(),
            class_changes: class_changes.len(),
        }
    }

    /// Leak class changes at the latest point of their series, with the series' index.
    pub fn new_class_changes(&self) -> impl Iterator<Item = (usize, &ClassChange)> {
        self.series
            .iter()
            .flat_map(|f| f.class_changes.iter().filter(|c| c.latest).map(move |c| (f.series, c)))
    }
}

/// Judges every series of `history`.
pub fn analyse(history: &History, settings: &Settings) -> Findings {
    let series = history
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| analyse_series(history, i, s, settings))
        .collect();
    Findings {
        settings: *settings,
        series,
        fleet: fleet::fleet(history, settings),
    }
}

fn analyse_series(history: &History, index: usize, s: &Series, settings: &Settings) -> SeriesFindings {
    let env: Vec<(usize, Vec<EnvChange>)> = s
        .points
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            let (a, b) = (&history.runs[w[0].run].run, &history.runs[w[1].run].run);
            (i + 1, env_changes(a, b, &s.key.gpu_model))
        })
        .filter(|(_, c)| !c.is_empty())
        .collect();
    let mut out = SeriesFindings {
        series: index,
        env,
        shifts: Vec::new(),
        class_changes: Vec::new(),
        noise_ns: None,
        latest: Vec::new(),
        figure_changes: Vec::new(),
    };
    let last = s.points.len().saturating_sub(1);
    let t = settings.thresholds;
    match s.key.kind {
        Kind::Throughput => {
            if let Some((before, point)) = latest_pair(s) {
                out.latest = judge_points(history, s, before, point, t);
            }
            // The points with a figure, and where each sits in the series.
            let (at, values): (Vec<usize>, Vec<f64>) = s
                .points
                .iter()
                .enumerate()
                .filter_map(|(i, p)| p.kernel_ns.map(|v| (i, v)))
                .unzip();
            let (stretches, figure_changes) = meaning::same_meaning(&s.points, &at);
            out.figure_changes = figure_changes;
            for stretch in stretches {
                shifts_within(history, s, settings, &at[stretch.clone()], &values[stretch], &mut out);
            }
        }
        Kind::Memory => {
            let mut prev: Option<LeakClass> = None;
            for (i, p) in s.points.iter().enumerate() {
                let Some(class) = p.class else { continue };
                if let Some(from) = prev.filter(|c| *c != class) {
                    out.class_changes.push(ClassChange {
                        point: i,
                        run: p.run,
                        from,
                        to: class,
                        changes: out.env_at(i).to_vec(),
                        latest: i == last,
                    });
                }
                prev = Some(class);
            }
        }
    }
    out
}

/// The change points of one stretch of a throughput series whose figures mean the same: `at`
/// the stretch's points (indices into the series), `values` their kernel times. The noise is the
/// latest stretch's that was segmented.
fn shifts_within(
    history: &History,
    s: &Series,
    settings: &Settings,
    at: &[usize],
    values: &[f64],
    out: &mut SeriesFindings,
) {
    let last = s.points.len().saturating_sub(1);
    let t = settings.thresholds;
    if values.len() < change_points::MIN_LEN {
        return;
    }
    let level = nppbench_analysis::median(values).unwrap_or(0.0).abs();
    let seg = change_points::detect(values, level * settings.resolution_pct / 100.0);
    out.noise_ns = Some(seg.sigma);
    for c in seg.change_points {
        let Some(shift_pct) = c.shift_pct() else {
            continue;
        };
        if shift_pct.abs() < settings.noise_pct {
            continue;
        }
        let point = at[c.index];
        let judged = match c.index.checked_sub(1) {
            Some(b) => judge_points(history, s, at[b], point, t),
            None => Vec::new(),
        };
        let shift = Shift {
            point,
            run: s.points[point].run,
            change: c,
            direction: if shift_pct > 0.0 {
                Direction::Slower
            } else {
                Direction::Faster
            },
            shift_pct,
            aligned: align(out, point, s.points.len()),
            latest: point == last,
            judged,
        };
        out.shifts.push(shift);
    }
}

/// The environment change nearest a change point at `point`: at it, else the point before, else
/// the point after.
fn align(f: &SeriesFindings, point: usize, len: usize) -> Option<Alignment> {
    let candidates = [(point as i64, 0), (point as i64 - 1, -1), (point as i64 + 1, 1)];
    candidates
        .into_iter()
        .filter(|(p, _)| *p >= 1 && (*p as usize) < len)
        .find_map(|(p, offset)| {
            let changes = f.env_at(p as usize);
            (!changes.is_empty()).then(|| Alignment {
                point: p as usize,
                offset,
                changes: changes.to_vec(),
            })
        })
}

#[cfg(test)]
mod meaning_tests;
#[cfg(test)]
mod tests;
