//! Rule discovery: for one primitive, the simplest rule that separates the leaking scenarios
//! from the others exactly, computed from the measured scenarios, never typed.
//!
//! The family of rules is the conjunction ("and") of literals over the scenarios' features:
//! the width in bytes and in pixels, the source and destination strides, each a multiple of 2,
//! 4, … 128 or not; a large image (a megapixel or more) or not; the stream kind in a set; the
//! context filling in a set; the flags the context declares; a new thread per call or a bounded
//! set of threads. The simplest rule is the one with the fewest literals that every leaking
//! scenario satisfies and every other scenario breaks. Literals that hold on exactly the same
//! scenarios are one literal here (the data cannot tell them apart): the rule names the first in
//! a fixed order and lists the others as equivalent. Where no conjunction of up to
//! [`MAX_LITERALS`] literals fits, the one with the fewest errors is given with its
//! counter-examples, both ways.

use nppbench_model::{ContextFill, Geometry, Primitive, StreamKind, Threading};

/// The longest conjunction searched.
pub const MAX_LITERALS: usize = 4;
/// The moduli alignment features test, in bytes and in pixels.
pub const MODULI: [u32; 7] = [2, 4, 8, 16, 32, 64, 128];
/// Images of at least this many pixels are "large".
pub const LARGE_PIXELS: u64 = 1_000_000;

/// A scenario as the rule discovery sees it: its axes, and whether it leaked.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub primitive: Primitive,
    pub geometry: Geometry,
    pub stream: StreamKind,
    pub context: ContextFill,
    pub threading: Threading,
    /// The `nStreamFlags` the calls' context declared (1: non-blocking), where recorded.
    pub declared_non_blocking: Option<bool>,
    pub leaks: bool,
}

/// A property of a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Feature {
    /// A row's bytes (width × pixel size) are a multiple of N.
    WidthBytesMultiple(u32),
    /// The width in pixels is a multiple of N.
    WidthPixelsMultiple(u32),
    SrcStrideMultiple(u32),
    DstStrideMultiple(u32),
    /// At least [`LARGE_PIXELS`] pixels.
    LargeImage,
    /// A new host thread makes each call (the threading model bounds no threads).
    NewThreadPerCall,
    /// The context declares a non-blocking stream.
    DeclaresNonBlocking,
    /// The stream kind is one of these.
    StreamIn(Vec<StreamKind>),
    /// The context is filled one of these ways.
    ContextIn(Vec<ContextFill>),
}

impl Feature {
    fn holds(&self, c: &Case) -> bool {
        let g = &c.geometry;
        match self {
            Feature::WidthBytesMultiple(m) => g.width_bytes(c.primitive) % u64::from(*m) == 0,
            Feature::WidthPixelsMultiple(m) => g.width % m == 0,
            Feature::SrcStrideMultiple(m) => g.src_stride % m == 0,
            Feature::DstStrideMultiple(m) => g.dst_stride % m == 0,
            Feature::LargeImage => g.pixels() >= LARGE_PIXELS,
            Feature::NewThreadPerCall => c.threading.thread_bound().is_none(),
            Feature::DeclaresNonBlocking => c.declared_non_blocking.unwrap_or(c.stream == StreamKind::NonBlocking),
            Feature::StreamIn(set) => set.contains(&c.stream),
            Feature::ContextIn(set) => set.contains(&c.context),
        }
    }
}

/// A feature, or its negation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    pub feature: Feature,
    /// `false` for the negation ("the width is not a multiple of 16 bytes").
    pub holds: bool,
}

/// The rule found for one primitive.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub primitive: Primitive,
    pub kind: RuleKind,
    /// Scenarios with a class (the support), and how many of them leaked.
    pub measured: usize,
    pub leaking: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RuleKind {
    /// No measured scenario leaks.
    Never,
    /// Every measured scenario leaks.
    Always,
    /// Leaks if and only if every literal holds; with the literals the data cannot tell from
    /// each one (same scenarios), and how many other rules of the same size fit as well.
    Exactly {
        literals: Vec<(Literal, Vec<Literal>)>,
        alternatives: usize,
    },
    /// No rule of the family fits; the conjunction with the fewest errors, and the scenarios it
    /// gets wrong (id, whether that scenario leaked).
    Approximately {
        literals: Vec<Literal>,
        counter_examples: Vec<(String, bool)>,
    },
}

/// Every subset of `items` that is neither empty nor all of them, smaller subsets first.
fn proper_subsets<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    let n = items.len();
    let mut out: Vec<Vec<T>> = (1..(1u32 << n) - 1)
        .map(|mask| {
            (0..n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| items[i].clone())
                .collect()
        })
        .collect();
    out.sort_by_key(Vec::len);
    out
}

/// The candidate features for these cases, in the order rules prefer them.
fn features(cases: &[Case]) -> Vec<Feature> {
    let mut out = Vec::new();
    for m in MODULI {
        out.push(Feature::WidthBytesMultiple(m));
    }
    for m in MODULI {
        out.push(Feature::SrcStrideMultiple(m));
    }
    for m in MODULI {
        out.push(Feature::DstStrideMultiple(m));
    }
    for m in MODULI {
        out.push(Feature::WidthPixelsMultiple(m));
    }
    out.push(Feature::NewThreadPerCall);
    let mut streams: Vec<StreamKind> = cases.iter().map(|c| c.stream).collect();
    streams.sort();
    streams.dedup();
    out.extend(proper_subsets(&streams).into_iter().map(Feature::StreamIn));
    out.push(Feature::DeclaresNonBlocking);
    let mut contexts: Vec<ContextFill> = cases.iter().map(|c| c.context).collect();
    contexts.sort();
    contexts.dedup();
    if contexts.len() <= 6 {
        out.extend(proper_subsets(&contexts).into_iter().map(Feature::ContextIn));
    }
    out.push(Feature::LargeImage);
    out
}

/// Which cases a literal holds on, as a bit set.
type Bits = Vec<u64>;

fn bits(cases: &[Case], f: impl Fn(&Case) -> bool) -> Bits {
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

/// Literals with their truth over the cases, one per distinct truth (the first in preference
/// order kept, the others as its equivalents); literals true everywhere or nowhere dropped.
fn literals(cases: &[Case]) -> Vec<(Literal, Vec<Literal>, Bits)> {
    let all = bits(cases, |_| true);
    let mut out: Vec<(Literal, Vec<Literal>, Bits)> = Vec::new();
    for f in features(cases) {
        for holds in [false, true] {
            let lit = Literal {
                feature: f.clone(),
                holds,
            };
            let b = bits(cases, |c| f.holds(c) == holds);
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

/// Finds the simplest rule for one primitive's measured cases.
pub fn discover(primitive: Primitive, cases: &[Case]) -> Rule {
    let leaking = cases.iter().filter(|c| c.leaks).count();
    let rule = |kind| Rule {
        primitive,
        kind,
        measured: cases.len(),
        leaking,
    };
    if leaking == 0 {
        return rule(RuleKind::Never);
    }
    if leaking == cases.len() {
        return rule(RuleKind::Always);
    }
    let target = bits(cases, |c| c.leaks);
    let lits = literals(cases);
    // Exact: every literal holds on every leaking case; together they exclude every other.
    let usable: Vec<usize> = (0..lits.len())
        .filter(|&i| and(&lits[i].2, &target) == target)
        .collect();
    for size in 1..=MAX_LITERALS {
        let mut found: Vec<Vec<usize>> = Vec::new();
        for_each_combination(&usable, size, &mut |combo| {
            let mut acc = lits[combo[0]].2.clone();
            for &i in &combo[1..] {
                acc = and(&acc, &lits[i].2);
            }
            if acc == target {
                found.push(combo.to_vec());
            }
        });
        if let Some(best) = found.first() {
            return rule(RuleKind::Exactly {
                literals: best.iter().map(|&i| (lits[i].0.clone(), lits[i].1.clone())).collect(),
                alternatives: found.len() - 1,
            });
        }
    }
    // None fits: the conjunction of up to three literals with the fewest errors.
    let all: Vec<usize> = (0..lits.len()).collect();
    let mut best: Option<(usize, Vec<usize>)> = None;
    for size in 1..=3.min(all.len()) {
        for_each_combination(&all, size, &mut |combo| {
            let mut acc = lits[combo[0]].2.clone();
            for &i in &combo[1..] {
                acc = and(&acc, &lits[i].2);
            }
            let errors: usize = acc
                .iter()
                .zip(&target)
                .map(|(a, t)| (a ^ t).count_ones() as usize)
                .sum();
            if best.as_ref().is_none_or(|(e, _)| errors < *e) {
                best = Some((errors, combo.to_vec()));
            }
        });
    }
    let (_, combo) = best.expect("at least one literal distinguishes leaking from other cases");
    let mut acc = lits[combo[0]].2.clone();
    for &i in &combo[1..] {
        acc = and(&acc, &lits[i].2);
    }
    let counter_examples = cases
        .iter()
        .enumerate()
        .filter(|(i, c)| ((acc[i / 64] >> (i % 64)) & 1 == 1) != c.leaks)
        .map(|(_, c)| (c.id.clone(), c.leaks))
        .collect();
    rule(RuleKind::Approximately {
        literals: combo.iter().map(|&i| lits[i].0.clone()).collect(),
        counter_examples,
    })
}

/// Calls `f` with every `k`-element combination of `items`, in lexicographic order.
fn for_each_combination(items: &[usize], k: usize, f: &mut impl FnMut(&[usize])) {
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

#[cfg(test)]
mod tests {
    //! Generated scenarios with known leak rules, labelled as such: the search must find exactly
    //! the rule that generated them, or say that none fits.
    use super::*;

    const P: Primitive = Primitive::CONVERT_8U32F_C1R;

    fn case(width: u32, stride: u32, stream: StreamKind, threading: Threading, leaks: bool) -> Case {
        Case {
            id: format!("{width}/{stride}/{stream}/{threading}"),
            primitive: P,
            geometry: Geometry::new(P, width, 64, stride),
            stream,
            context: ContextFill::FromStream,
            threading,
            declared_non_blocking: None,
            leaks,
        }
    }

    /// Generated: the atlas's sweep, classed by `rule`.
    fn sweep(rule: impl Fn(&Case) -> bool) -> Vec<Case> {
        let mut out = Vec::new();
        for w in [256, 255, 254, 252, 248, 240, 224, 192] {
            out.push(case(w, 256, StreamKind::Blocking, Threading::ThreadPerCall, false));
        }
        for s in [260, 264, 272, 288, 320] {
            out.push(case(255, s, StreamKind::Blocking, Threading::ThreadPerCall, false));
        }
        for k in StreamKind::ALL {
            out.push(case(255, 256, k, Threading::ThreadPerCall, false));
        }
        for t in [Threading::Single, Threading::Pool(4)] {
            out.push(case(255, 256, StreamKind::Blocking, t, false));
        }
        for c in &mut out {
            c.leaks = rule(c);
        }
        out
    }

    #[test]
    fn the_convert_rule_is_found_from_its_sweep() {
        // Generated by the rule NPP 13 follows: width not a multiple of 16, stride a multiple of
        // 16, not a non-blocking stream, a new thread per call.
        let cases = sweep(|c| {
            c.geometry.width % 16 != 0
                && c.geometry.src_stride % 16 == 0
                && c.stream != StreamKind::NonBlocking
                && c.threading.thread_bound().is_none()
        });
        let rule = discover(P, &cases);
        let RuleKind::Exactly { literals, .. } = &rule.kind else {
            panic!("{rule:?}")
        };
        let found: Vec<&Literal> = literals.iter().map(|(l, _)| l).collect();
        assert!(
            found.contains(&&Literal {
                feature: Feature::WidthBytesMultiple(16),
                holds: false
            }),
            "{found:?}"
        );
        assert!(
            found.contains(&&Literal {
                feature: Feature::SrcStrideMultiple(16),
                holds: true
            }),
            "{found:?}"
        );
        assert!(
            found.contains(&&Literal {
                feature: Feature::NewThreadPerCall,
                holds: true
            }),
            "{found:?}"
        );
        assert_eq!(literals.len(), 4, "{found:?}");
        assert_eq!(rule.leaking, cases.iter().filter(|c| c.leaks).count());
    }

    #[test]
    fn a_rule_on_the_legacy_stream_alone_is_one_literal() {
        // Generated: only the legacy default stream leaks (as Sum_8u_C1R does).
        let cases = sweep(|c| c.stream == StreamKind::LegacyDefault);
        let rule = discover(P, &cases);
        let RuleKind::Exactly { literals, .. } = &rule.kind else {
            panic!("{rule:?}")
        };
        assert_eq!(literals.len(), 1);
        assert_eq!(
            literals[0].0.feature,
            Feature::StreamIn(vec![StreamKind::LegacyDefault])
        );
    }

    #[test]
    fn never_and_always_are_said_as_such() {
        assert_eq!(discover(P, &sweep(|_| false)).kind, RuleKind::Never);
        assert_eq!(discover(P, &sweep(|_| true)).kind, RuleKind::Always);
    }

    #[test]
    fn data_no_conjunction_fits_gets_counter_examples() {
        // Generated: width 248 and 192 leak, nothing else does (no conjunction separates them).
        let cases = sweep(|c| [248, 192].contains(&c.geometry.width));
        let rule = discover(P, &cases);
        match &rule.kind {
            RuleKind::Exactly { .. } => {}
            RuleKind::Approximately { counter_examples, .. } => assert!(!counter_examples.is_empty()),
            other => panic!("{other:?}"),
        }
        // Generated: an "or" of two independent conditions cannot be a conjunction.
        let cases = sweep(|c| c.geometry.width == 248 || c.stream == StreamKind::LegacyDefault);
        let rule = discover(P, &cases);
        let RuleKind::Approximately { counter_examples, .. } = &rule.kind else {
            panic!("{rule:?}")
        };
        assert!(!counter_examples.is_empty());
    }

    #[test]
    fn indistinguishable_features_are_listed_as_equivalent() {
        // Generated: with 1-byte pixels, a width in bytes and in pixels are the same thing.
        let cases = sweep(|c| c.geometry.width % 16 != 0 && c.threading.thread_bound().is_none());
        let rule = discover(P, &cases);
        let RuleKind::Exactly { literals, .. } = &rule.kind else {
            panic!("{rule:?}")
        };
        let (width, same) = literals
            .iter()
            .find(|(l, _)| l.feature == Feature::WidthBytesMultiple(16))
            .expect("the width literal");
        assert!(!width.holds);
        assert!(
            same.iter().any(|l| l.feature == Feature::WidthPixelsMultiple(16)),
            "{same:?}"
        );
    }

    #[test]
    fn combinations_are_enumerated_once_each() {
        let mut seen = Vec::new();
        for_each_combination(&[0, 1, 2, 3], 2, &mut |c| seen.push(c.to_vec()));
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[0], vec![0, 1]);
    }
}
