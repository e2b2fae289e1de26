//! Whether a call that can race asks the driver if its stream still has work queued
//! (`cuStreamQuery`), within a budget. The question cost 1.7 to 5.2 µs a call on an H100
//! (`reports/trace/ask-pending-ab/`), several times what recording costs without it, most on a
//! thread's first call, which is every call of a thread-per-call service: asking every call broke
//! the 1 µs a call the recorder is held to. And what recording costs without it depends on the
//! program: 0.3 µs a call in the seed's program, 0.6 to 1.1 µs where each thread allocates and
//! uploads before its call (its caches cold; `reports/trace/seam/` in git at c433f41). So by default a call asks only
//! while the recording of the calls that could race so far, question included, averages under
//! [`TARGET_NS_PER_CALL`] over the process: the process's first such call always asks (the first
//! once the writer has looked the driver up: a call never pays for that lookup,
//! `driver::stream_pending`); a program whose recording is cheap is asked often, one whose
//! recording alone costs the target seldom. The trace keeps, per site, how many calls were asked
//! and how many of those had work pending. `NPPBENCH_TRACE_ASK_PENDING` (`protocol::ASK_PENDING`)
//! chooses: `0` never, `all` every call, anything else the budget.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// The average recording time, question included, under which a call that can race asks, ns.
pub(crate) const TARGET_NS_PER_CALL: u64 = 600;

/// How calls ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Asking {
    Never = 0,
    Every = 1,
    WithinBudget = 2,
}

impl Asking {
    /// The choice `NPPBENCH_TRACE_ASK_PENDING`'s value makes (`None`: unset).
    pub(crate) fn from_env(value: Option<&str>) -> Asking {
        match value {
            Some("0") => Asking::Never,
            Some("all") => Asking::Every,
            _ => Asking::WithinBudget,
        }
    }
}

/// How calls ask, and the calls that could race and their recording time, ns, over the process:
/// one line, which a call that can race touches twice (counted before NPP's call, its time added
/// after).
///
/// Each counter is updated with a plain load and store, not a locked add: a locked instruction
/// waits for the line and for every load before it, and on a thread's first call those are the
/// call's cold misses (its thread state, its feed), which would otherwise overlap. Two threads
/// calling at once may lose one of their updates; the budget is then off by one call or one
/// recording, never by more than the calls made at the same instant.
#[repr(align(64))]
struct Budget {
    asking: AtomicU8,
    calls: AtomicU64,
    spent_ns: AtomicU64,
}

static BUDGET: Budget = Budget {
    asking: AtomicU8::new(Asking::WithinBudget as u8),
    calls: AtomicU64::new(0),
    spent_ns: AtomicU64::new(0),
};

pub(crate) fn set(asking: Asking) {
    BUDGET.asking.store(asking as u8, Ordering::Relaxed);
}

/// Hints the budget's line, to be written, at the start of a call that can race: it is usually
/// another core's (the last such call's), and its fetch then overlaps the call's other misses.
#[inline]
pub(crate) fn prefetch() {
    crate::recorder::prefetch::lines_to_write((&raw const BUDGET).cast(), 64);
}

/// A call that can race is about to be made: whether it asks.
#[inline]
pub(crate) fn ask_now() -> bool {
    match BUDGET.asking.load(Ordering::Relaxed) {
        0 => false,
        1 => true,
        _ => {
            let calls = BUDGET.calls.load(Ordering::Relaxed) + 1;
            BUDGET.calls.store(calls, Ordering::Relaxed);
            // This call's own recording is not in yet: the first call finds nothing spent.
            BUDGET.spent_ns.load(Ordering::Relaxed) < (calls - 1).saturating_mul(TARGET_NS_PER_CALL).max(1)
        }
    }
}

/// A call that can race was recorded, which took `ns` (its question included, if it asked).
#[inline]
pub(crate) fn recorded(ns: u64) {
    if BUDGET.asking.load(Ordering::Relaxed) == Asking::WithinBudget as u8 {
        let spent = BUDGET.spent_ns.load(Ordering::Relaxed);
        BUDGET.spent_ns.store(spent.saturating_add(ns), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counters are the process's: one test drives them (the others here leave them alone).
    /// The costs are generated, not measured.
    #[test]
    fn within_the_budget_the_first_call_asks_and_then_as_often_as_the_recording_leaves_room() {
        set(Asking::WithinBudget);
        // 0.3 µs a call to record, 2.7 µs more to ask: the question fits in (0.6 - 0.3) µs a
        // call one call in nine.
        let mut asked = 0;
        for i in 0..900 {
            let asks = ask_now();
            assert!(asks || i > 0, "the first call asks");
            asked += u32::from(asks);
            recorded(300 + if asks { 2_700 } else { 0 });
        }
        assert!((99..=101).contains(&asked), "{asked}");
        let spent = BUDGET.spent_ns.load(Ordering::Relaxed);
        assert!(spent <= 900 * TARGET_NS_PER_CALL + 3_000, "{spent}");
        // A recording that costs twice the target alone leaves no room: at most one more call
        // asks (where the calls before left a little).
        let more = (0..100)
            .filter(|_| {
                let asks = ask_now();
                recorded(2 * TARGET_NS_PER_CALL);
                asks
            })
            .count();
        assert!(more <= 1, "{more}");
        set(Asking::Never);
        assert!((0..100).all(|_| !ask_now()));
        set(Asking::Every);
        assert!((0..100).all(|_| ask_now()));
        set(Asking::WithinBudget);
    }

    #[test]
    fn the_variable_chooses_how_calls_ask() {
        assert_eq!(Asking::from_env(Some("0")), Asking::Never);
        assert_eq!(Asking::from_env(Some("all")), Asking::Every);
        assert_eq!(Asking::from_env(Some("1")), Asking::WithinBudget);
        assert_eq!(Asking::from_env(None), Asking::WithinBudget);
    }
}
