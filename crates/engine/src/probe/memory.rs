//! A memory scenario in a probe process: its calls, with this process's and the device's memory
//! read where the settle rule judges, the streams created and destroyed (CUPTI) and the host
//! latency sampled after each call (`recorder.rs`).

use std::path::Path;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use nppbench_gpu::{Gpu, GpuError, ProcessMemoryProbe, Stream, StreamTracker};
use nppbench_model::{MemoryResult, MemoryScenario, StreamKind};
use nppbench_npp::StreamContext;

use super::setup::{ScenarioCache, Setup};
use super::{Resources, Steps, faults, processes, threads};
use crate::error::ProbeError;

mod recorder;

use recorder::{NoTracker, Probes, Recorder};

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
    /// The warm-up call's launch, before its synchronise.
    warm_up_launch: Duration,
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
    let (latency, warm_up_launch, ctx) = setup.cleared_call(shared)?;
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
                if !stopped && rec.settled() {
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
        warm_up_launch,
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
        steps.done("stream");
        let setup = Setup::with_cache(
            self.gpu.clone(),
            ask.npp_dir,
            s.primitive,
            &s.geometry,
            s.context,
            &shared,
            &mut self.cache,
        );
        let mut setup = match setup {
            Ok(setup) => setup,
            Err(e) => {
                // Kept, like every stream a scenario made (see `Process::kept`).
                self.kept.push(Box::new(shared));
                return Err(e);
            }
        };
        // The CPU reference, needed only by the check after the calls, computed beside them.
        setup.prepare_expected();
        // Setting up, step by step (`Setup::take_steps`): where a scenario's start goes.
        steps.append(setup.take_steps());
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
            warm_up_launch,
        } = std::thread::scope(|scope| {
            let calls = std::thread::Builder::new()
                .spawn_scoped(scope, || drive(&mut rec, setup, shared, ask, &own_streams))
                .map_err(threads::spawn_error)?;
            threads::joined(calls.join())
        })?;
        // The output's second oracle, the aligned twin, is the ordering probe's
        // (`ordering::rounds`): once per configuration there, instead of after every scenario's
        // readings here.
        let mut after_calls = Steps::new();
        let (streams, streams_not_measured) = rec.finish_streams();
        after_calls.done("streams");
        let correctness = setup.check()?;
        after_calls.done("check");
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
                warm_up_launch_us: Some(warm_up_launch.as_secs_f64() * 1e6),
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
