//! Thresholds found by search: for each function, the widths and heights between a leaking
//! scenario and a non-leaking one that differ in that quantity alone, to measure next.
//!
//! A family is the scenarios of one function that share everything but the width (or the
//! height): strides, the other dimension, the stream kind, the context filling and the threading
//! model. In a family with a leaking member, the boundary lies between the largest non-leaking
//! value below the smallest leaking one (`lo`, or nothing yet) and that leaking value (`hi`).
//! The values tried between them are those where the function's leak rule, apart from its
//! thresholds, still holds: a width whose row becomes aligned is flat for another reason and
//! would mislead the search. A round proposes, for each open interval, [`POINTS`] values evenly
//! spread over those candidates (the smallest candidate among them while `lo` is unknown), so
//! the interval shrinks about four-fold a round; an interval with no candidate left is closed:
//! its boundary is found, and the rule search's threshold falls between its two values.
//!
//! Families already searched are taken first, then those whose leaking value is smallest, so
//! that a search, once begun, is carried on round after round. Nothing measured is proposed again.

use std::collections::BTreeMap;

use nppbench_model::{Geometry, MemoryScenario, Primitive};

use crate::evidence::{Evidence, FunctionRules};
use crate::rules::{Case, Feature, Literal};

/// Values measured per open interval and round.
pub const POINTS: usize = 3;

/// The quantities searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Searched {
    Width,
    Height,
}

impl Searched {
    const ALL: [Searched; 2] = [Searched::Width, Searched::Height];

    fn of(self, g: &Geometry) -> u32 {
        match self {
            Searched::Width => g.width,
            Searched::Height => g.height,
        }
    }

    fn with(self, g: &Geometry, v: u32) -> Geometry {
        match self {
            Searched::Width => Geometry { width: v, ..*g },
            Searched::Height => Geometry { height: v, ..*g },
        }
    }

    /// Whether `f` is a threshold this search moves across (kept out of the candidates' test).
    fn moves(self, f: &Feature) -> bool {
        match self {
            Searched::Width => matches!(
                f,
                Feature::WidthAtLeast(_)
                    | Feature::SrcRowBytesAtLeast(_)
                    | Feature::DstRowBytesAtLeast(_)
                    | Feature::LargeImage
            ),
            Searched::Height => matches!(f, Feature::HeightAtLeast(_) | Feature::LargeImage),
        }
    }
}

/// A family's key: the id of the scenario with the searched quantity set to 0.
fn key(c: &Case, q: Searched) -> String {
    let g = q.with(&c.geometry, 0);
    MemoryScenario::new(c.primitive, g, c.stream, c.context, c.threading, 0).id
}

/// One family's search: its measured values and classes, a member to copy, and the interval.
struct Family<'a> {
    member: &'a Case,
    /// value → leaks.
    measured: BTreeMap<u32, bool>,
}

impl Family<'_> {
    /// The smallest leaking value, and the largest non-leaking value below it.
    fn interval(&self) -> Option<(Option<u32>, u32)> {
        let hi = *self.measured.iter().find(|(_, leaks)| **leaks)?.0;
        let lo = self
            .measured
            .range(..hi)
            .rev()
            .find(|(_, leaks)| !**leaks)
            .map(|(v, _)| *v);
        Some((lo, hi))
    }
}

/// A family with an open interval: whether it was never searched, the family and its interval.
type Open<'f, 'c> = (bool, &'f Family<'c>, (Option<u32>, u32));

/// The values of a family's interval to measure next: none once the boundary is found.
fn points(
    primitive: Primitive,
    member: &Case,
    q: Searched,
    (lo, hi): (Option<u32>, u32),
    keep: &[Literal],
) -> Vec<Geometry> {
    let start = lo.map_or(1, |lo| lo + 1);
    let candidates: Vec<Geometry> = (start..hi)
        .map(|v| q.with(&member.geometry, v))
        .filter(|g| g.validate(primitive).is_ok())
        .filter(|g| {
            let c = Case {
                geometry: *g,
                ..member.clone()
            };
            keep.iter().all(|l| l.holds_on(&c))
        })
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let n = candidates.len();
    let mut picked: Vec<usize> = if lo.is_none() {
        // The bottom first: if it leaks too, there is no boundary below.
        let mut v = vec![0];
        v.extend((1..POINTS).map(|i| i * n / POINTS));
        v
    } else {
        (1..=POINTS).map(|i| i * n / (POINTS + 1)).collect()
    };
    picked.sort_unstable();
    picked.dedup();
    picked.into_iter().filter(|&i| i < n).map(|i| candidates[i]).collect()
}

/// The scenarios of the next bisection round: for each function and searched quantity, the
/// values of up to `families` families ([`POINTS`] each), those searched before first; none
/// already measured. `calls` as the atlas's.
pub fn bisection_round(
    evidence: &Evidence,
    rules: &[FunctionRules],
    families: usize,
    calls: u32,
) -> Vec<MemoryScenario> {
    let mut measured = super::measured_ids(evidence);
    let mut out = Vec::new();
    for f in rules {
        let all = f.leak.conditions();
        let cases: Vec<&Case> = evidence
            .cases
            .iter()
            .filter(|c| c.primitive == f.primitive && !c.held_out)
            .collect();
        for q in Searched::ALL {
            let keep: Vec<Literal> = all
                .iter()
                .filter(|l| !q.moves(&l.feature))
                .map(|l| (*l).clone())
                .collect();
            let mut by_key: BTreeMap<String, Family<'_>> = BTreeMap::new();
            for c in &cases {
                let fam = by_key.entry(key(c, q)).or_insert_with(|| Family {
                    member: c,
                    measured: BTreeMap::new(),
                });
                fam.measured.insert(q.of(&c.geometry), c.leaks());
            }
            // Searched ones first (more than one value), then the smallest leaking value.
            let mut open: Vec<Open<'_, '_>> = by_key
                .values()
                .filter_map(|fam| fam.interval().map(|iv| (fam.measured.len() < 2, fam, iv)))
                .collect();
            open.sort_by_key(|(fresh, _, (_, hi))| (*fresh, *hi));
            // A family searched before counts towards `families` whether or not its boundary
            // is found, so that a search that finds new leaking values starts no new ones.
            let mut taken = 0;
            for (fresh, fam, iv) in open {
                if taken == families {
                    break;
                }
                let next = points(f.primitive, fam.member, q, iv, &keep);
                if next.is_empty() && fresh {
                    continue;
                }
                taken += 1;
                let m = fam.member;
                for g in next {
                    let s = MemoryScenario::new(m.primitive, g, m.stream, m.context, m.threading, calls);
                    if measured.insert(s.id.clone()) {
                        out.push(s);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! Generated classes, labelled as such: a function whose scenarios leak where the width is at
    //! least 37 px and odd; the search must close in on 37 from a single leaking scenario.
    use nppbench_model::{ContextFill, StreamKind, Threading};
    use nppbench_stats::LeakClass;

    use std::collections::BTreeSet;

    use super::*;
    use crate::evidence::Evidence;
    use crate::rules::RuleKind;

    fn truth(g: &Geometry) -> bool {
        g.width >= 37 && g.width % 2 == 1
    }

    fn case(p: Primitive, g: Geometry) -> Case {
        let s = MemoryScenario::new(
            p,
            g,
            StreamKind::Blocking,
            ContextFill::FromStream,
            Threading::ThreadPerCall,
            24,
        );
        Case {
            id: s.id,
            primitive: p,
            geometry: g,
            stream: s.stream,
            context: s.context,
            threading: s.threading,
            declared_non_blocking: None,
            class: if truth(&g) { LeakClass::Leak } else { LeakClass::Flat },
            race: None,
            wrong: None,
            held_out: false,
        }
    }

    fn evidence(cases: Vec<Case>) -> Evidence {
        Evidence {
            cases,
            inconclusive: 0,
            flips: Vec::new(),
            outputs: Vec::new(),
            output_flips: Vec::new(),
            measurements: 0,
            runs: 1,
        }
    }

    #[test]
    fn rounds_close_in_on_a_width_threshold_where_the_rule_still_holds() {
        let p = Primitive::from_name("Copy_8u_C1R").unwrap();
        let g = |w: u32| Geometry {
            width: w,
            height: 8,
            src_stride: 4096,
            dst_stride: 4096,
            padded_from: None,
        };
        // Odd leaking widths, even flat ones far from the boundary: the rule learns "odd", not
        // the threshold.
        let mut cases: Vec<Case> = [4001, 3001, 2000, 1000, 2999].iter().map(|&w| case(p, g(w))).collect();
        let mut rounds = 0;
        loop {
            let ev = evidence(cases.clone());
            let rules = ev.rules();
            let next = bisection_round(&ev, &rules, 2, 24);
            if next.is_empty() {
                break;
            }
            rounds += 1;
            assert!(rounds < 20, "the search does not converge");
            for s in next {
                assert!(
                    s.geometry.width % 2 == 1,
                    "{}: an even width, where the rule's alignment fails",
                    s.id
                );
                cases.push(case(p, s.geometry));
            }
        }
        let widths: BTreeSet<u32> = cases.iter().map(|c| c.geometry.width).collect();
        assert!(widths.contains(&35) && widths.contains(&37), "{widths:?}");
        assert!(rounds <= 8, "{rounds} rounds");
        assert!(cases.len() < 80, "{} scenarios", cases.len());
        // The rule now has the threshold.
        let ev = evidence(cases);
        let rule = &ev.rules()[0].leak;
        match &rule.kind {
            RuleKind::Exactly { literals, .. } => {
                let all: Vec<Feature> = literals
                    .iter()
                    .flat_map(|(l, same)| std::iter::once(l).chain(same).map(|l| l.feature.clone()))
                    .collect();
                assert!(
                    all.contains(&Feature::WidthAtLeast(36)) || all.contains(&Feature::SrcRowBytesAtLeast(36)),
                    "{literals:?}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
