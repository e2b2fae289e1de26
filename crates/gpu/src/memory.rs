//! Device buffers: linear allocations sized `stride × rows`, so any row stride can be measured.
//!
//! See [memory management](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html).

use cudarc::driver::{result, sys};

use crate::{Gpu, GpuError};

/// A device allocation, freed on drop.
pub struct DeviceBuffer {
    gpu: Gpu,
    ptr: sys::CUdeviceptr,
    bytes: usize,
}

impl DeviceBuffer {
    /// Allocates `bytes` of device memory (`cuMemAlloc`).
    pub fn alloc(gpu: &Gpu, bytes: u64) -> Result<DeviceBuffer, GpuError> {
        gpu.bind_to_thread()?;
        let bytes = usize::try_from(bytes.max(1)).map_err(|_| GpuError::Driver {
            call: "cuMemAlloc",
            name: "CUDA_ERROR_OUT_OF_MEMORY".into(),
            message: format!("{bytes} bytes do not fit this host's address space"),
        })?;
        // SAFETY: the context is current; the pointer is owned by the returned value.
        let ptr = unsafe { result::malloc_sync(bytes) }.map_err(GpuError::driver("cuMemAlloc"))?;
        Ok(DeviceBuffer {
            gpu: gpu.clone(),
            ptr,
            bytes,
        })
    }

    /// The device address, for the NVIDIA library that reads or writes this buffer.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    pub fn len(&self) -> u64 {
        self.bytes as u64
    }

    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Copies `data` to the start of the buffer (synchronous: written on the device on return).
    pub fn upload(&mut self, data: &[u8]) -> Result<(), GpuError> {
        assert!(
            data.len() <= self.bytes,
            "upload of {} bytes into {}",
            data.len(),
            self.bytes
        );
        self.gpu.bind_to_thread()?;
        // SAFETY: `data` fits inside the allocation (checked above).
        unsafe { result::memcpy_htod_sync(self.ptr, data) }.map_err(GpuError::driver("cuMemcpyHtoD"))?;
        legacy_stream_done()
    }

    /// Copies the whole buffer to the host (synchronous, after all preceding work).
    pub fn download(&self) -> Result<Vec<u8>, GpuError> {
        self.gpu.synchronize()?;
        let mut out = vec![0u8; self.bytes];
        // SAFETY: `out` is exactly as large as the allocation.
        unsafe { result::memcpy_dtoh_sync(&mut out, self.ptr) }.map_err(GpuError::driver("cuMemcpyDtoH"))?;
        Ok(out)
    }

    /// Copies the whole buffer into `host` (synchronous, after all preceding work), growing it to
    /// fit, and returns the copy: a page-locked copy runs at the bus's speed, where a fresh
    /// vector is first faulted in and then staged by the driver (a 132 MB 8K destination).
    pub fn download_into<'h>(&self, host: &'h mut HostBuffer) -> Result<&'h [u8], GpuError> {
        self.gpu.synchronize()?;
        host.reserve(&self.gpu, self.bytes)?;
        let out = host.slice_mut(self.bytes);
        // SAFETY: `out` is exactly as large as the allocation.
        unsafe { result::memcpy_dtoh_sync(out, self.ptr) }.map_err(GpuError::driver("cuMemcpyDtoH"))?;
        Ok(&*out)
    }

    /// Queues a write of `value` to every byte on `stream` (`cuMemsetD8Async`): what a cold
    /// measurement does between calls to push everything else out of the L2 cache.
    pub fn fill_async(&mut self, value: u8, stream: &crate::Stream) -> Result<(), GpuError> {
        self.gpu.bind_to_thread()?;
        // SAFETY: writes exactly the allocation's bytes, on a live stream; the buffer outlives the
        // work (the caller synchronises before dropping it).
        unsafe { result::memset_d8_async(self.ptr, value, self.bytes, stream.raw()) }
            .map_err(GpuError::driver("cuMemsetD8Async"))
    }

    /// Queues a copy of all of `src` (no larger than this buffer) to the start of this buffer on
    /// `stream` (`cuMemcpyDtoDAsync`): work on the caller's stream that writes what a later call
    /// reads, as an upload does.
    pub fn copy_from_async(&mut self, src: &DeviceBuffer, stream: &crate::Stream) -> Result<(), GpuError> {
        assert!(
            src.bytes <= self.bytes,
            "a copy of {} bytes into {}",
            src.bytes,
            self.bytes
        );
        self.gpu.bind_to_thread()?;
        // SAFETY: both allocations are live and `src` fits in `self`; the caller synchronises
        // `stream` before either is dropped.
        unsafe { result::memcpy_dtod_async(self.ptr, src.ptr, src.bytes, stream.raw()) }
            .map_err(GpuError::driver("cuMemcpyDtoDAsync"))
    }

    /// Queues a copy of the whole buffer into `host` on `stream` (`cuMemcpyDtoHAsync`), after the
    /// stream's earlier work and nothing else; the bytes are there once `stream` is synchronised
    /// ([`HostBuffer::bytes`]).
    pub fn download_async(&self, host: &mut HostBuffer, stream: &crate::Stream) -> Result<(), GpuError> {
        host.reserve(&self.gpu, self.bytes)?;
        let out = host.slice_mut(self.bytes);
        self.gpu.bind_to_thread()?;
        // SAFETY: `out` is page-locked host memory exactly as large as the allocation, owned by
        // `host`, which the caller keeps (and does not read) until `stream` is synchronised.
        unsafe { result::memcpy_dtoh_async(out, self.ptr, stream.raw()) }.map_err(GpuError::driver("cuMemcpyDtoHAsync"))
    }

    /// Sets every byte to `value` (synchronous: written on the device on return).
    pub fn fill(&mut self, value: u8) -> Result<(), GpuError> {
        self.gpu.bind_to_thread()?;
        // SAFETY: writes exactly the allocation's bytes.
        unsafe { result::memset_d8_sync(self.ptr, value, self.bytes) }.map_err(GpuError::driver("cuMemsetD8"))?;
        legacy_stream_done()
    }
}

/// Waits for the legacy default stream, where `cuMemsetD8` and `cuMemcpyHtoD` run. Both return
/// before the device has written (a memset of device memory, a copy from pageable memory once it
/// is staged), and work on a non-blocking stream does not wait for the legacy stream: without
/// this, a call on such a stream right after [`DeviceBuffer::fill`] or [`DeviceBuffer::upload`]
/// could read the old bytes or have its output overwritten by the fill (seen on an H100 with
/// twelve processes calling at once: outputs all sentinel). Only the legacy stream is waited for,
/// so other threads' streams run on.
fn legacy_stream_done() -> Result<(), GpuError> {
    // SAFETY: the null handle is the legacy default stream of the current context, which the
    // callers bound.
    unsafe { result::stream::synchronize(std::ptr::null_mut()) }.map_err(GpuError::driver("cuStreamSynchronize"))
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        let _ = self.gpu.bind_to_thread();
        // SAFETY: `ptr` came from cuMemAlloc and is freed once, here.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// Page-locked host memory (`cuMemHostAlloc`), kept and reused for downloads; freed on drop.
pub struct HostBuffer {
    gpu: Option<Gpu>,
    ptr: *mut u8,
    bytes: usize,
}

impl Default for HostBuffer {
    fn default() -> Self {
        HostBuffer {
            gpu: None,
            ptr: std::ptr::null_mut(),
            bytes: 0,
        }
    }
}

impl HostBuffer {
    /// Makes room for `bytes`, reallocating (contents lost) only when it has less.
    fn reserve(&mut self, gpu: &Gpu, bytes: usize) -> Result<(), GpuError> {
        if bytes <= self.bytes {
            return Ok(());
        }
        self.release();
        gpu.bind_to_thread()?;
        // SAFETY: the context is current; the pointer is owned by `self` and freed in `release`.
        let ptr = unsafe { result::malloc_host(bytes, 0) }.map_err(GpuError::driver("cuMemHostAlloc"))?;
        self.ptr = ptr.cast();
        self.bytes = bytes;
        self.gpu = Some(gpu.clone());
        Ok(())
    }

    /// The first `len` bytes, as the last download into it left them (`len` within the
    /// allocation).
    pub fn bytes(&mut self, len: usize) -> &[u8] {
        self.slice_mut(len)
    }

    /// The first `len` bytes (`len` within the allocation).
    fn slice_mut(&mut self, len: usize) -> &mut [u8] {
        assert!(len <= self.bytes, "{len} bytes of a {}-byte host buffer", self.bytes);
        if len == 0 {
            return &mut [];
        }
        // SAFETY: `ptr` points to `self.bytes` bytes of host memory owned by `self`, borrowed
        // mutably with it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, len) }
    }

    fn release(&mut self) {
        if let Some(gpu) = self.gpu.take() {
            let _ = gpu.bind_to_thread();
            // SAFETY: `ptr` came from cuMemHostAlloc and is freed once, here.
            let _ = unsafe { result::free_host(self.ptr.cast()) };
        }
        self.ptr = std::ptr::null_mut();
        self.bytes = 0;
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        self.release();
    }
}
