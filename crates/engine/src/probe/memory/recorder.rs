//! A memory scenario's samples as they are taken: the readings where the settle rule judges,
//! the streams after every call, the budget guard and the settle rule's question.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use nppbench_gpu::{Gpu, GpuError, ProcessMemoryProbe, StreamTracker};
use nppbench_model::{MemoryReading, MemorySeries, StreamCounts};
use nppbench_stats::settle;

use super::Ask;
use crate::error::ProbeError;

/// MiB, for the settle rule's series.
const MIB: f64 = 1024.0 * 1024.0;

/// Reads the memory probes: this process's figure (NVML), and the device's only where that is
/// missing. Each reading is a query of the kernel driver, which the run's probes wait for one
/// another to make (`MemorySeries::device_used_bytes`).
pub(crate) struct Probes<'a> {
    pub(super) gpu: &'a Gpu,
    pub(super) nvml: Option<&'a ProcessMemoryProbe>,
}

impl Probes<'_> {
    /// This process's figure, and the device's where `device_too` or NVML gives none.
    pub(super) fn read(&self, device_too: bool) -> Result<MemoryReading, ProbeError> {
        let process_used_bytes = self.nvml.and_then(|n| n.used_bytes().ok().flatten());
        let device_used_bytes = (device_too || process_used_bytes.is_none())
            .then(|| self.gpu.used_bytes())
            .transpose()?;
        Ok(MemoryReading {
            device_used_bytes,
            process_used_bytes,
        })
    }
}

/// The samples of a memory scenario as they are taken, and the budget guard.
pub(super) struct Recorder<'a> {
    pub(super) probes: Probes<'a>,
    pub(super) baseline: MemoryReading,
    budget_bytes: u64,
    pub(super) started: Instant,
    pub(super) series: MemorySeries,
    /// The process's CUPTI stream tracker and the count of its events when this scenario's
    /// calls began, or why there is none.
    pub(super) tracker: Result<(&'a StreamTracker, usize), NoTracker<'a>>,
    streams: StreamCounts,
    /// Streams nppbench's own-stream threads have made so far.
    own_streams: &'a AtomicU32,
    /// The judged memory (`MemoryReading::judged`) after the first call, MiB.
    first_mib: Option<f64>,
    /// The calls after which memory was read (`settle::reads_at`), and the judged growth over
    /// the first call then, MiB: what the settle rule reads.
    read_calls: Vec<u32>,
    growth_mib: Vec<f64>,
    /// What the settle rule needs of the scenario, besides the samples.
    plan: Plan,
}

/// A scenario's calls, the calls it makes at least before stopping (`min_calls`) and the most
/// threads it calls from: which calls memory is read after, and when its class is settled.
#[derive(Debug, Clone, Copy)]
struct Plan {
    calls: u32,
    min_calls: u32,
    thread_bound: Option<u32>,
}

/// Why a scenario's recorder has no stream tracker: none started yet, or CUPTI's failed to start
/// in this process.
#[derive(Debug, thiserror::Error)]
pub(super) enum NoTracker<'a> {
    #[error("not started")]
    NotStarted,
    #[error("{0}")]
    Failed(&'a GpuError),
}

impl<'a> Recorder<'a> {
    /// A recorder reading `gpu` and `nvml` for `ask`'s scenario, with no baseline and no stream
    /// tracker yet.
    pub(super) fn new(probes: Probes<'a>, ask: &Ask<'_>, own_streams: &'a AtomicU32) -> Recorder<'a> {
        let s = ask.scenario;
        Recorder {
            probes,
            baseline: MemoryReading {
                device_used_bytes: None,
                process_used_bytes: None,
            },
            budget_bytes: ask.budget_mib.saturating_mul(1 << 20),
            started: Instant::now(),
            series: MemorySeries::default(),
            tracker: Err(NoTracker::NotStarted),
            streams: StreamCounts::default(),
            own_streams,
            first_mib: None,
            read_calls: Vec::new(),
            growth_mib: Vec::new(),
            plan: Plan {
                calls: s.calls,
                min_calls: ask.min_calls,
                thread_bound: s.threading.thread_bound(),
            },
        }
    }

    /// Samples a call: memory where the settle rule will judge the reading
    /// (`settle::reads_at`; elsewhere no figure, and no time reading), the streams after every
    /// call. Returns whether the process has grown past the budget (told at readings only).
    pub(super) fn record(&mut self, threads_spawned: u32, latency: Duration) -> Result<bool, ProbeError> {
        let call = self.series.call.len() as u32 + 1;
        let Plan {
            calls,
            min_calls,
            thread_bound,
        } = self.plan;
        let read_at = Instant::now();
        // Where the baseline lacks this process's figure, the device's is judged: read it always.
        let reading = if settle::reads_at(call, calls, min_calls, thread_bound) {
            Some(self.probes.read(self.baseline.process_used_bytes.is_none())?)
        } else {
            None
        };
        let reading_us = reading.map_or(0.0, |_| read_at.elapsed().as_secs_f64() * 1e6);
        let s = &mut self.series;
        s.reading_us.push(reading_us);
        s.call.push(call);
        s.threads_spawned.push(threads_spawned);
        s.elapsed_ms.push(self.started.elapsed().as_secs_f64() * 1e3);
        s.latency_us.push(latency.as_secs_f64() * 1e6);
        s.device_used_bytes.push(reading.and_then(|r| r.device_used_bytes));
        s.process_used_bytes.push(reading.and_then(|r| r.process_used_bytes));
        if let Some(reading) = reading {
            let mib = reading.judged().unwrap_or(0) as f64 / MIB;
            let first = *self.first_mib.get_or_insert(mib);
            self.read_calls.push(call);
            self.growth_mib.push(mib - first);
        }
        if let Ok((tracker, mark)) = &self.tracker {
            let events = tracker.events_since(*mark);
            let created = events.iter().filter(|e| e.created).count() as u32;
            self.streams.created.push(created);
            self.streams.destroyed.push(events.len() as u32 - created);
            self.streams
                .created_by_nppbench
                .push(self.own_streams.load(Ordering::SeqCst));
        }
        let Some(reading) = reading else {
            return Ok(false);
        };
        let growth = match (reading.process_used_bytes, self.baseline.process_used_bytes) {
            (Some(now), Some(base)) => now.saturating_sub(base),
            // Either missing: the device's was read for both (`Probes::read`).
            _ => reading
                .device_used_bytes
                .unwrap_or(0)
                .saturating_sub(self.baseline.device_used_bytes.unwrap_or(0)),
        };
        Ok(growth > self.budget_bytes)
    }

    /// Whether the scenario's class is settled after the calls so far (see `nppbench_stats::settle`).
    pub(super) fn settled(&self) -> bool {
        let created = (!self.streams.created.is_empty()).then_some(self.streams.created.as_slice());
        settle::settled(settle::Progress {
            calls: &self.read_calls,
            growth_mib: &self.growth_mib,
            made: self.series.call.len() as u32,
            planned: self.plan.calls,
            streams_created: created,
            thread_bound: self.plan.thread_bound,
            min_calls: self.plan.min_calls,
        })
        .is_some()
    }

    /// The stream counts at the end, or why there are none.
    pub(super) fn finish_streams(&mut self) -> (Option<StreamCounts>, Option<String>) {
        let (tracker, mark) = match &self.tracker {
            Ok(tracker) => *tracker,
            Err(why) => return (None, Some(why.to_string())),
        };
        let events = tracker.events_since(mark);
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
