//! A criterion [`Measurement`] that times what a benchmark queues on a CUDA stream with events.
//!
//! Criterion calls `start`, runs the routine a batch of times, then `end`: the events bracket the
//! whole batch on the GPU, so launch latency is amortised over the batch rather than counted in
//! every call, and criterion's slope estimate is the per-call time.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use nppbench_gpu::{DeviceReading, EventPair, Gpu, GpuError, ProcessMemoryProbe, Stream};

/// GPU time in nanoseconds between two events recorded on one stream.
pub struct CudaEventTime {
    gpu: Gpu,
    stream: Arc<Stream>,
    error: Rc<RefCell<Option<GpuError>>>,
    /// Where each batch's device state goes, read from NVML after the batch (when given).
    device: Option<(Rc<ProcessMemoryProbe>, DeviceReadings)>,
}

/// The device's state read after each batch a [`CudaEventTime`] timed, warm-up batches first.
#[derive(Clone, Default)]
pub struct DeviceReadings(Rc<RefCell<Vec<DeviceReading>>>);

impl DeviceReadings {
    /// Every reading so far, in order, and empties the list.
    pub fn take(&self) -> Vec<DeviceReading> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

/// Where a [`CudaEventTime`] keeps the first driver error it meets, readable after criterion
/// has taken the measurement.
#[derive(Clone, Default)]
pub struct TimingErrors(Rc<RefCell<Option<GpuError>>>);

impl TimingErrors {
    /// The first driver error met while timing, if any: the timings are then meaningless.
    pub fn take(&self) -> Option<GpuError> {
        self.0.borrow_mut().take()
    }
}

impl CudaEventTime {
    /// Times work queued on `stream` (criterion needs the measurement to own what it uses).
    pub fn new(gpu: &Gpu, stream: Arc<Stream>) -> Self {
        CudaEventTime {
            gpu: gpu.clone(),
            stream,
            error: Rc::default(),
            device: None,
        }
    }

    /// Also reads the device's clocks, power, temperature and throttling from `nvml` after each
    /// batch, into the returned list.
    pub fn with_device_state(mut self, nvml: Rc<ProcessMemoryProbe>) -> (Self, DeviceReadings) {
        let readings = DeviceReadings::default();
        self.device = Some((nvml, readings.clone()));
        (self, readings)
    }

    /// A handle on the errors this measurement meets; take it before handing the measurement to
    /// criterion.
    pub fn errors(&self) -> TimingErrors {
        TimingErrors(self.error.clone())
    }

    fn keep(&self, e: GpuError) {
        self.error.borrow_mut().get_or_insert(e);
    }
}

/// The formatter criterion uses for wall time: our values are nanoseconds too.
static NANOSECONDS: WallTime = WallTime;

impl Measurement for CudaEventTime {
    type Intermediate = Option<EventPair>;
    type Value = f64;

    fn start(&self) -> Self::Intermediate {
        let started = EventPair::new(&self.gpu).and_then(|events| {
            events.start(&self.stream)?;
            Ok(events)
        });
        started.map_err(|e| self.keep(e)).ok()
    }

    fn end(&self, events: Self::Intermediate) -> Self::Value {
        let ns = events
            .and_then(|events| events.stop(&self.stream).map_err(|e| self.keep(e)).ok())
            .unwrap_or(0.0);
        // After the batch's end event: the reading is outside the timed interval.
        if let Some((nvml, readings)) = &self.device
            && let Ok(r) = nvml.reading()
        {
            readings.0.borrow_mut().push(r);
        }
        ns
    }

    fn add(&self, v1: &f64, v2: &f64) -> f64 {
        v1 + v2
    }

    fn zero(&self) -> f64 {
        0.0
    }

    fn to_f64(&self, value: &f64) -> f64 {
        *value
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        NANOSECONDS.formatter()
    }
}
