//! The scenario fixture: the device, NPP and buffers a scenario works on, with the CPU
//! reference output every call is checked against.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nppbench_gpu::{DeviceBuffer, Gpu, Stream};
use nppbench_model::{Correctness, FailureKind, Geometry, Primitive};
use nppbench_npp::{DST_FILL, Npp, NppSearch, StreamContext};

use crate::error::ProbeError;

/// The device, NPP and buffers a scenario works on, with the reference output to check against.
pub(crate) struct Setup {
    pub(crate) gpu: Gpu,
    pub(crate) npp: Npp,
    pub(crate) src: DeviceBuffer,
    /// Shared by the calling threads, which call one at a time.
    dst: Mutex<DeviceBuffer>,
    expected: Vec<u8>,
    pub(crate) primitive: Primitive,
    pub(crate) geometry: Geometry,
}

impl Setup {
    pub(crate) fn new(
        gpu: Gpu,
        npp_dir: Option<&Path>,
        primitive: Primitive,
        g: &Geometry,
    ) -> Result<Setup, ProbeError> {
        // Before anything sizes a buffer or a reference image from it.
        g.validate(primitive)?;
        let npp = Npp::load(&NppSearch::new(npp_dir))?;
        if !npp.supports(primitive) {
            return Err(ProbeError::new(
                FailureKind::Load,
                format!(
                    "{} is not exported by NPP {}: not measured",
                    primitive.npp_name(),
                    npp.version()
                ),
            ));
        }
        let pattern = nppbench_npp::source_pattern(g);
        let mut src = DeviceBuffer::alloc(&gpu, g.src_bytes())?;
        src.upload(&pattern)?;
        let dst = DeviceBuffer::alloc(&gpu, g.dst_bytes())?;
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

    pub(crate) fn lock_dst(&self) -> MutexGuard<'_, DeviceBuffer> {
        self.dst.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// One call on `stream` from the calling thread: launch and synchronise. Returns the host
    /// latency of both.
    pub(crate) fn call(&self, stream: &Stream) -> Result<Duration, ProbeError> {
        self.gpu.bind_to_thread()?;
        let ctx = StreamContext::new(stream, self.gpu.props());
        let mut dst = self.lock_dst();
        let t = Instant::now();
        self.npp
            .run(self.primitive, &self.geometry, &self.src, &mut dst, &ctx)?;
        stream.synchronize()?;
        Ok(t.elapsed())
    }

    /// Clears the destination, runs one call on `stream` and checks the output.
    pub(crate) fn checked_call(&self, stream: &Stream) -> Result<(Duration, Correctness), ProbeError> {
        self.lock_dst().fill(DST_FILL)?;
        let latency = self.call(stream)?;
        Ok((latency, self.check()?))
    }

    /// Compares the destination with the CPU reference.
    pub(crate) fn check(&self) -> Result<Correctness, ProbeError> {
        let actual = self.lock_dst().download()?;
        nppbench_npp::max_abs_error(self.primitive, &self.geometry, &self.expected, &actual)
            .map_err(|e| ProbeError::new(FailureKind::Mismatch, e))
    }
}
