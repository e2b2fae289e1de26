//! A call's facts as the interposed function hands them over ([`Site`]), packed into the one
//! record its thread appends (`event`); and whether a call can race (`can_race`). The writer
//! unpacks the record into its key (`writer/site.rs`).

use std::ffi::c_int;

use nppbench_npp_sys::{NppStatus, NppStreamContext, NppiSize};

use super::feed::CallEvent;

/// What an interposed function knows of its call before calling NPP: which function, and the
/// arguments a call site is told apart by.
#[derive(Debug, Clone, Copy)]
pub struct Site<'a> {
    /// Index into [`crate::SYMBOLS`].
    pub symbol: u16,
    pub roi: NppiSize,
    /// `None` where the function takes no such step.
    pub src_step: Option<c_int>,
    pub dst_step: Option<c_int>,
    pub ctx: &'a NppStreamContext,
    /// The images' pointers and steps, where the function has a source and a destination image
    /// (`None` for reductions and Set).
    pub images: Option<Images>,
}

/// The images a call reads and writes, as NPP is passed them: device addresses and row steps in
/// bytes. The shield may pass NPP staging copies instead ([`crate::shield`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Images {
    pub src: u64,
    pub src_step: c_int,
    /// The second source of a binary function.
    pub src2: Option<(u64, c_int)>,
    pub dst: u64,
    pub dst_step: c_int,
    /// The destination is the ROI transposed (Transpose).
    pub transposed: bool,
    /// Whether the shield can stage them: sources and destination of the ROI's size (or the
    /// destination transposed), read and written nowhere else (not filters, which read around
    /// the ROI, nor resizes).
    pub stageable: bool,
}

/// The record of a call at `site` whose stream's real flags are `real_flags` (`asked`: of the
/// driver, on this call), which started at `start_ns`, spent `in_npp_ns` in NPP and returned
/// `status` (its recording time is filled in as it is appended).
#[inline]
pub(crate) fn event(
    site: &Site<'_>,
    real_flags: Option<u32>,
    asked: bool,
    pending: Option<bool>,
    start_ns: u64,
    in_npp_ns: u64,
    status: NppStatus,
) -> CallEvent {
    let bit = |on: bool, bit: u8| if on { bit } else { 0 };
    CallEvent {
        start_ns,
        in_npp_ns,
        width: site.roi.width,
        height: site.roi.height,
        src_step: site.src_step.unwrap_or(0),
        dst_step: site.dst_step.unwrap_or(0),
        declared_flags: site.ctx.n_stream_flags,
        real_flags: real_flags.unwrap_or(0),
        device: site.ctx.n_cuda_device_id,
        status,
        overhead_ns: 0,
        symbol: site.symbol,
        // Handles 0, 1 and 2 name default streams; any other, a created one (`stream_kind`).
        stream: (site.ctx.h_stream as u64).min(3) as u8,
        bits: bit(site.src_step.is_some(), CallEvent::SRC_STEP)
            | bit(site.dst_step.is_some(), CallEvent::DST_STEP)
            | bit(real_flags.is_some(), CallEvent::REAL_FLAGS)
            | bit(asked, CallEvent::FLAGS_ASKED)
            | bit(pending.is_some(), CallEvent::PENDING_ASKED)
            | bit(pending == Some(true), CallEvent::PENDING),
    }
}

/// Whether a call with context `ctx` can race, as the atlas measured NPP: its context declares a
/// blocking stream (`nStreamFlags` without `cudaStreamNonBlocking`) and its stream is not the
/// legacy default stream (handle 0 or `cudaStreamLegacy`). Only such calls ask the driver whether
/// their stream has work queued: the others never split their work onto NPP's own stream.
#[inline]
pub(crate) fn can_race(ctx: &NppStreamContext) -> bool {
    ctx.n_stream_flags & 1 == 0 && (ctx.h_stream as u64) > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_declared_blocking_call_off_the_legacy_stream_can_race() {
        let mut ctx = NppStreamContext::zeroed();
        for (handle, declared, races) in [
            (0x7f00_1234_5000_u64, 0, true),
            (2, 0, true),
            (0x7f00_1234_5000, 1, false),
            (2, 1, false),
            (0, 0, false),
            (1, 0, false),
        ] {
            ctx.h_stream = handle as _;
            ctx.n_stream_flags = declared;
            assert_eq!(can_race(&ctx), races, "handle {handle:#x}, declared {declared}");
        }
    }
}
