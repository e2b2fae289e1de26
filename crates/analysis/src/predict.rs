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

impl Basis {
    /// `measured`, `rule` or `none`, as predict's `basis` columns say.
    pub fn as_str(&self) -> &'static str {
        match self {
            Basis::Measured(_) => "measured",
            Basis::Rule => "rule",
            Basis::None => "none",
        }
    }
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
        race: None,
        wrong: None,
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

/// How far an answer can be trusted (`predict`'s `confidence` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confidence {
    /// The runs measured this very scenario, in one class.
    Exact,
    /// The rules the answer rests on (the leak rule for a leak; the leak and bounded rules for
    /// flat or bounded) fit every fitted scenario and predict every held-out one, and no scenario
    /// of the function changed class between processes.
    Rule,
    /// The best rules the answer rests on are wrong on some fitted or held-out scenarios, were
    /// not tested on any, or the function's scenarios changed class between processes.
    Approximate,
    /// The scenario lies outside the widths, heights or strides measured of its function.
    Extrapolated,
    /// No answer: nothing measured of the function, or a measured scenario that is not stable.
    None,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Exact => "exact",
            Confidence::Rule => "rule",
            Confidence::Approximate => "approximate",
            Confidence::Extrapolated => "extrapolated",
            Confidence::None => "none",
        }
    }
}

/// An answer's confidence and why, and, for an answer from a leak rule that does not hold, the
/// rule's first condition that fails on the scenario (the one that decides it).
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    pub confidence: Confidence,
    pub reason: String,
    pub deciding: Option<crate::rules::Literal>,
}

/// The quantities of a scenario that a rule was measured over, with their names and units.
fn extents(c: &Case) -> [(&'static str, &'static str, u32); 4] {
    let g = &c.geometry;
    [
        ("width", "px", g.width),
        ("height", "rows", g.height),
        ("source stride", "bytes", g.src_stride),
        ("destination stride", "bytes", g.dst_stride),
    ]
}

/// Why `q` lies outside what was measured of its function, if it does: the first quantity
/// below the smallest or above the largest value measured.
pub fn outside_measured(evidence: &Evidence, q: &Case) -> Option<String> {
    let mine: Vec<&Case> = evidence.cases.iter().filter(|c| c.primitive == q.primitive).collect();
    if mine.is_empty() {
        return None;
    }
    for (i, (name, unit, v)) in extents(q).into_iter().enumerate() {
        let values = mine.iter().map(|c| extents(c)[i].2);
        let (lo, hi) = (values.clone().min().unwrap_or(v), values.max().unwrap_or(v));
        if v < lo {
            return Some(format!(
                "{name} {v} {unit} is below the smallest measured of this function, {lo}"
            ));
        }
        if v > hi {
            return Some(format!(
                "{name} {v} {unit} is above the largest measured of this function, {hi}"
            ));
        }
    }
    None
}

/// Why the rules an answer rests on are not exact, if they are not (see
/// [`Confidence::Approximate`]), said of that answer: a leak rests on the leak rule alone; flat or
/// bounded on the leak rule (it does not hold) and the bounded rule (it holds or not). A bounded
/// rule that fits nowhere is no caveat on a leak the leak rule earned.
fn rules_weakness(f: &FunctionRules, class: LeakClass) -> Option<String> {
    use crate::rules::{RuleKind, Standing};
    if !f.flips.is_empty() {
        let n = f.flips.len();
        return Some(format!(
            "{n} scenario{} of this function changed class between processes",
            if n == 1 { "" } else { "s" }
        ));
    }
    let what = class.as_str();
    let mut rules = vec![("leak", &f.leak, format!("this answer is {what}, not leak,"))];
    if class == LeakClass::Leak {
        rules[0].2 = "this answer is leak,".to_owned();
    } else {
        let other = if class == LeakClass::Bounded { "flat" } else { "bounded" };
        rules.push(("bounded", &f.bounded, format!("this answer is {what}, not {other},")));
    }
    for (name, r, answer) in rules {
        let (rule, weakness) = match r.standing() {
            Standing::Earned => continue,
            Standing::NotValidated => (
                format!("the {name} rule"),
                "which was tested on no held-out scenario".to_owned(),
            ),
            Standing::WrongOnHeldOut => (
                format!("the {name} rule"),
                format!(
                    "which gets {} of {} held-out scenarios wrong",
                    r.held_out.wrong.len(),
                    r.held_out.total
                ),
            ),
            Standing::NoneFits => {
                let wrong = match &r.kind {
                    RuleKind::Approximately { counter_examples, .. } => counter_examples.len(),
                    _ => r.measured,
                };
                (
                    format!("the closest {name} rule"),
                    format!(
                        "which gets {wrong} of {} fitted scenarios wrong (no {name} rule fits them all)",
                        r.measured
                    ),
                )
            }
        };
        return Some(format!("{answer} by {rule}, {weakness}"));
    }
    None
}

/// How far `a`, the answer for `q`, can be trusted, and what decides it.
pub fn assess(evidence: &Evidence, rules: &[FunctionRules], q: &Case, a: &Answer) -> Assessment {
    let plain = |confidence, reason: &str| Assessment {
        confidence,
        reason: reason.to_owned(),
        deciding: None,
    };
    match &a.basis {
        Basis::Measured(classes) if classes.len() == 1 => plain(Confidence::Exact, "this scenario was measured"),
        Basis::Measured(_) => plain(Confidence::None, "measured, but its class changed between processes"),
        Basis::None => plain(Confidence::None, "no scenario of this function was measured"),
        Basis::Rule => {
            let Some(f) = rules.iter().find(|f| f.primitive == q.primitive) else {
                return plain(Confidence::None, "no scenario of this function was measured");
            };
            let deciding = if f.leak.predicts(q) {
                None
            } else {
                f.leak.conditions().into_iter().find(|l| !l.holds_on(q)).cloned()
            };
            let (confidence, reason) = if let Some(why) = outside_measured(evidence, q) {
                (Confidence::Extrapolated, why)
            } else if let Some(why) = rules_weakness(f, a.class.unwrap_or(LeakClass::Flat)) {
                (Confidence::Approximate, why)
            } else if a.class == Some(LeakClass::Leak) {
                (
                    Confidence::Rule,
                    "the leak rule fits every fitted scenario and predicts every held-out one".to_owned(),
                )
            } else {
                (
                    Confidence::Rule,
                    "the leak and bounded rules fit every fitted scenario and predict every held-out one".to_owned(),
                )
            };
            Assessment {
                confidence,
                reason,
                deciding,
            }
        }
    }
}

/// Whether a scenario races (its output can be wrong when the caller's stream writes the source
/// late), and on what basis: `None` where no race of the function was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct RaceAnswer {
    pub races: Option<bool>,
    /// `Measured` (with no classes) where the runs measured this scenario's race.
    pub basis: Basis,
}

/// The race answer for `q`: measured where the runs measured its race, else the function's race
/// rule, else none.
pub fn answer_race(evidence: &Evidence, rules: &[FunctionRules], q: &Case) -> RaceAnswer {
    let measured = evidence.cases.iter().find(|c| c.id == q.id).and_then(|c| c.race);
    let (races, basis) = hazard(measured, || {
        rules
            .iter()
            .find(|f| f.primitive == q.primitive)
            .and_then(|f| f.predict_race(q))
    });
    RaceAnswer { races, basis }
}

/// Whether a scenario's calls compute wrong pixels (or fault) with every call synchronised, and
/// on what basis: `None` where no output of the function was judged.
#[derive(Debug, Clone, PartialEq)]
pub struct WrongAnswer {
    pub wrong: Option<bool>,
    pub basis: Basis,
}

/// The wrong-pixel answer for `q`: measured where the runs judged its output, else the
/// function's wrong rule, else none.
pub fn answer_wrong(evidence: &Evidence, rules: &[FunctionRules], q: &Case) -> WrongAnswer {
    let measured = evidence.outputs.iter().find(|c| c.id == q.id).and_then(|c| c.wrong);
    let (wrong, basis) = hazard(measured, || {
        rules
            .iter()
            .find(|f| f.primitive == q.primitive)
            .and_then(|f| f.predict_wrong(q))
    });
    WrongAnswer { wrong, basis }
}

/// A yes-or-no hazard: measured where it was, else the rule's prediction, else none.
fn hazard(measured: Option<bool>, predicted: impl FnOnce() -> Option<bool>) -> (Option<bool>, Basis) {
    match (measured, measured.is_none().then(predicted).flatten()) {
        (Some(m), _) => (Some(m), Basis::Measured(Vec::new())),
        (None, Some(p)) => (Some(p), Basis::Rule),
        (None, None) => (None, Basis::None),
    }
}

/// `wrong`, `right` or `not measured`, as scenarios.csv's `output_class` says of NPP's part.
pub fn wrong_word(wrong: Option<bool>) -> &'static str {
    match wrong {
        Some(true) => "wrong",
        Some(false) => "right",
        None => "not measured",
    }
}

/// `races`, `ordered` or `not measured`, as scenarios.csv's `race_class` says.
pub fn race_word(races: Option<bool>) -> &'static str {
    match races {
        Some(true) => "races",
        Some(false) => "ordered",
        None => "not measured",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measured_hazard_answers_before_the_rule_and_the_rule_before_none() {
        let never = || -> Option<bool> { panic!("the rule is not asked where the scenario was measured") };
        assert_eq!(hazard(Some(true), never), (Some(true), Basis::Measured(Vec::new())));
        assert_eq!(hazard(None, || Some(false)), (Some(false), Basis::Rule));
        assert_eq!(hazard(None, || None), (None, Basis::None));
        assert_eq!(
            [Some(true), Some(false), None].map(wrong_word),
            ["wrong", "right", "not measured"]
        );
    }
}
