//! Whether a handful of values fall into two clusters: passes of a scenario whose processes
//! drew one of two modes (a call's kernels at once in one process, one after another in the
//! next), told from the values alone where nothing else recorded which mode a pass drew.

/// Two clusters of values, each sorted: every value of `lower` is below every value of `upper`.
#[derive(Debug, Clone, PartialEq)]
pub struct TwoClusters {
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    /// The gap between them (`upper`'s smallest less `lower`'s largest).
    pub gap: f64,
}

/// Splits `values` at their widest gap between neighbours (sorted) and keeps the split where
/// it is two clusters: the gap is at least `min_gap_pct` percent of the lower cluster's largest
/// value, and wider than either cluster's own spread (its largest less its smallest value).
/// `None` with fewer than three values (two values are two modes or one noisy mode alike), or
/// where the values do not split so. Values spread evenly (`100, 103, 106`) are one cluster: no
/// gap is wider than the spread beside it.
pub fn two_clusters(values: &[f64], min_gap_pct: f64) -> Option<TwoClusters> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.len() < 3 {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let (at, gap) = sorted
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i + 1, w[1] - w[0]))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (lower, upper) = sorted.split_at(at);
    let spread = |c: &[f64]| c[c.len() - 1] - c[0];
    let wide_enough = gap >= min_gap_pct / 100.0 * lower[lower.len() - 1].abs();
    (gap > 0.0 && wide_enough && gap > spread(lower) && gap > spread(upper)).then(|| TwoClusters {
        lower: lower.to_vec(),
        upper: upper.to_vec(),
        gap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated data, not measured: values drawn around two levels 9% apart (the layouts of a
    /// call's kernels between processes are about that far apart), each with a spread of 0.5%.
    fn two_levels(low: usize, high: usize, seed: u64) -> Vec<f64> {
        let mut state = seed;
        let mut jitter = || {
            // A small linear congruential generator: reproducible, and no dependency.
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.005
        };
        let mut out: Vec<f64> = (0..low).map(|_| 6300.0 * (1.0 + jitter())).collect();
        out.extend((0..high).map(|_| 6850.0 * (1.0 + jitter())));
        out
    }

    #[test]
    fn generated_passes_of_two_levels_are_two_clusters_in_any_mix() {
        for (low, high) in [(1, 2), (2, 1), (3, 3), (1, 6), (5, 2)] {
            for seed in 0..20 {
                let v = two_levels(low, high, seed);
                let c = two_clusters(&v, 2.5).unwrap_or_else(|| panic!("{low}+{high}, seed {seed}: {v:?}"));
                assert_eq!((c.lower.len(), c.upper.len()), (low, high), "{v:?}");
            }
        }
    }

    #[test]
    fn generated_passes_of_one_level_are_one_cluster() {
        for n in [3, 4, 7, 12] {
            for seed in 0..20 {
                let v = two_levels(n, 0, seed);
                assert_eq!(two_clusters(&v, 2.5), None, "{v:?}");
            }
        }
    }

    #[test]
    fn a_gap_under_the_minimum_is_no_split() {
        // Two clusters 1% apart are one at a 2.5% minimum, two at 0.5%.
        let v = [1000.0, 1000.0, 1010.0, 1010.0];
        assert_eq!(two_clusters(&v, 2.5), None);
        assert_eq!(two_clusters(&v, 0.5).map(|c| c.lower.len()), Some(2));
    }

    #[test]
    fn evenly_spread_values_and_too_few_values_are_not_split() {
        assert_eq!(two_clusters(&[100.0, 103.0, 106.0], 1.0), None);
        assert_eq!(two_clusters(&[100.0, 103.0, 106.0, 109.0], 1.0), None);
        assert_eq!(two_clusters(&[100.0, 200.0], 1.0), None);
        assert_eq!(two_clusters(&[100.0, 100.0, 100.0], 1.0), None);
    }
}
