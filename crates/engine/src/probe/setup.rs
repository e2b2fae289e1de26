//! A scenario's setup: the device, NPP and buffers it works on, with the CPU reference output
//! every call is checked against, and what a throughput probe keeps from one setup to the next
//! ([`ScenarioCache`]).

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use nppbench_gpu::{DeviceBuffer, Gpu, HostBuffer, Stream};
use nppbench_model::{ContextFill, Correctness, FailureKind, Geometry, Primitive, TwinCheck};
use nppbench_npp::{DST_FILL, Npp, NppSearch, StreamContext};

use crate::error::ProbeError;

/// What a throughput probe keeps between scenarios: source patterns and expected outputs already
/// computed, by primitive and geometry, and the device buffers of finished scenarios for the next
/// of the same sizes (in the full preset the first scenario of an 8K geometry prepares its buffers
/// in about 140 ms, patterns and reference included, the next ones in about 5 ms).
#[derive(Default)]
pub(crate) struct ScenarioCache {
    prepared: std::collections::HashMap<(Primitive, Geometry), Prepared>,
    spare: Vec<DeviceBuffer>,
}

/// The most device memory kept in spare buffers between scenarios.
const SPARE_BYTES: u64 = 1 << 30;

impl ScenarioCache {
    /// A buffer of exactly `bytes`: a spare one, else a new allocation.
    fn buffer(&mut self, gpu: &Gpu, bytes: u64) -> Result<DeviceBuffer, ProbeError> {
        match self.spare.iter().position(|b| b.len() == bytes.max(1)) {
            Some(i) => Ok(self.spare.swap_remove(i)),
            None => Ok(DeviceBuffer::alloc(gpu, bytes)?),
        }
    }

    /// Keeps a finished scenario's buffers for the next (its sources are uploaded again and its
    /// destination cleared before use), the newest first, within [`SPARE_BYTES`]. Returns the
    /// buffers it does not keep (a reduction's scratch buffer, spares past the limit): dropping
    /// them frees their memory, which a memory probe does not do between scenarios (see
    /// `memory::Process::measure`).
    pub(crate) fn recycle(&mut self, setup: Setup) -> Vec<DeviceBuffer> {
        let Setup {
            sources, dst, scratch, ..
        } = setup;
        let dst = dst.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut kept: Vec<DeviceBuffer> = sources.into_iter().chain(std::iter::once(dst)).collect();
        kept.append(&mut self.spare);
        let mut total = 0;
        let (kept, rest): (Vec<DeviceBuffer>, Vec<DeviceBuffer>) = kept.into_iter().partition(|b| {
            total += b.len();
            total <= SPARE_BYTES
        });
        self.spare = kept;
        rest.into_iter().chain(scratch).collect()
    }
}

/// A primitive's source patterns for one geometry and the output they must give, computed on
/// first use: an ordering probe never checks against it, and a memory probe computes it on a
/// thread of its own while the scenario's calls run ([`Setup::prepare_expected`]).
#[derive(Clone)]
struct Prepared {
    patterns: Arc<Vec<Vec<u8>>>,
    expected: Arc<OnceLock<Vec<u8>>>,
}

/// The device, NPP and buffers a scenario works on, with the reference output to check against.
pub(crate) struct Setup {
    pub(crate) gpu: Gpu,
    pub(crate) npp: Npp,
    sources: Vec<DeviceBuffer>,
    /// Shared by the calling threads, which call one at a time.
    dst: Mutex<DeviceBuffer>,
    /// A reduction's scratch buffer, sized by NPP.
    scratch: Option<DeviceBuffer>,
    /// The sources' host patterns, for the aligned twin.
    patterns: Arc<Vec<Vec<u8>>>,
    expected: Arc<OnceLock<Vec<u8>>>,
    pub(crate) primitive: Primitive,
    pub(crate) geometry: Geometry,
    pub(crate) context: ContextFill,
    /// How long making this setup took, step by step: `npp` (NPP loaded, the function looked up,
    /// the source patterns made or taken from the cache), `buffers` (allocated or taken from the
    /// spares, the sources uploaded) and `context` (the stream context filled, a scratch buffer
    /// sized and allocated). A memory probe records them among its scenario's start-up steps
    /// ([`Setup::take_steps`]).
    steps: Vec<nppbench_model::PhaseTime>,
}

impl Setup {
    /// Loads NPP, checks that it has `primitive` (else 'not measured'), and makes the buffers,
    /// taking the source patterns and the expected output (computed on first use) from `cache`
    /// when an earlier scenario of the same primitive and geometry made them (the CPU reference of
    /// a 1080p filter takes tens of milliseconds, and a probe meets each geometry once per stream
    /// kind, context filling and threading model). `stream` sizes a reduction's scratch buffer.
    pub(crate) fn with_cache(
        gpu: Gpu,
        npp_dir: Option<&Path>,
        primitive: Primitive,
        g: &Geometry,
        context: ContextFill,
        stream: &Stream,
        cache: &mut ScenarioCache,
    ) -> Result<Setup, ProbeError> {
        // Before anything sizes a buffer or a reference image from it.
        g.validate(primitive)?;
        let mut steps = super::Steps::new();
        let npp = Npp::load(&NppSearch::new(npp_dir))?;
        npp.available(primitive).map_err(|why| {
            ProbeError::unavailable(format!(
                "{} is not measured with NPP {}: {why}",
                primitive.npp_name(),
                npp.version()
            ))
        })?;
        let Prepared { patterns, expected } = cache
            .prepared
            .entry((primitive, *g))
            .or_insert_with(|| Prepared {
                patterns: Arc::new(nppbench_npp::source_buffers(primitive, g)),
                expected: Arc::default(),
            })
            .clone();
        steps.done("npp");
        let mut sources = Vec::new();
        for pattern in patterns.iter() {
            let mut buffer = cache.buffer(&gpu, g.src_bytes())?;
            buffer.upload(pattern)?;
            sources.push(buffer);
        }
        let dst = cache.buffer(&gpu, g.dst_bytes(primitive))?;
        steps.done("buffers");
        let ctx = npp.context(ContextFill::FromStream, stream, gpu.props())?;
        let scratch = match npp.scratch_bytes(primitive, g, &ctx)? {
            0 => None,
            bytes => Some(DeviceBuffer::alloc(&gpu, bytes)?),
        };
        steps.done("context");
        Ok(Setup {
            gpu,
            npp,
            sources,
            dst: Mutex::new(dst),
            scratch,
            patterns,
            expected,
            primitive,
            geometry: *g,
            context,
            steps: steps.into_inner(),
        })
    }

    /// The steps that made this setup (its `steps`), once: later calls give none.
    pub(crate) fn take_steps(&mut self) -> Vec<nppbench_model::PhaseTime> {
        std::mem::take(&mut self.steps)
    }

    /// The device addresses of the sources, then of the destination.
    pub(crate) fn addresses(&self) -> Vec<u64> {
        let mut out: Vec<u64> = self.sources.iter().map(DeviceBuffer::device_ptr).collect();
        out.push(self.lock_dst().device_ptr());
        out
    }

    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    pub(crate) fn sources(&self) -> &[DeviceBuffer] {
        &self.sources
    }

    pub(crate) fn sources_mut(&mut self) -> &mut [DeviceBuffer] {
        &mut self.sources
    }

    /// The pixels of `actual` that differ from `expected` (an output of this scenario's
    /// geometry), counted and located.
    pub(crate) fn wrong_pixels(&self, expected: &[u8], actual: &[u8]) -> nppbench_npp::WrongPixels {
        nppbench_npp::wrong_pixels(self.primitive, &self.geometry, expected, actual)
    }

    /// The first source buffer (the reference kernel reads it).
    pub(crate) fn source(&self) -> &DeviceBuffer {
        &self.sources[0]
    }

    pub(crate) fn lock_dst(&self) -> MutexGuard<'_, DeviceBuffer> {
        self.dst.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The stream context for calls on `stream` from the calling thread, filled as the scenario
    /// says.
    pub(crate) fn context(&self, stream: &Stream) -> Result<StreamContext, ProbeError> {
        self.gpu.bind_to_thread()?;
        Ok(self.npp.context(self.context, stream, self.gpu.props())?)
    }

    /// Queues one call into `dst` with `ctx` (no synchronisation).
    pub(crate) fn launch(&self, dst: &mut DeviceBuffer, ctx: &StreamContext) -> Result<(), ProbeError> {
        let sources: Vec<&DeviceBuffer> = self.sources.iter().collect();
        Ok(self.npp.run(
            self.primitive,
            &self.geometry,
            &sources,
            dst,
            self.scratch.as_ref(),
            ctx,
        )?)
    }

    /// One call on `stream` from the calling thread, its context filled there: launch and
    /// synchronise. Returns the host latency of both, and the context used.
    pub(crate) fn call(&self, stream: &Stream) -> Result<(Duration, StreamContext), ProbeError> {
        self.timed_call(stream).map(|(latency, _, ctx)| (latency, ctx))
    }

    /// [`Setup::call`], with the launch's part of the latency (NPP's host side until it returns,
    /// before the synchronise).
    fn timed_call(&self, stream: &Stream) -> Result<(Duration, Duration, StreamContext), ProbeError> {
        let ctx = self.context(stream)?;
        let mut dst = self.lock_dst();
        let t = Instant::now();
        self.launch(&mut dst, &ctx)?;
        let launch = t.elapsed();
        stream.synchronize()?;
        Ok((t.elapsed(), launch, ctx))
    }

    /// Clears the destination, then runs one call on `stream`: the output is checked after the
    /// scenario's last call ([`Setup::check`]), where pixels no call wrote still hold the fill.
    /// Returns the latency, the launch's part of it and the context used.
    pub(crate) fn cleared_call(&self, stream: &Stream) -> Result<(Duration, Duration, StreamContext), ProbeError> {
        self.lock_dst().fill(DST_FILL)?;
        self.timed_call(stream)
    }

    /// Compares the destination with the CPU reference: a wrong output is counted and located
    /// in the result ([`Correctness::wrong`]), and the scenario measures on.
    pub(crate) fn check(&self) -> Result<Correctness, ProbeError> {
        let actual = self.lock_dst().download()?;
        self.compare(&actual)
    }

    /// As [`Setup::check`], downloading into `host`, page-locked and kept between scenarios.
    pub(crate) fn check_with(&self, host: &mut HostBuffer) -> Result<Correctness, ProbeError> {
        let dst = self.lock_dst();
        let actual = dst.download_into(host)?;
        self.compare(actual)
    }

    /// The error is nppbench's own (a destination of another size than the reference's).
    fn compare(&self, actual: &[u8]) -> Result<Correctness, ProbeError> {
        self.compare_with(self.expected(), actual)
    }

    /// The CPU reference output, computed here unless an earlier call (or
    /// [`Setup::prepare_expected`]'s thread, which this waits for) has.
    fn expected(&self) -> &[u8] {
        self.expected
            .get_or_init(|| nppbench_npp::expected_output(self.primitive, &self.geometry, &self.patterns))
    }

    /// Starts computing the CPU reference output on a thread of its own, where it is not yet
    /// known: CPU work that [`Setup::check`] would otherwise do after the calls. The thread makes
    /// no CUDA call.
    pub(crate) fn prepare_expected(&self) {
        if self.expected.get().is_some() {
            return;
        }
        let (expected, patterns, p, g) = (
            self.expected.clone(),
            self.patterns.clone(),
            self.primitive,
            self.geometry,
        );
        // A thread that cannot start leaves the work to `expected`, on the caller's thread.
        let _ = std::thread::Builder::new()
            .name("nppbench-reference".into())
            .spawn(move || {
                expected.get_or_init(|| nppbench_npp::expected_output(p, &g, &patterns));
            });
    }

    fn compare_with(&self, expected: &[u8], actual: &[u8]) -> Result<Correctness, ProbeError> {
        nppbench_npp::compare(self.primitive, &self.geometry, expected, actual)
            .map_err(|e| ProbeError::new(FailureKind::Mismatch, e))
    }

    /// Checks `actual` (an output of this setup's call) against the aligned twin: the same call
    /// on the same pixels at strides aligned to 512 bytes, on `stream`, the device synchronised
    /// after it (NPP may put part of the call on a stream of its own). `None` where the geometry
    /// is its own twin; an NPP error at the twin's strides is said in the check, and anything
    /// else is the scenario's error.
    pub(crate) fn aligned_twin(&self, actual: &[u8], stream: &Stream) -> Result<Option<TwinCheck>, ProbeError> {
        let (p, g) = (self.primitive, &self.geometry);
        let Some(twin) = nppbench_npp::twin_geometry(p, g) else {
            return Ok(None);
        };
        let mut check = TwinCheck {
            src_stride: twin.src_stride,
            dst_stride: twin.dst_stride,
            wrong: None,
            not_measured: None,
        };
        let mut sources = Vec::new();
        for pattern in nppbench_npp::twin_sources(p, g, &twin, &self.patterns) {
            let mut buffer = DeviceBuffer::alloc(&self.gpu, twin.src_bytes())?;
            buffer.upload(&pattern)?;
            sources.push(buffer);
        }
        let mut dst = DeviceBuffer::alloc(&self.gpu, twin.dst_bytes(p))?;
        dst.fill(DST_FILL)?;
        let ctx = self.context(stream)?;
        let scratch = match self.npp.scratch_bytes(p, &twin, &ctx) {
            Ok(0) => None,
            Ok(bytes) => Some(DeviceBuffer::alloc(&self.gpu, bytes)?),
            Err(e) => {
                check.not_measured = Some(format!("the twin's scratch size: {e}"));
                return Ok(Some(check));
            }
        };
        // The uploads ran on the legacy default stream, which a non-blocking stream does not
        // wait for.
        self.gpu.synchronize()?;
        let refs: Vec<&DeviceBuffer> = sources.iter().collect();
        match self.npp.run(p, &twin, &refs, &mut dst, scratch.as_ref(), &ctx) {
            Ok(()) => {}
            Err(e) => {
                check.not_measured = Some(format!("the twin's call: {e}"));
                return Ok(Some(check));
            }
        }
        self.gpu.synchronize()?;
        let expected = nppbench_npp::from_twin(p, g, &twin, &dst.download()?);
        check.wrong = self.compare_with(&expected, actual)?.wrong;
        Ok(Some(check))
    }

    /// `c`, where it is right; else a failure that says where it is wrong: for nppbench's own
    /// kernels, whose wrong output is nppbench's fault, not a finding about NPP.
    pub(crate) fn right(&self, c: Correctness) -> Result<Correctness, ProbeError> {
        match &c.wrong {
            None => Ok(c),
            Some(w) => Err(ProbeError::new(
                FailureKind::Mismatch,
                nppbench_npp::wrong_words(self.primitive, w),
            )),
        }
    }
}
