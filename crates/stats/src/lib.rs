//! The statistics nppbench judges by, shared by the probes (which stop a memory scenario once its
//! class is settled) and the pages: least-squares fits with confidence intervals, the leak
//! classification rule and its sequential form, intervals of medians, and the tests `compare`
//! rests on.

#![forbid(unsafe_code)]

pub mod change_points;
mod clusters;
pub mod settle;
pub mod tests_of_passes;

use statrs::distribution::{ContinuousCDF, StudentsT};

pub use clusters::{TwoClusters, two_clusters};

/// Device memory is handed out in 2 MiB pieces: growth below one piece is no growth.
pub const GRANULE_MIB: f64 = 2.0;

/// A least-squares line `y = intercept + slope × x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub slope: f64,
    pub intercept: f64,
    /// The 95% confidence interval of the slope (Student's t, n − 2 degrees of freedom).
    pub slope_ci: (f64, f64),
    /// The coefficient of determination; 1 when every y is equal (a flat line fits exactly).
    pub r2: f64,
    pub n: usize,
}

/// Fits a line to `(x, y)`. `None` with fewer than three points or when every x is the same (no
/// slope can be told).
pub fn least_squares(x: &[f64], y: &[f64]) -> Option<Fit> {
    let n = x.len().min(y.len());
    if n < 3 {
        return None;
    }
    let (x, y) = (&x[..n], &y[..n]);
    let nf = n as f64;
    let mx = x.iter().sum::<f64>() / nf;
    let my = y.iter().sum::<f64>() / nf;
    let sxx: f64 = x.iter().map(|v| (v - mx).powi(2)).sum();
    if sxx <= f64::EPSILON * nf {
        return None;
    }
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let syy: f64 = y.iter().map(|v| (v - my).powi(2)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let sse: f64 = x.iter().zip(y).map(|(a, b)| (b - intercept - slope * a).powi(2)).sum();
    let se = (sse / (nf - 2.0) / sxx).sqrt();
    let t = StudentsT::new(0.0, 1.0, nf - 2.0).map_or(1.96, |d| d.inverse_cdf(0.975));
    let r2 = if syy <= f64::EPSILON { 1.0 } else { 1.0 - sse / syy };
    Some(Fit {
        slope,
        intercept,
        slope_ci: (slope - t * se, slope + t * se),
        r2,
        n,
    })
}

/// How a memory series behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeakClass {
    /// Still growing at the end: grows without bound while new threads call.
    Leak,
    /// Stepped up (while a pool filled, say), then flat.
    Bounded,
    /// No growth beyond one allocation granule.
    Flat,
    /// Not told: a pool of n threads whose calls stopped before each thread had called twice
    /// (2n calls), so that a pool still filling cannot be told from a leak. [`classify`] never
    /// gives it; the analysis of a scenario does.
    Undecided,
}

impl LeakClass {
    pub fn as_str(self) -> &'static str {
        match self {
            LeakClass::Leak => "leak",
            LeakClass::Bounded => "bounded",
            LeakClass::Flat => "flat",
            LeakClass::Undecided => "undecided",
        }
    }
}

/// The classification rule, applied to memory in MiB after each call (`mib`, in call order):
///
/// 1. `flat` when the whole series spans at most one 2 MiB allocation granule;
/// 2. else `leak` when the second half of the calls still grows by more than two granules
///    and the least-squares slope over that half has a 95% confidence interval above zero;
/// 3. else `bounded`.
///
/// Granules make the rule immune to the allocator's 2 MiB steps, and judging the second half
/// alone tells a pool that filled early (bounded) from growth that never stops (leak).
pub fn classify(mib: &[f64]) -> LeakClass {
    let calls: Vec<u32> = (1..=mib.len() as u32).collect();
    classify_read(&calls, mib, mib.len() as u32)
}

/// [`classify`] of a series read at some calls only: `mib[i]` read after call `calls[i]`
/// (1-based, ascending) of the `made` calls. The second half is the calls after `made / 2`, as
/// [`classify`]'s is, and the slope is fitted over the call numbers; over every call
/// (`calls` = 1..=`made`) it is [`classify`]. A probe reads where the settle rule uses the
/// reading (`settle::reads_at`), which gives the class of the whole series.
pub fn classify_read(calls: &[u32], mib: &[f64], made: u32) -> LeakClass {
    let (Some(lo), Some(hi)) = (
        mib.iter().copied().reduce(f64::min),
        mib.iter().copied().reduce(f64::max),
    ) else {
        return LeakClass::Flat;
    };
    if hi - lo <= GRANULE_MIB {
        return LeakClass::Flat;
    }
    let from = calls.partition_point(|&c| c <= made / 2);
    let tail = &mib[from.min(mib.len())..];
    let tail_growth = tail.last().copied().unwrap_or(0.0) - tail.first().copied().unwrap_or(0.0);
    let x: Vec<f64> = calls[from.min(calls.len())..].iter().map(|&c| f64::from(c)).collect();
    let rising = least_squares(&x, tail).is_some_and(|f| f.slope_ci.0 > 0.0);
    if tail_growth > 2.0 * GRANULE_MIB && rising {
        LeakClass::Leak
    } else {
        LeakClass::Bounded
    }
}

/// A distribution-free interval of the median of `sorted` (ascending): the order statistics
/// whose binomial ranks bracket the middle at `confidence` (0.95: a 95% interval). With too few
/// values for that confidence, the whole range.
pub fn median_interval(sorted: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    // The largest k with P(Binomial(n, ½) < k) ≤ (1 − confidence) / 2: the interval is
    // [x_(k), x_(n−k+1)] in 1-based ranks.
    let tail = (1.0 - confidence) / 2.0;
    let mut cdf = 0.0;
    let mut k = 0usize;
    let mut term = 0.5f64.powi(n as i32);
    for i in 0..n {
        // term = C(n, i) / 2^n
        if cdf + term > tail {
            break;
        }
        cdf += term;
        k = i + 1;
        term *= (n - i) as f64 / (i + 1) as f64;
    }
    if k == 0 {
        return Some((sorted[0], sorted[n - 1]));
    }
    Some((sorted[k - 1], sorted[n - k]))
}

/// The value at quantile `q` (0..=1) of `sorted` (ascending), nearest rank.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    Some(sorted[i])
}

/// The median of a sample (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    })
}

#[cfg(test)]
mod tests {
    //! Generated data, labelled as such: these check the arithmetic, not any measurement.
    use super::*;

    #[test]
    fn generated_line_is_recovered_with_a_tight_interval() {
        let x: Vec<f64> = (1..=50).map(f64::from).collect();
        let y: Vec<f64> = x
            .iter()
            .map(|v| 3.0 + 1.5 * v + if (*v as u32).is_multiple_of(2) { 0.1 } else { -0.1 })
            .collect();
        let f = least_squares(&x, &y).unwrap();
        assert!((f.slope - 1.5).abs() < 0.01, "{f:?}");
        assert!(f.slope_ci.0 < 1.5 && 1.5 < f.slope_ci.1);
        assert!(f.slope_ci.1 - f.slope_ci.0 < 0.02);
        assert!(f.r2 > 0.999);
    }

    #[test]
    fn the_interval_matches_students_t() {
        // Generated: y = x exactly but for one point, so se is known by hand:
        // x = 0..4, y = [0, 1, 2, 3, 5]: slope 1.2, sse 0.4, sxx 10, se = sqrt(0.4/3/10).
        let f = least_squares(&[0.0, 1.0, 2.0, 3.0, 4.0], &[0.0, 1.0, 2.0, 3.0, 5.0]).unwrap();
        assert!((f.slope - 1.2).abs() < 1e-12);
        let se = (0.4f64 / 3.0 / 10.0).sqrt();
        let half = f.slope_ci.1 - f.slope;
        assert!(
            (half / se - 3.182_446).abs() < 1e-3,
            "t(0.975, 3) = 3.1824: {}",
            half / se
        );
    }

    #[test]
    fn no_slope_without_spread_in_x() {
        assert!(least_squares(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]).is_none());
        assert!(least_squares(&[1.0, 2.0], &[1.0, 2.0]).is_none());
    }

    #[test]
    fn classify_generated_shapes() {
        // Generated: 1.6 MiB a call in 2 MiB steps, as the allocator hands it out.
        let leak: Vec<f64> = (0..48).map(|i| ((i as f64 * 1.6) / 2.0).floor() * 2.0).collect();
        assert_eq!(classify(&leak), LeakClass::Leak);
        // Generated: a pool of 16 fills in the first 16 calls, then nothing.
        let pool: Vec<f64> = (0..48)
            .map(|i| ((i.min(16) as f64 * 1.6) / 2.0).floor() * 2.0)
            .collect();
        assert_eq!(classify(&pool), LeakClass::Bounded);
        // Generated: one 2 MiB step (a stream of our own, say) is no growth.
        let step: Vec<f64> = (0..48).map(|i| if i > 3 { 2.0 } else { 0.0 }).collect();
        assert_eq!(classify(&step), LeakClass::Flat);
        assert_eq!(classify(&[]), LeakClass::Flat);
    }

    #[test]
    fn classify_holds_up_against_jitter() {
        // Generated: flat memory with ±2 MiB jitter from another process's allocations.
        let jitter: Vec<f64> = (0..48).map(|i| if i % 7 == 3 { 2.0 } else { 0.0 }).collect();
        assert_eq!(classify(&jitter), LeakClass::Flat);
        // Generated: flat memory with one 8 MiB blip in the second half that goes away.
        let blip: Vec<f64> = (0..48).map(|i| if i == 30 { 8.0 } else { 0.0 }).collect();
        assert_ne!(classify(&blip), LeakClass::Leak);
    }

    #[test]
    fn median_interval_matches_the_binomial_table() {
        // Generated: 1..=20. For n = 20 at 95% the interval is the 6th to the 15th value.
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(median_interval(&v, 0.95), Some((6.0, 15.0)));
        // n = 5: P(X ≤ 0) = 1/32 > 0.025, so the whole range.
        let v: Vec<f64> = (1..=5).map(f64::from).collect();
        assert_eq!(median_interval(&v, 0.95), Some((1.0, 5.0)));
        assert_eq!(median_interval(&[], 0.95), None);
        // n = 200: about ±1.96·√200/2 ≈ 14 ranks around the middle.
        let v: Vec<f64> = (1..=200).map(f64::from).collect();
        let (lo, hi) = median_interval(&v, 0.95).unwrap();
        assert!(
            (85.0..=88.0).contains(&lo) && (113.0..=116.0).contains(&hi),
            "{lo} {hi}"
        );
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.9), Some(9.0));
        assert_eq!(quantile(&v, 0.5), Some(5.0));
        assert_eq!(quantile(&v, 1.0), Some(10.0));
    }

    #[test]
    fn median_of_even_and_odd_samples() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
