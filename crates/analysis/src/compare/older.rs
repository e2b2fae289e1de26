//! Comparisons that need a figure one side lacks: a run made by an older nppbench, which timed
//! no layout of a call's kernels apart, where the layouts weigh differently in the two runs; and
//! two runs that both time the layouts apart but share no layout. Such a scenario is not judged
//! (unsettled, with the reason): never slower, faster, or a gate trip.

use nppbench_stats::two_clusters;

use crate::figure::{ByLayout, CallLayoutKind};
use crate::thresholds::OLDER_SHARES_APART;
use crate::throughput::ThroughputPasses;

/// Why a scenario measured in both runs, with passes enough on each side, is not judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotJudged {
    /// The run named was made by an nppbench that timed no layout of a call's kernels apart
    /// (before 2026-11-27), and the layouts weigh differently in the two runs: their processes
    /// drew the layouts apart ([`OLDER_SHARES_APART`]), or, where no layout was recorded at
    /// all, a side's passes fall in two clusters. The busy time over all calls then moves with
    /// the share of calls at once, which is the host's doing, not a change.
    Older(Older),
    /// Both runs time the layouts apart, but no layout has passes on both sides: one run's
    /// calls ran their kernels at once, the other's in turn.
    LayoutsApart,
}

/// Which run of a comparison is the older: made by an nppbench that lacks a figure the rule
/// needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Older {
    Base,
    Candidate,
    Both,
}

impl Older {
    /// The older of two runs, given which lacks the figure; `None` where neither does.
    pub fn of(base_lacks: bool, cand_lacks: bool) -> Option<Older> {
        match (base_lacks, cand_lacks) {
            (true, true) => Some(Older::Both),
            (true, false) => Some(Older::Base),
            (false, true) => Some(Older::Candidate),
            (false, false) => None,
        }
    }

    /// In words: `the base`, `the candidate`, `both runs`.
    pub fn words(self) -> &'static str {
        match self {
            Older::Base => "the base",
            Older::Candidate => "the candidate",
            Older::Both => "both runs",
        }
    }
}

/// Whether a scenario of the kernel time per call is not judged because a side lacks the
/// per-layout figures (see [`NotJudged::Older`]): `tested` is each side's passes of the figure
/// tested over all calls, `min_gap_pct` the gap two clusters of passes must have at least (the
/// noise band). `None` where both sides time each layout apart, or where the older side's
/// figure still judges: the layouts weigh alike in the two runs (a scenario never bimodal, or one
/// whose runs drew the same share).
pub(crate) fn older_side(
    base: &ThroughputPasses,
    cand: &ThroughputPasses,
    tested: (&[f64], &[f64]),
    min_gap_pct: f64,
) -> Option<NotJudged> {
    let older = Older::of(base.by_layout.is_none(), cand.by_layout.is_none())?;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (sb, sc) = (&base.at_once_share, &cand.at_once_share);
    let apart = if !sb.is_empty() && !sc.is_empty() {
        (mean(sb) - mean(sc)).abs() >= OLDER_SHARES_APART
    } else {
        // A side recorded no layout at all (nor did it know its calls' busy time): which layout
        // each pass drew is told by its value alone.
        let unrecorded = !base.busy_time_known || !cand.busy_time_known;
        unrecorded && clusters_drawn_apart(tested.0, tested.1, min_gap_pct)
    };
    apart.then_some(NotJudged::Older(older))
}

/// Whether a side's passes fall in two clusters ([`two_clusters`]) and the two sides drew them
/// apart: their shares of passes in the lower cluster (the other side's passes counted by the
/// middle of the gap) differ by [`OLDER_SHARES_APART`] or more, as the shares of calls at once
/// must where they are recorded. A side whose passes are two clusters in the same mix as the
/// other's (a first pass faster in both runs) is judged; so is a change that moves every pass of
/// a side of one cluster.
fn clusters_drawn_apart(base: &[f64], cand: &[f64], min_gap_pct: f64) -> bool {
    let below = |v: &[f64], at: f64| v.iter().filter(|x| **x < at).count() as f64 / v.len() as f64;
    [base, cand].iter().any(|side| {
        two_clusters(side, min_gap_pct).is_some_and(|c| {
            let at = c.lower[c.lower.len() - 1] + c.gap / 2.0;
            (below(base, at) - below(cand, at)).abs() >= OLDER_SHARES_APART
        })
    })
}

/// Whether two sides that both time the layouts apart share none: each layout has passes on one
/// side only.
pub(crate) fn layouts_apart(base: &ByLayout, cand: &ByLayout) -> bool {
    CallLayoutKind::ALL
        .iter()
        .all(|&k| base.get(k).is_empty() || cand.get(k).is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{ByLayout, Change, Thresholds, judge_throughput};

    /// Generated passes, not measured: a 1918×1080-like scenario of two kernels a call, the busy
    /// time over all calls `busy` in each pass, with its share of calls at once; per-layout
    /// figures only where `by_layout` is given.
    fn passes(busy: &[f64], shares: &[f64], by_layout: Option<ByLayout>) -> ThroughputPasses {
        ThroughputPasses {
            pixels: 1918 * 1080,
            event_ns: busy.iter().map(|b| b * 1.1).collect(),
            kernel_ns: busy.to_vec(),
            kernel_summed_ns: busy.iter().map(|b| b * 1.2).collect(),
            busy_time_known: true,
            by_layout,
            at_once_share: shares.to_vec(),
            latency_us: Vec::new(),
        }
    }

    const AT_ONCE: [f64; 3] = [6272.0, 6304.0, 6288.0];
    const IN_TURN: [f64; 3] = [6848.0, 6880.0, 6864.0];

    #[test]
    fn an_older_side_whose_runs_drew_the_layouts_apart_is_not_judged() {
        let old = passes(&AT_ONCE, &[0.9, 0.85, 0.88], None);
        let today = passes(
            &IN_TURN,
            &[0.05, 0.1, 0.0],
            Some(ByLayout {
                at_once_ns: Vec::new(),
                in_turn_ns: IN_TURN.to_vec(),
            }),
        );
        let t = Thresholds::default();
        for (b, c, side) in [(&old, &today, Older::Base), (&today, &old, Older::Candidate)] {
            let j = judge_throughput(b, c, t).unwrap();
            assert_eq!(j.not_judged, Some(NotJudged::Older(side)));
            assert_eq!(j.verdict, Change::Unsettled);
            assert!(!j.fails_regression());
            // The test over all calls is still there, for the reader: 9% either way.
            assert!(j.kernel.change_pct.abs() > 8.0);
        }
        let both = passes(&IN_TURN, &[0.05, 0.1, 0.0], None);
        let j = judge_throughput(&old, &both, t).unwrap();
        assert_eq!(j.not_judged, Some(NotJudged::Older(Older::Both)));
    }

    #[test]
    fn an_older_side_whose_runs_drew_the_same_share_is_judged_as_before() {
        // The same share of calls at once in both runs, and 9% slower: a change.
        let base = passes(&AT_ONCE, &[0.9, 0.85, 0.88], None);
        let cand = passes(&IN_TURN, &[0.8, 0.85, 0.9], None);
        let j = judge_throughput(&base, &cand, Thresholds::default()).unwrap();
        assert_eq!(j.not_judged, None);
        assert_eq!(j.verdict, Change::Slower);
    }

    #[test]
    fn unrecorded_layouts_are_told_from_two_clusters_drawn_apart() {
        let unrecorded = |v: &[f64]| ThroughputPasses {
            busy_time_known: false,
            at_once_share: Vec::new(),
            ..passes(v, &[], None)
        };
        let t = Thresholds::default();
        // One run's passes all of one cluster, the other's mostly of the other.
        let (b, c) = (unrecorded(&AT_ONCE), unrecorded(&[6272.0, 6848.0, 6880.0, 6864.0]));
        assert_eq!(
            judge_throughput(&b, &c, t).unwrap().not_judged,
            Some(NotJudged::Older(Older::Both))
        );
        // Two clusters in the same mix on both sides (a first pass faster in each run): judged.
        let (b, c) = (
            unrecorded(&[19424.0, 19984.0, 20000.0]),
            unrecorded(&[19456.0, 19968.0, 19968.0]),
        );
        let j = judge_throughput(&b, &c, t).unwrap();
        assert_eq!((j.not_judged, j.verdict), (None, Change::Same));
        // Every pass of one side moved by a real change, one cluster a side: judged slower.
        let (b, c) = (unrecorded(&AT_ONCE), unrecorded(&IN_TURN));
        assert_eq!(judge_throughput(&b, &c, t).unwrap().verdict, Change::Slower);
    }

    #[test]
    fn two_runs_that_share_no_layout_are_not_judged() {
        let b = passes(
            &AT_ONCE,
            &[0.9, 0.85, 0.88],
            Some(ByLayout {
                at_once_ns: AT_ONCE.to_vec(),
                in_turn_ns: Vec::new(),
            }),
        );
        let c = passes(
            &IN_TURN,
            &[0.0, 0.05, 0.0],
            Some(ByLayout {
                at_once_ns: Vec::new(),
                in_turn_ns: IN_TURN.to_vec(),
            }),
        );
        let j = judge_throughput(&b, &c, Thresholds::default()).unwrap();
        assert_eq!(j.not_judged, Some(NotJudged::LayoutsApart));
        assert_eq!(j.verdict, Change::Unsettled);
    }
}
