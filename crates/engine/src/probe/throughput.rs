//! The throughput probe: every throughput scenario in one process, timed with criterion (CUDA
//! events around batches) and with CUPTI's kernel records, beside the reference kernel.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use criterion::Criterion;
use nppbench_gpu::{DeviceBuffer, Gpu, KernelRecorder, ReferenceConvert, Stream};
use nppbench_model::{
    FailureKind, KernelRecords, KernelTiming, Outcome, Primitive, ReferenceResult, Settings, ThroughputRecord,
    ThroughputResult, ThroughputScenario,
};
use nppbench_npp::{DST_FILL, StreamContext};

use super::criterion_files;
use super::faults;
use super::fixture::Setup;
use crate::error::ProbeError;
use crate::measurement::{CudaEventTime, TimingErrors};

/// Calls in the batch whose kernels CUPTI records.
const RECORDED_LAUNCHES: u32 = 200;

/// Runs `launch` [`RECORDED_LAUNCHES`] times back to back on `stream` with CUPTI's kernel
/// records on, and summarises the kernels' own durations.
fn record_kernels(
    stream: &Stream,
    mut launch: impl FnMut() -> Result<(), ProbeError>,
) -> Result<KernelRecords, ProbeError> {
    let recorder = KernelRecorder::start()?;
    recorder.take(stream)?;
    for _ in 0..RECORDED_LAUNCHES {
        launch()?;
    }
    let mut ns: Vec<f64> = recorder.take(stream)?.into_iter().map(|d| d as f64).collect();
    if ns.is_empty() {
        return Err(ProbeError::new(FailureKind::Gpu, "CUPTI delivered no kernel records"));
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

/// The criterion run of one scenario: configured from the matrix settings, writing under `dir`,
/// with the CUDA-event measurement's errors kept aside.
struct Timer<'a> {
    criterion: Criterion<CudaEventTime>,
    errors: TimingErrors,
    dir: &'a Path,
}

impl<'a> Timer<'a> {
    fn new(gpu: &Gpu, stream: &Arc<Stream>, settings: &Settings, dir: &'a Path) -> Timer<'a> {
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
        Timer { criterion, errors, dir }
    }

    /// Times `launch` (one call into the destination) with criterion as `name` — CUDA events
    /// around batches — then records its kernels with CUPTI. A launch or timing error fails the
    /// whole; a failed recording is returned for the caller to report as 'not measured'.
    fn time_launches(
        &mut self,
        setup: &Setup,
        stream: &Stream,
        name: &str,
        mut launch: impl FnMut(&mut DeviceBuffer) -> Result<(), ProbeError>,
    ) -> Result<(KernelTiming, Result<KernelRecords, ProbeError>), ProbeError> {
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
        let records = record_kernels(stream, || launch(&mut dst));
        Ok((criterion_files::read(self.dir, name)?, records))
    }
}

fn one(
    gpu: &Gpu,
    reference: Result<&ReferenceConvert, &String>,
    npp_dir: Option<&Path>,
    s: &ThroughputScenario,
    index: usize,
    settings: &Settings,
    criterion_dir: &Path,
) -> Result<ThroughputResult, ProbeError> {
    faults::inject(&s.id, gpu)?;
    let setup = Setup::new(gpu.clone(), npp_dir, s.primitive, &s.geometry)?;
    let stream = Arc::new(Stream::new(gpu, s.stream)?);
    let (_, correctness) = setup.checked_call(&stream)?;
    let ctx = StreamContext::new(&stream, gpu.props());
    let name = format!("scenario-{index}");
    let mut timer = Timer::new(gpu, &stream, settings, criterion_dir);
    let (kernel, records) = timer.time_launches(&setup, &stream, &name, |dst| {
        Ok(setup.npp.run(s.primitive, &s.geometry, &setup.src, dst, &ctx)?)
    })?;
    // The timed calls must still have produced the right output.
    setup.check()?;
    let (kernel_records, kernel_records_not_measured) = match records {
        Ok(r) => (Some(r), None),
        Err(why) => (None, Some(why.message)),
    };
    let (reference, reference_not_measured) = match reference {
        Err(why) => (None, Some(why.clone())),
        Ok(_) if s.primitive != Primitive::Convert8u32fC1 => {
            (None, Some("no reference kernel for this primitive".to_owned()))
        }
        Ok(reference_kernel) => {
            match time_reference(
                reference_kernel,
                &setup,
                &stream,
                &mut timer,
                &format!("{name}-reference"),
            ) {
                Ok(r) => (Some(r), None),
                Err(why) => (None, Some(why.message)),
            }
        }
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

/// Checks the reference kernel against the CPU reference, then times it as NPP was timed.
fn time_reference(
    kernel: &ReferenceConvert,
    setup: &Setup,
    stream: &Stream,
    timer: &mut Timer<'_>,
    name: &str,
) -> Result<ReferenceResult, ProbeError> {
    let g = &setup.geometry;
    let correctness = {
        let mut dst = setup.lock_dst();
        dst.fill(DST_FILL)?;
        kernel.launch(g, &setup.src, &mut dst, stream)?;
        stream.synchronize()?;
        drop(dst);
        setup.check().map_err(|e| e.context("the reference kernel is wrong"))?
    };
    let (timing, records) =
        timer.time_launches(
            setup,
            stream,
            name,
            |dst| Ok(kernel.launch(g, &setup.src, dst, stream)?),
        )?;
    Ok(ReferenceResult {
        path: ReferenceConvert::path(g).to_owned(),
        kernel: timing,
        correctness,
        kernel_records: records.ok(),
    })
}

/// Runs every scenario in order, one JSON line of [`ThroughputRecord`] each, flushed as it
/// finishes so that a crash loses only the scenario running.
pub(crate) fn run(
    npp_dir: Option<&Path>,
    scenarios: &[ThroughputScenario],
    settings: &Settings,
    criterion_dir: &Path,
    response: &Path,
) -> anyhow::Result<()> {
    let mut out = std::fs::File::create(response).with_context(|| format!("creating {}", response.display()))?;
    let gpu = Gpu::open(0).map_err(ProbeError::from);
    let reference = match &gpu {
        Ok(gpu) => ReferenceConvert::compile(gpu).map_err(|e| e.to_string()),
        Err(e) => Err(e.message.clone()),
    };
    for (index, s) in scenarios.iter().enumerate() {
        let result = match &gpu {
            Ok(gpu) => one(gpu, reference.as_ref(), npp_dir, s, index, settings, criterion_dir),
            Err(e) => Err(e.clone()),
        };
        let (outcome, result) = match result {
            Ok(r) => (Outcome::Ok, Some(r)),
            Err(e) => (e.outcome(), None),
        };
        let record = ThroughputRecord {
            scenario: s.clone(),
            outcome,
            result,
        };
        writeln!(out, "{}", serde_json::to_string(&record)?)?;
        out.flush()?;
    }
    Ok(())
}
