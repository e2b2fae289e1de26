//! The data nppbench passes between its layers: scenarios, matrices, presets, outcomes and the
//! run.json schema, and where run files are found.
//!
//! This crate knows nothing of the GPU or of rendering. The engine fills these types from
//! measurements; the report reads them back. Everything here is plain serde data.

#![forbid(unsafe_code)]

mod error;
mod find;
mod matrix;
mod outcome;
mod preset;
mod run;
mod scenario;
mod settings;
mod shard;
mod shield;
mod skip;
mod trace;

pub use error::ModelError;
pub use find::{find_run_files, is_json_name};
pub use matrix::{Matrix, MatrixSpec, draws};
pub use nppbench_catalog::{self as catalog, Primitive};
pub use outcome::{FailureKind, Outcome, Status};
pub use preset::Preset;
pub use run::{
    BatchPlace, Batching, CallLayout, CallStreams, CallTiming, ContextRecord, Correctness, CpuInfo, DeviceSample,
    DeviceState, Environment, Estimate, GpuEnvironment, GpuInfo, GpuProcess, HostInfo, HostLatency, Jobs,
    KernelRecords, KernelStat, KernelTiming, MemoryReading, MemoryReadings, MemoryRecord, MemoryResult, MemorySeries,
    MissingLibrary, NppInfo, OrderingRounds, PhaseTime, ProbeConnections, READABLE_SCHEMA_VERSIONS, RaceRounds,
    ReferenceResult, RunFile, SCHEMA_VERSION, StreamCounts, ThroughputRecord, ThroughputResult, ToolInfo, TwinCheck,
    WrongOutput, WrongSample, gunzip, is_gzip, merge_shards, read_text,
};
pub use scenario::{AXES, ContextFill, Geometry, MemoryScenario, StreamKind, Threading, ThroughputScenario};
pub use settings::{RepeatAuto, Settings};
pub use shard::Shard;
pub use shield::{
    Condition, Hazard, HazardRule, SHIELD_SCHEMA_VERSION, ShieldAction, ShieldCost, ShieldFunction, ShieldKnowledge,
    ShieldPlan, ShieldReport, ShieldSite, ShieldTest, ShieldTotals,
};
pub use skip::say_skipped;
pub use trace::{
    CallSite, Capture, MemorySample, Overhead, StatusCount, TRACE_SCHEMA_VERSION, TraceDevice, TraceEnd, TraceFile,
    TraceStreamKind, TraceThread, TracedStream,
};
