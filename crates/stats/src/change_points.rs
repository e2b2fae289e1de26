//! Change points in a series: where its level shifts (see `detect`).
//!
//! The method is PELT (Killick, Fearnhead & Eckley 2012, "Optimal detection of changepoints with
//! a linear computational cost") with a normal mean-shift cost and a BIC-type penalty, as R's
//! `changepoint::cpt.mean(method = "PELT", penalty = "MBIC")` does:
//!
//! - a segment costs its sum of squared deviations from its own mean, in units of the noise
//!   variance σ² (−2 log-likelihood of a normal with that mean and σ);
//! - each change point costs `3 ln n` ([`PENALTY_PER_LN_N`]: the modified BIC, stricter than the
//!   plain BIC's `2 ln n`, which finds false change points in one series of noise out of eight);
//! - PELT finds the segmentation of least total cost exactly, and prunes candidates that can no
//!   longer win, so it runs in about linear time.
//!
//! σ is estimated from the series itself, from its first differences without the largest
//! ([`noise_sigma`]); a caller that knows a noise floor (the measurement's resolution) passes it.
//!
//! Why this and not another method:
//! - the `changepoint` crate (crates.io) is a Bayesian *online* detector (BOCPD) that needs a
//!   prior and a hazard rate, and brings nalgebra, ndarray, rayon, rand and rv: too much, and not
//!   the offline mean-shift question asked here;
//! - E-divisive means (Matteson & James 2014, MongoDB's CI) judges each change point with a
//!   permutation test: R permutations × O(n²) per change point. A fleet history of 1,000 runs and
//!   hundreds of series renders within its 2 s budget with PELT, not with that; and the points of
//!   a history are per-run medians (near normal), whose level shift is exactly PELT's model;
//! - PELT is deterministic without a seed, and its one knob (the penalty) is a named rule.

/// One place where the level shifts.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ChangePoint {
    /// The index of the first value of the new level.
    pub index: usize,
    /// The mean of the segment that ends just before `index`.
    pub mean_before: f64,
    /// The mean of the segment that starts at `index`.
    pub mean_after: f64,
    /// `|mean_after − mean_before| / σ`: the shift in units of the noise.
    pub shift_sigmas: f64,
}

impl ChangePoint {
    /// The shift relative to the level before, in percent (`None` from a level of 0).
    pub fn shift_pct(&self) -> Option<f64> {
        (self.mean_before != 0.0).then(|| 100.0 * (self.mean_after - self.mean_before) / self.mean_before.abs())
    }
}

/// The segmentation of a series and the figures it was judged with.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Segmentation {
    pub change_points: Vec<ChangePoint>,
    /// The noise σ the costs were measured in.
    pub sigma: f64,
    /// The cost of one change point (`3 ln n`).
    pub penalty: f64,
}

/// The fewest values a series needs before any change point can be told from noise.
pub const MIN_LEN: usize = 3;

/// The penalty of one change point, in units of `ln n`: 3, the modified BIC's (Zhang & Siegmund
/// 2007; R's `changepoint` calls it MBIC). On generated normal noise the plain BIC's 2 gave a
/// false change point in 12% of series of 60 values and 18% of 30; 3 gives 1% and 4%, and still
/// finds every 3σ step halfway through 30 values.
pub const PENALTY_PER_LN_N: f64 = 3.0;

/// The share of the largest first differences left out of the noise estimate: where the level
/// shifts, the difference is the shift, not noise.
const TRIMMED: f64 = 0.1;

/// The noise σ of `values`: the mean squared first difference (von Neumann's estimator, σ² =
/// E[(xᵢ₊₁ − xᵢ)²] / 2) without its largest 10% (at least one), corrected for the trimming. A level
/// shift moves one difference only, so the shifts being looked for barely touch it; and it wastes
/// less of a short series than the median absolute difference does.
pub fn noise_sigma(values: &[f64]) -> f64 {
    use statrs::distribution::{Continuous, ContinuousCDF, Normal};
    let mut squares: Vec<f64> = values.windows(2).map(|w| (w[1] - w[0]).powi(2)).collect();
    let m = squares.len();
    if m < 2 {
        return squares.first().map_or(0.0, |d2| (d2 / 2.0).sqrt());
    }
    squares.sort_by(f64::total_cmp);
    let dropped = ((m as f64 * TRIMMED).round() as usize).clamp(1, m - 1);
    let kept = &squares[..m - dropped];
    // For d ~ N(0, 2σ²) cut at its (1 − p) two-sided quantile z: E[d²; |d| < z] = 2σ²(1 − p − 2zφ(z)).
    let p = dropped as f64 / m as f64;
    let unit = Normal::new(0.0, 1.0).expect("the unit normal exists");
    let z = unit.inverse_cdf(1.0 - p / 2.0);
    let kept_share = 1.0 - 2.0 * z * unit.pdf(z) / (1.0 - p);
    (kept.iter().sum::<f64>() / kept.len() as f64 / kept_share / 2.0).sqrt()
}

/// Finds the level shifts of `values` (in order; non-finite values are not allowed and give no
/// change point). `min_sigma` is a floor for the noise σ (the measurement's own resolution, say):
/// without one, a series of identical values but for one would be all signal. With fewer than
/// [`MIN_LEN`] values there is nothing to find.
pub fn detect(values: &[f64], min_sigma: f64) -> Segmentation {
    let n = values.len();
    let penalty = if n > 1 { PENALTY_PER_LN_N * (n as f64).ln() } else { 0.0 };
    // Centre on the median so that the prefix sums do not lose the shift to cancellation.
    let centre = crate::median(values).unwrap_or(0.0);
    // A series of identical values has no noise: any shift in it is one, however small.
    let sigma = noise_sigma(values)
        .max(min_sigma)
        .max(1e-9 * centre.abs())
        .max(f64::MIN_POSITIVE);
    let none = Segmentation {
        change_points: Vec::new(),
        sigma,
        penalty,
    };
    if n < MIN_LEN || values.iter().any(|v| !v.is_finite()) {
        return none;
    }
    let mut s1 = vec![0.0; n + 1];
    let mut s2 = vec![0.0; n + 1];
    for (i, v) in values.iter().enumerate() {
        let x = (v - centre) / sigma;
        s1[i + 1] = s1[i] + x;
        s2[i + 1] = s2[i] + x * x;
    }
    // The cost of values[s..t]: squared deviations from its mean, in units of σ².
    let cost = |s: usize, t: usize| {
        let (a, b, m) = (s1[t] - s1[s], s2[t] - s2[s], (t - s) as f64);
        (b - a * a / m).max(0.0)
    };
    // best[t]: the least cost of values[..t]; last[t]: where its last segment starts.
    let mut best = vec![0.0; n + 1];
    let mut last = vec![0usize; n + 1];
    best[0] = -penalty;
    let mut candidates = vec![0usize];
    for t in 1..=n {
        let (start, value) = candidates
            .iter()
            .map(|&s| (s, best[s] + cost(s, t) + penalty))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("a candidate is always left");
        best[t] = value;
        last[t] = start;
        // PELT's pruning: a start that costs more than the best now can never win later.
        candidates.retain(|&s| best[s] + cost(s, t) <= best[t]);
        candidates.push(t);
    }
    let mut starts = Vec::new();
    let mut t = n;
    while t > 0 {
        starts.push(last[t]);
        t = last[t];
    }
    starts.reverse();
    let mean = |s: usize, t: usize| values[s..t].iter().sum::<f64>() / (t - s) as f64;
    let bounds: Vec<usize> = starts.iter().copied().chain([n]).collect();
    let change_points = bounds
        .windows(3)
        .map(|w| {
            let (before, after) = (mean(w[0], w[1]), mean(w[1], w[2]));
            ChangePoint {
                index: w[1],
                mean_before: before,
                mean_after: after,
                shift_sigmas: (after - before).abs() / sigma,
            }
        })
        .collect();
    Segmentation {
        change_points,
        sigma,
        penalty,
    }
}

#[cfg(test)]
mod tests {
    //! Generated series, labelled as such: steps of known size at known places, with noise from
    //! a fixed-seed generator. They check the method, not any measurement. Every series of noise
    //! is a draw, so where noise alone could mislead, the rate over 400 series is checked.
    use super::*;

    /// Generated noise: a 64-bit LCG (Knuth's MMIX constants) through Box–Muller, fixed seed.
    fn generated_noise(seed: u64, n: usize, sigma: f64) -> Vec<f64> {
        // SplitMix64 of the seed, so that neighbouring seeds start far apart.
        let mut state = {
            let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let mut uniform = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let (u, v) = (uniform(), uniform());
                sigma * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
            })
            .collect()
    }

    /// Generated: `levels` as (length, level) pieces, plus noise.
    fn generated_steps(levels: &[(usize, f64)], sigma: f64, seed: u64) -> Vec<f64> {
        let n = levels.iter().map(|l| l.0).sum();
        let noise = generated_noise(seed, n, sigma);
        levels
            .iter()
            .flat_map(|&(len, level)| std::iter::repeat_n(level, len))
            .zip(noise)
            .map(|(l, e)| l + e)
            .collect()
    }

    fn indices(s: &Segmentation) -> Vec<usize> {
        s.change_points.iter().map(|c| c.index).collect()
    }

    #[test]
    fn generated_single_step_is_found_where_it_is() {
        let v = generated_steps(&[(30, 100.0), (30, 110.0)], 1.0, 1);
        let s = detect(&v, 0.0);
        assert_eq!(indices(&s), vec![30], "{s:?}");
        let c = s.change_points[0];
        assert!((c.mean_before - 100.0).abs() < 1.0 && (c.mean_after - 110.0).abs() < 1.0);
        assert!((c.shift_pct().unwrap() - 10.0).abs() < 1.5);
        assert!((s.sigma - 1.0).abs() < 0.35, "σ {}", s.sigma);
    }

    #[test]
    fn generated_two_steps_are_both_found() {
        let v = generated_steps(&[(20, 50.0), (25, 58.0), (15, 45.0)], 1.0, 2);
        assert_eq!(indices(&detect(&v, 0.0)), vec![20, 45]);
    }

    /// The share of 400 generated series of `levels` in which a change point is found.
    fn found_in(levels: &[(usize, f64)], sigma: f64) -> f64 {
        let found = (0..400u64)
            .filter(|&seed| {
                !detect(&generated_steps(levels, sigma, 1000 + seed), 0.0)
                    .change_points
                    .is_empty()
            })
            .count();
        found as f64 / 400.0
    }

    #[test]
    fn generated_noise_without_a_step_has_no_change_point() {
        let v = generated_steps(&[(60, 100.0)], 2.0, 10);
        assert_eq!(indices(&detect(&v, 0.0)), Vec::<usize>::new());
        // Noise alone is sometimes a run of outliers that looks like a shift: rarely.
        let false_rate = found_in(&[(60, 100.0)], 2.0);
        assert!(
            false_rate <= 0.03,
            "false change points in {:.1}% of series",
            100.0 * false_rate
        );
    }

    #[test]
    fn generated_shift_smaller_than_the_noise_is_not_a_change_point() {
        // A shift of a quarter of σ halfway: found about as rarely as in noise alone.
        let v = generated_steps(&[(30, 100.0), (30, 100.5)], 2.0, 20);
        assert_eq!(indices(&detect(&v, 0.0)), Vec::<usize>::new());
        let rate = found_in(&[(30, 100.0), (30, 100.5)], 2.0);
        assert!(rate <= 0.06, "found in {:.1}% of series", 100.0 * rate);
        // While a shift of 3σ is found every time.
        assert_eq!(found_in(&[(30, 100.0), (30, 106.0)], 2.0), 1.0);
    }

    #[test]
    fn generated_step_at_the_latest_value_is_found() {
        // What a new regression looks like: ten quiet runs, then one far off.
        let mut v = generated_steps(&[(20, 100.0)], 0.5, 3);
        v.push(120.0);
        assert_eq!(indices(&detect(&v, 0.0)), vec![20]);
    }

    #[test]
    fn short_and_flat_series_have_no_change_point() {
        assert!(detect(&[], 0.0).change_points.is_empty());
        assert!(detect(&[1.0, 2.0], 0.0).change_points.is_empty());
        assert!(detect(&[5.0; 20], 0.0).change_points.is_empty());
        assert!(detect(&[1.0, f64::NAN, 1.0, 9.0], 0.0).change_points.is_empty());
    }

    #[test]
    fn a_noise_floor_hides_a_step_below_it() {
        // Generated: exact values with a 1% step; the series alone has no noise at all.
        let v: Vec<f64> = (0..12).map(|i| if i < 6 { 1000.0 } else { 1010.0 }).collect();
        assert_eq!(indices(&detect(&v, 0.0)), vec![6]);
        assert!(detect(&v, 20.0).change_points.is_empty());
    }

    #[test]
    fn it_is_deterministic() {
        let v = generated_steps(&[(40, 10.0), (40, 12.0)], 0.7, 5);
        assert_eq!(detect(&v, 0.0), detect(&v, 0.0));
    }
}
