//! View models: every figure the pages show, formatted, so templates hold no arithmetic.
//!
//! `run` builds one run's section (tables, charts, environment), `prose` words its verdict and
//! fixes, `side_by_side` lays several runs next to each other.

mod prose;
mod run;
mod side_by_side;

use nppbench_model::{Geometry, Outcome, Primitive, RunFile};
use serde::Serialize;

use crate::stats::LeakClass;

pub(crate) use prose::by_kind;
pub(crate) use run::run_view;
pub use run::{ChartView, EnvEntry, FailureRow, FixView, MemoryRow, RunView, ThroughputRow, VerdictView};
pub(crate) use side_by_side::comparison;
pub use side_by_side::{Comparison, ComparisonRow};

#[derive(Debug, Serialize)]
pub struct Page {
    pub title: String,
    pub generated_by: String,
    pub runs: Vec<RunView>,
    /// Present when several runs are rendered together.
    pub comparison: Option<Comparison>,
}

pub(crate) fn fmt(v: f64, digits: usize) -> String {
    format!("{v:.digits$}")
}

pub(crate) fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "—".to_owned(), |v| fmt(v, digits))
}

pub(crate) fn alignment(p: Primitive, g: &Geometry) -> String {
    let w = if g.width_aligned(p) { "aligned" } else { "unaligned" };
    let s = if g.src_stride_aligned() { "aligned" } else { "unaligned" };
    let pad = if g.padded_from.is_some() { ", padded ROI" } else { "" };
    format!("width {w}, stride {s}{pad}")
}

pub(crate) fn status(o: &Outcome) -> String {
    match o {
        Outcome::Ok => "ok".to_owned(),
        Outcome::Failed { .. } => "failed".to_owned(),
        Outcome::StoppedAtBudget { budget_mib } => format!("stopped at {budget_mib} MiB budget"),
        Outcome::NotMeasured { .. } => "not measured".to_owned(),
    }
}

pub(crate) fn class_name(class: Option<LeakClass>) -> &'static str {
    class.map_or("failed", LeakClass::as_str)
}

/// The run.json link of run `index` of `total` rendered together.
pub fn run_json_name(index: usize, run: &RunFile, total: usize) -> String {
    if total == 1 {
        "run.json".to_owned()
    } else {
        format!("run-{}-npp-{}.json", index + 1, run.environment.npp.version)
    }
}
