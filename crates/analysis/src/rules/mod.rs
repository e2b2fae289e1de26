//! Rule discovery: for one primitive, the simplest rule that separates the scenarios of a class
//! (those that leak; among the others, those whose growth is bounded) from the rest, computed
//! from the measured scenarios, never typed, and scored on held-out scenarios it never saw.
//!
//! The family of rules is the conjunction ("and") of literals over the scenarios' features
//! ([`features`]): the source and destination row lengths and strides, each a multiple of 2, 4,
//! … 512 bytes or not, the width in pixels likewise; a row, the width or the height above a
//! threshold or not; a large image; the stream kind in a set; the context filling in a set; the
//! flags the context declares; a new thread per call or a bounded set of threads. The simplest
//! rule is the one with the fewest literals that every scenario of the class satisfies and every
//! other scenario breaks. Literals that hold on exactly the same scenarios are one literal here
//! (the data cannot tell them apart): the rule names the first in a fixed order and lists the
//! others as equivalent. Where no conjunction of up to [`MAX_LITERALS`] literals fits, the one
//! with the fewest errors is given with its counter-examples, both ways.
//!
//! A rule is a hypothesis until it predicts what it was not fitted on: scenarios marked held out
//! are never fitted, only predicted ([`HeldOut`]), and "if and only if" is earned only by a rule
//! that fits every fitted scenario exactly and predicts every held-out one ([`Rule::earned`]).

mod features;
mod search;
#[cfg(test)]
mod tests;

use nppbench_model::{ContextFill, Geometry, Primitive, StreamKind, Threading};
use nppbench_stats::LeakClass;

pub use self::features::{
    Feature, LARGE_PIXELS, Literal, MODULI, ROW_START_MODULUS, declares_non_blocking, row_start_features,
};
pub use self::search::MAX_LITERALS;
use self::search::{Found, search};

/// A scenario as the rule discovery sees it: its axes, and the class it was measured in.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Case {
    pub id: String,
    pub primitive: Primitive,
    pub geometry: Geometry,
    pub stream: StreamKind,
    pub context: ContextFill,
    pub threading: Threading,
    /// The `nStreamFlags` the calls' context declared (1: non-blocking), where recorded.
    pub declared_non_blocking: Option<bool>,
    pub class: LeakClass,
    /// Whether its ordering rounds found a race (`None`: not measured).
    pub race: Option<bool>,
    /// Whether its synchronised calls computed wrong pixels or faulted (`None`: not measured, or
    /// a miss of nppbench's own reference: [`crate::OutputClass::wrong`]).
    pub wrong: Option<bool>,
    /// Measured to score rules on, never to fit them.
    pub held_out: bool,
}

impl Case {
    pub fn leaks(&self) -> bool {
        self.class == LeakClass::Leak
    }
}

/// The rule found for one primitive and one class.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rule {
    pub primitive: Primitive,
    /// The class the rule separates: `leak`, or, among the scenarios that do not leak, `bounded`.
    pub class: LeakClass,
    pub kind: RuleKind,
    /// Scenarios fitted (the support), and how many of them are of the class.
    pub measured: usize,
    pub leaking: usize,
    /// The held-out scenarios and how the rule did on them.
    pub held_out: HeldOut,
}

/// How a rule did on the scenarios held out of its fit.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HeldOut {
    pub total: usize,
    /// The held-out scenarios it got wrong: id, and whether that scenario was of the class.
    pub wrong: Vec<(String, bool)>,
}

impl HeldOut {
    pub fn predicted(&self) -> usize {
        self.total - self.wrong.len()
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum RuleKind {
    /// No fitted scenario is of the class.
    Never,
    /// Every fitted scenario is of the class.
    Always,
    /// Of the class if and only if every literal holds (on the fitted scenarios); with the
    /// literals the data cannot tell from each one (same scenarios), and how many other rules of
    /// the same size fit as well.
    Exactly {
        literals: Vec<(Literal, Vec<Literal>)>,
        alternatives: usize,
    },
    /// No rule of the family fits; the conjunction with the fewest errors, and the scenarios it
    /// gets wrong (id, whether that scenario was of the class).
    Approximately {
        literals: Vec<Literal>,
        counter_examples: Vec<(String, bool)>,
    },
    /// No feature nppbench measures tells the fitted scenarios of the class from the others:
    /// they are kept apart, each side listed (id, whether that scenario was of the class), and
    /// nothing is predicted of the class.
    Inseparable { scenarios: Vec<(String, bool)> },
}

/// How strongly a rule may be stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Fits every fitted scenario and predicts every held-out one: "if and only if".
    Earned,
    /// Fits every fitted scenario, but no scenario was held out to test it.
    NotValidated,
    /// Fits every fitted scenario, but gets held-out ones wrong.
    WrongOnHeldOut,
    /// No rule of the family fits the fitted scenarios.
    NoneFits,
}

impl Rule {
    /// The rule's conditions, where it has some: an exact or an approximate conjunction's
    /// literals (the first of each set the data cannot tell apart).
    pub fn conditions(&self) -> Vec<&Literal> {
        match &self.kind {
            RuleKind::Exactly { literals, .. } => literals.iter().map(|(l, _)| l).collect(),
            RuleKind::Approximately { literals, .. } => literals.iter().collect(),
            RuleKind::Never | RuleKind::Always | RuleKind::Inseparable { .. } => Vec::new(),
        }
    }

    /// Whether the rule says a scenario is of its class.
    pub fn predicts(&self, c: &Case) -> bool {
        match &self.kind {
            RuleKind::Never => false,
            RuleKind::Always => true,
            RuleKind::Exactly { literals, .. } => literals.iter().all(|(l, _)| l.holds_on(c)),
            RuleKind::Approximately { literals, .. } => literals.iter().all(|l| l.holds_on(c)),
            RuleKind::Inseparable { .. } => false,
        }
    }

    pub fn standing(&self) -> Standing {
        match (&self.kind, self.held_out.total, self.held_out.wrong.is_empty()) {
            (RuleKind::Approximately { .. } | RuleKind::Inseparable { .. }, ..) => Standing::NoneFits,
            (_, 0, _) => Standing::NotValidated,
            (_, _, true) => Standing::Earned,
            (_, _, false) => Standing::WrongOnHeldOut,
        }
    }

    /// "If and only if" is earned: see [`Standing::Earned`].
    pub fn earned(&self) -> bool {
        self.standing() == Standing::Earned
    }
}

/// Finds the simplest rule for one primitive's cases of `class` (all given cases are the
/// primitive's; held-out ones are scored, never fitted).
pub fn discover(primitive: Primitive, cases: &[Case], class: LeakClass) -> Rule {
    discover_with(primitive, cases, class, &[])
}

/// [`discover`], with features derived from other rules tried first (the bounded rule tries
/// "the leak rule's other conditions hold", since a pool reuses the threads a leak needs new).
pub fn discover_with(primitive: Primitive, cases: &[Case], class: LeakClass, derived: &[Feature]) -> Rule {
    let fit: Vec<&Case> = cases.iter().filter(|c| !c.held_out).collect();
    let of_class = |c: &Case| c.class == class;
    let leaking = fit.iter().filter(|c| of_class(c)).count();
    let kind = if leaking == 0 {
        RuleKind::Never
    } else if leaking == fit.len() {
        RuleKind::Always
    } else {
        match search(&fit, of_class, derived) {
            Found::Exactly { literals, alternatives } => RuleKind::Exactly { literals, alternatives },
            Found::Approximately { literals, wrong } => RuleKind::Approximately {
                literals,
                counter_examples: wrong.iter().map(|&i| (fit[i].id.clone(), of_class(fit[i]))).collect(),
            },
            Found::Inseparable => RuleKind::Inseparable {
                scenarios: fit.iter().map(|c| (c.id.clone(), of_class(c))).collect(),
            },
        }
    };
    let mut rule = Rule {
        primitive,
        class,
        kind,
        measured: fit.len(),
        leaking,
        held_out: HeldOut::default(),
    };
    let held: Vec<&Case> = cases.iter().filter(|c| c.held_out).collect();
    rule.held_out = HeldOut {
        total: held.len(),
        wrong: held
            .iter()
            .filter(|c| rule.predicts(c) != of_class(c))
            .map(|c| (c.id.clone(), of_class(c)))
            .collect(),
    };
    rule
}
