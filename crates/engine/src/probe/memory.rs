//! The memory probe: one scenario's calls, with this process's and the device's memory, the
//! streams created and destroyed (CUPTI) and the host latency sampled after each call.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use nppbench_gpu::{Gpu, ProcessMemoryProbe, Stream, StreamTracker};
use nppbench_model::{MemoryReading, MemoryResult, MemoryScenario, MemorySeries, StreamCounts, StreamKind};

use super::faults;
use super::fixture::Setup;
use super::threads;
use crate::error::ProbeError;

/// Reads both memory probes.
struct Probes<'a> {
    gpu: &'a Gpu,
    nvml: Option<ProcessMemoryProbe>,
}

impl Probes<'_> {
    fn read(&self) -> Result<MemoryReading, ProbeError> {
        Ok(MemoryReading {
            device_used_bytes: self.gpu.used_bytes()?,
            process_used_bytes: self.nvml.as_ref().and_then(|n| n.used_bytes().ok().flatten()),
        })
    }
}

/// The samples of a memory scenario as they are taken, and the budget guard.
struct Recorder<'a> {
    probes: Probes<'a>,
    baseline: MemoryReading,
    budget_bytes: u64,
    started: Instant,
    series: MemorySeries,
    /// The CUPTI stream tracker, or why there is none.
    tracker: Result<StreamTracker, String>,
    streams: StreamCounts,
    /// Streams nppbench's own-stream threads have made so far.
    own_streams: &'a AtomicU32,
}

impl Recorder<'_> {
    /// Samples memory after a call; returns whether the process has grown past the budget.
    fn record(&mut self, threads_spawned: u32, latency: Duration) -> Result<bool, ProbeError> {
        let reading = self.probes.read()?;
        let s = &mut self.series;
        s.call.push(s.call.len() as u32 + 1);
        s.threads_spawned.push(threads_spawned);
        s.elapsed_ms.push(self.started.elapsed().as_secs_f64() * 1e3);
        s.latency_us.push(latency.as_secs_f64() * 1e6);
        s.device_used_bytes.push(reading.device_used_bytes);
        s.process_used_bytes.push(reading.process_used_bytes);
        if let Ok(tracker) = &self.tracker {
            let events = tracker.events();
            let created = events.iter().filter(|e| e.created).count() as u32;
            self.streams.created.push(created);
            self.streams.destroyed.push(events.len() as u32 - created);
            self.streams
                .created_by_nppbench
                .push(self.own_streams.load(Ordering::SeqCst));
        }
        let growth = match (reading.process_used_bytes, self.baseline.process_used_bytes) {
            (Some(now), Some(base)) => now.saturating_sub(base),
            _ => reading
                .device_used_bytes
                .saturating_sub(self.baseline.device_used_bytes),
        };
        Ok(growth > self.budget_bytes)
    }

    /// The stream counts at the end, or why there are none.
    fn finish_streams(&mut self) -> (Option<StreamCounts>, Option<String>) {
        let tracker = match &self.tracker {
            Ok(tracker) => tracker,
            Err(why) => return (None, Some(why.clone())),
        };
        let events = tracker.events();
        let mut alive = BTreeSet::new();
        let mut threads = BTreeSet::new();
        for e in &events {
            if e.created {
                alive.insert(e.stream);
                threads.insert(e.thread);
            } else {
                alive.remove(&e.stream);
            }
        }
        let mut streams = std::mem::take(&mut self.streams);
        streams.creating_threads = threads.len() as u32;
        streams.never_destroyed = alive.len() as u32;
        (Some(streams), None)
    }
}

/// Runs a memory scenario; returns its result and whether it stopped at the budget.
pub(crate) fn run(
    npp_dir: Option<&Path>,
    s: &MemoryScenario,
    budget_mib: u64,
) -> Result<(MemoryResult, bool), ProbeError> {
    let entered = Instant::now();
    let gpu = Gpu::open(0)?;
    faults::inject(&s.id, &gpu)?;
    let own_streams = AtomicU32::new(0);
    let mut rec = Recorder {
        probes: Probes {
            gpu: &gpu,
            nvml: ProcessMemoryProbe::new(&gpu.props().uuid).ok(),
        },
        baseline: MemoryReading {
            device_used_bytes: 0,
            process_used_bytes: None,
        },
        budget_bytes: budget_mib.saturating_mul(1 << 20),
        started: Instant::now(),
        series: MemorySeries::default(),
        tracker: Err("not started".to_owned()),
        streams: StreamCounts::default(),
        own_streams: &own_streams,
    };
    let setup = Setup::new(gpu.clone(), npp_dir, s.primitive, &s.geometry)?;
    // The stream every call shares; thread-per-call-own-stream makes one in each thread instead.
    let kind = if s.threading.owns_stream() {
        StreamKind::NonBlocking
    } else {
        s.stream
    };
    let shared = Stream::new(&gpu, kind)?;
    // Streams are counted from here: what NPP creates from the warm-up call on.
    rec.tracker = StreamTracker::start().map_err(|e| e.to_string());
    rec.baseline = rec.probes.read()?;
    let startup_ms = entered.elapsed().as_secs_f64() * 1e3;
    rec.started = Instant::now();

    // The warm-up call, on this thread, checked.
    let (latency, _) = setup.checked_call(&shared)?;
    let mut stopped = rec.record(1, latency)?;
    if !stopped {
        threads::drive(
            &setup,
            &shared,
            s.threading,
            s.calls,
            &own_streams,
            |threads_spawned, latency| {
                stopped = rec.record(threads_spawned, latency)?;
                Ok(stopped)
            },
        )?;
    }
    let correctness = setup.check()?;
    let wall_ms = rec.started.elapsed().as_secs_f64() * 1e3;
    let (streams, streams_not_measured) = rec.finish_streams();
    Ok((
        MemoryResult {
            baseline: rec.baseline,
            samples: rec.series,
            wall_ms,
            startup_ms,
            correctness,
            streams,
            streams_not_measured,
        },
        stopped,
    ))
}
