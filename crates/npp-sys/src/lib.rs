//! The C side of NPP: `#[repr(C)]` types from `nppdefs.h` and the function-pointer types of each
//! argument list a catalogue row can have (`nppbench_catalog::Args`). Nothing here is safe to
//! call directly. Also where the CUDA toolkit's libraries are looked for ([`toolkit`]).
//!
//! A crate of its own, on libc alone, as cudarc keeps `driver/sys` apart: the interposer
//! `nppbench trace` preloads into a program needs these types and that search, and nothing of
//! the safe layers (`nppbench-npp`, `nppbench-gpu`) or what they pull in.

pub mod toolkit;

use std::ffi::{c_int, c_uint, c_void};

/// `NppStatus`: 0 is success, negative values are errors, positive values are warnings.
pub type NppStatus = c_int;

/// `NppiSize`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NppiSize {
    pub width: c_int,
    pub height: c_int,
}

/// `NppiPoint`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NppiPoint {
    pub x: c_int,
    pub y: c_int,
}

/// `NppiRect`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NppiRect {
    pub x: c_int,
    pub y: c_int,
    pub width: c_int,
    pub height: c_int,
}

/// `NppStreamContext` (NPP 10.1 and later), passed by value to every `_Ctx` function; see
/// [nppdefs.h](https://docs.nvidia.com/cuda/npp/index.html).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NppStreamContext {
    pub h_stream: *mut c_void,
    pub n_cuda_device_id: c_int,
    pub n_multi_processor_count: c_int,
    pub n_max_threads_per_multi_processor: c_int,
    pub n_max_threads_per_block: c_int,
    pub n_shared_mem_per_block: usize,
    pub n_cuda_dev_attr_compute_capability_major: c_int,
    pub n_cuda_dev_attr_compute_capability_minor: c_int,
    pub n_stream_flags: c_uint,
    pub n_reserved0: c_int,
}

impl NppStreamContext {
    /// Every field zero: what `memset(&ctx, 0, sizeof ctx)` leaves.
    pub fn zeroed() -> NppStreamContext {
        NppStreamContext {
            h_stream: std::ptr::null_mut(),
            n_cuda_device_id: 0,
            n_multi_processor_count: 0,
            n_max_threads_per_multi_processor: 0,
            n_max_threads_per_block: 0,
            n_shared_mem_per_block: 0,
            n_cuda_dev_attr_compute_capability_major: 0,
            n_cuda_dev_attr_compute_capability_minor: 0,
            n_stream_flags: 0,
            n_reserved0: 0,
        }
    }
}

/// `NppLibraryVersion`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NppLibraryVersion {
    pub major: c_int,
    pub minor: c_int,
    pub build: c_int,
}

/// A device pointer as NPP's functions take it.
pub type Ptr = *const c_void;
/// A symbol as looked up, before it is given its signature.
pub type RawFn = unsafe extern "C" fn();

/// `nppGetLibVersion` (libnppc): see [NPP core](https://docs.nvidia.com/cuda/npp/index.html).
pub type GetLibVersion = unsafe extern "C" fn() -> *const NppLibraryVersion;
/// `nppSetStream` (libnppc, deprecated since CUDA 12.9).
pub type SetStream = unsafe extern "C" fn(*mut c_void) -> NppStatus;
/// `nppGetStreamContext` (libnppc, deprecated since CUDA 12.9).
pub type GetStreamContext = unsafe extern "C" fn(*mut NppStreamContext) -> NppStatus;

// One type per argument list (`nppbench_catalog::Args`), in the catalogue's order.

/// `Map`: `(src, step, dst, step, roi, ctx)`.
pub type MapFn = unsafe extern "C" fn(Ptr, c_int, Ptr, c_int, NppiSize, NppStreamContext) -> NppStatus;
/// `MapInt` and `MapOrder`: `(src, step, dst, step, roi, int | const int*, ctx)`.
pub type MapIntFn = unsafe extern "C" fn(Ptr, c_int, Ptr, c_int, NppiSize, c_int, NppStreamContext) -> NppStatus;
pub type MapPtrFn = unsafe extern "C" fn(Ptr, c_int, Ptr, c_int, NppiSize, Ptr, NppStreamContext) -> NppStatus;
/// `MapConst`, one integer channel by value, with and without a scale factor.
pub type MapConstIntScaleFn =
    unsafe extern "C" fn(Ptr, c_int, c_int, Ptr, c_int, NppiSize, c_int, NppStreamContext) -> NppStatus;
pub type MapConstIntFn = unsafe extern "C" fn(Ptr, c_int, c_int, Ptr, c_int, NppiSize, NppStreamContext) -> NppStatus;
/// `MapConst`, one float channel by value.
pub type MapConstFloatFn = unsafe extern "C" fn(Ptr, c_int, f32, Ptr, c_int, NppiSize, NppStreamContext) -> NppStatus;
/// `MapConst`, one constant per channel through a pointer, with and without a scale factor.
pub type MapConstPtrScaleFn =
    unsafe extern "C" fn(Ptr, c_int, Ptr, Ptr, c_int, NppiSize, c_int, NppStreamContext) -> NppStatus;
pub type MapConstPtrFn = unsafe extern "C" fn(Ptr, c_int, Ptr, Ptr, c_int, NppiSize, NppStreamContext) -> NppStatus;
/// `Binary` and `Compare`: `(src1, step, src2, step, dst, step, roi, [int], ctx)`.
pub type BinaryFn = unsafe extern "C" fn(Ptr, c_int, Ptr, c_int, Ptr, c_int, NppiSize, NppStreamContext) -> NppStatus;
pub type BinaryIntFn =
    unsafe extern "C" fn(Ptr, c_int, Ptr, c_int, Ptr, c_int, NppiSize, c_int, NppStreamContext) -> NppStatus;
/// `Set`: `(value, dst, step, roi, ctx)`, the value by value (integer or float) or by pointer.
pub type SetIntFn = unsafe extern "C" fn(c_int, Ptr, c_int, NppiSize, NppStreamContext) -> NppStatus;
pub type SetFloatFn = unsafe extern "C" fn(f32, Ptr, c_int, NppiSize, NppStreamContext) -> NppStatus;
pub type SetPtrFn = unsafe extern "C" fn(Ptr, Ptr, c_int, NppiSize, NppStreamContext) -> NppStatus;
/// `Threshold`: `(src, step, dst, step, roi, threshold, NppCmpOp, ctx)`.
pub type ThresholdIntFn =
    unsafe extern "C" fn(Ptr, c_int, Ptr, c_int, NppiSize, c_int, c_int, NppStreamContext) -> NppStatus;
pub type ThresholdFloatFn =
    unsafe extern "C" fn(Ptr, c_int, Ptr, c_int, NppiSize, f32, c_int, NppStreamContext) -> NppStatus;
/// `FilterBox`.
pub type FilterBoxFn = unsafe extern "C" fn(
    Ptr,
    c_int,
    NppiSize,
    NppiPoint,
    Ptr,
    c_int,
    NppiSize,
    NppiSize,
    NppiPoint,
    c_int,
    NppStreamContext,
) -> NppStatus;
/// `FilterMask`.
pub type FilterMaskFn = unsafe extern "C" fn(
    Ptr,
    c_int,
    NppiSize,
    NppiPoint,
    Ptr,
    c_int,
    NppiSize,
    c_int,
    c_int,
    NppStreamContext,
) -> NppStatus;
/// `Resize`.
pub type ResizeFn = unsafe extern "C" fn(
    Ptr,
    c_int,
    NppiSize,
    NppiRect,
    Ptr,
    c_int,
    NppiSize,
    NppiRect,
    c_int,
    NppStreamContext,
) -> NppStatus;
/// `Reduce`: `(src, step, roi, buffer, out, ctx)`; `Reduce2`: `(src, step, roi, out1, out2,
/// buffer, ctx)`.
pub type ReduceFn = unsafe extern "C" fn(Ptr, c_int, NppiSize, Ptr, Ptr, NppStreamContext) -> NppStatus;
pub type Reduce2Fn = unsafe extern "C" fn(Ptr, c_int, NppiSize, Ptr, Ptr, Ptr, NppStreamContext) -> NppStatus;
/// `…GetBufferHostSize`: `(roi, int* | size_t*, ctx)`; NPP 12 writes an `int`, 13 a `size_t`,
/// so the caller passes a zeroed `u64`.
pub type BufferSizeFn = unsafe extern "C" fn(NppiSize, *mut u64, NppStreamContext) -> NppStatus;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_types_match_the_c_layout() {
        // nppdefs.h on LP64: pointer, four ints, size_t, four ints.
        assert_eq!(std::mem::size_of::<NppStreamContext>(), 48);
        assert_eq!(std::mem::offset_of!(NppStreamContext, n_shared_mem_per_block), 24);
        assert_eq!(std::mem::offset_of!(NppStreamContext, n_stream_flags), 40);
        assert_eq!(std::mem::size_of::<NppiRect>(), 16);
        assert_eq!(std::mem::size_of::<NppiPoint>(), 8);
    }
}
