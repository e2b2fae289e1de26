//! The throughput probe: every throughput scenario of one pass on one GPU, in one process. Each
//! is timed with criterion (CUDA events around batches), then with CUPTI's kernel records (the
//! kernels of each call summed: warm, back to back, and cold, the L2 cache flushed before every
//! call), and one call at a time for its host latency; beside it, the device's clocks, power and
//! throttling, and the reference kernel.

use std::io::Write;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use criterion::Criterion;
use nppbench_gpu::{
    DelayKernel, DeviceBuffer, DeviceReading, Gpu, HostBuffer, KernelRecord, KernelRecorder, ProcessMemoryProbe,
    ReferenceConvert, Stream,
};
use nppbench_model::{
    CallTiming, DeviceSample, DeviceState, FailureKind, GpuProcess, HostLatency, KernelRecords, KernelStat,
    KernelTiming, Outcome, Primitive, ReferenceResult, Settings, ThroughputRecord, ThroughputResult,
    ThroughputScenario,
};
use nppbench_npp::{DST_FILL, StreamContext};
use nppbench_stats::{median, median_interval, quantile};

use super::fixture::{ScenarioCache, Setup};
use super::{Resources, Steps, criterion_files, faults, processes};
use crate::error::ProbeError;
use crate::measurement::{CudaEventTime, DeviceReadings, TimingErrors};

/// Calls in the batch whose kernels CUPTI records, warm.
const RECORDED_CALLS: u32 = 200;
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

/// Why a later pass has no reference figure.
const REFERENCE_IN_FIRST_PASS: &str =
    "measured in the first pass only (a ceiling for the geometry, not compared between passes)";

/// The test hook for calibration: `NPPBENCH_DELAY_CYCLES=N` queues N SM clock cycles of GPU
/// work after every timed call, a known slowdown for `compare` to find. run.json says so.
pub(crate) const DELAY_HOOK: &str = "NPPBENCH_DELAY_CYCLES";

fn delay_cycles() -> Option<u64> {
    std::env::var(DELAY_HOOK).ok()?.parse().ok().filter(|c| *c > 0)
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
    reference: Result<ReferenceConvert, String>,
    delay: Option<(DelayKernel, u64)>,
    /// Pushes the L2 cache out between cold calls: twice its size.
    flush: Option<DeviceBuffer>,
    warmed_once: bool,
    /// Patterns, expected outputs and spare device buffers, kept between scenarios.
    cache: ScenarioCache,
    /// Page-locked host memory the outputs are checked in, kept between scenarios.
    host: HostBuffer,
    /// The reference kernel's results in this pass, by geometry.
    references: std::collections::HashMap<nppbench_model::Geometry, ReferenceResult>,
}

/// One call as the timing makes it: NPP into the destination, then the test hook's delay.
fn timed_call(
    setup: &Setup,
    bench: &Bench,
    dst: &mut DeviceBuffer,
    ctx: &StreamContext,
    stream: &Stream,
) -> Result<(), ProbeError> {
    setup.launch(dst, ctx)?;
    if let Some((kernel, cycles)) = &bench.delay {
        kernel.launch(*cycles, stream)?;
    }
    Ok(())
}

/// Groups kernel records by launch order: `per_call` kernels a call, each call's durations
/// summed. `None` when the records do not repeat that pattern.
fn per_call_times(records: &[KernelRecord], per_call: usize, calls: usize) -> Option<Vec<f64>> {
    if per_call == 0 || records.len() != per_call * calls {
        return None;
    }
    let names: Vec<&str> = records[..per_call].iter().map(|r| r.name.as_str()).collect();
    records
        .chunks(per_call)
        .map(|call| {
            call.iter()
                .zip(&names)
                .all(|(r, n)| r.name == *n)
                .then(|| call.iter().map(|r| r.duration_ns() as f64).sum())
        })
        .collect()
}

/// Summarises per-call times and the kernels of a call.
fn call_timing(times: &mut [f64], records: &[KernelRecord], per_call: usize) -> CallTiming {
    times.sort_by(f64::total_cmp);
    let median_ns = median(times).unwrap_or(f64::NAN);
    let (lower_ns, upper_ns) = median_interval(times, 0.95).unwrap_or((median_ns, median_ns));
    let kernels = (0..per_call)
        .map(|k| {
            let durations: Vec<f64> = records
                .iter()
                .skip(k)
                .step_by(per_call)
                .map(|r| r.duration_ns() as f64)
                .collect();
            KernelStat {
                name: records[k].name.clone(),
                median_ns: median(&durations).unwrap_or(f64::NAN),
            }
        })
        .collect();
    CallTiming {
        calls: times.len() as u32,
        kernels_per_call: per_call as u32,
        median_ns,
        lower_ns,
        upper_ns,
        min_ns: times.first().copied().unwrap_or(f64::NAN),
        max_ns: times.last().copied().unwrap_or(f64::NAN),
        kernels,
    }
}

/// The kernels of one call: how many, so that a batch's records can be grouped by call.
fn kernels_per_call(
    recorder: &KernelRecorder,
    stream: &Stream,
    mut one: impl FnMut() -> Result<(), ProbeError>,
) -> Result<usize, ProbeError> {
    recorder.take(stream)?;
    one()?;
    Ok(recorder.take(stream)?.len())
}

/// Times `calls` calls with CUPTI, each preceded by `before` (an L2 flush for a cold figure):
/// the kernels of each call summed. The aggregate of single kernels comes too, for the figures
/// runs recorded before per-call grouping.
fn record_calls(
    stream: &Stream,
    calls: u32,
    mut before: impl FnMut() -> Result<(), ProbeError>,
    mut launch: impl FnMut() -> Result<(), ProbeError>,
) -> Result<(CallTiming, KernelRecords), ProbeError> {
    let recorder = KernelRecorder::start()?;
    let per_call = kernels_per_call(&recorder, stream, &mut launch)?;
    for _ in 0..calls {
        before()?;
        launch()?;
    }
    let records = recorder.take(stream)?;
    if records.is_empty() {
        return Err(ProbeError::new(FailureKind::Gpu, "CUPTI delivered no kernel records"));
    }
    let mut single: Vec<f64> = records.iter().map(|r| r.duration_ns() as f64).collect();
    single.sort_by(f64::total_cmp);
    let aggregate = KernelRecords {
        launches: calls,
        kernels: records.len() as u32,
        median_ns: median(&single).unwrap_or(f64::NAN),
        min_ns: single[0],
        max_ns: single[single.len() - 1],
        per_call_ns: single.iter().sum::<f64>() / f64::from(calls),
    };
    let mut times = per_call_times(&records, per_call, calls as usize).ok_or_else(|| {
        ProbeError::new(
            FailureKind::Other,
            format!(
                "{} kernel records for {calls} calls of {per_call} kernels each: the calls do not repeat one pattern",
                records.len()
            ),
        )
    })?;
    Ok((call_timing(&mut times, &records, per_call), aggregate))
}

/// The criterion run of one scenario: configured from the matrix settings, writing under `dir`,
/// with the CUDA-event measurement's errors and device readings kept aside.
struct Timer<'a> {
    criterion: Criterion<CudaEventTime>,
    errors: TimingErrors,
    readings: Option<DeviceReadings>,
    dir: &'a Path,
}

impl<'a> Timer<'a> {
    fn new(bench: &Bench, stream: &Arc<Stream>, settings: &Settings, dir: &'a Path) -> Timer<'a> {
        let measurement = CudaEventTime::new(&bench.gpu, stream.clone());
        let errors = measurement.errors();
        let (measurement, readings) = match &bench.nvml {
            Some(nvml) => {
                let (m, r) = measurement.with_device_state(nvml.clone());
                (m, Some(r))
            }
            None => (measurement, None),
        };
        let criterion = Criterion::default()
            .with_measurement(measurement)
            .output_directory(dir)
            .warm_up_time(Duration::from_millis(settings.warm_up_ms))
            .measurement_time(Duration::from_millis(settings.measurement_ms))
            .sample_size(settings.samples)
            .nresamples(settings.resamples)
            .without_plots()
            .with_output_color(false);
        Timer {
            criterion,
            errors,
            readings,
            dir,
        }
    }

    /// Times `launch` (one call into the destination) with criterion as `name`: CUDA events
    /// around batches. A launch or timing error fails the whole.
    fn time(
        &mut self,
        setup: &Setup,
        name: &str,
        mut launch: impl FnMut(&mut DeviceBuffer) -> Result<(), ProbeError>,
    ) -> Result<KernelTiming, ProbeError> {
        let mut dst = setup.lock_dst();
        let mut launch_error = None;
        self.criterion.bench_function(name, |b| {
            b.iter(|| {
                if let Err(e) = launch(&mut dst) {
                    launch_error.get_or_insert(e);
                }
            })
        });
        if let Some(e) = launch_error {
            return Err(e);
        }
        if let Some(e) = self.errors.take() {
            return Err(ProbeError::from(e).context("timing with CUDA events failed"));
        }
        criterion_files::read(self.dir, name)
    }
}

/// Works the GPU with `launch` until its SM clock settles (three readings in a row within 1%,
/// one after each `batch` of work), or `limit` passes. Returns how long it took and whether the
/// clocks settled.
fn warm_up(
    nvml: Option<&ProcessMemoryProbe>,
    stream: &Stream,
    (limit, batch): (Duration, Duration),
    mut launch: impl FnMut() -> Result<(), ProbeError>,
) -> Result<(f64, bool), ProbeError> {
    let t = Instant::now();
    let Some(nvml) = nvml else {
        // No clocks to read: work for the whole limit's tenth.
        while t.elapsed() < limit / 10 {
            launch()?;
            stream.synchronize()?;
        }
        return Ok((t.elapsed().as_secs_f64() * 1e3, false));
    };
    let mut last: Vec<u32> = Vec::new();
    while t.elapsed() < limit {
        let started = Instant::now();
        while started.elapsed() < batch {
            launch()?;
        }
        stream.synchronize()?;
        if let Ok(r) = nvml.reading() {
            last.push(r.sm_mhz);
            if last.len() >= 3 {
                let tail = &last[last.len() - 3..];
                let (lo, hi) = (
                    tail.iter().min().copied().unwrap_or(0),
                    tail.iter().max().copied().unwrap_or(0),
                );
                if lo > 0 && f64::from(hi - lo) <= 0.01 * f64::from(hi) {
                    return Ok((t.elapsed().as_secs_f64() * 1e3, true));
                }
            }
        }
    }
    Ok((t.elapsed().as_secs_f64() * 1e3, false))
}

fn device_state(warmup: (f64, bool), readings: Vec<DeviceReading>, samples: usize) -> DeviceState {
    // Criterion's warm-up batches come first; its samples are the last readings.
    let samples: Vec<DeviceSample> = readings[readings.len().saturating_sub(samples)..]
        .iter()
        .map(|r| DeviceSample {
            sm_mhz: r.sm_mhz,
            memory_mhz: r.memory_mhz,
            power_mw: r.power_mw,
            temperature_c: r.temperature_c,
            throttle_reasons: r.throttle_reasons,
        })
        .collect();
    let throttled = readings[readings.len().saturating_sub(samples.len())..]
        .iter()
        .filter(|r| r.throttled())
        .count() as u32;
    DeviceState {
        warmup_ms: warmup.0,
        settled: warmup.1,
        samples,
        throttled_samples: throttled,
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
    let limit = if bench.warmed_once {
        (WARM_UP_NEXT, WARM_UP_BATCH_NEXT)
    } else {
        (WARM_UP_FIRST, WARM_UP_BATCH_FIRST)
    };
    let warmup = {
        let mut dst = setup.lock_dst();
        warm_up(bench.nvml.as_deref(), &stream, limit, || {
            timed_call(&setup, bench, &mut dst, &ctx, &stream)
        })?
    };
    bench.warmed_once = true;
    steps.done("warm_up");
    let name = format!("scenario-{index}");
    let mut timer = Timer::new(bench, &stream, ask.settings, ask.criterion_dir);
    let kernel = timer.time(&setup, &name, |dst| timed_call(&setup, bench, dst, &ctx, &stream))?;
    let device = timer
        .readings
        .as_ref()
        .map(|r| device_state(warmup, r.take(), ask.settings.samples));
    steps.done("criterion");
    // Kernel records: warm (back to back), then cold (the L2 flushed before each call).
    let (warm, kernel_records, kernel_records_not_measured) = {
        let mut dst = setup.lock_dst();
        match record_calls(
            &stream,
            RECORDED_CALLS,
            || Ok(()),
            || timed_call(&setup, bench, &mut dst, &ctx, &stream),
        ) {
            Ok((timing, aggregate)) => (Some(timing), Some(aggregate), None),
            Err(e) => (None, None, Some(e.message)),
        }
    };
    steps.done("records");
    let (cold, cold_not_measured) = if !ask.settings.cold {
        (None, Some("not asked for (settings.cold = false)".to_owned()))
    } else {
        let mut dst = setup.lock_dst();
        match bench.flush.as_mut() {
            None => (None, Some("no buffer to flush the L2 cache with".to_owned())),
            Some(flush) => {
                let flush_stream = &stream;
                let cold = record_calls(
                    &stream,
                    COLD_CALLS,
                    || Ok(flush.fill_async(0x5A, flush_stream)?),
                    || setup.launch(&mut dst, &ctx),
                );
                match cold {
                    Ok((timing, _)) => (Some(timing), None),
                    Err(e) => (None, Some(e.message)),
                }
            }
        }
    };
    steps.done("cold");
    // Host latency: one call at a time, launch plus synchronisation.
    let host_latency = {
        let mut dst = setup.lock_dst();
        let mut us = Vec::new();
        for _ in 0..LATENCY_CALLS {
            let t = Instant::now();
            setup.launch(&mut dst, &ctx)?;
            stream.synchronize()?;
            us.push(t.elapsed().as_secs_f64() * 1e6);
        }
        us.sort_by(f64::total_cmp);
        median(&us).map(|m| HostLatency {
            calls: LATENCY_CALLS,
            median_us: m,
            p90_us: quantile(&us, 0.9).unwrap_or(m),
        })
    };
    steps.done("latency");
    // The timed calls must have produced the right output, padding untouched.
    let correctness = setup.check_with(&mut bench.host)?;
    steps.done("check");
    let (reference, reference_not_measured) = match &bench.reference {
        _ if s.primitive != Primitive::CONVERT_8U32F_C1R => {
            (None, Some("no reference kernel for this primitive".to_owned()))
        }
        Err(why) => (None, Some(why.clone())),
        // Measured earlier in this pass on the same geometry: `measured_in` names where.
        Ok(_) if bench.references.contains_key(&s.geometry) => (Some(bench.references[&s.geometry].clone()), None),
        Ok(kernel) => match time_reference(
            kernel,
            &setup,
            &stream,
            &mut timer,
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
    };
    steps.done("reference");
    // Once everything queued on them is done, the buffers can serve the next scenario.
    drop(timer);
    if bench.gpu.synchronize().is_ok() {
        bench.cache.recycle(setup);
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

/// Checks the reference kernel against the CPU reference, then times it as NPP was timed.
fn time_reference(
    kernel: &ReferenceConvert,
    setup: &Setup,
    stream: &Stream,
    timer: &mut Timer<'_>,
    host: &mut HostBuffer,
    name: &str,
) -> Result<ReferenceResult, ProbeError> {
    let g = &setup.geometry;
    let correctness = {
        let mut dst = setup.lock_dst();
        dst.fill(DST_FILL)?;
        kernel.launch(g, setup.source(), &mut dst, stream)?;
        stream.synchronize()?;
        drop(dst);
        setup
            .check_with(host)
            .map_err(|e| e.context("the reference kernel is wrong"))?
    };
    let timing = timer.time(setup, name, |dst| Ok(kernel.launch(g, setup.source(), dst, stream)?))?;
    let records = {
        let mut dst = setup.lock_dst();
        record_calls(
            stream,
            RECORDED_CALLS,
            || Ok(()),
            || Ok(kernel.launch(g, setup.source(), &mut dst, stream)?),
        )
    };
    Ok(ReferenceResult {
        path: ReferenceConvert::path(g).to_owned(),
        kernel: timing,
        correctness,
        kernel_records: records.ok().map(|(_, aggregate)| aggregate),
        measured_in: None,
    })
}

/// Runs every scenario in order, one JSON line of [`ThroughputRecord`] each, flushed as it
/// finishes so that a crash loses only the scenario running. Returns the GPU resources, still
/// alive (see [`Resources`]).
pub(crate) fn run(ask: &Ask<'_>, response: &Path) -> anyhow::Result<Resources> {
    let mut out = std::fs::File::create(response).with_context(|| format!("creating {}", response.display()))?;
    let gpu = Gpu::open(ask.device as usize).map_err(ProbeError::from);
    let mut bench = gpu.as_ref().ok().map(|gpu| {
        let nvml = ProcessMemoryProbe::new(&gpu.props().uuid).ok().map(Rc::new);
        let needs_reference = ask
            .scenarios
            .iter()
            .any(|s| s.primitive == Primitive::CONVERT_8U32F_C1R);
        // The reference is a ceiling for the geometry, read from the first pass and never
        // compared between passes: later passes neither compile nor time it.
        let reference = if ask.pass > 1 {
            Err(REFERENCE_IN_FIRST_PASS.to_owned())
        } else if needs_reference {
            ReferenceConvert::compile(gpu).map_err(|e| e.to_string())
        } else {
            Err("no scenario needs it".to_owned())
        };
        let delay = delay_cycles().and_then(|c| DelayKernel::compile(gpu).ok().map(|k| (k, c)));
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
            references: std::collections::HashMap::new(),
        }
    });
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
