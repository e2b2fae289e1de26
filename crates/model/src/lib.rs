//! The data nppbench passes between its layers: scenarios, matrices, presets and the run.json schema.
//!
//! This crate knows nothing of the GPU or of rendering. The engine fills these types from
//! measurements; the report reads them back. Everything here is plain serde data.

#![forbid(unsafe_code)]

mod error;
mod matrix;
mod run;
mod scenario;

pub use error::ModelError;
pub use matrix::{Matrix, MatrixSpec, Preset, Settings};
pub use nppbench_catalog::{self as catalog, Primitive};
pub use run::{
    CallTiming, ContextRecord, Correctness, CpuInfo, DeviceSample, DeviceState, Environment, Estimate, FailureKind,
    GpuEnvironment, GpuInfo, GpuProcess, HostInfo, HostLatency, Jobs, KernelRecords, KernelStat, KernelTiming,
    MemoryReading, MemoryRecord, MemoryResult, MemorySeries, MissingLibrary, NppInfo, Outcome, PhaseTime,
    ProbeConnections, READABLE_SCHEMA_VERSIONS, ReferenceResult, RunFile, SCHEMA_VERSION, StreamCounts,
    ThroughputRecord, ThroughputResult, ToolInfo,
};
pub use scenario::{AXES, ContextFill, Geometry, MemoryScenario, StreamKind, Threading, ThroughputScenario};
