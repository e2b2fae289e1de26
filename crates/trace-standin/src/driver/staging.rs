//! The stand-in driver's staging functions: the pool, buffers and copies the shield stages a call
//! with, each logged as a line (`cu=<what> …`, values in hex where they are addresses) to the
//! stand-in's log, between the lines of the NPP calls, and answered without a GPU: buffers are
//! made-up addresses from [`BUFFERS`] on, 1 MiB apart, and nothing is copied. [`ALLOC_FAILS`]
//! refuses every buffer; [`NO_CONTEXT`] makes the thread have no current context, as a thread
//! whose first CUDA call is NPP's.

use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

/// Set to 1, `cuMemAllocFromPoolAsync` answers `CUDA_ERROR_OUT_OF_MEMORY` (2).
pub const ALLOC_FAILS: &str = "NPPBENCH_STANDIN_ALLOC_FAILS";
/// Set to 1, `cuCtxGetCurrent` answers no context, and the context of a pointer is [`CONTEXT`].
pub const NO_CONTEXT: &str = "NPPBENCH_STANDIN_NO_CONTEXT";

/// The first buffer's address.
pub const BUFFERS: u64 = 0x5000_0000_0000;
/// The context a pointer belongs to, and the one current where [`NO_CONTEXT`] is unset.
pub const CONTEXT: u64 = 0xc7c7;
/// The pool the stand-in creates.
pub const POOL: u64 = 0x9001;

static NEXT: AtomicU64 = AtomicU64::new(0);

fn on(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

fn log(text: String) {
    crate::append(&text);
}

/// `CUDA_MEMCPY2D` as cuda.h lays it out.
#[repr(C)]
pub struct Memcpy2d {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_memory_type: c_uint,
    pub src_host: *const c_void,
    pub src_device: u64,
    pub src_array: *mut c_void,
    pub src_pitch: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_memory_type: c_uint,
    pub dst_host: *mut c_void,
    pub dst_device: u64,
    pub dst_array: *mut c_void,
    pub dst_pitch: usize,
    pub width_in_bytes: usize,
    pub height: usize,
}

/// # Safety
///
/// `ctx` must be valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetCurrent(ctx: *mut u64) -> c_int {
    let current = if on(NO_CONTEXT) { 0 } else { CONTEXT };
    // SAFETY: valid for a write (# Safety).
    unsafe { *ctx = current };
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSetCurrent(ctx: u64) -> c_int {
    log(format!("cu=ctx_set ctx={ctx:#x}"));
    0
}

/// # Safety
///
/// `device` must be valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetDevice(device: *mut c_int) -> c_int {
    // SAFETY: valid for a write (# Safety).
    unsafe { *device = 0 };
    0
}

/// Every pointer belongs to [`CONTEXT`] (attribute 1, `CU_POINTER_ATTRIBUTE_CONTEXT`).
///
/// # Safety
///
/// `data` must be valid for a write of a context handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuPointerGetAttribute(data: *mut c_void, attribute: c_int, _ptr: u64) -> c_int {
    if attribute != 1 {
        return 1;
    }
    // SAFETY: valid for a write of a handle (# Safety).
    unsafe { *data.cast::<u64>() = CONTEXT };
    0
}

/// # Safety
///
/// `pool` must be valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemPoolCreate(pool: *mut u64, _props: *const c_void) -> c_int {
    log("cu=pool_create".into());
    // SAFETY: valid for a write (# Safety).
    unsafe { *pool = POOL };
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemPoolDestroy(pool: u64) -> c_int {
    log(format!("cu=pool_destroy pool={pool:#x}"));
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemPoolSetAttribute(_pool: u64, _attribute: c_int, _value: *mut c_void) -> c_int {
    0
}

/// # Safety
///
/// `ptr` must be valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocFromPoolAsync(ptr: *mut u64, bytes: usize, pool: u64, stream: u64) -> c_int {
    if on(ALLOC_FAILS) {
        log(format!("cu=alloc_refused bytes={bytes} stream={stream:#x}"));
        return 2;
    }
    let p = BUFFERS + NEXT.fetch_add(1, Ordering::Relaxed) * 0x10_0000;
    log(format!(
        "cu=alloc bytes={bytes} pool={pool:#x} stream={stream:#x} ptr={p:#x}"
    ));
    // SAFETY: valid for a write (# Safety).
    unsafe { *ptr = p };
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemFreeAsync(ptr: u64, stream: u64) -> c_int {
    log(format!("cu=free ptr={ptr:#x} stream={stream:#x}"));
    0
}

/// # Safety
///
/// `copy` must point to a valid `CUDA_MEMCPY2D`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpy2DAsync_v2(copy: *const Memcpy2d, stream: u64) -> c_int {
    // SAFETY: valid (# Safety).
    let c = unsafe { &*copy };
    log(format!(
        "cu=copy from={:#x} from_pitch={} to={:#x} to_pitch={} row_bytes={} rows={} stream={stream:#x}",
        c.src_device, c.src_pitch, c.dst_device, c.dst_pitch, c.width_in_bytes, c.height
    ));
    0
}
