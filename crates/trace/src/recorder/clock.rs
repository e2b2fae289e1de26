//! The one clock every time in the trace is read from: nanoseconds since the interposer started
//! in the process. Read on every call, so read from the processor's counter (quanta: the TSC,
//! scaled to the monotonic clock once, at start), a few nanoseconds where `clock_gettime` costs
//! tens; quanta falls back to the monotonic clock where the counter is not constant.

use std::sync::LazyLock;

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
/// is paid there, not on a call).
pub(crate) fn start() {
    LazyLock::force(&START);
}

/// Nanoseconds since the start.
#[inline]
pub(crate) fn now_ns() -> u64 {
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
}
