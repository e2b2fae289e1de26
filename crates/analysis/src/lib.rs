//! Every figure, rule, comparison, finding and threshold that a page, CSV, history row or gate
//! uses, each computed once from run.json's records. Pages, CSVs, the history and the gates look
//! figures up here; none derives one of its own. No GPU, no formatting, no rendering.
//!
//! Data flows one way: [`RunFile`] records → [`figure`] (each per-pass figure's one derivation)
//! → [`memory`] and [`throughput`] (a scenario judged) → [`run`] (a run judged) → [`rules`] (each
//! function's leak rule), [`verdict`] (the verdict and the measured fixes), [`compare`] (the one
//! comparison rule, and the gates), [`selection`] (what each chart draws).
//!
//! [`RunFile`]: nppbench_model::RunFile

#![forbid(unsafe_code)]

pub mod calibration;
pub mod calls;
pub mod catalogue;
pub mod compare;
pub mod design;
pub mod evidence;
pub mod figure;
pub mod functions;
pub mod knowledge;
pub mod memory;
pub mod output;
pub mod predict;
pub mod rules;
pub mod run;
pub mod score;
pub mod selection;
pub mod settle;
pub mod thresholds;
pub mod throughput;
pub mod timing;
pub mod trace;
pub mod verdict;

pub use memory::{MemoryAnalysis, Probe};
pub use nppbench_stats::settle::quiet_from;
pub use nppbench_stats::{Fit, LeakClass, change_points, median, median_interval};
pub use output::OutputClass;
pub use run::RunAnalysis;
pub use throughput::ThroughputAnalysis;
