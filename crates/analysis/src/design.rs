//! What to measure next: for each function whose rule is not earned, the scenarios one factor
//! away from the ones its rule gets wrong (counter-examples, fitted or held out) and from a few of
//! its leaking and non-leaking scenarios: the width, either stride or the height moved across an
//! alignment or a step, the stream kind, the context filling or the threading model changed
//! alone (delta debugging of the configuration). Measured and pooled with the atlas, they are
//! the contrast the rule search lacked. Scenarios already measured are not proposed again.

pub mod bisect;

use std::collections::BTreeSet;

use nppbench_model::{ContextFill, Geometry, MemoryScenario, StreamKind, Threading};

use crate::evidence::{Evidence, FunctionRules};
use crate::rules::{Case, RuleKind};

/// The scenarios one factor away from `c`: each geometry value moved across the alignments and
/// steps the rules test, and each other axis value alone.
fn neighbours(c: &Case) -> Vec<(Geometry, StreamKind, ContextFill, Threading)> {
    let g = c.geometry;
    let mut geometries: Vec<Geometry> = Vec::new();
    for delta in [1u32, 16, 64] {
        for width in [g.width + delta, g.width.saturating_sub(delta)] {
            geometries.push(Geometry { width, ..g });
        }
    }
    for align in [16u32, 64, 256] {
        geometries.push(Geometry {
            width: g.width.next_multiple_of(align),
            ..g
        });
        geometries.push(Geometry {
            src_stride: g.src_stride.next_multiple_of(align)
                + if g.src_stride.is_multiple_of(align) {
                    align / 2
                } else {
                    0
                },
            ..g
        });
        let dst_stride = g.dst_stride.next_multiple_of(align)
            + if g.dst_stride.is_multiple_of(align) {
                align / 2
            } else {
                0
            };
        // Set has no source: its one stride is both (a reduction has none: validate drops it).
        let src_stride = if c.primitive.row().sources == 0 {
            dst_stride
        } else {
            g.src_stride
        };
        geometries.push(Geometry {
            src_stride,
            dst_stride,
            ..g
        });
    }
    geometries.push(Geometry {
        height: g.height * 2,
        ..g
    });
    geometries.push(Geometry {
        height: (g.height / 2).max(1),
        ..g
    });
    let mut out: Vec<_> = geometries
        .into_iter()
        .filter(|n| *n != g && n.validate(c.primitive).is_ok())
        .map(|n| (n, c.stream, c.context, c.threading))
        .collect();
    out.extend(StreamKind::ALL.into_iter().map(|s| (g, s, c.context, c.threading)));
    out.extend(ContextFill::ALL.into_iter().map(|x| (g, c.stream, x, c.threading)));
    let threads = [
        Threading::ThreadPerCall,
        Threading::Pool(2),
        Threading::Pool(4),
        Threading::Single,
    ];
    out.extend(threads.into_iter().map(|t| (g, c.stream, c.context, t)));
    out
}

/// Whether a function's rules leave something to learn: its leak rule is not earned, or its
/// scenarios flip between processes.
fn weak(f: &FunctionRules) -> bool {
    !f.earned()
        || matches!(
            f.leak.kind,
            RuleKind::Approximately { .. } | RuleKind::Inseparable { .. }
        )
}

/// Every scenario id the evidence holds, stable or not: what a round never proposes again.
fn measured_ids(evidence: &Evidence) -> BTreeSet<String> {
    let mut ids: BTreeSet<String> = evidence.cases.iter().map(|c| c.id.clone()).collect();
    ids.extend(evidence.flips.iter().map(|f| f.id.clone()));
    ids
}

/// Up to `per_function` scenarios for each function whose rule is not earned, none already
/// measured, each a memory scenario of `calls` calls, counter-examples' neighbours first.
pub fn next_round(
    evidence: &Evidence,
    rules: &[FunctionRules],
    per_function: usize,
    calls: u32,
) -> Vec<MemoryScenario> {
    let mut measured = measured_ids(evidence);
    let mut out = Vec::new();
    for f in rules.iter().filter(|f| weak(f)) {
        let cases: Vec<&Case> = evidence.cases.iter().filter(|c| c.primitive == f.primitive).collect();
        let wrong: BTreeSet<&str> = match &f.leak.kind {
            RuleKind::Approximately { counter_examples, .. } => {
                counter_examples.iter().map(|(id, _)| id.as_str()).collect()
            }
            RuleKind::Inseparable { scenarios } => scenarios.iter().map(|(id, _)| id.as_str()).collect(),
            _ => BTreeSet::new(),
        }
        .into_iter()
        .chain(f.leak.held_out.wrong.iter().map(|(id, _)| id.as_str()))
        .collect();
        // Counter-examples first, then leaking and non-leaking scenarios in turn.
        let mut seeds: Vec<&Case> = cases
            .iter()
            .copied()
            .filter(|c| wrong.contains(c.id.as_str()))
            .collect();
        let (leaking, other): (Vec<&Case>, Vec<&Case>) = cases.iter().partition(|c| c.leaks());
        for pair in leaking.iter().zip(&other) {
            seeds.extend([*pair.0, *pair.1]);
        }
        let mut taken = 0;
        'seeds: for c in seeds {
            for (geometry, stream, context, threading) in neighbours(c) {
                if taken == per_function {
                    break 'seeds;
                }
                let s = MemoryScenario::new(c.primitive, geometry, stream, context, threading, calls);
                if measured.insert(s.id.clone()) {
                    out.push(s);
                    taken += 1;
                }
            }
        }
    }
    out
}

/// The scenarios as a matrix file: one `[[geometry]]` table each (memory only), so that
/// `nppbench run --matrix` measures them as they are. `what` says, in a few words, what they are
/// (the file's description and first comment).
pub fn matrix_toml(name: &str, what: &str, scenarios: &[MemoryScenario], calls: u32) -> String {
    let mut out = format!(
        "# Written by nppbench design: {what}. Measure with `nppbench run --matrix`,\n# then pool the run with the atlas (`--from`/`--atlas` both).\nname = \"{name}\"\ndescription = \"{what}\"\nstreams = [\"blocking\"]\nthreading = [\"thread_per_call\"]\n\n[settings]\ncalls = {calls}\n"
    );
    for s in scenarios {
        let g = &s.geometry;
        out.push_str(&format!(
            "\n[[geometry]]\nprimitive = \"{}\"\nwidth = {}\nheight = {}\nsrc_stride = {}\ndst_stride = {}\nstreams = [\"{}\"]\ncontext = [\"{}\"]\nthreading = [\"{}\"]\nthroughput = false\n",
            s.primitive, g.width, g.height, g.src_stride, g.dst_stride, s.stream, s.context, s.threading
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use nppbench_model::Primitive;
    use nppbench_stats::LeakClass;

    use super::*;

    fn case(name: &str, geometry: impl Fn(Primitive) -> Geometry) -> Case {
        let primitive = Primitive::from_name(name).unwrap();
        Case {
            id: String::new(),
            primitive,
            geometry: geometry(primitive),
            stream: StreamKind::Blocking,
            context: ContextFill::FromStream,
            threading: Threading::ThreadPerCall,
            declared_non_blocking: None,
            class: LeakClass::Leak,
            race: None,
            wrong: None,
            held_out: false,
        }
    }

    /// A reduction has no destination stride to move, and Set's one stride is both of its
    /// fields: every neighbour proposed is a geometry the function takes.
    #[test]
    fn strides_move_only_where_the_function_has_them() {
        let mean = case("Mean_8u_C1R", |p| Geometry::new(p, 100, 4, 112));
        let ns = neighbours(&mean);
        assert!(ns.iter().all(|(g, ..)| g.dst_stride == 8), "{ns:?}");
        assert!(
            ns.iter().any(|(g, ..)| g.src_stride != 112),
            "the source stride still moves"
        );
        let set = case("Set_8u_C1R", |p| Geometry::new(p, 100, 4, 112));
        let ns = neighbours(&set);
        assert!(ns.iter().all(|(g, ..)| g.src_stride == g.dst_stride), "{ns:?}");
        assert!(ns.iter().any(|(g, ..)| g.dst_stride != 112), "Set's stride still moves");
    }
}
