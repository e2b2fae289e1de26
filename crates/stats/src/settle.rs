//! The sequential form of the leak rule: after each call of a memory scenario, whether its class
//! is already settled, so that the probe can stop there instead of making every call.
//!
//! The rule: never before `min_calls` calls (for a model with at most N threads, never before
//! `2N + 4` either, so that a pool is seen to fill and then stay flat); then the class
//! [`classify`] gives the series so far is settled when
//! - it gave the same class two calls earlier (no verdict on one call's step), and
//! - for `flat`: no stream was created in the second half of the calls (streams NPP keeps per
//!   thread show before their memory crosses an allocation granule);
//! - for `bounded`: the second half spans at most one granule (it has stopped growing).
//!
//! A growth that starts only after `min_calls` new threads, and then continues, is missed by an
//! early stop; `min_calls = calls` turns early stopping off.
//!
//! A scenario is settled `flat` at half the minimum (never before the fourth call, and for a
//! pool not before each of its threads has called, [`quiet_from`]) where it is quiet
//! ([`quiet_series`]): memory has not moved by a byte since the first reading and no stream was
//! created since the first call. NPP makes a thread's streams at its first call, so a thread
//! that has called creates none later. In every committed run that read after every call, at
//! least until the minimum, such a scenario stayed flat to its last call (the replays in
//! analysis's `readings` tests).
//!
//! The rule reads memory after the first call (growth is counted from there) and then only from
//! the first call of the second half of the series it first judges ([`reads_at`]): a decision
//! at `n` calls classifies the calls so far and those two calls earlier, each by its second
//! half. The readings between are used by no decision. The test
//! `the_rule_as_probes_run_it_gives_each_scenario_its_whole_series_class` (analysis's `readings`)
//! replays committed runs read after every call as probes now read and stop.

use crate::{GRANULE_MIB, LeakClass, classify_read};

/// What the settle rule is told after each call.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// The calls after which memory was read (1-based, ascending; see [`reads_at`]).
    pub calls: &'a [u32],
    /// Memory growth over the first reading, MiB, one value per reading.
    pub growth_mib: &'a [f64],
    /// Calls made so far.
    pub made: u32,
    /// The scenario's calls: the most it makes.
    pub planned: u32,
    /// Streams created so far (cumulative, one value per call), where counted.
    pub streams_created: Option<&'a [u32]>,
    /// The most threads the threading model ever calls from (`None`: a new thread per call).
    pub thread_bound: Option<u32>,
    pub min_calls: u32,
}

/// The calls a scenario makes at least before it may stop.
pub fn minimum_calls(min_calls: u32, thread_bound: Option<u32>) -> u32 {
    match thread_bound {
        Some(n) if n > 1 => min_calls.max(2 * n + 4),
        _ => min_calls,
    }
}

/// Whether a probe reads memory after `call` (1-based) of a scenario of `calls` calls: after
/// the first, and from the first call that a decision at the minimum (or at the last call, where
/// that comes first) judges on. Every call after the minimum is read.
pub fn reads_at(call: u32, calls: u32, min_calls: u32, thread_bound: Option<u32>) -> bool {
    let first_judged = minimum_calls(min_calls, thread_bound).min(calls).saturating_sub(2) / 2 + 1;
    call <= 1 || call >= first_judged
}

/// The call from which a quiet scenario is settled flat: half of `min_calls`, never before the
/// fourth, and for a pool of n threads not before call n + 1 (each thread has called).
pub fn quiet_from(min_calls: u32, thread_bound: Option<u32>) -> u32 {
    (min_calls / 2)
        .max(4)
        .max(thread_bound.map_or(0, |n| n.saturating_add(1)))
}

/// Whether a series is quiet: not a byte grown at any reading (`growth_mib`, over the first) and
/// no stream created after the first call (`streams_created`, cumulative a call; none counted:
/// not quiet).
pub fn quiet_series(growth_mib: &[f64], streams_created: Option<&[u32]>) -> bool {
    streams_created.is_some_and(|s| s.first() == s.last()) && growth_mib.iter().all(|g| *g == 0.0)
}

/// Whether the scenario is settled quiet: early stopping on (`min_calls` below the planned
/// calls), from [`quiet_from`] on, read after this call, and [`quiet_series`].
fn quiet(p: &Progress<'_>) -> bool {
    let streams = p.streams_created.and_then(|s| s.get(..p.made as usize));
    p.min_calls < p.planned
        && p.made >= quiet_from(p.min_calls, p.thread_bound)
        && p.calls.last() == Some(&p.made)
        && quiet_series(p.growth_mib, streams)
}

/// The class, if it is settled after the calls so far.
pub fn settled(p: Progress<'_>) -> Option<LeakClass> {
    if quiet(&p) {
        return Some(LeakClass::Flat);
    }
    let n = p.made as usize;
    if p.made < minimum_calls(p.min_calls, p.thread_bound) || n < 3 {
        return None;
    }
    // A decision needs this call's reading.
    if p.calls.last() != Some(&p.made) || p.calls.len() != p.growth_mib.len() {
        return None;
    }
    let class = classify_read(p.calls, p.growth_mib, p.made);
    let before = p.calls.partition_point(|&c| c <= p.made - 2);
    if classify_read(&p.calls[..before], &p.growth_mib[..before], p.made - 2) != class {
        return None;
    }
    let tail = &p.growth_mib[p.calls.partition_point(|&c| c <= p.made / 2)..];
    let ok = match class {
        LeakClass::Leak => true,
        LeakClass::Flat => p.streams_created.is_none_or(|s| s[n / 2..].first() == s.last()),
        LeakClass::Undecided => false,
        LeakClass::Bounded => {
            let (lo, hi) = tail.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            });
            hi - lo <= GRANULE_MIB
        }
    };
    ok.then_some(class)
}

#[cfg(test)]
mod tests {
    //! Generated series, labelled as such: each has a known class, and the rule must reach it
    //! (or keep going) as the full series would.
    use super::*;
    use crate::classify;

    fn leak(i: usize) -> f64 {
        ((i as f64 * 1.6) / 2.0).floor() * 2.0
    }

    /// The first call after which the rule settles, and the class it settles on.
    fn first_settled(
        series: &[f64],
        streams: Option<&[u32]>,
        bound: Option<u32>,
        min_calls: u32,
    ) -> Option<(usize, LeakClass)> {
        let calls: Vec<u32> = (1..=series.len() as u32).collect();
        (1..=series.len()).find_map(|n| {
            settled(Progress {
                calls: &calls[..n],
                growth_mib: &series[..n],
                made: n as u32,
                planned: series.len() as u32,
                streams_created: streams.map(|s| &s[..n]),
                thread_bound: bound,
                min_calls,
            })
            .map(|c| (n, c))
        })
    }

    #[test]
    fn a_leak_settles_soon_after_the_minimum() {
        let series: Vec<f64> = (0..48).map(leak).collect();
        let (n, class) = first_settled(&series, None, None, 10).unwrap();
        assert_eq!(class, LeakClass::Leak);
        assert!((10..=14).contains(&n), "settled after {n} calls");
        assert_eq!(classify(&series), class, "the same class as the whole series");
    }

    #[test]
    fn flat_settles_at_the_minimum_unless_streams_are_being_made() {
        let flat = vec![0.0; 48];
        assert_eq!(first_settled(&flat, None, None, 10), Some((10, LeakClass::Flat)));
        // Generated: three streams a call, memory not yet past a granule: keep going.
        let streams: Vec<u32> = (0..48).map(|i| 3 * i as u32).collect();
        assert_eq!(first_settled(&flat, Some(&streams), None, 10), None);
        // Streams counted, none made after the first call, not a byte grown: quiet at half the
        // minimum, a pool once each of its threads has called.
        let none: Vec<u32> = vec![4; 48];
        assert_eq!(first_settled(&flat, Some(&none), None, 10), Some((5, LeakClass::Flat)));
        assert_eq!(
            first_settled(&flat, Some(&none), Some(1), 12),
            Some((6, LeakClass::Flat))
        );
        assert_eq!(
            first_settled(&flat, Some(&none), Some(2), 10),
            Some((5, LeakClass::Flat))
        );
        assert_eq!(
            first_settled(&flat, Some(&none), Some(16), 10),
            Some((17, LeakClass::Flat))
        );
        // Half a MiB grown is within a granule, flat, but not quiet.
        let moved: Vec<f64> = (0..48).map(|i| if i > 2 { 0.5 } else { 0.0 }).collect();
        assert_eq!(
            first_settled(&moved, Some(&none), None, 10),
            Some((10, LeakClass::Flat))
        );
        // The minimum at the planned calls turns stopping off, the quiet stop too.
        assert_eq!(
            first_settled(&flat[..10], Some(&none[..10]), None, 10),
            Some((10, LeakClass::Flat))
        );
        assert_eq!(quiet_from(4, None), 4);
    }

    #[test]
    fn a_pool_is_watched_until_it_has_filled() {
        // Generated: a pool of 16 fills in its first 16 calls, then nothing.
        let pool: Vec<f64> = (0..48).map(|i| leak(i.min(16))).collect();
        let (n, class) = first_settled(&pool, None, Some(16), 10).unwrap();
        assert_eq!(class, LeakClass::Bounded);
        assert!(n >= 36, "a pool of 16 needs 2×16+4 calls, settled after {n}");
        assert_eq!(classify(&pool), LeakClass::Bounded);
    }

    #[test]
    fn min_calls_at_the_maximum_turns_stopping_off() {
        let series: Vec<f64> = (0..24).map(leak).collect();
        assert_eq!(first_settled(&series, None, None, 24), Some((24, LeakClass::Leak)));
        assert_eq!(first_settled(&series[..23], None, None, 24), None);
    }

    #[test]
    fn memory_is_read_after_the_first_call_and_from_the_half_the_rule_judges() {
        let read = |calls, bound| {
            (1..=calls)
                .filter(|&c| reads_at(c, calls, 10, bound))
                .collect::<Vec<u32>>()
        };
        assert_eq!(
            read(24, None),
            [
                1, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24
            ]
        );
        // A pool of 16 is judged from 2×16+4 = 36 calls on.
        assert_eq!(read(40, Some(16))[..3], [1, 18, 19]);
        // Fewer calls than the minimum: judged over the calls made.
        assert_eq!(read(6, None), [1, 3, 4, 5, 6]);
        assert_eq!(read(2, None), [1, 2]);
    }

    #[test]
    fn a_series_read_where_the_rule_judges_settles_as_one_read_after_every_call() {
        // Generated series, labelled as such: a leak, a pool of 4 filling, flat, and a late step.
        let series: [Vec<f64>; 4] = [
            (0..30).map(leak).collect(),
            (0..30).map(|i| leak(i.min(4))).collect(),
            vec![0.0; 30],
            (0..30).map(|i| if i > 6 { 4.0 } else { 0.0 }).collect(),
        ];
        for (s, bound) in series.iter().zip([None, Some(4), None, None]) {
            let every = first_settled(s, None, bound, 10);
            let calls: Vec<u32> = (1..=30).filter(|&c| reads_at(c, 30, 10, bound)).collect();
            let read: Vec<f64> = calls.iter().map(|&c| s[c as usize - 1]).collect();
            let sparse = (1..=30u32).find_map(|n| {
                let k = calls.partition_point(|&c| c <= n);
                settled(Progress {
                    calls: &calls[..k],
                    growth_mib: &read[..k],
                    made: n,
                    planned: 30,
                    streams_created: None,
                    thread_bound: bound,
                    min_calls: 10,
                })
                .map(|c| (n as usize, c))
            });
            assert_eq!(sparse, every, "{s:?}");
        }
    }
}
