//! trace.json: what `nppbench trace` recorded inside someone else's program — its NPP calls
//! grouped by call site, the CUDA streams created and never destroyed, the process's device
//! memory over time (or, where NVML does not list the process, its devices' as a whole:
//! [`Capture::memory_device_wide`]) and what recording cost (a thread's first call apart:
//! [`Capture::first_call_overhead`]).
//!
//! Fields added after version 1 are `#[serde(default)]` on [`Capture`], so earlier files still
//! read (and struct literals elsewhere need no change).
//!
//! The interposer (`nppbench-trace`) writes this file from the traced process, again and again
//! while it runs and once more at exit; `nppbench trace` then records how the program ended. A
//! file whose `end` is [`TraceEnd::Running`] was cut off: it holds what was flushed before.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The trace.json schema this build writes.
pub const TRACE_SCHEMA_VERSION: u32 = 1;

/// A whole trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceFile {
    pub schema_version: u32,
    /// The interposer's version (`CARGO_PKG_VERSION`).
    pub tool_version: String,
    /// The traced program and its arguments, as started.
    pub program: Vec<String>,
    pub pid: u32,
    /// When the interposer started in the process (RFC 3339, UTC).
    pub started_at: String,
    /// Seconds from that start to the last flush.
    pub wall_s: f64,
    /// How the recording ended; `Running` in every periodic flush.
    pub end: TraceEnd,
    /// What could be recorded, and why not where something could not.
    pub capture: Capture,
    /// The NPP shared libraries seen in the process (paths), and `nppGetLibVersion` if it answered.
    pub npp_libraries: Vec<String>,
    pub npp_version: Option<String>,
    /// The devices the process saw (NVML): ordinal, name, total memory.
    pub devices: Vec<TraceDevice>,
    /// One entry per distinct call site: function, geometry, flags, stream.
    pub call_sites: Vec<CallSite>,
    /// Every host thread that called NPP or created a stream.
    pub threads: Vec<TraceThread>,
    /// Every CUDA stream created while tracing, with where it came from and whether it was
    /// destroyed.
    pub streams: Vec<TracedStream>,
    /// The process's device memory and live threads, sampled over time.
    pub memory: Vec<MemorySample>,
    pub overhead: Overhead,
}

/// How `nppbench trace` and the interposer it preloads agree on the file: names only, here so
/// that the CLI and the tests name them without linking the interposer (whose exported `nppi…`
/// symbols would collide with the stand-in NPP's in a test binary).
impl TraceFile {
    /// The trace's file name in `--out`.
    pub const FILE_NAME: &'static str = "trace.json";
    /// The variable holding the path the traced process writes the trace to; without it the
    /// interposer records nothing.
    pub const OUT_VAR: &'static str = "NPPBENCH_TRACE_OUT";
    /// The variable holding the pid of the process that started the traced program: a process
    /// whose parent is another (one the traced program started) writes
    /// [`TraceFile::descendant_file_name`] beside the trace instead.
    pub const PARENT_VAR: &'static str = "NPPBENCH_TRACE_PARENT";
    /// The variable naming the interposer where it is not beside the `nppbench` executable.
    pub const LIB_VAR: &'static str = "NPPBENCH_TRACE_LIB";
    /// The interposer's file name, as `cargo build -p nppbench-trace` writes it.
    pub const LIB_FILE_NAME: &'static str = "libnppbench_trace.so";
    /// The file-name prefix of a descendant process's trace.
    pub const DESCENDANT_PREFIX: &'static str = "trace-";

    /// `trace-<pid>.json`: the trace of a process the traced program started.
    pub fn descendant_file_name(pid: u32) -> String {
        format!("{}{pid}.json", Self::DESCENDANT_PREFIX)
    }

    /// A trace that recorded nothing, saying `why` for its calls, streams and memory alike.
    pub fn empty(
        program: Vec<String>,
        pid: u32,
        started_at: String,
        wall_s: f64,
        end: TraceEnd,
        why: &str,
    ) -> TraceFile {
        TraceFile {
            schema_version: TRACE_SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            program,
            pid,
            started_at,
            wall_s,
            end,
            capture: Capture {
                calls_missing: Some(why.into()),
                streams_missing: Some(why.into()),
                memory_missing: Some(why.into()),
                ..Capture::default()
            },
            npp_libraries: Vec::new(),
            npp_version: None,
            devices: Vec::new(),
            call_sites: Vec::new(),
            threads: Vec::new(),
            streams: Vec::new(),
            memory: Vec::new(),
            overhead: Default::default(),
        }
    }
}

/// One device of the machine the program ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceDevice {
    pub ordinal: u32,
    pub name: String,
    pub memory_total_bytes: u64,
}

/// How the traced program ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceEnd {
    /// Flushed while the program ran: a later flush or the exit path did not happen (the program
    /// was killed, crashed, or is still running). The file is partial.
    Running,
    /// The interposer's exit path wrote the file; `nppbench trace` adds the exit code.
    Exited { code: Option<i32> },
    /// The program was ended by a signal (SIGTERM, SIGINT, SIGSEGV, …); the file holds what was
    /// flushed before it.
    Signal { signal: i32, name: String },
}

impl TraceEnd {
    /// Whether the file may lack the last moments of the program.
    pub fn is_partial(&self) -> bool {
        !matches!(self, TraceEnd::Exited { .. })
    }
}

/// What the interposer could record in this process. `None` where it could, else why not.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Capture {
    /// Why calls are missing: NPP linked statically, loaded with dlopen+dlsym (lookups through a
    /// handle bypass `LD_PRELOAD`), or no catalogued function was called.
    pub calls_missing: Option<String>,
    /// Why streams could not be counted (libcupti not found, another CUPTI client).
    pub streams_missing: Option<String>,
    /// Why device memory could not be sampled: no NVML, no sample taken, or NVML listed no
    /// process with the traced pid and could not say the devices' used memory either.
    pub memory_missing: Option<String>,
    /// Where set, `memory`'s `device_bytes` are device-wide: the used memory (NVML's memory
    /// info) of these devices (NVML indices, as `devices`' ordinals: those the calls' contexts
    /// named, else all), every process on them, the traced one included. The interposer falls
    /// back to it where NVML never listed the traced pid among the devices' processes (in a
    /// container NVML lists the host's pids). Unset: the process's own memory, as NVML lists it
    /// per process (and in traces written before it was recorded).
    #[serde(default)]
    pub memory_device_wide: Option<Vec<u32>>,
    /// The number of NPP symbols the interposer defines (the catalogue's `_Ctx` functions).
    pub functions_interposed: u32,
    /// Destroyed streams left out of `streams` to bound the file (the oldest, past the
    /// interposer's limit); they still count in their call sites' `streams_created` and
    /// `streams_destroyed`. 0 where every stream is listed.
    #[serde(default)]
    pub streams_not_listed: u64,
    /// Seconds between flushes of the file and between memory samples.
    pub flush_interval_s: f64,
    pub sample_interval_s: f64,
    /// The part of `overhead` spent on each thread's first call, where a thread pays for its
    /// registration: `calls` is the number of threads that called. All zero in traces written
    /// before it was recorded.
    #[serde(default)]
    pub first_call_overhead: Overhead,
    /// The recording time of the process's first call (its first thread's first call, which
    /// pays for what the process does once), and the most any one call took, ns. Absent in
    /// traces written before they were kept, and where no call was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_first_call_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costliest_call_ns: Option<u64>,
    /// Calls on which the interposer asked the driver for the stream's flags (its first call
    /// with a handle no stream creation had told it of); the others read them from its cache.
    /// Absent in traces written before it was counted.
    #[serde(default)]
    pub flags_asked: Option<u64>,
    /// The CUPTI callbacks the interposer received (stream creation and destruction, and the
    /// stream-creating API calls) and the time spent in them: recording paid outside NPP's
    /// calls, on the thread that made the CUDA call (`calls` counts callbacks). Absent in traces
    /// written before it was measured.
    #[serde(default)]
    pub callback_overhead: Option<Overhead>,
    /// Each distinct run of frames in NPP's libraries on a stack that created a stream outside
    /// a catalogued call, and how many streams it created: what the attribution by stack found.
    /// The run is written innermost first, each frame as `dladdr` names it, joined by ` ← `:
    /// `libnppc.so.13: +0x1a2b30 ← libnppidei.so.13: nppiConvert_8u32f_AC4R_Ctx+0x4f`; a frame no
    /// exported symbol holds (NPP's internal code, where the nearest exported symbol would name
    /// another function) has its offset in the library only. Empty where no such stack named NPP.
    #[serde(default)]
    pub npp_stacks: BTreeMap<String, u64>,
}

/// The stream a call was made on, from its context's `hStream`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceStreamKind {
    /// The NULL handle.
    LegacyDefault,
    /// `cudaStreamPerThread` (handle 2).
    PerThreadDefault,
    /// `cudaStreamLegacy` (handle 1).
    LegacyHandle,
    /// A stream the program created.
    Created,
}

/// All calls with one function, geometry, flags and stream kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallSite {
    /// The NPP symbol, e.g. `nppiConvert_8u32f_C1R_Ctx`.
    pub function: String,
    /// The ROI (the destination's for Set), pixels.
    pub width: i32,
    pub height: i32,
    /// Line steps in bytes; `None` where the function takes none (a Set has no source).
    pub src_stride: Option<i32>,
    pub dst_stride: Option<i32>,
    /// `nStreamFlags` as the context declares it.
    pub declared_flags: u32,
    pub stream: TraceStreamKind,
    /// The stream's real flags (`cuStreamGetFlags`); `None` where the driver could not say.
    pub real_flags: Option<u32>,
    /// `nCudaDeviceId` of the context.
    pub device: i32,
    pub calls: u64,
    /// Distinct host threads that made these calls.
    pub threads: u32,
    /// Threads whose first NPP call in the process was one of these.
    pub first_call_threads: u32,
    /// Returned statuses and how often (`0` is `NPP_SUCCESS`).
    pub statuses: Vec<StatusCount>,
    /// Streams created during these calls, and how many of those were destroyed by the end.
    pub streams_created: u64,
    pub streams_destroyed: u64,
    /// Seconds since the start of the first and last call.
    pub first_s: f64,
    pub last_s: f64,
    /// Time inside the real function, summed over the calls, ns (host clock, call to return).
    pub time_in_npp_ns: u64,
    /// Of these calls, those that could race (a context declaring a blocking stream, a stream
    /// other than the legacy default) and whose stream the driver was asked about
    /// (`cuStreamQuery`, before NPP's call); and of those, the calls whose stream still had work
    /// queued: work NPP's own stream does not wait for. 0 in traces made before they were
    /// recorded.
    #[serde(default)]
    pub calls_pending_asked: u64,
    #[serde(default)]
    pub calls_with_work_pending: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCount {
    pub status: i32,
    pub calls: u64,
}

/// One host thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceThread {
    /// Kernel thread id.
    pub tid: i64,
    /// Seconds since the start of its first and last NPP call (or stream event).
    pub first_s: f64,
    pub last_s: f64,
    pub calls: u64,
    /// Whether the thread had exited by the last flush, where that is known.
    pub exited: Option<bool>,
}

/// One CUDA stream created while tracing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracedStream {
    /// The handle, to pair creation and destruction.
    pub handle: u64,
    /// The thread that created it.
    pub tid: i64,
    pub created_s: f64,
    pub destroyed_s: Option<f64>,
    /// The call site (index into `call_sites`) during whose call it was created.
    pub call_site: Option<usize>,
    /// Created outside a catalogued call: the NPP function the creating stack names (by `dladdr`
    /// into `libnpp*`), and the library it is in; `None` where no frame is in NPP.
    pub attributed_function: Option<String>,
    pub attributed_library: Option<String>,
}

/// One sample of the process.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MemorySample {
    pub t_s: f64,
    /// The process's device memory, as NVML lists it, summed over devices; or, where
    /// [`Capture::memory_device_wide`] is set, the used memory of those devices (every process
    /// on them). `None` where NVML did not say.
    pub device_bytes: Option<u64>,
    /// Live threads of the process (`/proc/self/status`).
    pub live_threads: u32,
    /// Streams created and not destroyed so far.
    pub live_streams: u64,
}

/// What recording cost on the caller's thread.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Overhead {
    pub calls: u64,
    /// Time spent recording (outside the real function), summed, ns; measured with the same
    /// monotonic clock the call times use.
    pub recording_ns: u64,
}

impl Overhead {
    pub fn per_call_ns(&self) -> Option<f64> {
        (self.calls > 0).then(|| self.recording_ns as f64 / self.calls as f64)
    }

    /// The calls and time of `self` less `part` (a subset of them).
    pub fn less(&self, part: &Overhead) -> Overhead {
        Overhead {
            calls: self.calls.saturating_sub(part.calls),
            recording_ns: self.recording_ns.saturating_sub(part.recording_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Overhead;

    /// Figures made up for the test: nanoseconds a call of all the calls and of the rest after
    /// a part; none of no calls.
    #[test]
    fn the_recording_time_a_call_is_split_into_a_part_and_the_rest() {
        let all = Overhead {
            calls: 10,
            recording_ns: 5_000,
        };
        let first = Overhead {
            calls: 2,
            recording_ns: 3_000,
        };
        assert_eq!(all.per_call_ns(), Some(500.0));
        assert_eq!(first.per_call_ns(), Some(1_500.0));
        assert_eq!(all.less(&first).per_call_ns(), Some(250.0));
        assert_eq!(first.less(&all).per_call_ns(), None);
    }
}
