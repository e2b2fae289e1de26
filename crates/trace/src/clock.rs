//! The one clock every time in the trace is read from: nanoseconds on the monotonic clock since
//! the interposer started in the process.

use std::sync::LazyLock;
use std::time::Instant;

struct Start {
    instant: Instant,
    /// RFC 3339, UTC.
    wall: String,
}

static START: LazyLock<Start> = LazyLock::new(|| Start {
    instant: Instant::now(),
    wall: jiff::Timestamp::now().to_string(),
});

/// Fixes the start (the interposer's initialiser calls it first).
pub(crate) fn start() {
    LazyLock::force(&START);
}

/// Nanoseconds since the start.
#[inline]
pub(crate) fn now_ns() -> u64 {
    START.instant.elapsed().as_nanos() as u64
}

/// Seconds, as trace.json writes times.
pub(crate) fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// When the interposer started (RFC 3339, UTC).
pub(crate) fn started_at() -> String {
    START.wall.clone()
}
