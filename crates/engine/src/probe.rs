//! The child side: one probe per process, reading a request file and writing its answer.
//!
//! Every failure a probe can see (CUDA, NPP, a wrong output) is written into its answer as a
//! failed outcome; only a crash or a hang leaves the parent to explain what happened.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use anyhow::Context;
use criterion::Criterion;
use nppbench_gpu::{DeviceBuffer, Gpu, KernelRecorder, ProcessMemoryProbe, ReferenceConvert, Stream, StreamTracker};
use nppbench_model::{
    Correctness, Estimate, Geometry, KernelRecords, KernelTiming, MemoryReading, MemoryResult, MemoryScenario,
    MemorySeries, Outcome, Primitive, ReferenceResult, Settings, StreamCounts, StreamKind, Threading, ThroughputRecord,
    ThroughputResult, ThroughputScenario,
};
use nppbench_npp::{DST_FILL, Npp, NppSearch, StreamContext};
use serde::Deserialize;

use crate::measurement::{CudaEventTime, TimingErrors};
use crate::protocol::{EnvironmentReply, MemoryReply, Request};

/// Runs the probe described by the JSON file `request` and writes its answer to `response`.
pub fn run_probe(request: &Path, response: &Path) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(request).with_context(|| format!("reading probe request {}", request.display()))?;
    let request: Request =
        serde_json::from_str(&text).with_context(|| format!("parsing probe request {}", request.display()))?;
    let write =
        |json: String| std::fs::write(response, json).with_context(|| format!("writing {}", response.display()));
    match request {
        Request::Environment { npp_dir } => {
            let reply = match crate::env::capture(npp_dir.as_deref()) {
                Ok(env) => EnvironmentReply::Ok(Box::new(env)),
                Err(e) => EnvironmentReply::Err(e),
            };
            write(serde_json::to_string(&reply)?)
        }
        Request::Memory {
            npp_dir,
            scenario,
            memory_budget_mib,
        } => {
            let reply = match memory_probe(npp_dir.as_deref(), &scenario, memory_budget_mib) {
                Ok((result, stopped)) => MemoryReply {
                    outcome: if stopped {
                        Outcome::StoppedAtBudget {
                            budget_mib: memory_budget_mib,
                        }
                    } else {
                        Outcome::Ok
                    },
                    result: Some(result),
                },
                Err(reason) => MemoryReply {
                    outcome: Outcome::Failed { reason },
                    result: None,
                },
            };
            write(serde_json::to_string(&reply)?)
        }
        Request::Throughput {
            npp_dir,
            scenarios,
            settings,
            criterion_dir,
        } => throughput_probe(npp_dir.as_deref(), &scenarios, &settings, &criterion_dir, response),
    }
}

/// A test hook for the fault tests: `NPPBENCH_FAULT=KIND@TEXT` makes the probe of every scenario
/// whose id contains TEXT crash (`crash`: SIGABRT), hang (`hang`), or ask the device for more
/// memory than it has (`oom`: a real CUDA out-of-memory error, without filling the device).
fn inject_fault(id: &str, gpu: &Gpu) -> Result<(), String> {
    let Some(spec) = std::env::var_os("NPPBENCH_FAULT") else {
        return Ok(());
    };
    let spec = spec.to_string_lossy();
    let Some((kind, target)) = spec.split_once('@') else {
        return Ok(());
    };
    if !id.contains(target) {
        return Ok(());
    }
    match kind {
        "crash" => std::process::abort(),
        "hang" => loop {
            std::thread::sleep(Duration::from_secs(1));
        },
        "oom" => {
            let too_much = gpu.props().total_mem.saturating_mul(2);
            DeviceBuffer::alloc(gpu, too_much).map(drop).map_err(text)
        }
        _ => Ok(()),
    }
}

/// The device, NPP and buffers a scenario works on, with the reference output to check against.
struct Setup {
    gpu: Gpu,
    npp: Npp,
    src: DeviceBuffer,
    /// Shared by the calling threads, which call one at a time.
    dst: Mutex<DeviceBuffer>,
    expected: Vec<u8>,
    primitive: Primitive,
    geometry: Geometry,
}

fn text<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

impl Setup {
    fn new(gpu: Gpu, npp_dir: Option<&Path>, primitive: Primitive, g: &Geometry) -> Result<Setup, String> {
        // Before anything sizes a buffer or a reference image from it.
        g.validate(primitive).map_err(text)?;
        let npp = Npp::load(&NppSearch::new(npp_dir)).map_err(text)?;
        if !npp.supports(primitive) {
            return Err(format!(
                "{} is not exported by NPP {}: not measured",
                primitive.npp_name(),
                npp.version()
            ));
        }
        let pattern = nppbench_npp::source_pattern(g);
        let mut src = DeviceBuffer::alloc(&gpu, g.src_bytes()).map_err(text)?;
        src.upload(&pattern).map_err(text)?;
        let dst = DeviceBuffer::alloc(&gpu, g.dst_bytes()).map_err(text)?;
        let expected = nppbench_npp::reference_output(primitive, g, &pattern);
        Ok(Setup {
            gpu,
            npp,
            src,
            dst: Mutex::new(dst),
            expected,
            primitive,
            geometry: *g,
        })
    }

    fn lock_dst(&self) -> std::sync::MutexGuard<'_, DeviceBuffer> {
        self.dst.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// One call on `stream` from the calling thread: launch and synchronise. Returns the host
    /// latency of both.
    fn call(&self, stream: &Stream) -> Result<Duration, String> {
        self.gpu.bind_to_thread().map_err(text)?;
        let ctx = StreamContext::new(stream, self.gpu.props());
        let mut dst = self.lock_dst();
        let t = Instant::now();
        self.npp
            .run(self.primitive, &self.geometry, &self.src, &mut dst, &ctx)
            .map_err(text)?;
        stream.synchronize().map_err(text)?;
        Ok(t.elapsed())
    }

    /// Clears the destination, runs one call on `stream` and checks the output.
    fn checked_call(&self, stream: &Stream) -> Result<(Duration, Correctness), String> {
        self.lock_dst().fill(DST_FILL).map_err(text)?;
        let latency = self.call(stream)?;
        Ok((latency, self.check()?))
    }

    /// Compares the destination with the CPU reference.
    fn check(&self) -> Result<Correctness, String> {
        let actual = self.lock_dst().download().map_err(text)?;
        nppbench_npp::max_abs_error(self.primitive, &self.geometry, &self.expected, &actual)
    }
}

/// Reads both memory probes.
struct Probes<'a> {
    gpu: &'a Gpu,
    nvml: Option<ProcessMemoryProbe>,
}

impl Probes<'_> {
    fn read(&self) -> Result<MemoryReading, String> {
        Ok(MemoryReading {
            device_used_bytes: self.gpu.used_bytes().map_err(text)?,
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
    /// The stream counts at the end, or why there are none.
    fn finish_streams(&mut self) -> (Option<StreamCounts>, Option<String>) {
        let tracker = match &self.tracker {
            Ok(tracker) => tracker,
            Err(why) => return (None, Some(why.clone())),
        };
        let events = tracker.events();
        let mut alive = std::collections::BTreeSet::new();
        let mut threads = std::collections::BTreeSet::new();
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

    fn record(&mut self, threads_spawned: u32, latency: Duration) -> Result<bool, String> {
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
}

fn spawn_error(e: std::io::Error) -> String {
    format!("cannot spawn a host thread: {e}")
}

fn joined<T>(r: std::thread::Result<Result<T, String>>) -> Result<T, String> {
    r.map_err(|_| "a calling thread panicked".to_owned())?
}

/// Runs a memory scenario; returns its result and whether it stopped at the budget.
fn memory_probe(npp_dir: Option<&Path>, s: &MemoryScenario, budget_mib: u64) -> Result<(MemoryResult, bool), String> {
    let entered = Instant::now();
    let gpu = Gpu::open(0).map_err(text)?;
    inject_fault(&s.id, &gpu)?;
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
    let shared = Stream::new(&gpu, kind).map_err(text)?;
    // Streams are counted from here: what NPP creates from the warm-up call on.
    rec.tracker = StreamTracker::start().map_err(text);
    rec.baseline = rec.probes.read()?;
    let startup_ms = entered.elapsed().as_secs_f64() * 1e3;
    rec.started = Instant::now();

    // The warm-up call, on this thread, checked.
    let (latency, _) = setup.checked_call(&shared)?;
    let mut stopped = rec.record(1, latency)?;
    let calls = s.calls;
    match s.threading {
        Threading::Single => {
            for _ in 0..calls {
                if stopped {
                    break;
                }
                let latency = setup.call(&shared)?;
                stopped = rec.record(1, latency)?;
            }
        }
        Threading::ThreadPerCall | Threading::ThreadPerCallOwnStream => {
            let own = s.threading.owns_stream();
            let own_streams = &own_streams;
            for i in 0..calls {
                if stopped {
                    break;
                }
                let latency = std::thread::scope(|scope| {
                    let worker = std::thread::Builder::new()
                        .spawn_scoped(scope, || {
                            if own {
                                own_streams.fetch_add(1, Ordering::SeqCst);
                                let stream = Stream::new(&gpu, StreamKind::NonBlocking).map_err(text)?;
                                setup.call(&stream)
                            } else {
                                setup.call(&shared)
                            }
                        })
                        .map_err(spawn_error)?;
                    joined(worker.join())
                })?;
                stopped = rec.record(i + 2, latency)?;
            }
        }
        Threading::Pool(size) => {
            std::thread::scope(|scope| -> Result<(), String> {
                let (done_tx, done_rx) = mpsc::channel::<Result<Duration, String>>();
                let mut jobs = Vec::new();
                for _ in 0..size {
                    let (job_tx, job_rx) = mpsc::channel::<()>();
                    let done_tx = done_tx.clone();
                    let (setup, shared) = (&setup, &shared);
                    std::thread::Builder::new()
                        .spawn_scoped(scope, move || {
                            for () in job_rx {
                                if done_tx.send(setup.call(shared)).is_err() {
                                    break;
                                }
                            }
                        })
                        .map_err(spawn_error)?;
                    jobs.push(job_tx);
                }
                for i in 0..calls {
                    if stopped {
                        break;
                    }
                    let worker = (i % size) as usize;
                    jobs[worker]
                        .send(())
                        .map_err(|_| "a pool thread exited early".to_owned())?;
                    let latency = done_rx.recv().map_err(|_| "a pool thread exited early".to_owned())??;
                    stopped = rec.record(1 + (i + 1).min(size), latency)?;
                }
                Ok(())
            })?;
        }
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

/// Criterion's `estimates.json` and `sample.json`, as much of them as nppbench reads.
#[derive(Deserialize)]
struct CriterionEstimates {
    mean: CriterionEstimate,
    median: CriterionEstimate,
    median_abs_dev: CriterionEstimate,
    std_dev: CriterionEstimate,
    slope: Option<CriterionEstimate>,
}

#[derive(Deserialize)]
struct CriterionEstimate {
    confidence_interval: CriterionInterval,
    point_estimate: f64,
    standard_error: f64,
}

#[derive(Deserialize)]
struct CriterionInterval {
    confidence_level: f64,
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(Deserialize)]
struct CriterionSample {
    iters: Vec<f64>,
    times: Vec<f64>,
}

impl From<CriterionEstimate> for Estimate {
    fn from(e: CriterionEstimate) -> Estimate {
        Estimate {
            point_ns: e.point_estimate,
            lower_ns: e.confidence_interval.lower_bound,
            upper_ns: e.confidence_interval.upper_bound,
            standard_error_ns: e.standard_error,
            confidence_level: e.confidence_interval.confidence_level,
        }
    }
}

/// Reads what criterion saved for benchmark `name` under `dir`.
fn read_criterion(dir: &Path, name: &str) -> Result<KernelTiming, String> {
    let base = dir.join(name).join("new");
    let read = |file: &str| {
        let path = base.join(file);
        std::fs::read_to_string(&path).map_err(|e| format!("criterion wrote no {}: {e}", path.display()))
    };
    let est: CriterionEstimates = serde_json::from_str(&read("estimates.json")?).map_err(text)?;
    let sample: CriterionSample = serde_json::from_str(&read("sample.json")?).map_err(text)?;
    Ok(KernelTiming {
        mean: est.mean.into(),
        median: est.median.into(),
        median_abs_dev: est.median_abs_dev.into(),
        std_dev: est.std_dev.into(),
        slope: est.slope.map(Into::into),
        sample_iters: sample.iters,
        sample_times_ns: sample.times,
    })
}

/// Calls in the batch whose kernels CUPTI records.
const RECORDED_LAUNCHES: u32 = 200;

/// Runs `launch` [`RECORDED_LAUNCHES`] times back to back on `stream` with CUPTI's kernel
/// records on, and summarises the kernels' own durations.
fn record_kernels(stream: &Stream, mut launch: impl FnMut() -> Result<(), String>) -> Result<KernelRecords, String> {
    let recorder = KernelRecorder::start().map_err(text)?;
    recorder.take(stream).map_err(text)?;
    for _ in 0..RECORDED_LAUNCHES {
        launch()?;
    }
    let mut ns: Vec<f64> = recorder
        .take(stream)
        .map_err(text)?
        .into_iter()
        .map(|d| d as f64)
        .collect();
    if ns.is_empty() {
        return Err("CUPTI delivered no kernel records".to_owned());
    }
    ns.sort_by(f64::total_cmp);
    let mid = ns.len() / 2;
    let median_ns = if ns.len() % 2 == 0 {
        (ns[mid - 1] + ns[mid]) / 2.0
    } else {
        ns[mid]
    };
    Ok(KernelRecords {
        launches: RECORDED_LAUNCHES,
        kernels: ns.len() as u32,
        median_ns,
        min_ns: ns[0],
        max_ns: ns[ns.len() - 1],
        per_call_ns: ns.iter().sum::<f64>() / f64::from(RECORDED_LAUNCHES),
    })
}

/// Configures criterion from the matrix settings, writing under `dir`.
fn criterion_for(
    gpu: &Gpu,
    stream: &Arc<Stream>,
    settings: &Settings,
    dir: &Path,
) -> (Criterion<CudaEventTime>, TimingErrors) {
    let measurement = CudaEventTime::new(gpu, stream.clone());
    let errors = measurement.errors();
    let criterion = Criterion::default()
        .with_measurement(measurement)
        .output_directory(dir)
        .warm_up_time(Duration::from_millis(settings.warm_up_ms))
        .measurement_time(Duration::from_millis(settings.measurement_ms))
        .sample_size(settings.samples)
        .nresamples(settings.resamples)
        .without_plots()
        .with_output_color(false);
    (criterion, errors)
}

fn throughput_one(
    gpu: &Gpu,
    reference: Result<&ReferenceConvert, &String>,
    npp_dir: Option<&Path>,
    s: &ThroughputScenario,
    index: usize,
    settings: &Settings,
    criterion_dir: &Path,
) -> Result<ThroughputResult, String> {
    inject_fault(&s.id, gpu)?;
    let setup = Setup::new(gpu.clone(), npp_dir, s.primitive, &s.geometry)?;
    let stream = Arc::new(Stream::new(gpu, s.stream).map_err(text)?);
    let (_, correctness) = setup.checked_call(&stream)?;
    let ctx = StreamContext::new(&stream, gpu.props());
    let name = format!("scenario-{index}");
    let (mut criterion, timing_errors) = criterion_for(gpu, &stream, settings, criterion_dir);
    let (kernel, records) = time_launches(
        &setup,
        &stream,
        &mut criterion,
        &timing_errors,
        &name,
        criterion_dir,
        |dst| {
            setup
                .npp
                .run(s.primitive, &s.geometry, &setup.src, dst, &ctx)
                .map_err(text)
        },
    )?;
    // The timed calls must still have produced the right output.
    setup.check()?;
    let (kernel_records, kernel_records_not_measured) = match records {
        Ok(r) => (Some(r), None),
        Err(why) => (None, Some(why)),
    };
    let (reference, reference_not_measured) = match reference {
        Err(why) => (None, Some(why.clone())),
        Ok(_) if s.primitive != Primitive::Convert8u32fC1 => {
            (None, Some("no reference kernel for this primitive".to_owned()))
        }
        Ok(reference_kernel) => match time_reference(
            reference_kernel,
            &setup,
            &stream,
            &mut criterion,
            &timing_errors,
            &format!("{name}-reference"),
            criterion_dir,
        ) {
            Ok(r) => (Some(r), None),
            Err(why) => (None, Some(why)),
        },
    };
    Ok(ThroughputResult {
        bytes_per_call: s.geometry.pixels() * s.primitive.bytes_moved_per_pixel(),
        kernel,
        correctness,
        kernel_records,
        kernel_records_not_measured,
        reference,
        reference_not_measured,
    })
}

/// Times `launch` (one call into the destination) with criterion as `name` — CUDA events around
/// batches — then records its kernels with CUPTI. A launch or timing error fails the whole; a
/// failed recording is returned for the caller to report as 'not measured'.
fn time_launches(
    setup: &Setup,
    stream: &Stream,
    criterion: &mut Criterion<CudaEventTime>,
    timing_errors: &TimingErrors,
    name: &str,
    criterion_dir: &Path,
    mut launch: impl FnMut(&mut DeviceBuffer) -> Result<(), String>,
) -> Result<(KernelTiming, Result<KernelRecords, String>), String> {
    let mut dst = setup.lock_dst();
    let mut launch_error = None;
    criterion.bench_function(name, |b| {
        b.iter(|| {
            if let Err(e) = launch(&mut dst) {
                launch_error.get_or_insert(e);
            }
        })
    });
    if let Some(e) = launch_error {
        return Err(e);
    }
    if let Some(e) = timing_errors.take() {
        return Err(format!("timing with CUDA events failed: {e}"));
    }
    let records = record_kernels(stream, || launch(&mut dst));
    Ok((read_criterion(criterion_dir, name)?, records))
}

/// Checks the reference kernel against the CPU reference, then times it as NPP was timed.
fn time_reference(
    kernel: &ReferenceConvert,
    setup: &Setup,
    stream: &Stream,
    criterion: &mut Criterion<CudaEventTime>,
    timing_errors: &TimingErrors,
    name: &str,
    criterion_dir: &Path,
) -> Result<ReferenceResult, String> {
    let g = &setup.geometry;
    let correctness = {
        let mut dst = setup.lock_dst();
        dst.fill(DST_FILL).map_err(text)?;
        kernel.launch(g, &setup.src, &mut dst, stream).map_err(text)?;
        stream.synchronize().map_err(text)?;
        drop(dst);
        setup
            .check()
            .map_err(|e| format!("the reference kernel is wrong: {e}"))?
    };
    let (timing, records) = time_launches(setup, stream, criterion, timing_errors, name, criterion_dir, |dst| {
        kernel.launch(g, &setup.src, dst, stream).map_err(text)
    })?;
    Ok(ReferenceResult {
        path: ReferenceConvert::path(g).to_owned(),
        kernel: timing,
        correctness,
        kernel_records: records.ok(),
    })
}

fn throughput_probe(
    npp_dir: Option<&Path>,
    scenarios: &[ThroughputScenario],
    settings: &Settings,
    criterion_dir: &Path,
    response: &Path,
) -> anyhow::Result<()> {
    let mut out = std::fs::File::create(response).with_context(|| format!("creating {}", response.display()))?;
    let gpu = Gpu::open(0);
    let reference = match &gpu {
        Ok(gpu) => ReferenceConvert::compile(gpu).map_err(text),
        Err(e) => Err(e.to_string()),
    };
    for (index, s) in scenarios.iter().enumerate() {
        let result = match &gpu {
            Ok(gpu) => throughput_one(gpu, reference.as_ref(), npp_dir, s, index, settings, criterion_dir),
            Err(e) => Err(e.to_string()),
        };
        let record = match result {
            Ok(r) => ThroughputRecord {
                scenario: s.clone(),
                outcome: Outcome::Ok,
                result: Some(r),
            },
            Err(reason) => ThroughputRecord {
                scenario: s.clone(),
                outcome: Outcome::Failed { reason },
                result: None,
            },
        };
        writeln!(out, "{}", serde_json::to_string(&record)?)?;
        out.flush()?;
    }
    Ok(())
}
