//! What `nppbench trace` and the interposer exchange. The names the CLI also uses (the
//! environment variables, the file names) are defined once, on [`TraceFile`] in
//! `nppbench-model`, so that naming them never links the interposer; the rest (how often it
//! samples and writes, what it keeps) is the interposer's own.

use nppbench_model::TraceFile;

/// The path trace.json is written to (by the process `nppbench trace` started, and by what it
/// `exec`s). Without it the interposer records nothing.
pub const OUT: &str = TraceFile::OUT_VAR;

/// The pid of the process that started the traced program (see [`TraceFile::PARENT_VAR`]).
pub const PARENT: &str = TraceFile::PARENT_VAR;

/// Seconds between rewrites of the file, and between memory samples (one more is taken at the
/// process's first NPP call and one at exit, so a program of a second has a baseline and an end).
pub const FLUSH_INTERVAL_S: f64 = 0.5;
pub const SAMPLE_INTERVAL_S: f64 = 0.1;

/// At most this many destroyed streams are listed; older ones are counted in
/// `capture.streams_not_listed` (and still in their call sites' counts).
pub const DESTROYED_STREAMS_LISTED: usize = 10_000;

/// At most this many memory samples are kept; past it every other one is dropped and the
/// sampling interval doubles.
pub const MEMORY_SAMPLES_KEPT: usize = 4_096;

/// A test hook: `NPPBENCH_TRACE_TEST_NVML_DELAY_MS=N` makes loading NVML take N ms longer, as a
/// slow NVML does (the signal and flush tests).
pub const TEST_NVML_DELAY_MS: &str = "NPPBENCH_TRACE_TEST_NVML_DELAY_MS";

/// How calls that can race ask the driver whether their stream has work queued
/// (`recorder/pending.rs`): `0` never (the trace then has no `calls_with_work_pending`), `all`
/// every call (the recording's cost then includes the question's on every such call), unset or
/// anything else within a budget: while the recording of the calls that can race, question
/// included, averages under 0.6 µs a call (`recorder/pending.rs`).
pub const ASK_PENDING: &str = "NPPBENCH_TRACE_ASK_PENDING";

/// A test hook: `NPPBENCH_TRACE_TEST_STREAM_EVENTS=1` lets a program tell the interposer of
/// streams created and destroyed through [`TEST_STREAM_EVENT_SYMBOL`], as CUPTI's callbacks do,
/// on a machine without CUPTI (the signal-during-a-callback test). Without it that function does
/// nothing.
pub const TEST_STREAM_EVENTS: &str = "NPPBENCH_TRACE_TEST_STREAM_EVENTS";

/// The test hook's exported function: `void (uint64_t handle, int created)`.
pub const TEST_STREAM_EVENT_SYMBOL: &str = "nppbench_trace_test_stream_event";
