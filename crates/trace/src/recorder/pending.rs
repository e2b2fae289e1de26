//! Whether a call that can race asks the driver if its stream still has work queued
//! (`cuStreamQuery`), within a budget. The question cost 1.7 to 5.2 µs a call on an H100
//! (`reports/trace/ask-pending-ab/`), several times what recording costs without it, most on a
//! thread's first call, which is every call of a thread-per-call service: asking every call broke
//! the 1 µs a call the recorder is held to. So by default a call asks only while the time spent
//! asking, over the process, is under [`BUDGET_NS_PER_CALL`] for every call that could race so
//! far: the process's first such call always asks, and a site called often is asked in
//! proportion. The trace keeps, per site, how many calls were asked and how many of those had
//! work pending. `NPPBENCH_TRACE_ASK_PENDING` (`protocol::ASK_PENDING`) chooses: `0` never, `all`
//! every call, anything else the budget.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// The average time a call that can race may spend asking, ns.
pub(crate) const BUDGET_NS_PER_CALL: u64 = 250;

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

static ASKING: AtomicU8 = AtomicU8::new(Asking::WithinBudget as u8);
/// Calls that could race, and the time spent asking, ns, over the process.
static CALLS: AtomicU64 = AtomicU64::new(0);
static SPENT_NS: AtomicU64 = AtomicU64::new(0);

pub(crate) fn set(asking: Asking) {
    ASKING.store(asking as u8, Ordering::Relaxed);
}

/// A call that can race is about to be made: whether it asks.
#[inline]
pub(crate) fn ask_now() -> bool {
    match ASKING.load(Ordering::Relaxed) {
        0 => false,
        1 => true,
        _ => {
            let calls = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
            SPENT_NS.load(Ordering::Relaxed) < calls.saturating_mul(BUDGET_NS_PER_CALL)
        }
    }
}

/// A call asked, which took `ns`.
#[inline]
pub(crate) fn spent(ns: u64) {
    SPENT_NS.fetch_add(ns, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counters are the process's: one test drives them (the others here leave them alone).
    #[test]
    fn within_the_budget_the_first_call_asks_and_then_one_in_as_many_as_the_question_costs() {
        set(Asking::WithinBudget);
        let mut asked = 0;
        for _ in 0..1_000 {
            if ask_now() {
                asked += 1;
                spent(10 * BUDGET_NS_PER_CALL);
            }
        }
        // 2.5 µs a question, 0.25 µs a call: one call in ten asks.
        assert!((99..=101).contains(&asked), "{asked}");
        let (calls, spent_ns) = (CALLS.load(Ordering::Relaxed), SPENT_NS.load(Ordering::Relaxed));
        assert!(spent_ns <= (calls + 10) * BUDGET_NS_PER_CALL);
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
