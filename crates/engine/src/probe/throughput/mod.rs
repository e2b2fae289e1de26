//! The throughput probe: every throughput scenario of one pass on one GPU, in one process. Each
//! is timed with criterion (CUDA events around batches), then with CUPTI's kernel records (the
//! kernels of each call summed: warm, back to back, and cold, the L2 cache flushed before every
//! call), and one call at a time for its host latency; beside it, the device's clocks, power and
//! throttling, and the reference kernel.

mod call_records;
mod clocks;
mod criterion_files;
mod reference;
mod timer;

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use nppbench_gpu::{
    DelayKernel, DeviceBuffer, Gpu, GpuError, HostBuffer, ProcessMemoryProbe, ReferenceConvert, Stream,
};
use nppbench_model::catalog::GpuReference;
use nppbench_model::{
    CallTiming, FailureKind, Geometry, GpuProcess, HostLatency, KernelRecords, Outcome, ReferenceResult, Settings,
    ThroughputRecord, ThroughputResult, ThroughputScenario,
};
use nppbench_npp::{DST_FILL, StreamContext};
use nppbench_stats::{median, quantile};

use self::call_records::{RECORDED_CALLS, record_calls};
use self::timer::Timer;
use super::setup::{ScenarioCache, Setup};
use super::{Resources, Steps, faults, processes};
use crate::error::ProbeError;
use crate::protocol::{DELAY_CYCLES_ENV, DELAY_CYCLES_PER_MPIXEL_ENV};

/// Calls timed cold, each after an L2 flush.
const COLD_CALLS: u32 = 50;
/// Calls timed one at a time for the host latency.
const LATENCY_CALLS: u32 = 50;
/// The longest the probe works the GPU waiting for its clocks to settle, first and later.
const WARM_UP_FIRST: Duration = Duration::from_millis(1500);
const WARM_UP_NEXT: Duration = Duration::from_millis(150);
/// The work between two clock readings while warming up: longer for the first scenario, whose
/// GPU may be idling at a few hundred MHz, than for the next ones, which find it just worked.
const WARM_UP_BATCH_FIRST: Duration = Duration::from_millis(5);
const WARM_UP_BATCH_NEXT: Duration = Duration::from_millis(2);

/// Why a pass has no reference kernel (`ReferenceConvert`) to time.
#[derive(Debug, thiserror::Error)]
enum NoReference {
    /// A later pass: the reference is a ceiling for the geometry, never compared between passes.
    #[error("measured in the first pass only (a ceiling for the geometry, not compared between passes)")]
    LaterPass,
    #[error("no scenario needs it")]
    NotNeeded,
    /// NVRTC would not compile it (or is absent).
    #[error(transparent)]
    Compile(GpuError),
}

/// The calibration hook: cycles of GPU work after every timed call, fixed
/// (`NPPBENCH_DELAY_CYCLES`) and per million pixels of the call's ROI
/// (`NPPBENCH_DELAY_CYCLES_PER_MPIXEL`); `None` where neither is set.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DelayHook {
    fixed: u64,
    per_mpixel: u64,
}

impl DelayHook {
    fn from_env() -> Option<DelayHook> {
        let read = |name: &str| -> u64 { std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(0) };
        let hook = DelayHook {
            fixed: read(DELAY_CYCLES_ENV),
            per_mpixel: read(DELAY_CYCLES_PER_MPIXEL_ENV),
        };
        (hook.fixed > 0 || hook.per_mpixel > 0).then_some(hook)
    }

    /// The cycles after a call on a `width` × `height` ROI.
    fn cycles(&self, width: u32, height: u32) -> u64 {
        self.fixed + self.per_mpixel * u64::from(width) * u64::from(height) / 1_000_000
    }
}

/// What a throughput probe is asked.
pub(crate) struct Ask<'a> {
    pub(crate) npp_dir: Option<&'a Path>,
    pub(crate) device: u32,
    pub(crate) pass: u32,
    pub(crate) scenarios: &'a [ThroughputScenario],
    pub(crate) settings: &'a Settings,
    pub(crate) criterion_dir: &'a Path,
    pub(crate) parent_pid: u32,
}

/// What every scenario of the probe shares: the device, its NVML, the extra kernels.
struct Bench {
    gpu: Gpu,
    nvml: Option<Rc<ProcessMemoryProbe>>,
    reference: Result<ReferenceConvert, NoReference>,
    delay: Option<(DelayKernel, DelayHook)>,
    /// Pushes the L2 cache out between cold calls: twice its size.
    flush: Option<DeviceBuffer>,
    warmed_once: bool,
    /// Patterns, expected outputs and spare device buffers, kept between scenarios.
    cache: ScenarioCache,
    /// Page-locked host memory the outputs are checked in, kept between scenarios.
    host: HostBuffer,
    /// The reference kernel's results in this pass, by geometry.
    references: HashMap<Geometry, ReferenceResult>,
}

impl Bench {
    /// Opens what the probe's scenarios share on `gpu`: NVML, the reference kernel (first pass
    /// only, where a scenario needs it), the calibration hook's delay kernel and the L2 flush.
    fn open(gpu: &Gpu, ask: &Ask<'_>) -> Bench {
        let nvml = ProcessMemoryProbe::new(&gpu.props().uuid).ok().map(Rc::new);
        let needs_reference = ask.scenarios.iter().any(|s| s.primitive.row().gpu_reference.is_some());
        // The reference is a ceiling for the geometry, read from the first pass and never
        // compared between passes: later passes neither compile nor time it.
        let reference = if ask.pass > 1 {
            Err(NoReference::LaterPass)
        } else if needs_reference {
            ReferenceConvert::compile(gpu).map_err(NoReference::Compile)
        } else {
            Err(NoReference::NotNeeded)
        };
        let delay = DelayHook::from_env().and_then(|h| DelayKernel::compile(gpu).ok().map(|k| (k, h)));
        let flush_bytes = (2 * gpu.props().l2_cache_bytes).max(64 << 20);
        let flush = ask
            .settings
            .cold
            .then(|| DeviceBuffer::alloc(gpu, flush_bytes).ok())
            .flatten();
        Bench {
            gpu: gpu.clone(),
            nvml,
            reference,
            delay,
            flush,
            warmed_once: false,
            cache: ScenarioCache::default(),
            host: HostBuffer::default(),
            references: HashMap::new(),
        }
    }
}

/// One scenario's calls as the probe makes them: its setup, stream and stream context.
struct Calls<'a> {
    setup: &'a Setup,
    stream: &'a Stream,
    ctx: &'a StreamContext,
}

impl Calls<'_> {
    /// One call as the timing makes it: NPP into the destination, then the test hook's delay.
    fn timed(&self, bench: &Bench, dst: &mut DeviceBuffer) -> Result<(), ProbeError> {
        self.setup.launch(dst, self.ctx)?;
        if let Some((kernel, hook)) = &bench.delay {
            let g = &self.setup.geometry;
            kernel.launch(hook.cycles(g.width, g.height), self.stream)?;
        }
        Ok(())
    }

    /// Works the GPU with timed calls until its clocks settle (longer for the probe's first
    /// scenario); returns how long it took and whether they settled.
    fn warm_up(&self, bench: &mut Bench) -> Result<(f64, bool), ProbeError> {
        let limit = if bench.warmed_once {
            (WARM_UP_NEXT, WARM_UP_BATCH_NEXT)
        } else {
            (WARM_UP_FIRST, WARM_UP_BATCH_FIRST)
        };
        let warmup = {
            let mut dst = self.setup.lock_dst();
            clocks::warm_up(bench.nvml.as_deref(), self.stream, limit, || {
                self.timed(bench, &mut dst)
            })?
        };
        bench.warmed_once = true;
        Ok(warmup)
    }

    /// Kernel records of timed calls back to back (warm): the per-call timing and the aggregate,
    /// or why they were not measured.
    fn warm_records(&self, bench: &Bench) -> (Option<CallTiming>, Option<KernelRecords>, Option<String>) {
        let mut dst = self.setup.lock_dst();
        match record_calls(self.stream, RECORDED_CALLS, || Ok(()), || self.timed(bench, &mut dst)) {
            Ok((timing, aggregate)) => (Some(timing), Some(aggregate), None),
            Err(e) => (None, None, Some(e.message)),
        }
    }

    /// Kernel records of NPP's calls with the L2 cache flushed before each (cold), or why they
    /// were not measured.
    fn cold_records(&self, bench: &mut Bench, settings: &Settings) -> (Option<CallTiming>, Option<String>) {
        if !settings.cold {
            return (None, Some("not asked for (settings.cold = false)".to_owned()));
        }
        let mut dst = self.setup.lock_dst();
        let Some(flush) = bench.flush.as_mut() else {
            return (None, Some("no buffer to flush the L2 cache with".to_owned()));
        };
        let cold = record_calls(
            self.stream,
            COLD_CALLS,
            || Ok(flush.fill_async(0x5A, self.stream)?),
            || self.setup.launch(&mut dst, self.ctx),
        );
        match cold {
            Ok((timing, _)) => (Some(timing), None),
            Err(e) => (None, Some(e.message)),
        }
    }

    /// Host latency: one call at a time, launch plus synchronisation.
    fn host_latency(&self) -> Result<Option<HostLatency>, ProbeError> {
        let mut dst = self.setup.lock_dst();
        let mut us = Vec::new();
        for _ in 0..LATENCY_CALLS {
            let t = Instant::now();
            self.setup.launch(&mut dst, self.ctx)?;
            self.stream.synchronize()?;
            us.push(t.elapsed().as_secs_f64() * 1e6);
        }
        us.sort_by(f64::total_cmp);
        Ok(median(&us).map(|m| HostLatency {
            calls: LATENCY_CALLS,
            median_us: m,
            p90_us: quantile(&us, 0.9).unwrap_or(m),
        }))
    }

    /// The reference kernel's figure for scenario `s`: measured the first time its geometry
    /// comes in this pass, the earlier figure after; or why there is none.
    fn reference(
        &self,
        bench: &mut Bench,
        s: &ThroughputScenario,
        timer: &mut Timer<'_>,
        name: &str,
    ) -> (Option<ReferenceResult>, Option<String>) {
        match &bench.reference {
            // The catalogue's column: the one kernel of nppbench's own there is (`ReferenceConvert`).
            _ if s.primitive.row().gpu_reference != Some(GpuReference::ConvertU8ToF32) => {
                (None, Some("no reference kernel for this primitive".to_owned()))
            }
            Err(why) => (None, Some(why.to_string())),
            // Measured earlier in this pass on the same geometry: `measured_in` names where.
            Ok(_) if bench.references.contains_key(&s.geometry) => (Some(bench.references[&s.geometry].clone()), None),
            Ok(kernel) => match reference::time_reference(
                kernel,
                self.setup,
                self.stream,
                timer,
                &mut bench.host,
                &format!("{name}-reference"),
            ) {
                Ok(r) => {
                    bench.references.insert(
                        s.geometry,
                        ReferenceResult {
                            measured_in: Some(s.id.clone()),
                            ..r.clone()
                        },
                    );
                    (Some(r), None)
                }
                Err(why) => (None, Some(why.message)),
            },
        }
    }
}

fn one(bench: &mut Bench, ask: &Ask<'_>, s: &ThroughputScenario, index: usize) -> Result<ThroughputResult, ProbeError> {
    let gpu = bench.gpu.clone();
    let mut steps = Steps::new();
    faults::inject(&s.id, &gpu)?;
    let stream = Arc::new(Stream::new(&gpu, s.stream)?);
    let setup = Setup::with_cache(
        gpu.clone(),
        ask.npp_dir,
        s.primitive,
        &s.geometry,
        s.context,
        &stream,
        &mut bench.cache,
    )?;
    steps.done("buffers");
    // One call on a cleared destination; its output is checked after the timing (the calls are
    // deterministic, and padding must survive them all).
    setup.lock_dst().fill(DST_FILL)?;
    let (_, ctx) = setup.call(&stream)?;
    steps.done("first_call");
    let calls = Calls {
        setup: &setup,
        stream: &stream,
        ctx: &ctx,
    };
    let warmup = calls.warm_up(bench)?;
    steps.done("warm_up");
    let name = format!("scenario-{index}");
    let mut timer = Timer::new(
        &bench.gpu,
        bench.nvml.as_ref(),
        &stream,
        ask.settings,
        ask.criterion_dir,
    );
    let kernel = timer.time(&setup, &name, |dst| calls.timed(bench, dst))?;
    let device = timer
        .readings
        .as_ref()
        .map(|r| clocks::device_state(warmup, r.take(), ask.settings.samples));
    steps.done("criterion");
    // Kernel records: warm (back to back), then cold (the L2 flushed before each call).
    let (warm, kernel_records, kernel_records_not_measured) = calls.warm_records(bench);
    steps.done("records");
    let (cold, cold_not_measured) = calls.cold_records(bench, ask.settings);
    steps.done("cold");
    let host_latency = calls.host_latency()?;
    steps.done("latency");
    // The timed calls must have produced the right output, padding untouched.
    let correctness = setup.check_with(&mut bench.host)?;
    steps.done("check");
    let (reference, reference_not_measured) = calls.reference(bench, s, &mut timer, &name);
    steps.done("reference");
    // Once everything queued on them is done, the buffers can serve the next scenario.
    drop(timer);
    if bench.gpu.synchronize().is_ok() {
        drop(bench.cache.recycle(setup));
    }
    Ok(ThroughputResult {
        bytes_per_call: s.primitive.row().bytes_moved(s.geometry.width, s.geometry.height),
        kernel,
        correctness,
        kernel_records,
        kernel_records_not_measured,
        reference,
        reference_not_measured,
        per_call: warm,
        cold,
        cold_not_measured,
        host_latency,
        device,
        context: Some(ctx.record()),
        other_processes: Vec::new(),
        steps: steps.0,
    })
}

/// Runs every scenario in order, one JSON line of [`ThroughputRecord`] each, flushed as it
/// finishes so that a crash loses only the scenario running. Returns the GPU resources, still
/// alive (see [`Resources`]).
pub(crate) fn run(ask: &Ask<'_>, response: &Path) -> anyhow::Result<Resources> {
    let mut out = std::fs::File::create(response).with_context(|| format!("creating {}", response.display()))?;
    let gpu = Gpu::open(ask.device as usize).map_err(ProbeError::from);
    let mut bench = gpu.as_ref().ok().map(|gpu| Bench::open(gpu, ask));
    let uuid = gpu.as_ref().ok().map(|g| g.props().uuid.clone());
    for (index, s) in ask.scenarios.iter().enumerate() {
        let census =
            |bench: &Bench| processes::census(bench.nvml.as_deref(), &bench.gpu.props().uuid, ask.parent_pid).others;
        let started = Instant::now();
        let result = match (&gpu, bench.as_mut()) {
            (Ok(_), Some(bench)) => {
                let before: Vec<GpuProcess> = census(bench);
                one(bench, ask, s, index).map(|mut r| {
                    r.other_processes = before;
                    processes::merge(&mut r.other_processes, census(bench));
                    r
                })
            }
            _ => Err(gpu
                .as_ref()
                .err()
                .cloned()
                .unwrap_or_else(|| ProbeError::new(FailureKind::Gpu, "the GPU could not be opened"))),
        };
        let (outcome, result) = match result {
            Ok(r) => (Outcome::Ok, Some(r)),
            Err(e) => (e.outcome(), None),
        };
        let record = ThroughputRecord {
            scenario: s.clone(),
            outcome,
            result,
            pass: ask.pass,
            gpu: uuid.clone(),
            wall_ms: Some(started.elapsed().as_secs_f64() * 1e3),
        };
        writeln!(out, "{}", serde_json::to_string(&record)?)?;
        out.flush()?;
    }
    Ok(Resources::new(vec![Box::new(bench), Box::new(gpu)]))
}

#[cfg(test)]
mod tests {
    use super::{DelayHook, NoReference};

    /// run.json's `reference_not_measured` keeps the words it had when the reasons were strings.
    #[test]
    fn a_later_pass_says_why_it_has_no_reference() {
        assert_eq!(
            NoReference::LaterPass.to_string(),
            "measured in the first pass only (a ceiling for the geometry, not compared between passes)"
        );
        assert_eq!(NoReference::NotNeeded.to_string(), "no scenario needs it");
    }

    #[test]
    fn the_scaled_delay_grows_with_the_image_and_adds_to_the_fixed_one() {
        let hook = DelayHook {
            fixed: 100,
            per_mpixel: 60,
        };
        assert_eq!(hook.cycles(32, 32), 100);
        assert_eq!(hook.cycles(3840, 2160), 100 + 497);
        assert_eq!(hook.cycles(7680, 4320), 100 + 1990);
    }
}
