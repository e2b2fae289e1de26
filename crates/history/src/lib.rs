//! Every run a fleet has made, kept in an embedded SQLite database, and read back as series over
//! time with their change points, the environment changes they line up with, and the runners of
//! one GPU model that disagree.
//!
//! Data flows one way: run.json ([`nppbench_model::RunFile`]) → [`rows`] (one [`RunRow`] and
//! its [`ScenarioRow`]s, every figure from `nppbench_analysis`) → [`ingest`] (files checked, then
//! added) → [`db`] (SQLite, one transaction per run) → [`series`] (a series per
//! scenario, GPU model and runner) → [`changes`] (each series' latest run against the one before
//! by compare's rule in [`verdicts`], change points, environment changes, leak class changes,
//! fleet disagreements, gates) → the report crate's `history_view` (words, charts, page).
//! This crate never touches the GPU and never renders.

#![forbid(unsafe_code)]

pub mod changes;
pub mod db;
pub mod export;
pub mod gates;
#[cfg(test)]
mod generated;
pub mod ingest;
pub mod rows;
pub mod series;
pub mod verdicts;

use std::path::PathBuf;

pub use changes::{Findings, Settings};
pub use db::{Added, Db};
pub use gates::Gate;
pub use rows::{Kind, MemoryFigures, RunRow, ScenarioRow, ThroughputFigures};
pub use series::History;

/// Everything that can go wrong with a history: its database or the runs given to it.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A file that is not an nppbench run (or not one this nppbench reads): the model's message
    /// names the file and says why.
    #[error("{0}; nothing was added")]
    Run(#[from] nppbench_model::ModelError),
    #[error(
        "{path} was made with test hooks ({hooks}): it measures nppbench's calibration, not NPP; nothing was added: pass --allow-test-hooks to add it anyway"
    )]
    TestHooks { path: PathBuf, hooks: String },
    #[error("no run in {path} can be added ({skipped}); nothing was added")]
    NoRunIn { path: PathBuf, skipped: String },
    #[error("no history at {path}: add runs first with `nppbench history add RUN.json --db {path}`")]
    Missing { path: PathBuf },
    #[error("the folder {path} does not exist: create it, or give a --db file in a folder that does")]
    NoFolder { path: PathBuf },
    #[error("{path} is not an nppbench history database ({message}): give another --db file")]
    NotAHistory { path: PathBuf, message: String },
    #[error(
        "{path} has history schema version {found}, and this nppbench knows versions up to {known}: use the nppbench that wrote it, or a newer one"
    )]
    TooNew { path: PathBuf, found: u32, known: u32 },
    #[error("database {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing CSV: {0}")]
    Csv(#[from] csv::Error),
}

impl HistoryError {
    /// Whether the input given was wrong (a foreign or refused file, a missing database), as
    /// opposed to a failure while working on good input: front ends exit with a usage status.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            HistoryError::Run(_)
                | HistoryError::TestHooks { .. }
                | HistoryError::NoRunIn { .. }
                | HistoryError::Missing { .. }
                | HistoryError::NoFolder { .. }
                | HistoryError::NotAHistory { .. }
                | HistoryError::TooNew { .. }
        )
    }
}
