//! The throughput test `compare` uses: on the medians of independent passes (each pass a fresh
//! process), so that the variance between runs is in it. Samples from one process are not
//! independent of that process's state (clocks, placement, caches), and a test on them finds
//! "changes" between two runs of the same thing.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Passes needed on each side before a change is judged at all.
pub const MIN_PASSES: usize = 3;

/// A throughput verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    Same,
    /// No significant change, but the passes spread too much to call it the same: the 95%
    /// interval of the change reaches beyond [`UNSETTLED_FACTOR`] times the noise band (a
    /// scenario whose passes are bimodal between processes; in the calibration six passes a side
    /// did not settle those either, see docs/calibration.md).
    Unsettled,
    /// Fewer than [`MIN_PASSES`] passes on a side: no test is made.
    NotEnoughPasses,
}

/// A change that is not significant is 'the same' only where its 95% interval stays within this
/// many times the noise band; beyond, it is [`Verdict::Unsettled`].
pub const UNSETTLED_FACTOR: f64 = 2.0;

/// One metric of one scenario, base against candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassTest {
    /// The median over passes of each side's per-pass value (a time: smaller is faster).
    pub base: f64,
    pub candidate: f64,
    /// The change in time, `(candidate − base) / base`, percent: positive is slower (as
    /// criterion and nvbench print it).
    pub change_pct: f64,
    /// Welch's t-test on the logarithms of the pass values; `None` with too few passes.
    pub p_value: Option<f64>,
    /// The 95% interval of `change_pct` from the same test (Welch's interval of the difference of
    /// the mean logarithms, back-transformed); `None` with too few passes.
    pub change_ci_pct: Option<(f64, f64)>,
    pub verdict: Verdict,
}

/// What Welch's test and interval share: the difference of the means, its squared standard
/// error and the Welch–Satterthwaite degrees of freedom; `None` with fewer than two values on a
/// side.
fn welch(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let stats = |x: &[f64]| {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        let v = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0);
        (n, m, v)
    };
    let ((na, ma, va), (nb, mb, vb)) = (stats(a), stats(b));
    let se2 = va / na + vb / nb;
    let df = se2.powi(2) / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    Some((ma - mb, se2, df))
}

/// Welch's two-sided t-test: the p-value of "the means are equal". 1 with fewer than two values
/// on a side.
pub fn welch_p(a: &[f64], b: &[f64]) -> f64 {
    let Some((d, se2, df)) = welch(a, b) else {
        return 1.0;
    };
    if se2 <= 0.0 {
        return if d == 0.0 { 1.0 } else { 0.0 };
    }
    let t = d / se2.sqrt();
    StudentsT::new(0.0, 1.0, df).map_or(1.0, |dist| 2.0 * (1.0 - dist.cdf(t.abs())))
}

/// Welch's 95% interval of `mean(a) − mean(b)`; `None` with fewer than two values on a side.
pub fn welch_interval(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    let (d, se2, df) = welch(a, b)?;
    if se2 <= 0.0 {
        return Some((d, d));
    }
    let t = StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975);
    Some((d - t * se2.sqrt(), d + t * se2.sqrt()))
}

/// Compares per-pass values (times) of a base and a candidate: a change counts when Welch's test
/// on their logarithms gives `p < alpha` and it exceeds `noise_pct`.
pub fn compare_passes(base: &[f64], candidate: &[f64], alpha: f64, noise_pct: f64) -> PassTest {
    let (b, c) = (
        crate::median(base).unwrap_or(f64::NAN),
        crate::median(candidate).unwrap_or(f64::NAN),
    );
    // A change in time, as criterion and nvbench print it: + is slower.
    let change_pct = (c / b - 1.0) * 100.0;
    if base.len() < MIN_PASSES || candidate.len() < MIN_PASSES {
        return PassTest {
            base: b,
            candidate: c,
            change_pct,
            p_value: None,
            change_ci_pct: None,
            verdict: Verdict::NotEnoughPasses,
        };
    }
    let log = |x: &[f64]| x.iter().map(|v| v.ln()).collect::<Vec<_>>();
    let (lb, lc) = (log(base), log(candidate));
    let p = welch_p(&lb, &lc);
    // ln(candidate) − ln(base) is ln(candidate / base): the change as a ratio.
    let change_ci_pct = welch_interval(&lc, &lb).map(|(lo, hi)| ((lo.exp() - 1.0) * 100.0, (hi.exp() - 1.0) * 100.0));
    let verdict = verdict_of(p, change_pct, change_ci_pct, alpha, noise_pct);
    PassTest {
        base: b,
        candidate: c,
        change_pct,
        p_value: Some(p),
        change_ci_pct,
        verdict,
    }
}

/// Compares per-pass values of a base and a candidate that fall into groups known beforehand
/// (each group a `(base, candidate)` pair of value lists): the change with the group held fixed.
/// On the logarithms, each group shared by both sides gives the difference of the sides' means;
/// those are combined weighted by `1 / (1/n_base + 1/n_candidate)`, with the variance within the
/// groups pooled over every group and side (a two-way layout without interaction: the change is
/// taken to be the same in every group). The verdict as [`compare_passes`]'s. Not judged with
/// fewer than [`MIN_PASSES`] values a side in all, no group on both sides, or no degree of
/// freedom left for the variance. `base` and `candidate` are the level of the group weighing
/// most, on each side.
pub fn compare_passes_within(groups: &[(&[f64], &[f64])], alpha: f64, noise_pct: f64) -> PassTest {
    let log_mean = |x: &[f64]| x.iter().map(|v| v.ln()).sum::<f64>() / x.len() as f64;
    let (mut sum_w, mut sum_wd, mut ss, mut n, mut cells) = (0.0, 0.0, 0.0, 0usize, 0usize);
    let (mut base_n, mut cand_n) = (0, 0);
    let mut heaviest: Option<(f64, f64)> = None;
    for (b, c) in groups {
        base_n += b.len();
        cand_n += c.len();
        for side in [b, c] {
            if !side.is_empty() {
                let m = log_mean(side);
                ss += side.iter().map(|v| (v.ln() - m).powi(2)).sum::<f64>();
                n += side.len();
                cells += 1;
            }
        }
        if !b.is_empty() && !c.is_empty() {
            let w = 1.0 / (1.0 / b.len() as f64 + 1.0 / c.len() as f64);
            let d = log_mean(c) - log_mean(b);
            sum_w += w;
            sum_wd += w * d;
            if heaviest.is_none_or(|(hw, _)| w > hw) {
                heaviest = Some((w, log_mean(b)));
            }
        }
    }
    let df = n.saturating_sub(cells);
    let level = heaviest.map_or(f64::NAN, |(_, m)| m.exp());
    let d = if sum_w > 0.0 { sum_wd / sum_w } else { f64::NAN };
    let change_pct = (d.exp() - 1.0) * 100.0;
    let unjudged = PassTest {
        base: level,
        candidate: level * d.exp(),
        change_pct,
        p_value: None,
        change_ci_pct: None,
        verdict: Verdict::NotEnoughPasses,
    };
    if base_n < MIN_PASSES || cand_n < MIN_PASSES || sum_w == 0.0 || df == 0 {
        return unjudged;
    }
    let se = (ss / df as f64 / sum_w).sqrt();
    let Ok(dist) = StudentsT::new(0.0, 1.0, df as f64) else {
        return unjudged;
    };
    let (p, half) = if se > 0.0 {
        (2.0 * (1.0 - dist.cdf((d / se).abs())), dist.inverse_cdf(0.975) * se)
    } else {
        (if d == 0.0 { 1.0 } else { 0.0 }, 0.0)
    };
    let change_ci_pct = Some((((d - half).exp() - 1.0) * 100.0, ((d + half).exp() - 1.0) * 100.0));
    PassTest {
        p_value: Some(p),
        change_ci_pct,
        verdict: verdict_of(p, change_pct, change_ci_pct, alpha, noise_pct),
        ..unjudged
    }
}

/// The verdict of a test: a change where `p < alpha` and it exceeds the noise band; unsettled
/// where it does not but its interval reaches beyond [`UNSETTLED_FACTOR`] bands; else the same.
fn verdict_of(p: f64, change_pct: f64, change_ci_pct: Option<(f64, f64)>, alpha: f64, noise_pct: f64) -> Verdict {
    if p < alpha && change_pct.abs() > noise_pct {
        if change_pct > 0.0 {
            Verdict::Slower
        } else {
            Verdict::Faster
        }
    } else if change_ci_pct.is_some_and(|(lo, hi)| lo.abs().max(hi.abs()) > UNSETTLED_FACTOR * noise_pct) {
        Verdict::Unsettled
    } else {
        Verdict::Same
    }
}

/// How well one side's passes pin their level: the half-width of the 95% t-interval of the mean
/// logarithm of `values`, as a percentage of the level. `None` under two values. Two runs whose
/// passes each pin their level to within `h` compare to within about `√2 · h`.
pub fn mean_half_width_pct(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let var = logs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let t = StudentsT::new(0.0, 1.0, n - 1.0).ok()?.inverse_cdf(0.975);
    Some(((t * (var / n).sqrt()).exp() - 1.0) * 100.0)
}

/// The spread between passes of one side: the coefficient of variation of its pass values,
/// percent (how much a run moves on its own).
pub fn pass_cv_pct(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let m = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    Some(100.0 * sd / m)
}

#[cfg(test)]
mod tests {
    //! Generated pass values, labelled as such: the arithmetic of the test, not a measurement.
    use super::*;

    #[test]
    fn the_half_width_of_passes_shrinks_with_more_of_them() {
        // Generated values, not a measurement: two levels 8% apart, as the 1918x1080 convert's
        // busy time is between processes.
        let three = [6.3, 6.8, 6.6];
        let twelve = [6.3, 6.8, 6.6, 6.3, 6.8, 6.6, 6.3, 6.8, 6.6, 6.3, 6.8, 6.6];
        let (h3, h12) = (
            mean_half_width_pct(&three).unwrap(),
            mean_half_width_pct(&twelve).unwrap(),
        );
        assert!(h3 > 8.0 && h12 < 2.5 && h12 > 1.0, "{h3} {h12}");
        assert_eq!(mean_half_width_pct(&[5.0]), None);
        assert!(mean_half_width_pct(&[5.0, 5.0, 5.0]).unwrap().abs() < 1e-12);
    }

    #[test]
    fn welch_tells_shifted_samples_apart() {
        let a: Vec<f64> = (0..20).map(|i| 100.0 + (i % 5) as f64).collect();
        let same: Vec<f64> = (0..20).map(|i| 100.0 + ((i + 2) % 5) as f64).collect();
        let slower: Vec<f64> = a.iter().map(|v| v * 1.2).collect();
        assert!(welch_p(&a, &same) > 0.5);
        assert!(welch_p(&a, &slower) < 1e-6);
        assert_eq!(welch_p(&[1.0], &[2.0]), 1.0);
    }

    #[test]
    fn too_few_passes_are_not_judged() {
        let t = compare_passes(&[100.0, 101.0], &[130.0, 131.0], 0.01, 1.0);
        assert_eq!(t.verdict, Verdict::NotEnoughPasses);
        assert!(t.p_value.is_none());
        assert!(t.change_pct > 25.0, "the size of the change is still given, + slower");
    }

    #[test]
    fn a_consistent_shift_is_found_and_noise_is_not() {
        // Generated: five passes each; the candidate 3% slower with ±0.2% between passes.
        let base = [100.0, 100.2, 99.8, 100.1, 99.9];
        let slower: Vec<f64> = base.iter().map(|v| v * 1.03).collect();
        let t = compare_passes(&base, &slower, 0.01, 1.0);
        assert_eq!(t.verdict, Verdict::Slower, "{t:?}");
        assert!((t.change_pct - 3.0).abs() < 0.1, "{}", t.change_pct);
        let (lo, hi) = t.change_ci_pct.unwrap();
        assert!(lo < 3.0 && hi > 3.0 && lo > 2.6 && hi < 3.4, "{lo} … {hi}");
        // Generated: the same thing measured again, passes moving by ±2%: no change against a 2%
        // band; against a 1% band the interval reaches past twice the band, so unsettled.
        let again = [101.5, 98.2, 100.9, 99.0, 102.0];
        assert_eq!(compare_passes(&base, &again, 0.01, 2.0).verdict, Verdict::Same);
        assert_eq!(compare_passes(&base, &again, 0.01, 1.0).verdict, Verdict::Unsettled);
        // A significant change smaller than the noise band is no change.
        let tiny: Vec<f64> = base.iter().map(|v| v * 1.005).collect();
        assert_eq!(compare_passes(&base, &tiny, 0.01, 1.0).verdict, Verdict::Same);
    }

    #[test]
    fn passes_that_disagree_are_unsettled_not_the_same() {
        // Generated: three passes a side, bimodal between processes (6.27 or 6.9 µs), the
        // candidate 9% slower: not significant, but the interval reaches far past twice the
        // 2% noise band, so no 'same'.
        let base = [6272.0, 6912.0, 6272.0];
        let cand = [7360.0, 7728.0, 6900.0];
        let t = compare_passes(&base, &cand, 0.01, 2.0);
        assert_eq!(t.verdict, Verdict::Unsettled, "{t:?}");
        // Tight passes with no change stay the same.
        let tight = [6272.0, 6273.0, 6271.0];
        assert_eq!(compare_passes(&tight, &tight, 0.01, 2.0).verdict, Verdict::Same);
    }

    #[test]
    fn groups_held_fixed_a_draw_of_modes_is_no_change_and_a_shift_is_found() {
        // Generated, labelled: two layouts 8% apart (6.30 and 6.85 µs), each steady to ±0.3%.
        // The base drew the first layout in three passes and the second in one, the candidate
        // the other way round: over all passes that looks like +6%, within each layout nothing.
        let (a_base, b_base) = ([6300.0, 6310.0, 6290.0], [6850.0]);
        let (a_cand, b_cand) = ([6305.0], [6840.0, 6860.0, 6848.0]);
        let t = compare_passes_within(&[(&a_base, &a_cand), (&b_base, &b_cand)], 0.01, 2.0);
        assert_eq!(t.verdict, Verdict::Same, "{t:?}");
        assert!(t.change_pct.abs() < 0.5, "{t:?}");
        let all_base = [6300.0, 6310.0, 6290.0, 6850.0];
        let all_cand = [6305.0, 6840.0, 6860.0, 6848.0];
        assert_ne!(compare_passes(&all_base, &all_cand, 0.01, 2.0).verdict, Verdict::Same);
        // The same draw 15% slower in every layout: found, with the change's size.
        let slow = |x: &[f64]| x.iter().map(|v| v * 1.15).collect::<Vec<f64>>();
        let (a_slow, b_slow) = (slow(&a_cand), slow(&b_cand));
        let t = compare_passes_within(&[(&a_base, &a_slow), (&b_base, &b_slow)], 0.01, 2.0);
        assert_eq!(t.verdict, Verdict::Slower, "{t:?}");
        assert!((t.change_pct - 15.0).abs() < 0.5, "{t:?}");
        // Only one layout shared (the candidate never drew the first): judged on it.
        let t = compare_passes_within(&[(&a_base, &[]), (&b_base, &b_slow)], 0.01, 2.0);
        assert_eq!(t.verdict, Verdict::Slower, "{t:?}");
        // No layout on both sides, or too few passes: not judged.
        let t = compare_passes_within(&[(&a_base, &[]), (&[], &b_cand)], 0.01, 2.0);
        assert_eq!(t.verdict, Verdict::NotEnoughPasses);
        let t = compare_passes_within(&[(&a_base[..1], &a_cand), (&b_base, &[])], 0.01, 2.0);
        assert_eq!(t.verdict, Verdict::NotEnoughPasses);
    }

    #[test]
    fn spread_between_passes() {
        assert!((pass_cv_pct(&[99.0, 101.0]).unwrap() - 1.414).abs() < 0.01);
        assert!(pass_cv_pct(&[1.0]).is_none());
    }
}
