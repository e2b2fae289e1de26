//! View models: every figure the pages show, formatted, so templates hold no arithmetic.
//!
//! `run` builds one run's section (its tables from `scenario_rows`, its charts from
//! `run_charts`, its environment), `prose` words its verdict, fixes and rules, `atlas` the rows of
//! a run of several functions, `timing` where a run's time went, and `upgrade` the first page of
//! a report of several runs (what changed, versions side by side). `format` writes every number.
//! Each view type lives beside the function that builds it.

mod atlas;
pub mod catalogue;
mod evidence;
mod format;
mod kernels;
mod prose;
mod run;
mod run_charts;
mod scenario_rows;
pub mod shield;
mod timing;
pub mod trace;
mod upgrade;

use serde::Serialize;

pub use atlas::{AtlasRow, FunctionView};
pub(crate) use evidence::Evidence;
pub use format::{
    built_from, labels, link_compressed, measured_by, named_labels, rendered_by, run_json_name, run_page_name,
};
pub(crate) use format::{class_name, counted, fmt, fmt_p, fmt_sig};
pub(crate) use prose::by_kind;
pub use prose::{FixView, RuleView, VerdictView};
pub use prose::{literal_words, race_sentence, rule_sentence, wrong_sentence};
pub(crate) use run::run_view;
pub use run::{EnvEntry, FailureRow, RunView};
pub use run_charts::ChartView;
pub use scenario_rows::{MemoryRow, ThroughputRow};
pub use timing::{GpuRow, PhaseRow, TimingView};
pub(crate) use upgrade::upgrade;
pub use upgrade::{RuleRow, UpgradeView, VersionRow};

#[derive(Debug, Serialize)]
pub struct Page {
    pub title: String,
    pub generated_by: String,
    /// The runs shown on this page; on the first page of several runs, every run (summary.md
    /// words each), with `upgrade` shown instead of their sections.
    pub runs: Vec<RunView>,
    /// Several runs rendered together: what changed, and a page for each run.
    pub upgrade: Option<UpgradeView>,
    /// A run's own page of a report of several: the link back to the first page.
    pub back: Option<String>,
    /// Several runs of one NPP version and GPU model: one atlas, their rules pooled; the first
    /// page shows the first run with the pooled rules, and lists every run.
    pub pooled: Option<PooledView>,
}

/// The runs one atlas pools.
#[derive(Debug, Clone, Serialize)]
pub struct PooledView {
    pub runs: Vec<PooledRun>,
}

/// One run of a pooled atlas.
#[derive(Debug, Clone, Serialize)]
pub struct PooledRun {
    pub label: String,
    /// The matrix it ran (`atlas`, `atlas-bisect`, …) and its memory scenarios.
    pub what: String,
    pub page: String,
    pub run_json: String,
}
