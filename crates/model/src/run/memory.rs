//! What run.json records of a memory scenario: its samples after every call, the streams
//! created, and how it ended.

use serde::{Deserialize, Serialize};

use super::{ContextRecord, Correctness, PhaseTime, TwinCheck};
use crate::{GpuProcess, MemoryScenario, Outcome};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryRecord {
    pub scenario: MemoryScenario,
    pub outcome: Outcome,
    pub result: Option<MemoryResult>,
    /// The UUID of the GPU it ran on; `None` in runs made before runs could use several.
    #[serde(default)]
    pub gpu: Option<String>,
    /// The scenario's wall time, milliseconds: its process's start included where it ran first
    /// (or alone) in its process.
    #[serde(default)]
    pub wall_ms: Option<f64>,
    /// Where the scenario ran among the scenarios of its probe process; `None` in runs made
    /// before a process could measure several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchPlace>,
}

/// A scenario's place in the probe process that measured it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchPlace {
    /// The probe process, numbered in the order the run started them (per NPP version).
    pub process: u32,
    /// Scenarios that process measured before this one.
    pub position: u32,
    /// Scenarios that process was given.
    pub size: u32,
    /// Why the scenario, first measured in a batch, was measured again in a process of its own
    /// (this record is that measurement); `None` for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alone_because: Option<String>,
    /// The leak class its measurement in the batch gave (`flat`, `bounded`, `leak`), where it
    /// was measured again alone: how often the two classes differ says whether measuring again
    /// is needed. `None` for the others, and in runs made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_in_batch: Option<String>,
}

/// Device memory before the first call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MemoryReading {
    /// Device-wide used memory (`cuMemGetInfo`: total − free), bytes, read only where NVML
    /// gives this process no figure (see [`MemorySeries::device_used_bytes`]); schema version 2
    /// read both.
    pub device_used_bytes: Option<u64>,
    /// This process's used memory as NVML reports it, bytes; `None` where NVML gives none.
    pub process_used_bytes: Option<u64>,
}

impl MemoryReading {
    /// The figure a leak is judged on: this process's, else the device's.
    pub fn judged(&self) -> Option<u64> {
        self.process_used_bytes.or(self.device_used_bytes)
    }
}

/// The raw samples of a memory scenario, one entry per call (index 0 is the warm-up call).
/// Memory is read after the first call and then from the first call the settle rule judges on
/// (`nppbench_stats::settle::reads_at`): a call not read after has neither figure. Runs made
/// before that read after every call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemorySeries {
    /// Calls made so far, the warm-up call included.
    pub call: Vec<u32>,
    /// Distinct host threads that have called NPP so far.
    pub threads_spawned: Vec<u32>,
    /// Time since the warm-up call started, milliseconds.
    pub elapsed_ms: Vec<f64>,
    /// Host latency of this call: launch plus stream synchronisation, microseconds.
    pub latency_us: Vec<f64>,
    /// Device-wide used memory (`cuMemGetInfo`), bytes, read only where this process's figure
    /// is not ([`MemorySeries::process_used_bytes`] `None`, or none at the baseline): `None`
    /// where it was not read. Each reading is a query of the kernel driver, which a run's
    /// probes wait for one another to make; reading both figures after every call cost a memory
    /// probe about 1 ms each on an H100 (docs/performance.md). Schema version 2 read both.
    pub device_used_bytes: Vec<Option<u64>>,
    /// This process's used memory as NVML reports it, bytes: the figure a leak is judged on.
    /// `None` in both figures: memory was not read after this call.
    pub process_used_bytes: Vec<Option<u64>>,
    /// How long this sample's memory reading took, microseconds (0 where none was made): the
    /// part of the time between two samples that the reading is (runs made before it lack it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reading_us: Vec<f64>,
}

impl MemorySeries {
    pub fn len(&self) -> usize {
        self.call.len()
    }

    pub fn is_empty(&self) -> bool {
        self.call.is_empty()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryResult {
    pub baseline: MemoryReading,
    pub samples: MemorySeries,
    pub wall_ms: f64,
    /// From the probe's start to its baseline reading: driver, NPP, NVML and CUPTI set-up.
    #[serde(default)]
    pub startup_ms: f64,
    /// `startup_ms` step by step, in order: the process's own first (`gpu`, `nvml`, `cupti`, its
    /// first scenario's alone), then the scenario's: `stream` (the census where none was kept,
    /// the stream its calls share), `npp`, `buffers`, `context` (`Setup`'s steps in the engine)
    /// and `baseline`. Runs made before 2026-12-08 have `npp` for the three of setting up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startup: Vec<PhaseTime>,
    /// What followed the last call, step by step, in order: `streams` (the CUPTI counts),
    /// `check` (the output against the reference), `aligned_twin` (the same call at aligned
    /// strides, in runs made before 2026-12-08; since, the ordering probe's:
    /// `OrderingRounds::aligned_twin`) and `census` (who else was on the device). All but the
    /// census are within `wall_ms`. Empty in runs made before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_calls: Vec<PhaseTime>,
    pub correctness: Correctness,
    /// The warm-up call's launch, µs: NPP's host side until the call returned, before the
    /// synchronise (the rest of `samples.latency_us[0]` is the wait for the device). Absent in
    /// runs made before 2026-12-08.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_up_launch_us: Option<f64>,
    /// Streams created and destroyed during the calls, counted with CUPTI; `None` where CUPTI
    /// could not be loaded (see `streams_not_measured`).
    #[serde(default)]
    pub streams: Option<StreamCounts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams_not_measured: Option<String>,
    /// The call after which the scenario's class was settled and it stopped; `None` when it
    /// made every call (or ran before scenarios could stop early).
    #[serde(default)]
    pub settled_after: Option<u32>,
    /// The stream context as filled for the calls, and the stream's real flags.
    #[serde(default)]
    pub context: Option<ContextRecord>,
    /// The most other nppbench probes seen on the GPU during the scenario: with any, the
    /// device-wide figure is shared and only this process's (NVML) is judged.
    #[serde(default)]
    pub concurrent_probes: u32,
    /// Other processes seen on the GPU before or after the calls.
    #[serde(default)]
    pub other_processes: Vec<GpuProcess>,
    /// The device addresses of the call's buffers (sources, then the destination): NPP picks
    /// some paths by a buffer's alignment, which the process's other allocations shift.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buffer_addresses: Vec<u64>,
    /// Whether NPP's work waited for the caller's stream: rounds of a late write of the source
    /// on the caller's stream, the call, and a read of the result on that stream. `None` in runs
    /// made before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering: Option<OrderingRounds>,
    /// Whether every reading of this process's memory came from the run's parent
    /// (`--memory-readings shared`), not from the probe's own listing: false in every run made
    /// without it, and where the probe could not reach the parent and listed for itself.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub readings_shared: bool,
}

/// The ordering rounds of a memory scenario (`probe/ordering.rs` says how each round runs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OrderingRounds {
    /// Rounds made, and in how many the output differed from the function's reference.
    pub rounds: u32,
    pub wrong_rounds: u32,
    /// The most wrong pixels (values, for a reduction) of any round.
    pub wrong_pixels: u64,
    /// The first and last column, and row, that were wrong in any round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<[u32; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<[u32; 2]>,
    /// The GPU clock cycles the caller's stream spun before the late write.
    pub delay_cycles: u64,
    /// Where NPP's device work of the first call (made synchronised, outside the rounds) ran, as
    /// CUPTI recorded it; `None` where it was not recorded (CUPTI unavailable, runs made before
    /// 2026-12-08). Where all of it ran on the caller's stream, that stream orders it after the
    /// late write and before the read, so no round is made unless the run asked for them
    /// everywhere (`--race-rounds always`): `rounds` is 0 and the scenario is ordered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_call: Option<CallStreams>,
    /// The first call's output, synchronised, checked against its aligned twin (the same call on
    /// the same pixels at strides aligned to 512 bytes): the wrong-pixel oracle that needs no CPU
    /// reference. `None` where the geometry is its own twin, where the first call failed, and in
    /// runs made before 2026-12-08, whose memory probe checked it (`Correctness::aligned_twin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aligned_twin: Option<TwinCheck>,
    /// Why the rounds were not made (no delay kernel without NVRTC, a fault), where they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
    /// The scenario's wall time in its ordering probe (set-up, first call and rounds; the
    /// process's start included for its first scenario), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<f64>,
    /// The scenario whose rounds these are, where they were made once for several scenarios:
    /// rounds run from the probe's own thread on the scenario's stream kind and context filling,
    /// so scenarios that differ only in their threading model share them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_from: Option<String>,
}

impl OrderingRounds {
    /// Whether the scenario is ordered without rounds: none made, none wanted, and every piece of
    /// NPP's work in the first call ran on the caller's stream.
    pub fn ordered_by_one_stream(&self) -> bool {
        self.rounds == 0 && self.not_measured.is_none() && self.first_call.is_some_and(|c| c.all_on_caller())
    }

    /// No rounds made, and why (`delay_cycles`: the spin the rounds would have had).
    pub fn not_measured(delay_cycles: u64, why: String) -> OrderingRounds {
        OrderingRounds {
            delay_cycles,
            not_measured: Some(why),
            ..OrderingRounds::default()
        }
    }
}

/// Where a call's device work ran, as CUPTI recorded it: its kernels, copies and fills on the
/// caller's stream, and on any other stream (NPP's own, the legacy default stream).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallStreams {
    pub on_caller: u32,
    pub elsewhere: u32,
}

impl CallStreams {
    /// Some work, and all of it on the caller's stream: ordered by that stream alone.
    pub fn all_on_caller(&self) -> bool {
        self.on_caller > 0 && self.elsewhere == 0
    }
}

/// CUDA streams created and destroyed by anything in the process from the warm-up call on,
/// cumulative after each call (aligned with [`MemorySeries`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamCounts {
    pub created: Vec<u32>,
    pub destroyed: Vec<u32>,
    /// Of those created, the ones nppbench itself made (the own-stream threading model).
    pub created_by_nppbench: Vec<u32>,
    /// Distinct host threads that created at least one stream.
    pub creating_threads: u32,
    /// Streams created during the calls and still alive after the last one.
    pub never_destroyed: u32,
}
