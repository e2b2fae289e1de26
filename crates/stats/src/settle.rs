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

use crate::{GRANULE_MIB, LeakClass, classify};

/// What the settle rule is told after each call.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// Memory growth over the first sample, MiB, one value per call so far.
    pub growth_mib: &'a [f64],
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

/// The class, if it is settled after the calls so far.
pub fn settled(p: Progress<'_>) -> Option<LeakClass> {
    let n = p.growth_mib.len();
    if (n as u32) < minimum_calls(p.min_calls, p.thread_bound) || n < 3 {
        return None;
    }
    let class = classify(p.growth_mib);
    if classify(&p.growth_mib[..n - 2]) != class {
        return None;
    }
    let tail = &p.growth_mib[n / 2..];
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
        (1..=series.len()).find_map(|n| {
            settled(Progress {
                growth_mib: &series[..n],
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
        let none: Vec<u32> = vec![4; 48];
        assert_eq!(first_settled(&flat, Some(&none), None, 10), Some((10, LeakClass::Flat)));
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
}
