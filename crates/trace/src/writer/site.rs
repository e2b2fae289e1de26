//! The key calls are grouped by ([`SiteKey`], unpacked from the record a thread appended) and
//! what is counted per key ([`SiteStats`]): the writer's side of a call's record.

use nppbench_model::{StatusCount, TraceStreamKind};
use nppbench_npp_sys::NppStatus;
use smallvec::SmallVec;

use crate::recorder::feed::CallEvent;

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
    use crate::recorder::site::{Site, event};
    use nppbench_npp_sys::{NppStreamContext, NppiSize};

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
                images: None,
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
    fn whether_work_was_pending_is_packed_and_counted_per_site() {
        let ctx = NppStreamContext::zeroed();
        let site = Site {
            symbol: 1,
            roi: NppiSize { width: 31, height: 35 },
            src_step: Some(32),
            dst_step: Some(128),
            ctx: &ctx,
            images: None,
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
