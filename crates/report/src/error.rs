//! What can go wrong while rendering: a chart, a template, a CSV, a file.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("nothing to render: give at least one run.json")]
    NoRuns,
    #[error("drawing a chart: {0}")]
    Chart(String),
    #[error("rendering {template}")]
    Template {
        template: &'static str,
        #[source]
        source: tera::Error,
    },
    #[error("writing a CSV")]
    Csv(#[from] csv::Error),
    #[error("writing {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
