//! The one recording function every interposed symbol calls: it times the real call, then
//! appends it to the calling thread's own feed (`feed.rs`: one record, one cache line, hinted
//! before NPP's call so that it loads while NPP runs). Nothing here is shared by all threads;
//! nothing changes what the caller sees (the status and `errno` are NPP's).

use std::panic::{AssertUnwindSafe, catch_unwind};

use nppbench_npp_sys::NppStatus;

use crate::recorder::clock;
use crate::recorder::driver;
use crate::recorder::feed::{self, InCall};
use crate::recorder::flags;
use crate::recorder::pending;
use crate::recorder::site::{self, Site};

/// Calls `forward` (NPP's function, with the caller's arguments unchanged) and records the call
/// at `site`. Returns what `forward` returned.
///
/// Only this shell is made once per interposed function: the recording before and after NPP's
/// call is one copy of code shared by all of them, so that a program calling several functions
/// finds it in cache more often (a cold call pays for every line of code it runs).
#[inline]
pub fn call(site: &Site<'_>, forward: impl FnOnce() -> NppStatus) -> NppStatus {
    let Some(started) = before(site) else {
        return forward();
    };
    let status = forward();
    after(site, started, status);
    status
}

/// A call being recorded, from [`before`] to [`after`].
struct Started {
    in_call: InCall,
    /// When the interposer was entered, and when NPP's call started (ns).
    entered: u64,
    start: u64,
    /// Whether the caller's stream still had work queued when NPP was called, asked only of a
    /// call that can race (`site::can_race`), within the question's budget (`pending.rs`), where
    /// the driver answered.
    pending: Option<bool>,
    /// Whether the call can race (`site::can_race`): its recording counts in the question's
    /// budget.
    can_race: bool,
}

/// Marks the thread as in a call, with its record's line and its stream's flags hinted; `None`
/// for a call inside a call (NPP's own, not recorded).
#[inline(never)]
fn before(site: &Site<'_>) -> Option<Started> {
    // A forked child records nothing (its trace says so: `writer::write`).
    if crate::recorder::work::forked() {
        return None;
    }
    let entered = clock::now_ns();
    let in_call = feed::enter(site.symbol)?;
    flags::prefetch(site.ctx.h_stream as u64);
    // Before NPP's call, which queues its own work: what was queued before is the caller's.
    let can_race = site::can_race(site.ctx);
    let pending = (can_race && pending::ask_now())
        .then(|| driver::stream_pending(site.ctx.h_stream as u64))
        .flatten();
    Some(Started {
        in_call,
        entered,
        start: clock::now_ns(),
        pending,
        can_race,
    })
}

/// Appends the call that `started` and returned `status` to the thread's feed, with the time it
/// took NPP and the recording's own.
#[inline(never)]
fn after(site: &Site<'_>, started: Started, status: NppStatus) {
    let Started {
        in_call,
        entered,
        start,
        pending,
        can_race,
    } = started;
    let end = clock::now_ns().max(start);
    in_call.leave();
    let errno = errno();
    // Never unwind into the caller: a failure to record loses the record, not the call.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let (real_flags, source) = flags::real_flags(site.ctx.h_stream as u64);
        let event = site::event(
            site,
            real_flags,
            source == flags::Source::Asked,
            pending,
            start,
            end - start,
            status,
        );
        let mut overhead = 0;
        in_call.append(event, || {
            overhead = start.saturating_sub(entered) + clock::now_ns().saturating_sub(end);
            overhead
        });
        // The question's budget counts the whole recording of the calls that can race.
        if can_race {
            pending::recorded(overhead);
        }
    }));
    set_errno(errno);
}

fn errno() -> i32 {
    // SAFETY: __errno_location returns the calling thread's errno, always valid.
    unsafe { *libc::__errno_location() }
}

fn set_errno(v: i32) {
    // SAFETY: as in `errno`.
    unsafe { *libc::__errno_location() = v }
}
