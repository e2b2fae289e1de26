//! The one recording function every interposed symbol calls: it times the real call, then counts
//! it in the calling thread's own data. Nothing here is shared by all threads; nothing changes
//! what the caller sees (the status and `errno` are NPP's).

use std::panic::{AssertUnwindSafe, catch_unwind};

use nppbench_npp::sys::NppStatus;

use crate::clock;
use crate::flags;
use crate::site::{Site, SiteKey};
use crate::streams;
use crate::thread::{self, with_thread};
use crate::work;

/// Calls `forward` (NPP's function, with the caller's arguments unchanged) and records the call
/// at `site`. Returns what `forward` returned.
#[inline]
pub fn call(site: &Site<'_>, forward: impl FnOnce() -> NppStatus) -> NppStatus {
    let entered = clock::now_ns();
    if !streams::enter_call(site.symbol) {
        return forward();
    }
    flags::prefetch(site.ctx.h_stream as u64);
    thread::prefetch_own();
    let start = clock::now_ns();
    let status = forward();
    let end = clock::now_ns().max(start);
    streams::leave_call();
    let errno = errno();
    // Never unwind into the caller: a failure to record loses the record, not the call.
    let _ = catch_unwind(AssertUnwindSafe(|| after(site, status, entered, start, end)));
    set_errno(errno);
    status
}

/// Counts a call that entered the interposer at `entered`, ran NPP from `start` to `end` and
/// returned `status`.
#[inline]
fn after(site: &Site<'_>, status: NppStatus, entered: u64, start: u64, end: u64) {
    let (real_flags, source) = flags::real_flags(site.ctx.h_stream as u64);
    let key = SiteKey::new(site, real_flags);
    work::on_call();
    with_thread(|t| {
        streams::take_created(|handle| t.created_in_calls.push((handle, key)));
        thread::remember_site(t.add(key, start, end - start, status));
        t.flags_asked += u64::from(source == flags::Source::Asked);
        t.add_overhead(start.saturating_sub(entered) + clock::now_ns().saturating_sub(end));
    });
}

fn errno() -> i32 {
    // SAFETY: __errno_location returns the calling thread's errno, always valid.
    unsafe { *libc::__errno_location() }
}

fn set_errno(v: i32) {
    // SAFETY: as in `errno`.
    unsafe { *libc::__errno_location() = v }
}
