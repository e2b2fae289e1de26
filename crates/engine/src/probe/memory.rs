//! A memory scenario in a probe process: its calls, with this process's and the device's memory,
//! the streams created and destroyed (CUPTI) and the host latency sampled after each call.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use nppbench_gpu::{Gpu, GpuError, ProcessMemoryProbe, Stream, StreamTracker};
use nppbench_model::{MemoryReading, MemoryResult, MemoryScenario, MemorySeries, StreamCounts, StreamKind};
use nppbench_npp::StreamContext;
use nppbench_stats::settle;

use super::setup::{ScenarioCache, Setup};
use super::{Resources, Steps, faults, processes, threads};
use crate::error::ProbeError;

/// MiB, for the settle rule's series.
const MIB: f64 = 1024.0 * 1024.0;

/// Reads the memory probes: this process's figure (NVML), and the device's only where that is
/// missing. Each reading is a query of the kernel driver, which the run's probes wait for one
/// another to make (`MemorySeries::device_used_bytes`).
pub(crate) struct Probes<'a> {
    gpu: &'a Gpu,
    nvml: Option<&'a ProcessMemoryProbe>,
}

impl Probes<'_> {
    /// This process's figure, and the device's where `device_too` or NVML gives none.
    fn read(&self, device_too: bool) -> Result<MemoryReading, ProbeError> {
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
struct Recorder<'a> {
    probes: Probes<'a>,
    baseline: MemoryReading,
    budget_bytes: u64,
    started: Instant,
    series: MemorySeries,
    /// The process's CUPTI stream tracker and the count of its events when this scenario's
    /// calls began, or why there is none.
    tracker: Result<(&'a StreamTracker, usize), NoTracker<'a>>,
    streams: StreamCounts,
    /// Streams nppbench's own-stream threads have made so far.
    own_streams: &'a AtomicU32,
    /// The judged memory (see [`Probes::judged`]) after the first call, MiB.
    first_mib: Option<f64>,
    /// The calls after which memory was read (`settle::reads_at`), and the judged growth over
    /// the first call then, MiB: what the settle rule reads.
    read_calls: Vec<u32>,
    growth_mib: Vec<f64>,
    /// Which calls to read after: the scenario's calls, its `min_calls` and thread bound.
    plan: (u32, u32, Option<u32>),
}

/// Why a scenario's recorder has no stream tracker: none started yet, or CUPTI's failed to start
/// in this process.
#[derive(Debug, thiserror::Error)]
enum NoTracker<'a> {
    #[error("not started")]
    NotStarted,
    #[error("{0}")]
    Failed(&'a GpuError),
}

impl<'a> Recorder<'a> {
    /// A recorder reading `gpu` and `nvml` for `ask`'s scenario, with no baseline and no stream
    /// tracker yet.
    fn new(probes: Probes<'a>, ask: &Ask<'_>, own_streams: &'a AtomicU32) -> Recorder<'a> {
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
            plan: (s.calls, ask.min_calls, s.threading.thread_bound()),
        }
    }

    /// Samples a call: memory where the settle rule will judge the reading
    /// (`settle::reads_at`; elsewhere no figure, and no time reading), the streams after every
    /// call. Returns whether the process has grown past the budget (told at readings only).
    fn record(&mut self, threads_spawned: u32, latency: Duration) -> Result<bool, ProbeError> {
        let call = self.series.call.len() as u32 + 1;
        let (calls, min_calls, bound) = self.plan;
        let read_at = Instant::now();
        // Where the baseline lacks this process's figure, the device's is judged: read it always.
        let reading = if settle::reads_at(call, calls, min_calls, bound) {
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
    fn settled(&self, s: &MemoryScenario, min_calls: u32) -> bool {
        let created = (!self.streams.created.is_empty()).then_some(self.streams.created.as_slice());
        settle::settled(settle::Progress {
            calls: &self.read_calls,
            growth_mib: &self.growth_mib,
            made: self.series.call.len() as u32,
            planned: s.calls,
            streams_created: created,
            thread_bound: s.threading.thread_bound(),
            min_calls,
        })
        .is_some()
    }

    /// The stream counts at the end, or why there are none.
    fn finish_streams(&mut self) -> (Option<StreamCounts>, Option<String>) {
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

/// What a memory probe is asked of one scenario: the scenario and its guards.
pub(crate) struct Ask<'a> {
    pub(crate) npp_dir: Option<&'a Path>,
    pub(crate) scenario: &'a MemoryScenario,
    pub(crate) budget_mib: u64,
    pub(crate) min_calls: u32,
    pub(crate) parent_pid: u32,
}

/// How a scenario's calls ended: the warm-up call's context, whether the budget stopped them
/// and after how many calls the class settled (if it did).
struct Driven {
    ctx: StreamContext,
    stopped: bool,
    settled_after: Option<u32>,
}

/// Makes the scenario's calls, sampling memory after each: the warm-up call on this thread, then
/// the rest as its threading model says, until the calls are done, the budget is
/// reached or the class is settled.
fn drive(
    rec: &mut Recorder<'_>,
    setup: &Setup,
    shared: &Stream,
    ask: &Ask<'_>,
    own_streams: &AtomicU32,
) -> Result<Driven, ProbeError> {
    let s = ask.scenario;
    // Not checked here: the check after the last call judges the output (a warm-up check, thrown
    // away, cost a download and a comparison a scenario).
    let (latency, ctx) = setup.cleared_call(shared)?;
    let mut stopped = rec.record(1, latency)?;
    let mut settled_after = None;
    if !stopped {
        threads::drive(
            setup,
            shared,
            s.threading,
            s.calls,
            own_streams,
            |threads_spawned, latency| {
                stopped = rec.record(threads_spawned, latency)?;
                if !stopped && rec.settled(s, ask.min_calls) {
                    settled_after = Some(rec.series.len() as u32);
                    return Ok(true);
                }
                Ok(stopped)
            },
        )?;
    }
    Ok(Driven {
        ctx,
        stopped,
        settled_after,
    })
}

/// The stream a scenario's calls share, and its ordering rounds run on: the scenario's kind, or
/// a non-blocking stream where each thread makes one of its own (thread-per-call-own-stream).
pub(crate) fn shared_stream_kind(s: &MemoryScenario) -> StreamKind {
    if s.threading.owns_stream() {
        StreamKind::NonBlocking
    } else {
        s.stream
    }
}

/// What a memory probe process keeps for all its scenarios: the device, NVML, the CUPTI stream
/// tracker, and the patterns, expected outputs and spare buffers of the scenarios it has run.
pub(crate) struct Process {
    gpu: Gpu,
    nvml: Option<ProcessMemoryProbe>,
    tracker: Result<StreamTracker, GpuError>,
    cache: ScenarioCache,
    /// What finished scenarios made and this process keeps until it ends: their streams and
    /// the buffers the cache does not keep. Freed memory would be handed to the next
    /// scenario's allocations, NPP's new streams among them, and hide growth that a fresh
    /// process shows.
    kept: Vec<Box<dyn std::any::Any>>,
    /// The process's own start-up steps, told to its first scenario.
    startup: Option<Steps>,
    /// Who else was on the device when the last scenario ended: the next scenario's census
    /// before its calls, taken moments earlier, instead of asking NVML again (two list calls).
    last_census: Option<processes::Census>,
    /// The judged figure after the last scenario's last call, which [`Process::judged_bytes`]
    /// gives instead of asking NVML again: nothing a scenario does after that call allocates
    /// device memory (its check downloads into host memory), and the threads that end after it
    /// only give memory back.
    last_judged: Option<u64>,
}

impl Process {
    /// Opens GPU `device` with NVML and CUPTI, one after the other. (Started on a thread of
    /// their own beside the context, in one run on one H100, the context took 528 ms a process
    /// against 401 + 41 + 53 one after the other: no gain shown, docs/performance.md.)
    pub(crate) fn open(device: u32) -> Result<Process, ProbeError> {
        let mut steps = Steps::new();
        let gpu = Gpu::open(device as usize)?;
        steps.done("gpu");
        let nvml = ProcessMemoryProbe::new(&gpu.props().uuid).ok();
        steps.done("nvml");
        // Streams are counted from each scenario's warm-up call on (see `Recorder::tracker`).
        let tracker = StreamTracker::start();
        steps.done("cupti");
        Ok(Process {
            gpu,
            nvml,
            tracker,
            cache: ScenarioCache::default(),
            kept: Vec::new(),
            startup: Some(steps),
            last_census: None,
            last_judged: None,
        })
    }

    /// Whether the CUDA context still works: the device synchronises without an error. An error
    /// that poisons a context (a kernel that trapped or touched an illegal address) is sticky,
    /// returned by every later call, this one among them; nothing is allocated, so nothing here
    /// changes what the next scenario measures.
    pub(crate) fn context_works(&self) -> bool {
        self.gpu.synchronize().is_ok()
    }

    /// The memory figure a leak is judged on, for the whole process now (or as the last
    /// scenario's last call left it: [`Process::last_judged`]).
    pub(crate) fn judged_bytes(&mut self) -> Result<u64, ProbeError> {
        if let Some(bytes) = self.last_judged.take() {
            return Ok(bytes);
        }
        let probes = Probes {
            gpu: &self.gpu,
            nvml: self.nvml.as_ref(),
        };
        Ok(probes.read(false)?.judged().unwrap_or(0))
    }

    /// Runs a memory scenario; returns its result and whether it stopped at the budget. Its calls
    /// are made from host threads made for it (the warm-up and a single thread's calls on one
    /// of their own), so that none has met NPP before: the class is the one a fresh process
    /// gives. Its buffers serve the next scenario; nothing it made is freed before the process
    /// ends (see [`Process::kept`]).
    pub(crate) fn measure(&mut self, ask: &Ask<'_>) -> Result<(MemoryResult, bool), ProbeError> {
        let s = ask.scenario;
        let mut steps = self.startup.take().unwrap_or_else(Steps::new);
        faults::inject(&s.id, &self.gpu)?;
        let uuid = self.gpu.props().uuid.clone();
        let before = match self.last_census.take() {
            Some(census) => census,
            None => processes::census(self.nvml.as_ref(), &uuid, ask.parent_pid),
        };
        let shared = Stream::new(&self.gpu, shared_stream_kind(s))?;
        let setup = Setup::with_cache(
            self.gpu.clone(),
            ask.npp_dir,
            s.primitive,
            &s.geometry,
            s.context,
            &shared,
            &mut self.cache,
        );
        let setup = match setup {
            Ok(setup) => setup,
            Err(e) => {
                // Kept, like every stream a scenario made (see `Process::kept`).
                self.kept.push(Box::new(shared));
                return Err(e);
            }
        };
        steps.done("npp");
        let measured = self
            .calls(ask, &setup, &shared, steps, before)
            .map(|(result, stopped, after)| {
                self.last_census = Some(after);
                let s = &result.samples;
                let last = |figures: &[Option<u64>]| figures.last().copied().flatten();
                self.last_judged = last(&s.process_used_bytes).or(last(&s.device_used_bytes));
                (result, stopped)
            });
        // Kept, whatever the calls gave: buffers for the next scenario, the rest until the end.
        let unused = self.cache.recycle(setup);
        self.kept.push(Box::new(unused));
        self.kept.push(Box::new(shared));
        measured
    }

    /// The scenario's calls on `setup` and `shared`, from a thread of their own, sampled, then
    /// its output checked and its streams counted.
    fn calls(
        &self,
        ask: &Ask<'_>,
        setup: &Setup,
        shared: &Stream,
        mut steps: Steps,
        before: processes::Census,
    ) -> Result<(MemoryResult, bool, processes::Census), ProbeError> {
        let own_streams = AtomicU32::new(0);
        let probes = Probes {
            gpu: &self.gpu,
            nvml: self.nvml.as_ref(),
        };
        let mut rec = Recorder::new(probes, ask, &own_streams);
        // Streams are counted from here: what NPP creates from the warm-up call on.
        rec.tracker = match &self.tracker {
            Ok(tracker) => Ok((tracker, tracker.count())),
            Err(why) => Err(NoTracker::Failed(why)),
        };
        rec.baseline = rec.probes.read(false)?;
        steps.done("baseline");
        let startup_ms = steps.0.iter().map(|p| p.wall_s).sum::<f64>() * 1e3;
        rec.started = Instant::now();

        let Driven {
            ctx,
            stopped,
            settled_after,
        } = std::thread::scope(|scope| {
            let calls = std::thread::Builder::new()
                .spawn_scoped(scope, || drive(&mut rec, setup, shared, ask, &own_streams))
                .map_err(threads::spawn_error)?;
            threads::joined(calls.join())
        })?;
        // The scenario's streams are counted before the oracles call NPP: the aligned twin's call,
        // on this thread, creates NPP's streams for it (measured on an H200: 3 more streams
        // never destroyed where the scenario alone had 3, in a batch).
        let mut after_calls = Steps::new();
        let (streams, streams_not_measured) = rec.finish_streams();
        after_calls.done("streams");
        let mut correctness = setup.check()?;
        after_calls.done("check");
        // The second oracle, after the memory readings: the same call at aligned strides.
        correctness.aligned_twin = setup.aligned_twin(shared)?;
        after_calls.done("aligned_twin");
        let buffer_addresses = setup.addresses();
        let wall_ms = rec.started.elapsed().as_secs_f64() * 1e3;
        let uuid = &self.gpu.props().uuid;
        let after = processes::census_since_reading(self.nvml.as_ref(), uuid, ask.parent_pid);
        after_calls.done("census");
        let mut other_processes = before.others;
        processes::merge(&mut other_processes, after.others.clone());
        let Recorder { baseline, series, .. } = rec;
        Ok((
            MemoryResult {
                baseline,
                samples: series,
                wall_ms,
                startup_ms,
                startup: steps.0,
                after_calls: after_calls.0,
                correctness,
                streams,
                streams_not_measured,
                settled_after,
                context: Some(ctx.record()),
                concurrent_probes: before.siblings.max(after.siblings),
                other_processes,
                buffer_addresses,
                ordering: None,
                // After the last reading: a probe that lost the parent lists for itself from then on.
                readings_shared: self.nvml.as_ref().is_some_and(ProcessMemoryProbe::reads_shared),
            },
            stopped,
            after,
        ))
    }

    /// What the process holds, kept alive past its answers (see [`Resources`]).
    pub(crate) fn into_resources(self) -> Resources {
        Resources::new(vec![
            Box::new(self.kept),
            Box::new(self.cache),
            Box::new(self.tracker),
            Box::new(self.nvml),
            Box::new(self.gpu),
        ])
    }
}
