//! The one clock every time in the trace is read from: nanoseconds since the interposer started
//! in the process. Read on every call, so read from the processor's counter, a few nanoseconds
//! where `clock_gettime` costs tens. quanta decides whether the counter can be trusted (constant,
//! invariant TSC) and calibrates it against the monotonic clock once, at start; where it chose
//! the counter, a call reads it inline ([`now_ns`]: one instruction and one line of scale, in
//! `hot.rs`), since a call into quanta is two more lines of code and one of its state that a
//! cold call misses (`reports/trace/cold-path/steps/` in git at c433f41). Elsewhere quanta's own clock (the
//! monotonic clock) is read.

use std::sync::LazyLock;
use std::sync::atomic::Ordering;

use crate::recorder::hot::HOT;

struct Start {
    clock: quanta::Clock,
    raw: u64,
    /// RFC 3339, UTC.
    wall: String,
}

static START: LazyLock<Start> = LazyLock::new(|| {
    let clock = quanta::Clock::new();
    Start {
        raw: clock.raw(),
        clock,
        wall: jiff::Timestamp::now().to_string(),
    }
});

/// Fixes the start (the interposer's initialiser calls it first, so that the clock's calibration
/// is paid there, not on a call), and the counter's scale where quanta reads the counter.
pub(crate) fn start() {
    let s = &*START;
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC reads the time-stamp counter; it has no other effect.
        let counter = || unsafe { std::arch::x86_64::_rdtsc() };
        // quanta's raw reading is the counter itself where it chose the counter, else the
        // monotonic clock's nanoseconds (another scale): the counter's two readings around it
        // hold it only in the first case.
        let before = counter();
        let raw = s.clock.raw();
        let after = counter();
        let per_2_32_ticks = s.clock.delta_as_nanos(0, 1 << 32);
        if (before..=after).contains(&raw) && per_2_32_ticks > 0 {
            HOT.tsc_start.store(s.raw, Ordering::Relaxed);
            HOT.tsc_per_2_32_ticks.store(per_2_32_ticks, Ordering::Release);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = s;
}

/// Nanoseconds since the start.
#[inline]
pub(crate) fn now_ns() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let scale = HOT.tsc_per_2_32_ticks.load(Ordering::Acquire);
        if scale != 0 {
            // SAFETY: as in `start`.
            let ticks = unsafe { std::arch::x86_64::_rdtsc() }.saturating_sub(HOT.tsc_start.load(Ordering::Relaxed));
            return ((u128::from(ticks) * u128::from(scale)) >> 32) as u64;
        }
    }
    quanta_ns()
}

/// Nanoseconds since the start, from quanta's clock.
#[cold]
fn quanta_ns() -> u64 {
    let s = &*START;
    s.clock.delta_as_nanos(s.raw, s.clock.raw())
}

/// Seconds, as trace.json writes times.
pub(crate) fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// When the interposer started (RFC 3339, UTC).
pub(crate) fn started_at() -> String {
    START.wall.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_reads_nanoseconds() {
        let a = now_ns();
        let wall = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (b, elapsed) = (now_ns(), wall.elapsed().as_nanos() as u64);
        let read = b - a;
        assert!(read >= 20_000_000, "{read} ns over a 20 ms sleep");
        assert!(
            read.abs_diff(elapsed) < elapsed / 20,
            "{read} ns read, {elapsed} ns elapsed"
        );
    }

    #[test]
    fn the_counter_read_inline_agrees_with_quanta() {
        start();
        if HOT.tsc_per_2_32_ticks.load(Ordering::Acquire) == 0 {
            // quanta reads the monotonic clock here: so does `now_ns`.
            return;
        }
        for _ in 0..5 {
            let (a, q, b) = (now_ns(), quanta_ns(), now_ns());
            assert!(a <= b, "{a} then {b}");
            // Two scales of the same counter: within a microsecond of each other, at most.
            assert!(q + 1_000 >= a && q <= b + 1_000, "inline {a}..{b}, quanta {q}");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}
