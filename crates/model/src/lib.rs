//! The data nppbench passes between its layers: scenarios, matrices, presets and the run.json schema.
//!
//! This crate knows nothing of the GPU or of rendering. The engine fills these types from
//! measurements; the report reads them back. Everything here is plain serde data.

#![forbid(unsafe_code)]

mod error;
mod matrix;
mod primitive;
mod run;
mod scenario;

pub use error::ModelError;
pub use matrix::{Matrix, MatrixSpec, Preset, Settings};
pub use primitive::Primitive;
pub use run::{
    Correctness, CpuInfo, Environment, Estimate, FailureKind, GpuInfo, HostInfo, KernelRecords, KernelTiming,
    MemoryReading, MemoryRecord, MemoryResult, MemorySeries, NppInfo, Outcome, ReferenceResult, RunFile,
    SCHEMA_VERSION, StreamCounts, ThroughputRecord, ThroughputResult, ToolInfo,
};
pub use scenario::{Geometry, MemoryScenario, StreamKind, Threading, ThroughputScenario};
