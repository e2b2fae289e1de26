//! CUDA-event timing of work queued on a stream, and the device-to-device copy ceiling.
//!
//! See [event management](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__EVENT.html).

use cudarc::driver::{result, sys};

use crate::{DeviceBuffer, Gpu, GpuError, Stream};

/// A start and an end event; time what is queued between [`EventPair::start`] and
/// [`EventPair::stop`].
pub struct EventPair {
    gpu: Gpu,
    start: sys::CUevent,
    end: sys::CUevent,
}

impl EventPair {
    pub fn new(gpu: &Gpu) -> Result<EventPair, GpuError> {
        gpu.bind_to_thread()?;
        let flags = sys::CUevent_flags::CU_EVENT_DEFAULT;
        let start = result::event::create(flags).map_err(GpuError::driver("cuEventCreate"))?;
        let end = match result::event::create(flags) {
            Ok(e) => e,
            Err(e) => {
                // SAFETY: `start` was just created and is destroyed once.
                let _ = unsafe { result::event::destroy(start) };
                return Err(GpuError::driver("cuEventCreate")(e));
            }
        };
        Ok(EventPair {
            gpu: gpu.clone(),
            start,
            end,
        })
    }

    /// Records the start event on `stream`.
    pub fn start(&self, stream: &Stream) -> Result<(), GpuError> {
        self.gpu.bind_to_thread()?;
        // SAFETY: both handles are live.
        unsafe { result::event::record(self.start, stream.raw()) }.map_err(GpuError::driver("cuEventRecord"))
    }

    /// Records the end event on `stream`, waits for it and returns the GPU time between the two
    /// events in nanoseconds.
    pub fn stop(&self, stream: &Stream) -> Result<f64, GpuError> {
        self.gpu.bind_to_thread()?;
        // SAFETY: both handles are live; `start` was recorded before `end` on the same stream.
        unsafe {
            result::event::record(self.end, stream.raw()).map_err(GpuError::driver("cuEventRecord"))?;
            result::event::synchronize(self.end).map_err(GpuError::driver("cuEventSynchronize"))?;
            let ms = result::event::elapsed(self.start, self.end).map_err(GpuError::driver("cuEventElapsedTime"))?;
            Ok(f64::from(ms) * 1e6)
        }
    }
}

impl Drop for EventPair {
    fn drop(&mut self) {
        let _ = self.gpu.bind_to_thread();
        // SAFETY: both events were created in `new` and are destroyed once, here.
        unsafe {
            let _ = result::event::destroy(self.start);
            let _ = result::event::destroy(self.end);
        }
    }
}

/// Times `repetitions` device-to-device copies of `bytes` on a non-blocking stream, after one
/// warm-up copy, and returns the copy throughput in bytes per second counting bytes read plus
/// written: the ceiling for a memory-bound kernel.
pub fn copy_throughput(gpu: &Gpu, bytes: u64, repetitions: u32) -> Result<f64, GpuError> {
    let src = DeviceBuffer::alloc(gpu, bytes)?;
    let dst = DeviceBuffer::alloc(gpu, bytes)?;
    let stream = Stream::new(gpu, nppbench_model::StreamKind::NonBlocking)?;
    let events = EventPair::new(gpu)?;
    let copy = || {
        // SAFETY: both buffers hold `bytes` bytes and outlive the synchronisation in `stop`.
        unsafe { result::memcpy_dtod_async(dst.device_ptr(), src.device_ptr(), bytes as usize, stream.raw()) }
            .map_err(GpuError::driver("cuMemcpyDtoDAsync"))
    };
    copy()?;
    events.start(&stream)?;
    for _ in 0..repetitions {
        copy()?;
    }
    let ns = events.stop(&stream)?;
    Ok(2.0 * bytes as f64 * f64::from(repetitions) / (ns * 1e-9))
}
