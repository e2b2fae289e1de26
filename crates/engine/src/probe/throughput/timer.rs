//! Timing one scenario with criterion: CUDA events around batches of calls, configured from the
//! matrix settings, with the measurement's errors and device readings kept aside.

use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use criterion::Criterion;
use nppbench_gpu::{DeviceBuffer, Gpu, ProcessMemoryProbe, Stream};
use nppbench_model::{KernelTiming, Settings};

use super::criterion_files;
use crate::error::ProbeError;
use crate::measurement::{CudaEventTime, DeviceReadings, TimingErrors};
use crate::probe::setup::Setup;

/// The criterion run of one scenario: configured from the matrix settings, writing under `dir`,
/// with the CUDA-event measurement's errors and device readings kept aside.
pub(super) struct Timer<'a> {
    criterion: Criterion<CudaEventTime>,
    errors: TimingErrors,
    pub(super) readings: Option<DeviceReadings>,
    dir: &'a Path,
}

impl<'a> Timer<'a> {
    /// A timer for work on `stream`, reading the device's state from `nvml` after each batch
    /// where there is one.
    pub(super) fn new(
        gpu: &Gpu,
        nvml: Option<&Rc<ProcessMemoryProbe>>,
        stream: &Arc<Stream>,
        settings: &Settings,
        dir: &'a Path,
    ) -> Timer<'a> {
        let measurement = CudaEventTime::new(gpu, stream.clone());
        let errors = measurement.errors();
        let (measurement, readings) = match nvml {
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
    pub(super) fn time(
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
