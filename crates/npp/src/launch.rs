//! The call layer: one catalogue row's function called through its looked-up symbol, with the
//! arguments its [`Args`] variant declares. The only place a symbol gets a signature; each
//! function here is an `unsafe fn` whose `# Safety` section says what its caller vouches for.

use std::ffi::c_int;

use nppbench_catalog::image::encode;
use nppbench_catalog::{Args, Constant, Row};

use crate::sys::{self, NppStatus, NppStreamContext, NppiPoint, NppiRect, NppiSize, Ptr, RawFn};

/// A call's arguments, checked against the buffers before it is made.
pub(crate) struct Launch {
    /// Device pointers of the sources (unused ones 0).
    pub(crate) sources: [u64; 2],
    pub(crate) src_step: c_int,
    pub(crate) dst: u64,
    pub(crate) dst_step: c_int,
    /// The source ROI (for Set, the destination's).
    pub(crate) roi: NppiSize,
    /// The destination's size (transposed, resized, …).
    pub(crate) dst_size: NppiSize,
    /// The scratch buffer of a reduction (0 otherwise).
    pub(crate) scratch: u64,
    pub(crate) ctx: NppStreamContext,
}

/// A per-channel constant in the row's sample type, in host memory for the call to read
/// (aligned for any sample type).
#[repr(C, align(8))]
struct HostConstants([u8; 32]);

impl HostConstants {
    fn new(row: &Row, constant: Constant) -> HostConstants {
        let mut bytes = [0u8; 32];
        let size = row.src.sample.bytes() as usize;
        for c in 0..usize::from(row.src.channels) {
            encode(
                row.src.sample,
                constant.channel(c),
                &mut bytes[c * size..(c + 1) * size],
            );
        }
        HostConstants(bytes)
    }

    fn ptr(&self) -> Ptr {
        self.0.as_ptr().cast()
    }
}

/// A one-channel constant by value: integers go in an integer register, floats in a float one.
fn by_value_int(row: &Row, constant: Constant) -> c_int {
    debug_assert!(!row.src.sample.is_float());
    constant.channel(0) as c_int
}

/// Calls `f`, `row`'s function, with `a`.
///
/// # Safety
///
/// - `f` must be the function `row` names ([`Row::symbol`]), looked up in an NPP whose library
///   is still open, so that it has the C signature `row.args` declares.
/// - `a`'s device pointers must be live device allocations of the context's device that hold
///   the call: each source `src_step × roi.height` bytes, the destination `dst_step × dst_size`
///   rows (a reduction's results), a reduction's scratch buffer the size NPP's
///   `…GetBufferHostSize` asked for; the steps must hold a row of the ROI.
/// - `a.ctx` must name a live stream (or the legacy default stream).
pub(crate) unsafe fn call(row: &Row, f: RawFn, a: &Launch) -> NppStatus {
    let [src, src2] = a.sources.map(|p| p as Ptr);
    let dst = a.dst as Ptr;
    let float = row.src.sample.is_float();
    let origin = NppiPoint { x: 0, y: 0 };
    let rect = |s: NppiSize| NppiRect {
        x: 0,
        y: 0,
        width: s.width,
        height: s.height,
    };
    let constants = match row.args {
        Args::MapConst { constant, .. } | Args::Set(constant) => Some(HostConstants::new(row, constant)),
        _ => None,
    };
    let host = constants.as_ref().map_or(std::ptr::null(), HostConstants::ptr);
    let (ss, ds, roi, ctx) = (a.src_step, a.dst_step, a.roi, a.ctx);
    // SAFETY: `f` is `row`'s function (the caller's word, # Safety), and each arm gives it the C
    // signature its row's `Args` variant declares (checked against the headers of NPP 12.2 and
    // 13.0 for every row; `sys` holds the types); the caller vouches that every device buffer
    // holds its geometry, that the steps hold a row and that the context names a live stream;
    // host arrays (`host`, the channel order) live until the call returns, and NPP reads them
    // during the call.
    unsafe {
        use std::mem::transmute as t;
        match row.args {
            Args::Map => t::<RawFn, sys::MapFn>(f)(src, ss, dst, ds, roi, ctx),
            Args::MapInt(v) => t::<RawFn, sys::MapIntFn>(f)(src, ss, dst, ds, roi, v, ctx),
            Args::MapOrder(order) => t::<RawFn, sys::MapPtrFn>(f)(src, ss, dst, ds, roi, order.as_ptr().cast(), ctx),
            Args::MapConst { constant, scale } => match (constant, scale) {
                (Constant::One(v), None) if float => {
                    t::<RawFn, sys::MapConstFloatFn>(f)(src, ss, v as f32, dst, ds, roi, ctx)
                }
                (Constant::One(_), Some(sf)) => {
                    t::<RawFn, sys::MapConstIntScaleFn>(f)(src, ss, by_value_int(row, constant), dst, ds, roi, sf, ctx)
                }
                (Constant::One(_), None) => {
                    t::<RawFn, sys::MapConstIntFn>(f)(src, ss, by_value_int(row, constant), dst, ds, roi, ctx)
                }
                (Constant::PerChannel(_), Some(sf)) => {
                    t::<RawFn, sys::MapConstPtrScaleFn>(f)(src, ss, host, dst, ds, roi, sf, ctx)
                }
                (Constant::PerChannel(_), None) => t::<RawFn, sys::MapConstPtrFn>(f)(src, ss, host, dst, ds, roi, ctx),
            },
            Args::Binary { scale: Some(sf) } => {
                t::<RawFn, sys::BinaryIntFn>(f)(src, ss, src2, ss, dst, ds, roi, sf, ctx)
            }
            Args::Binary { scale: None } => t::<RawFn, sys::BinaryFn>(f)(src, ss, src2, ss, dst, ds, roi, ctx),
            Args::Compare(op) => t::<RawFn, sys::BinaryIntFn>(f)(src, ss, src2, ss, dst, ds, roi, op as c_int, ctx),
            Args::Set(constant) => match constant {
                Constant::One(v) if float => t::<RawFn, sys::SetFloatFn>(f)(v as f32, dst, ds, roi, ctx),
                Constant::One(_) => t::<RawFn, sys::SetIntFn>(f)(by_value_int(row, constant), dst, ds, roi, ctx),
                Constant::PerChannel(_) => t::<RawFn, sys::SetPtrFn>(f)(host, dst, ds, roi, ctx),
            },
            Args::Threshold { threshold, op } if float => {
                t::<RawFn, sys::ThresholdFloatFn>(f)(src, ss, dst, ds, roi, threshold as f32, op as c_int, ctx)
            }
            Args::Threshold { threshold, op } => {
                t::<RawFn, sys::ThresholdIntFn>(f)(src, ss, dst, ds, roi, threshold as c_int, op as c_int, ctx)
            }
            Args::FilterBox { mask, border } => {
                let m = mask as c_int;
                let anchor = NppiPoint { x: m / 2, y: m / 2 };
                let size = NppiSize { width: m, height: m };
                t::<RawFn, sys::FilterBoxFn>(f)(src, ss, roi, origin, dst, ds, roi, size, anchor, border, ctx)
            }
            Args::FilterMask { mask_size, border } => {
                t::<RawFn, sys::FilterMaskFn>(f)(src, ss, roi, origin, dst, ds, roi, mask_size, border, ctx)
            }
            Args::Resize { interpolation } => t::<RawFn, sys::ResizeFn>(f)(
                src,
                ss,
                roi,
                rect(roi),
                dst,
                ds,
                a.dst_size,
                rect(a.dst_size),
                interpolation,
                ctx,
            ),
            Args::Reduce { .. } => t::<RawFn, sys::ReduceFn>(f)(src, ss, roi, a.scratch as Ptr, dst, ctx),
            Args::Reduce2 { .. } => {
                t::<RawFn, sys::Reduce2Fn>(f)(src, ss, roi, dst, (a.dst + 8) as Ptr, a.scratch as Ptr, ctx)
            }
        }
    }
}

/// Calls a `…GetBufferHostSize` function `f` for `roi`.
///
/// # Safety
///
/// `f` must be a `…GetBufferHostSize_…_Ctx` function (the signature [`sys::BufferSizeFn`]),
/// looked up in an NPP whose library is still open.
pub(crate) unsafe fn buffer_size(f: RawFn, roi: NppiSize, ctx: NppStreamContext) -> (NppStatus, u64) {
    let mut size = 0u64;
    // SAFETY: `f` is a `…GetBufferHostSize_…_Ctx` function (the caller's word, # Safety): it
    // writes an `int` (NPP 12) or a `size_t` (NPP 13) through the pointer, either of which the
    // zeroed `u64` holds (little-endian).
    let status = unsafe { std::mem::transmute::<RawFn, sys::BufferSizeFn>(f)(roi, &mut size, ctx) };
    (status, size)
}

/// `nppSetStream(stream)` then `nppGetStreamContext(&ctx)`: how code written before the `_Ctx`
/// functions took a context, or ported from it, fills one.
///
/// # Safety
///
/// `set` and `get` must be libnppc's `nppSetStream` and `nppGetStreamContext`, looked up in an
/// NPP whose library is still open; `stream` must be a live CUDA stream (or null, the legacy
/// default stream).
pub(crate) unsafe fn legacy_context(
    set: RawFn,
    get: RawFn,
    stream: *mut std::ffi::c_void,
) -> (NppStatus, NppStreamContext) {
    let mut ctx = NppStreamContext::zeroed();
    // SAFETY: `set` and `get` are libnppc's nppSetStream and nppGetStreamContext (the caller's
    // word, # Safety), whose signatures `sys` declares; `stream` is live; the context is written
    // through a valid pointer.
    let status = unsafe {
        let s = std::mem::transmute::<RawFn, sys::SetStream>(set)(stream);
        if s < 0 {
            s
        } else {
            std::mem::transmute::<RawFn, sys::GetStreamContext>(get)(&mut ctx)
        }
    };
    (status, ctx)
}
