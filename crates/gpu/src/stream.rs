//! The four stream kinds nppbench compares.
//!
//! See [stream synchronisation behaviour](https://docs.nvidia.com/cuda/cuda-driver-api/stream-sync-behavior.html).

use cudarc::driver::{result, sys};
use nppbench_model::StreamKind;

use crate::{Gpu, GpuError};

/// `CU_STREAM_PER_THREAD`, a macro in `cuda.h` that bindgen does not carry.
const PER_THREAD: usize = 0x2;

/// A stream handle of one of the four kinds. Created streams are destroyed on drop.
pub struct Stream {
    gpu: Gpu,
    raw: sys::CUstream,
    kind: StreamKind,
}

// SAFETY: stream handles may be used from any host thread of the process (CUDA streams are
// thread-safe); created streams are destroyed only on drop, when no borrow remains.
unsafe impl Send for Stream {}
// SAFETY: as above: every operation through `&Stream` is a driver call the driver serialises.
unsafe impl Sync for Stream {}

impl Stream {
    /// The stream of `kind`: the NULL or per-thread handle for the default streams, a new
    /// stream (`cuStreamCreate`) for the created kinds.
    pub fn new(gpu: &Gpu, kind: StreamKind) -> Result<Stream, GpuError> {
        gpu.bind_to_thread()?;
        let raw = match kind {
            StreamKind::LegacyDefault => std::ptr::null_mut(),
            StreamKind::PerThreadDefault => PER_THREAD as sys::CUstream,
            StreamKind::Blocking => result::stream::create(result::stream::StreamKind::Default)
                .map_err(GpuError::driver("cuStreamCreate"))?,
            StreamKind::NonBlocking => result::stream::create(result::stream::StreamKind::NonBlocking)
                .map_err(GpuError::driver("cuStreamCreate"))?,
        };
        Ok(Stream {
            gpu: gpu.clone(),
            raw,
            kind,
        })
    }

    pub fn kind(&self) -> StreamKind {
        self.kind
    }

    /// The raw handle, for the NVIDIA library that launches on it.
    pub fn raw(&self) -> sys::CUstream {
        self.raw
    }

    /// The flags NPP's stream context wants (`cudaStreamGetFlags`): 1 for non-blocking, else 0.
    pub fn flags(&self) -> u32 {
        match self.kind {
            StreamKind::NonBlocking => sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
            _ => sys::CUstream_flags::CU_STREAM_DEFAULT as u32,
        }
    }

    /// The stream's flags as the driver reports them (`cuStreamGetFlags`): what the stream
    /// really is, whatever a context declares.
    pub fn query_flags(&self) -> Result<u32, GpuError> {
        self.gpu.bind_to_thread()?;
        let mut flags = 0u32;
        // SAFETY: `raw` is NULL, the per-thread handle or a live created stream; the driver writes
        // one unsigned int through a valid pointer.
        unsafe { sys::cuStreamGetFlags(self.raw, &mut flags) }
            .result()
            .map_err(GpuError::driver("cuStreamGetFlags"))?;
        Ok(flags)
    }

    /// Waits for the work queued on this stream, from the calling thread.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.gpu.bind_to_thread()?;
        // SAFETY: `raw` is NULL, the per-thread handle or a live created stream.
        unsafe { result::stream::synchronize(self.raw) }.map_err(GpuError::driver("cuStreamSynchronize"))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if matches!(self.kind, StreamKind::Blocking | StreamKind::NonBlocking) {
            let _ = self.gpu.bind_to_thread();
            // SAFETY: a created stream, destroyed once, here.
            let _ = unsafe { result::stream::destroy(self.raw) };
        }
    }
}
