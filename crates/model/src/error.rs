//! The model's error type: what was wrong with a matrix, a scenario or a run.json, and where.

use std::path::PathBuf;

/// Everything that can be wrong with input the model reads or validates.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{context}: {message}")]
    Invalid { context: String, message: String },
    #[error("cannot parse matrix {path}: {message}")]
    MatrixSyntax { path: PathBuf, message: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: no such file or folder")]
    NoSuchPath { path: PathBuf },
    #[error(
        "{path}: holds no run.json, no run-N-*.json and no runs/N/run.json, nor does any folder in it (it holds: {holds}); give a run.json or a report folder"
    )]
    NoRuns { path: PathBuf, holds: String },
    #[error("{path} is not valid JSON ({message}); it may be truncated: re-run `nppbench run` to write it again")]
    RunJsonSyntax { path: PathBuf, message: String },
    #[error("{path} is not an nppbench run.json ({message})")]
    ForeignRunJson { path: PathBuf, message: String },
    /// A file of another kind given where a run is read: it says what the file is and where it
    /// goes instead.
    #[error("{path} is not a run.json: it is {what}")]
    NotARun { path: PathBuf, what: String },
    #[error(
        "{path} was written with run.json schema version {found} (by {writer}); this nppbench reads versions {expected}: render it with the nppbench that wrote it, or re-run the measurement"
    )]
    SchemaVersion {
        path: PathBuf,
        found: u64,
        expected: String,
        writer: String,
    },
}

impl ModelError {
    pub(crate) fn invalid(context: impl Into<String>, message: impl Into<String>) -> Self {
        ModelError::Invalid {
            context: context.into(),
            message: message.into(),
        }
    }
}
