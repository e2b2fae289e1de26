//! The one recording function every interposed symbol calls: it times the real call, then
//! appends it to the calling thread's own feed (`feed.rs`: one record, one cache line, hinted
//! before NPP's call so that it loads while NPP runs). Nothing here is shared by all threads;
//! nothing changes what the caller sees (the status and `errno` are NPP's).
//!
//! NPP's call runs much code and data of its own (on a new thread it creates its streams), so the
//! record is built before it, while the lines it reads are loaded: what follows the call is the
//! clock, the record's line and, for a call that can race, the budget's. Both halves and the
//! flags cache's look-up are placed in one section of code (`nppbench_hot`), so that a cold
//! call's code is a few adjacent lines, not lines spread over the library. What this saves is
//! measured in `reports/trace/cold-path/` in git at c433f41.

use std::panic::{AssertUnwindSafe, catch_unwind};

use nppbench_npp_sys::NppStatus;

use crate::recorder::clock;
use crate::recorder::driver;
use crate::recorder::errno::keeping_errno;
use crate::recorder::feed::{self, CallEvent, InCall};
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
    /// The stream's flags as the cache held them (`None`: not there; the driver is asked after
    /// NPP's call).
    cached: Option<Option<u32>>,
    /// The call's record as far as it is known before NPP's call: built there, while the lines
    /// it reads are loaded, so that what follows NPP's call (its own work between) is short.
    event: CallEvent,
}

/// Marks the thread as in a call, with its record's line and its stream's flags hinted, and
/// builds the record; `None` for a call inside a call (NPP's own, not recorded).
#[inline(never)]
#[cfg_attr(target_os = "linux", unsafe(link_section = "nppbench_hot"))]
fn before(site: &Site<'_>) -> Option<Started> {
    // A forked child records nothing (its trace says so: `writer::write`).
    if crate::recorder::work::forked() {
        return None;
    }
    let entered = clock::now_ns();
    let handle = site.ctx.h_stream as u64;
    flags::prefetch(handle);
    let can_race = site::can_race(site.ctx);
    if can_race {
        pending::prefetch();
    }
    let in_call = feed::enter(site.symbol)?;
    // Before NPP's call, which queues its own work: what was queued before is the caller's.
    let pending = (can_race && pending::ask_now())
        .then(|| keeping_errno(|| driver::stream_pending(handle)))
        .flatten();
    let cached = flags::look_up(handle);
    let event = site::event(site, cached.flatten(), false, pending, 0, 0, 0);
    let start = clock::now_ns();
    Some(Started {
        in_call,
        entered,
        start,
        pending,
        can_race,
        cached,
        event,
    })
}

/// Appends the call that `started` and returned `status` to the thread's feed, with the time it
/// took NPP and the recording's own.
#[inline(never)]
#[cfg_attr(target_os = "linux", unsafe(link_section = "nppbench_hot"))]
fn after(site: &Site<'_>, started: Started, status: NppStatus) {
    let Started {
        in_call,
        entered,
        start,
        pending,
        can_race,
        cached,
        mut event,
    } = started;
    let end = clock::now_ns().max(start);
    in_call.leave();
    // Never unwind into the caller: a failure to record loses the record, not the call.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if cached.is_none() {
            let asked = keeping_errno(|| flags::ask(site.ctx.h_stream as u64));
            event = site::event(site, asked, true, pending, 0, 0, 0);
        }
        event.start_ns = start;
        event.in_npp_ns = end - start;
        event.status = status;
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
}
