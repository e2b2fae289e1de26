//! A call's facts as the interposed function hands them over ([`Site`]), the key calls are
//! grouped by ([`SiteKey`]) and what is counted per key ([`SiteStats`]).

use std::ffi::c_int;

use nppbench_model::{StatusCount, TraceStreamKind};
use nppbench_npp_sys::{NppStatus, NppStreamContext, NppiSize};
use smallvec::SmallVec;

use crate::feed::CallEvent;

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
}

/// The stream kind a context's `hStream` names: NULL, `cudaStreamLegacy` (1),
/// `cudaStreamPerThread` (2), or a stream the program created.
pub(crate) fn stream_kind(handle: u64) -> TraceStreamKind {
    match handle {
        0 => TraceStreamKind::LegacyDefault,
        1 => TraceStreamKind::LegacyHandle,
        2 => TraceStreamKind::PerThreadDefault,
        _ => TraceStreamKind::Created,
    }
}

/// Calls with equal keys are one call site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct SiteKey {
    pub(crate) symbol: u16,
    pub(crate) width: i32,
    pub(crate) height: i32,
    pub(crate) src_stride: Option<i32>,
    pub(crate) dst_stride: Option<i32>,
    pub(crate) declared_flags: u32,
    pub(crate) stream: TraceStreamKind,
    pub(crate) real_flags: Option<u32>,
    pub(crate) device: i32,
}

impl SiteKey {
    /// The key of a call as its thread appended it.
    pub(crate) fn of(call: &CallEvent) -> SiteKey {
        let has = |bit| call.bits & bit != 0;
        SiteKey {
            symbol: call.symbol,
            width: call.width,
            height: call.height,
            src_stride: has(CallEvent::SRC_STEP).then_some(call.src_step),
            dst_stride: has(CallEvent::DST_STEP).then_some(call.dst_step),
            declared_flags: call.declared_flags,
            stream: stream_kind(u64::from(call.stream)),
            real_flags: has(CallEvent::REAL_FLAGS).then_some(call.real_flags),
            device: call.device,
        }
    }
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

/// One thread's calls at one site.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SiteStats {
    pub(crate) calls: u64,
    pub(crate) first_ns: u64,
    pub(crate) last_ns: u64,
    pub(crate) in_npp_ns: u64,
    /// Few distinct statuses per site: a list searched in order, its first two held inline (a
    /// thread's first call allocates nothing for it).
    pub(crate) statuses: SmallVec<[StatusCount; 2]>,
    /// Calls asked whether their stream had work queued, and those that had.
    pub(crate) pending_asked: u64,
    pub(crate) pending: u64,
}

impl SiteStats {
    pub(crate) fn new(start_ns: u64) -> SiteStats {
        SiteStats {
            calls: 0,
            first_ns: start_ns,
            last_ns: start_ns,
            in_npp_ns: 0,
            statuses: SmallVec::new(),
            pending_asked: 0,
            pending: 0,
        }
    }

    /// Counts the answer of a call just counted to whether its stream had work queued.
    #[inline]
    pub(crate) fn count_pending(&mut self, bits: u8) {
        self.pending_asked += u64::from(bits & CallEvent::PENDING_ASKED != 0);
        self.pending += u64::from(bits & CallEvent::PENDING != 0);
    }

    /// Counts a call that started at `start_ns`, spent `in_npp_ns` in NPP and returned `status`.
    #[inline]
    pub(crate) fn add(&mut self, start_ns: u64, in_npp_ns: u64, status: NppStatus) {
        self.calls += 1;
        self.first_ns = self.first_ns.min(start_ns);
        self.last_ns = self.last_ns.max(start_ns);
        self.in_npp_ns += in_npp_ns;
        add_status(&mut self.statuses, status, 1);
    }

    /// Adds another thread's counts of the same site.
    pub(crate) fn merge(&mut self, other: &SiteStats) {
        self.calls += other.calls;
        self.first_ns = self.first_ns.min(other.first_ns);
        self.last_ns = self.last_ns.max(other.last_ns);
        self.in_npp_ns += other.in_npp_ns;
        self.pending_asked += other.pending_asked;
        self.pending += other.pending;
        for s in &other.statuses {
            add_status(&mut self.statuses, s.status, s.calls);
        }
    }
}

fn add_status(statuses: &mut SmallVec<[StatusCount; 2]>, status: NppStatus, calls: u64) {
    match statuses.iter_mut().find(|s| s.status == status) {
        Some(s) => s.calls += calls,
        None => statuses.push(StatusCount { status, calls }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_handles_name_their_kinds() {
        assert_eq!(stream_kind(0), TraceStreamKind::LegacyDefault);
        assert_eq!(stream_kind(1), TraceStreamKind::LegacyHandle);
        assert_eq!(stream_kind(2), TraceStreamKind::PerThreadDefault);
        assert_eq!(stream_kind(0x7f00_1234_5000), TraceStreamKind::Created);
    }

    #[test]
    fn a_call_packed_into_its_record_gives_back_its_key() {
        let mut ctx = NppStreamContext::zeroed();
        ctx.n_stream_flags = 1;
        ctx.n_cuda_device_id = 3;
        for (handle, src, dst, real) in [
            (0, Some(64), None, None),
            (2, None, Some(-4), Some(1)),
            (0x7f00_1234_5000_u64, Some(4096), Some(8192), Some(0)),
        ] {
            ctx.h_stream = handle as _;
            let site = Site {
                symbol: 11,
                roi: NppiSize { width: 31, height: 35 },
                src_step: src,
                dst_step: dst,
                ctx: &ctx,
            };
            let call = event(&site, real, true, None, 5, 6, -7);
            let key = SiteKey::of(&call);
            assert_eq!(
                (key.symbol, key.width, key.height, key.src_stride, key.dst_stride),
                (11, 31, 35, src, dst)
            );
            assert_eq!(
                (key.declared_flags, key.stream, key.real_flags, key.device),
                (1, stream_kind(handle), real, 3)
            );
            assert_eq!((call.start_ns, call.in_npp_ns, call.status), (5, 6, -7));
            assert_ne!(call.bits & CallEvent::FLAGS_ASKED, 0);
        }
    }

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

    #[test]
    fn whether_work_was_pending_is_packed_and_counted_per_site() {
        let ctx = NppStreamContext::zeroed();
        let site = Site {
            symbol: 1,
            roi: NppiSize { width: 31, height: 35 },
            src_step: Some(32),
            dst_step: Some(128),
            ctx: &ctx,
        };
        let mut stats = SiteStats::new(0);
        for pending in [Some(true), Some(false), None, Some(true)] {
            let call = event(&site, None, false, pending, 1, 1, 0);
            stats.add(1, 1, 0);
            stats.count_pending(call.bits);
        }
        assert_eq!((stats.calls, stats.pending_asked, stats.pending), (4, 3, 2));
        let mut other = SiteStats::new(0);
        other.count_pending(CallEvent::PENDING_ASKED);
        stats.merge(&other);
        assert_eq!((stats.pending_asked, stats.pending), (4, 2));
    }

    #[test]
    fn stats_count_calls_statuses_and_span() {
        let mut a = SiteStats::new(50);
        a.add(50, 10, 0);
        a.add(80, 5, -14);
        a.add(90, 5, 0);
        let mut b = SiteStats::new(20);
        b.add(20, 1, -14);
        a.merge(&b);
        assert_eq!((a.calls, a.first_ns, a.last_ns, a.in_npp_ns), (4, 20, 90, 21));
        assert_eq!(
            a.statuses.as_slice(),
            [
                StatusCount { status: 0, calls: 2 },
                StatusCount { status: -14, calls: 2 }
            ]
        );
    }
}
