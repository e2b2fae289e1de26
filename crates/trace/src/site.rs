//! A call's facts as the interposed function hands them over ([`Site`]), the key calls are
//! grouped by ([`SiteKey`]) and what is counted per key ([`SiteStats`]).

use std::ffi::c_int;

use nppbench_model::{StatusCount, TraceStreamKind};
use nppbench_npp::sys::{NppStatus, NppStreamContext, NppiSize};
use smallvec::SmallVec;

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
    pub(crate) fn new(site: &Site<'_>, real_flags: Option<u32>) -> SiteKey {
        SiteKey {
            symbol: site.symbol,
            width: site.roi.width,
            height: site.roi.height,
            src_stride: site.src_step,
            dst_stride: site.dst_step,
            declared_flags: site.ctx.n_stream_flags,
            stream: stream_kind(site.ctx.h_stream as u64),
            real_flags,
            device: site.ctx.n_cuda_device_id,
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
}

impl SiteStats {
    pub(crate) fn new(start_ns: u64) -> SiteStats {
        SiteStats {
            calls: 0,
            first_ns: start_ns,
            last_ns: start_ns,
            in_npp_ns: 0,
            statuses: SmallVec::new(),
        }
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
