//! The search for a conjunction: literals as bit sets over the cases, the fewest literals that
//! separate the target cases exactly, or the conjunction with the fewest errors.

use super::Case;
use super::features::{Feature, Literal, candidates};

/// The longest conjunction searched: NPP's leak conditions take up to six (the threading, the
/// declared flags, the stream kind, an alignment of each side and a row length).
pub const MAX_LITERALS: usize = 6;
/// Exact conjunctions of the smallest size collected at most, to pick the first and count the
/// others.
const MAX_SOLUTIONS: usize = 10_000;
/// The longest conjunction searched where none fits exactly.
const MAX_APPROXIMATE: usize = 3;

/// Which cases a literal holds on, as a bit set.
pub(super) type Bits = Vec<u64>;

fn bits(cases: &[&Case], f: impl Fn(&Case) -> bool) -> Bits {
    let mut b = vec![0u64; cases.len().div_ceil(64)];
    for (i, c) in cases.iter().enumerate() {
        if f(c) {
            b[i / 64] |= 1 << (i % 64);
        }
    }
    b
}

fn and(a: &Bits, b: &Bits) -> Bits {
    a.iter().zip(b).map(|(x, y)| x & y).collect()
}

fn count(b: &Bits) -> usize {
    b.iter().map(|w| w.count_ones() as usize).sum()
}

fn conjunction(lits: &[(Literal, Vec<Literal>, Bits)], combo: &[usize]) -> Bits {
    let mut acc = lits[combo[0]].2.clone();
    for &i in &combo[1..] {
        acc = and(&acc, &lits[i].2);
    }
    acc
}

/// Literals with their truth over the cases, one per distinct truth (the first in preference
/// order kept, the others as its equivalents); literals true everywhere or nowhere dropped.
fn literals(
    cases: &[&Case],
    target: impl Fn(&Case) -> bool + Copy,
    derived: &[Feature],
) -> Vec<(Literal, Vec<Literal>, Bits)> {
    let all = bits(cases, |_| true);
    let mut out: Vec<(Literal, Vec<Literal>, Bits)> = Vec::new();
    for f in candidates(cases, target, derived) {
        for holds in [false, true] {
            let lit = Literal {
                feature: f.clone(),
                holds,
            };
            let b = bits(cases, |c| lit.holds_on(c));
            if count(&b) == 0 || b == all {
                continue;
            }
            match out.iter_mut().find(|(_, _, x)| *x == b) {
                Some((_, same, _)) => same.push(lit),
                None => out.push((lit, Vec::new(), b)),
            }
        }
    }
    out
}

/// What the search found.
pub(super) enum Found {
    /// The fewest literals that hold on every target case and on no other (each with the
    /// literals the cases cannot tell from it), and how many other conjunctions of that size fit.
    Exactly {
        literals: Vec<(Literal, Vec<Literal>)>,
        alternatives: usize,
    },
    /// No conjunction fits: the one with the fewest errors, and the cases it gets wrong.
    Approximately { literals: Vec<Literal>, wrong: Vec<usize> },
    /// No feature takes one value on some cases and another on the rest: the target cases and
    /// the others cannot be told apart at all.
    Inseparable,
}

/// Searches the conjunctions of the cases' literals for one that separates `target` (which
/// holds on some cases and fails on others).
pub(super) fn search(cases: &[&Case], target: impl Fn(&Case) -> bool + Copy, derived: &[Feature]) -> Found {
    let want = bits(cases, target);
    let lits = literals(cases, target, derived);
    if lits.is_empty() {
        return Found::Inseparable;
    }
    // Exact: every literal holds on every target case; together they exclude every other. So
    // a conjunction is a cover of the other cases by the literals' false sets: the smallest is
    // found by iterative deepening, branching on the case fewest literals exclude.
    let usable: Vec<usize> = (0..lits.len()).filter(|&i| and(&lits[i].2, &want) == want).collect();
    let others: Vec<usize> = (0..cases.len()).filter(|&i| !target(cases[i])).collect();
    let excluders: Vec<Vec<usize>> = others
        .iter()
        .map(|&c| {
            usable
                .iter()
                .copied()
                .filter(|&i| (lits[i].2[c / 64] >> (c % 64)) & 1 == 0)
                .collect()
        })
        .collect();
    if excluders.iter().all(|e| !e.is_empty()) {
        for size in 1..=MAX_LITERALS {
            let mut found: std::collections::BTreeSet<Vec<usize>> = std::collections::BTreeSet::new();
            cover(
                &excluders,
                &mut vec![false; others.len()],
                &mut Vec::new(),
                size,
                &mut found,
            );
            if let Some(best) = found.first() {
                return Found::Exactly {
                    literals: best.iter().map(|&i| (lits[i].0.clone(), lits[i].1.clone())).collect(),
                    alternatives: found.len() - 1,
                };
            }
        }
    }
    let all: Vec<usize> = (0..lits.len()).collect();
    let mut best: Option<(usize, Vec<usize>)> = None;
    for size in 1..=MAX_APPROXIMATE.min(all.len()) {
        for_each_combination(&all, size, &mut |combo| {
            let acc = conjunction(&lits, combo);
            let errors: usize = acc.iter().zip(&want).map(|(a, t)| (a ^ t).count_ones() as usize).sum();
            if best.as_ref().is_none_or(|(e, _)| errors < *e) {
                best = Some((errors, combo.to_vec()));
            }
        });
    }
    let Some((_, combo)) = best else {
        return Found::Inseparable;
    };
    let acc = conjunction(&lits, &combo);
    let wrong = (0..cases.len())
        .filter(|&i| ((acc[i / 64] >> (i % 64)) & 1 == 1) != target(cases[i]))
        .collect();
    Found::Approximately {
        literals: combo.iter().map(|&i| lits[i].0.clone()).collect(),
        wrong,
    }
}

/// Every set of at most `left` more literals that, with `chosen`, excludes each other case
/// (`excluders[i]`: the literals that exclude case i; `covered[i]`: whether `chosen` does), added
/// to `found` as sorted index lists, at most [`MAX_SOLUTIONS`].
fn cover(
    excluders: &[Vec<usize>],
    covered: &mut [bool],
    chosen: &mut Vec<usize>,
    left: usize,
    found: &mut std::collections::BTreeSet<Vec<usize>>,
) {
    // The uncovered case fewest literals exclude: one of them must be chosen.
    let next = (0..covered.len())
        .filter(|&i| !covered[i])
        .min_by_key(|&i| excluders[i].len());
    let Some(case) = next else {
        let mut set = chosen.clone();
        set.sort_unstable();
        found.insert(set);
        return;
    };
    if left == 0 || found.len() >= MAX_SOLUTIONS {
        return;
    }
    for &lit in &excluders[case] {
        if chosen.contains(&lit) {
            continue;
        }
        let newly: Vec<usize> = (0..covered.len())
            .filter(|&i| !covered[i] && excluders[i].contains(&lit))
            .collect();
        for &i in &newly {
            covered[i] = true;
        }
        chosen.push(lit);
        cover(excluders, covered, chosen, left - 1, found);
        chosen.pop();
        for &i in &newly {
            covered[i] = false;
        }
    }
}

/// Calls `f` with every `k`-element combination of `items`, in lexicographic order.
pub(super) fn for_each_combination(items: &[usize], k: usize, f: &mut impl FnMut(&[usize])) {
    fn go(items: &[usize], k: usize, start: usize, current: &mut Vec<usize>, f: &mut impl FnMut(&[usize])) {
        if current.len() == k {
            f(current);
            return;
        }
        for i in start..items.len() {
            if items.len() - i < k - current.len() {
                break;
            }
            current.push(items[i]);
            go(items, k, i + 1, current, f);
            current.pop();
        }
    }
    if k <= items.len() {
        go(items, k, 0, &mut Vec::with_capacity(k), f);
    }
}
