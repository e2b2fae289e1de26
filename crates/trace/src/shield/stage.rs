//! The wrong pixels' fix: a call whose configuration NPP computes wrong runs on staging copies of
//! its images at 512-byte pitches, the strides at which the atlas's aligned twin measured every
//! such configuration right. On the caller's stream, in its order: the sources are copied into
//! buffers from a stream-ordered pool of the shield's own (one per device, keeping its memory
//! between calls), NPP computes into a staging destination (its context declaring non-blocking,
//! so that NPP works on the caller's stream alone and cannot race the copies), the destination is
//! copied back to the caller's, and the buffers are freed, all queued on that stream: the caller
//! synchronises as it would have, and sees the same pixels in the same order.
//!
//! Every call here is the CUDA driver the program mapped (`recorder/driver.rs`); any refusal (no
//! such driver, no context, a pool or buffer refused) leaves the call unstaged, and counted so.
//! Only images of the ROI's size are staged (`Site::images`); the functions staged write every
//! destination pixel of the ROI, so the destination is not copied in.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::driver::sys;
use nppbench_npp_sys::NppiSize;

use crate::recorder::driver::{Staging, staging_functions};
use crate::site::Images;

/// The pitch every staging image is rounded up to.
pub(crate) const PITCH: u64 = 512;

/// Devices with a pool (by ordinal).
const DEVICES: usize = 64;

#[allow(clippy::declare_interior_mutable_const)]
const NO_POOL: AtomicU64 = AtomicU64::new(0);
/// The shield's pool on each device, created at the device's first staged call (0: none yet).
static POOLS: [AtomicU64; DEVICES] = [NO_POOL; DEVICES];

/// Bytes copied by staged calls (in and back).
pub(crate) static COPIED: AtomicU64 = AtomicU64::new(0);
/// Bytes of staging buffers held now, as allocated and not yet freed (their frees queued).
static HELD: AtomicU64 = AtomicU64::new(0);
/// The most [`HELD`] ever was: what the pools keep.
pub(crate) static PEAK: AtomicU64 = AtomicU64::new(0);

/// One pitched copy.
#[derive(Debug, Clone, Copy)]
struct Copy2d {
    from: u64,
    from_pitch: u64,
    to: u64,
    to_pitch: u64,
    row_bytes: u64,
    rows: u64,
}

/// A call staged: the images NPP is passed, and what [`finish`] does after it.
#[derive(Debug)]
pub(crate) struct Staged {
    pub(crate) images: Images,
    stream: u64,
    buffers: [u64; 3],
    bytes: u64,
    back: Copy2d,
}

fn ok(r: sys::CUresult) -> Option<()> {
    (r == sys::CUresult::CUDA_SUCCESS).then_some(())
}

fn round_up(n: u64) -> u64 {
    n.div_ceil(PITCH) * PITCH
}

/// Queues `c` on `stream`.
fn copy(f: &Staging, c: Copy2d, stream: u64) -> Option<()> {
    // A device-to-device pitched copy, from the first byte of each.
    let m = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: c.from,
        srcArray: std::ptr::null_mut(),
        srcPitch: c.from_pitch as usize,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstHost: std::ptr::null_mut(),
        dstDevice: c.to,
        dstArray: std::ptr::null_mut(),
        dstPitch: c.to_pitch as usize,
        WidthInBytes: c.row_bytes as usize,
        Height: c.rows as usize,
    };
    // SAFETY: the program's driver; both images are the caller's (valid for the call it is
    // making, under NPP's contract) or the shield's buffers of at least `rows` pitches.
    ok(unsafe { (f.memcpy_2d_async)(&m, stream as sys::CUstream) })?;
    COPIED.fetch_add(c.row_bytes * c.rows, Ordering::Relaxed);
    Some(())
}

/// Makes a context current on a thread that has none (a thread whose first CUDA call is NPP's):
/// the one the destination was allocated in, as NPP's runtime would make it current.
fn context(f: &Staging, dst: u64) -> Option<()> {
    let mut current: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: the program's driver, writing through a valid pointer.
    ok(unsafe { (f.ctx_get_current)(&mut current) })?;
    if !current.is_null() {
        return Some(());
    }
    let mut owner: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: asks the context of the caller's device pointer, written through a valid pointer
    // of the attribute's type (a CUcontext).
    ok(unsafe {
        (f.pointer_get_attribute)(
            (&raw mut owner).cast::<c_void>(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
            dst,
        )
    })?;
    if owner.is_null() {
        return None;
    }
    // SAFETY: a context the driver just named.
    ok(unsafe { (f.ctx_set_current)(owner) })
}

/// The shield's pool on the current context's device, created at its first staged call (a
/// thread that loses the race to create it destroys its own).
fn pool(f: &Staging) -> Option<sys::CUmemoryPool> {
    let mut device: sys::CUdevice = 0;
    // SAFETY: the program's driver, a context current, writing through a valid pointer.
    ok(unsafe { (f.ctx_get_device)(&mut device) })?;
    let slot = POOLS.get(usize::try_from(device).ok()?)?;
    let have = slot.load(Ordering::Acquire);
    if have != 0 {
        return Some(have as sys::CUmemoryPool);
    }
    // Pinned device memory on `device`, no handle types, no size limit.
    let props = sys::CUmemPoolProps {
        allocType: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        handleTypes: sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: device,
        },
        win32SecurityAttributes: std::ptr::null_mut(),
        maxSize: 0,
        usage: 0,
        reserved: [0; 54],
    };
    let mut created: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: the program's driver; `props` is valid and `created` a valid pointer.
    ok(unsafe { (f.pool_create)(&mut created, &props) })?;
    // The pool keeps what it reserved: staging buffers of the next calls are taken from it.
    let mut keep: u64 = u64::MAX;
    // SAFETY: the pool just created; the release threshold is a cuuint64_t.
    let _ = unsafe {
        (f.pool_set_attribute)(
            created,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&raw mut keep).cast::<c_void>(),
        )
    };
    match slot.compare_exchange(0, created as u64, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Some(created),
        Err(theirs) => {
            // SAFETY: our pool, never used.
            let _ = unsafe { (f.pool_destroy)(created) };
            Some(theirs as sys::CUmemoryPool)
        }
    }
}

/// A buffer of `bytes` from `pool`, ordered on `stream`.
fn alloc(f: &Staging, pool: sys::CUmemoryPool, bytes: u64, stream: u64) -> Option<u64> {
    let mut p: sys::CUdeviceptr = 0;
    // SAFETY: the program's driver; the pool is the shield's, the stream the caller's.
    ok(unsafe { (f.alloc_from_pool_async)(&mut p, bytes as usize, pool, stream as sys::CUstream) })?;
    Some(p)
}

/// Frees `buffers` (0: none) on `stream`, after the work queued there.
fn free(f: &Staging, buffers: &[u64], bytes: u64, stream: u64) {
    for &b in buffers.iter().filter(|b| **b != 0) {
        // SAFETY: a buffer `alloc` gave, freed once, in the stream's order.
        let _ = unsafe { (f.free_async)(b, stream as sys::CUstream) };
    }
    HELD.fetch_sub(bytes, Ordering::Relaxed);
}

/// Stages a call on `images` with `roi` (`src_bpp`, `dst_bpp` bytes per pixel) on `stream`:
/// the images NPP is to be passed, or `None` where the images cannot be staged (steps shorter
/// than a row, an empty ROI) or the driver refused (nothing is left queued then but frees).
pub(crate) fn stage(images: &Images, roi: NppiSize, src_bpp: u64, dst_bpp: u64, stream: u64) -> Option<Staged> {
    let (w, h) = (u64::try_from(roi.width).ok()?, u64::try_from(roi.height).ok()?);
    let (dw, dh) = if images.transposed { (h, w) } else { (w, h) };
    let (src_row, dst_row) = (w * src_bpp, dw * dst_bpp);
    let step = |s: i32| u64::try_from(s).ok();
    let fits = |s: Option<u64>, row: u64| s.is_some_and(|s| s >= row);
    if w == 0
        || h == 0
        || !fits(step(images.src_step), src_row)
        || !fits(step(images.dst_step), dst_row)
        || images.src2.is_some_and(|(_, s)| !fits(step(s), src_row))
    {
        return None;
    }
    let (src_pitch, dst_pitch) = (round_up(src_row), round_up(dst_row));
    let (src_step, dst_step) = (i32::try_from(src_pitch).ok()?, i32::try_from(dst_pitch).ok()?);
    let f = staging_functions()?;
    context(f, images.dst)?;
    let pool = pool(f)?;
    let sizes = [src_pitch * h, images.src2.map_or(0, |_| src_pitch * h), dst_pitch * dh];
    let bytes: u64 = sizes.iter().sum();
    HELD.fetch_add(bytes, Ordering::Relaxed);
    let mut buffers = [0u64; 3];
    for (b, size) in buffers.iter_mut().zip(sizes) {
        if size > 0 {
            match alloc(f, pool, size, stream) {
                Some(p) => *b = p,
                None => {
                    free(f, &buffers, bytes, stream);
                    return None;
                }
            }
        }
    }
    // Every buffer given: held until the frees queued after the call.
    PEAK.fetch_max(HELD.load(Ordering::Relaxed), Ordering::Relaxed);
    let copy_in = |from: u64, from_pitch: i32, to: u64| Copy2d {
        from,
        from_pitch: from_pitch as u64,
        to,
        to_pitch: src_pitch,
        row_bytes: src_row,
        rows: h,
    };
    let copied = copy(f, copy_in(images.src, images.src_step, buffers[0]), stream).and_then(|()| match images.src2 {
        Some((p, s)) => copy(f, copy_in(p, s, buffers[1]), stream),
        None => Some(()),
    });
    if copied.is_none() {
        free(f, &buffers, bytes, stream);
        return None;
    }
    Some(Staged {
        images: Images {
            src: buffers[0],
            src_step,
            src2: images.src2.map(|_| (buffers[1], src_step)),
            dst: buffers[2],
            dst_step,
            transposed: images.transposed,
            stageable: true,
        },
        stream,
        buffers,
        bytes,
        back: Copy2d {
            from: buffers[2],
            from_pitch: dst_pitch,
            to: images.dst,
            to_pitch: images.dst_step as u64,
            row_bytes: dst_row,
            rows: dh,
        },
    })
}

/// After NPP's call returned `ok` (a success or a warning): the destination copied back to the
/// caller's, and the buffers freed, on the caller's stream. Where NPP refused the call the
/// caller's destination is left as NPP would have left it: untouched.
pub(crate) fn finish(s: Staged, ok: bool) {
    let Some(f) = staging_functions() else { return };
    if ok {
        let _ = copy(f, s.back, s.stream);
    }
    free(f, &s.buffers, s.bytes, s.stream);
}

/// In a forked child: its counts start at zero (the pools are the parent's, and a child makes no
/// CUDA call).
pub(crate) fn restart_counts() {
    COPIED.store(0, Ordering::Relaxed);
}
