//! What a scenario's class is, from runs that measured other scenarios: the measured class where
//! the runs measured that very scenario, else the class its function's rules give, else nothing.
//! `nppbench predict` answers with this; no GPU is needed.

use nppbench_model::{ContextFill, Geometry, MemoryScenario, Primitive, StreamKind, Threading};
use nppbench_stats::LeakClass;

use crate::evidence::{Evidence, FunctionRules};
use crate::rules::Case;

/// What an answer rests on.
#[derive(Debug, Clone, PartialEq)]
pub enum Basis {
    /// The runs measured this scenario: its class (the classes, where it changed between
    /// processes).
    Measured(Vec<LeakClass>),
    /// The function's rules, which did not see this scenario.
    Rule,
    /// The runs measured no scenario of this function.
    None,
}

/// The class a scenario is predicted to have, and on what basis.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// `None`: unknown (nothing measured of the function, or a measured scenario that changed
    /// class between processes).
    pub class: Option<LeakClass>,
    pub basis: Basis,
}

/// A scenario asked about: a memory scenario's axes (the number of calls does not matter).
pub fn query(
    primitive: Primitive,
    geometry: Geometry,
    stream: StreamKind,
    context: ContextFill,
    threading: Threading,
) -> Case {
    let scenario = MemoryScenario::new(primitive, geometry, stream, context, threading, 0);
    Case {
        id: scenario.id,
        primitive,
        geometry,
        stream,
        context,
        threading,
        declared_non_blocking: None,
        class: LeakClass::Flat,
        held_out: false,
    }
}

/// The answer for `q` from the pooled `evidence` and its function rules `rules`.
pub fn answer(evidence: &Evidence, rules: &[FunctionRules], q: &Case) -> Answer {
    if let Some(c) = evidence.cases.iter().find(|c| c.id == q.id) {
        return Answer {
            class: Some(c.class),
            basis: Basis::Measured(vec![c.class]),
        };
    }
    if let Some(flip) = evidence.flips.iter().find(|f| f.id == q.id) {
        return Answer {
            class: None,
            basis: Basis::Measured(flip.classes.clone()),
        };
    }
    match rules.iter().find(|f| f.primitive == q.primitive) {
        Some(f) => Answer {
            class: Some(f.predict(q)),
            basis: Basis::Rule,
        },
        None => Answer {
            class: None,
            basis: Basis::None,
        },
    }
}
