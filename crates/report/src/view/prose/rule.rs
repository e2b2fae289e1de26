//! A function's leak rule in words: its sentence, as strong as its standing allows, its
//! support, what the data cannot tell apart, and its counter-examples.

use nppbench_analysis::evidence::FunctionRules;
use nppbench_analysis::rules::{Literal, MAX_LITERALS, RuleKind, Standing};

use super::{held_out_text, one_of, one_of_and};

/// One literal of a rule, in words.
pub fn literal(l: &Literal) -> String {
    use nppbench_analysis::rules::Feature as F;
    let is = if l.holds { "is" } else { "is not" };
    let at_least = |what: &str, k: &u64, unit: &str| {
        if l.holds {
            format!("{what} has at least {k} {unit}")
        } else {
            format!("{what} has fewer than {k} {unit}")
        }
    };
    match &l.feature {
        F::SrcRowBytesMultiple(m) => format!("a source row in bytes {is} a multiple of {m}"),
        F::DstRowBytesMultiple(m) => format!("a destination row in bytes {is} a multiple of {m}"),
        F::WidthPixelsMultiple(m) => format!("the width in pixels {is} a multiple of {m}"),
        F::SrcStrideMultiple(m) => format!("the source stride {is} a multiple of {m} bytes"),
        F::DstStrideMultiple(m) => format!("the destination stride {is} a multiple of {m} bytes"),
        F::SrcRowBytesAtLeast(k) => at_least("a source row", k, "bytes"),
        F::DstRowBytesAtLeast(k) => at_least("a destination row", k, "bytes"),
        F::WidthAtLeast(k) => at_least("the width", k, "pixels"),
        F::HeightAtLeast(k) => at_least("the image", k, "rows"),
        F::LargeImage if l.holds => "the image has a megapixel or more".into(),
        F::LargeImage => "the image has under a megapixel".into(),
        F::NewThreadPerCall if l.holds => "a new host thread makes each call".into(),
        F::NewThreadPerCall => "a bounded set of threads makes the calls (one thread, or a pool)".into(),
        F::DeclaresNonBlocking if l.holds => "the stream context declares a non-blocking stream".into(),
        F::DeclaresNonBlocking => "the stream context declares a blocking stream (nStreamFlags 0)".into(),
        F::StreamIn(set) if l.holds => format!("the stream is {}", one_of(set)),
        F::StreamIn(set) => format!("the stream is not {}", one_of(set)),
        F::ContextIn(set) if l.holds => format!("the context is filled {}", one_of(set)),
        F::ContextIn(set) => format!("the context is not filled {}", one_of(set)),
        F::LeaksWithNewThreads(_) if l.holds => "the leak rule's other conditions hold".into(),
        F::LeaksWithNewThreads(_) => "the leak rule's other conditions do not hold".into(),
        F::ThreadsAtLeast(n) if l.holds => format!("a bounded set of at least {n} threads makes the calls"),
        F::ThreadsAtLeast(n) => format!("no bounded set of {n} threads or more makes the calls"),
        F::SrcRowStartsIn(lo, hi) => {
            let m = nppbench_analysis::rules::ROW_START_MODULUS;
            let offsets = if lo == hi {
                lo.to_string()
            } else {
                format!("{lo} to {hi}")
            };
            let some = if l.holds { "some" } else { "no" };
            format!("{some} source row starts {offsets} bytes past a {m}-byte boundary")
        }
    }
}

/// A rule as words: its sentence, its support, what the data cannot tell apart, and the
/// counter-examples where no rule fits or held-out scenarios contradict it.
pub(crate) struct RuleWords {
    pub(crate) sentence: String,
    pub(crate) support: String,
    pub(crate) equivalents: Vec<String>,
    pub(crate) counter_examples: Vec<String>,
}

fn case_words((id, leaks): &(String, bool)) -> String {
    format!("{id} ({})", if *leaks { "leaks" } else { "does not leak" })
}

/// The rule's sentence as strong as its standing allows: "if and only if" only where it fits
/// every fitted scenario, predicts every held-out one, and no scenario flips between processes.
fn sentence(f: &FunctionRules, conditions: Option<&str>) -> String {
    let r = &f.leak;
    let held = held_out_text(&r.held_out);
    let wrong = r.held_out.wrong.len();
    let claim = match (&r.kind, conditions) {
        (RuleKind::Never, _) => "never leaks".to_owned(),
        (RuleKind::Always, _) => "leaks in every scenario".to_owned(),
        (_, Some(c)) => format!("leaks when {c}"),
        (_, None) => String::new(),
    };
    let base = match r.standing() {
        Standing::Earned if f.flips.is_empty() => match &r.kind {
            RuleKind::Exactly { .. } => format!("Leaks if and only if {} ({held})", conditions.unwrap_or_default()),
            RuleKind::Never => format!("Never leaks: none of {} fitted scenarios did ({held})", r.measured),
            _ => format!("Leaks in every scenario: all {} fitted did ({held})", r.measured),
        },
        Standing::Earned | Standing::NotValidated => {
            let mut s = format!("Fits all {} scenarios measured: {claim}", r.measured);
            if r.held_out.total == 0 {
                s.push_str("; not validated: no scenario was held out to test it");
            } else {
                s.push_str(&format!(" ({held})"));
            }
            s
        }
        Standing::WrongOnHeldOut => format!(
            "Best rule found: {claim}, which fits all {} fitted scenarios but gets {wrong} of {} held-out wrong",
            r.measured, r.held_out.total
        ),
        Standing::NoneFits => {
            let counter_examples = match &r.kind {
                RuleKind::Approximately { counter_examples, .. } => counter_examples,
                RuleKind::Inseparable { scenarios } => {
                    let leaking = scenarios.iter().filter(|(_, leaks)| *leaks).count();
                    return flagged(
                        f,
                        format!(
                            "No condition nppbench measures tells these scenarios apart: {leaking} leak and {} do not, with the same width, strides, height, stream, context and threading features; they are kept apart, and nothing is predicted",
                            scenarios.len() - leaking
                        ),
                    );
                }
                _ => unreachable!("only an approximate or inseparable rule fits none"),
            };
            format!(
                "No rule of up to {MAX_LITERALS} conditions separates the leaking scenarios exactly; the closest, “{claim}”, gets {} of {} fitted wrong ({})",
                counter_examples.len(),
                r.measured,
                if r.held_out.total == 0 {
                    "none held out".to_owned()
                } else {
                    format!("{wrong} of {} held-out wrong", r.held_out.total)
                }
            )
        }
    };
    flagged(f, base)
}

/// `base`, behind a word that the function's scenarios changed class between processes, where
/// some did.
fn flagged(f: &FunctionRules, base: String) -> String {
    if f.flips.is_empty() {
        base
    } else {
        format!(
            "Not stable between processes: {} scenario(s) changed class from one process to another, kept out of the rule. {base}",
            f.flips.len()
        )
    }
}

/// A function's race rule in one sentence (the ordering rounds' class), as strong as its
/// standing allows: "if and only if" only where it fits every fitted scenario and predicts every
/// held-out one.
pub fn race_sentence(r: &nppbench_analysis::rules::Rule) -> String {
    hazard_sentence(r, Hazard::RACE)
}

/// A function's wrong-pixel rule in one sentence (its synchronised calls' output), as strong as
/// its standing allows.
pub fn wrong_sentence(r: &nppbench_analysis::rules::Rule) -> String {
    hazard_sentence(r, Hazard::WRONG)
}

/// The words of a hazard whose rule says yes or no of a scenario.
struct Hazard {
    /// "races": what a scenario of the class does.
    does: &'static str,
    /// "racing": the scenarios of the class.
    doing: &'static str,
}

impl Hazard {
    const RACE: Hazard = Hazard {
        does: "races",
        doing: "racing",
    };
    const WRONG: Hazard = Hazard {
        does: "computes wrong pixels",
        doing: "wrong",
    };
}

fn hazard_sentence(r: &nppbench_analysis::rules::Rule, h: Hazard) -> String {
    let held = held_out_text(&r.held_out);
    let conditions = |lits: Vec<&Literal>| one_of_and(&lits.into_iter().map(literal).collect::<Vec<_>>());
    let does = h.does;
    let mut capital = does.chars();
    let does_capital = capital
        .next()
        .map(|c| c.to_uppercase().chain(capital).collect::<String>())
        .unwrap_or_default();
    match (&r.kind, r.standing()) {
        (RuleKind::Never, _) => format!("Never {does}: none of {} fitted scenarios did ({held})", r.measured),
        (RuleKind::Always, _) => format!(
            "{does_capital} in every scenario: all {} fitted did ({held})",
            r.measured
        ),
        (RuleKind::Exactly { literals, .. }, Standing::Earned) => format!(
            "{does_capital} if and only if {} ({held})",
            conditions(literals.iter().map(|(l, _)| l).collect())
        ),
        (RuleKind::Exactly { literals, .. }, _) => format!(
            "Fits all {} scenarios measured: {does} when {} ({held})",
            r.measured,
            conditions(literals.iter().map(|(l, _)| l).collect())
        ),
        (
            RuleKind::Approximately {
                literals,
                counter_examples,
            },
            _,
        ) => format!(
            "Best rule found: {does} when {}, which gets {} of {} fitted wrong ({held})",
            conditions(literals.iter().collect()),
            counter_examples.len(),
            r.measured
        ),
        (RuleKind::Inseparable { .. }, _) => format!(
            "No condition nppbench measures tells the {} scenarios from the others",
            h.doing
        ),
    }
}

/// A function's leak rule in one sentence, as its page states it.
pub fn rule_sentence(f: &FunctionRules) -> String {
    rule_words(f).sentence
}

pub(crate) fn rule_words(f: &FunctionRules) -> RuleWords {
    let r = &f.leak;
    let support = format!(
        "{} fitted scenarios: {} leak, {} do not; {}",
        r.measured,
        r.leaking,
        r.measured - r.leaking,
        held_out_text(&r.held_out)
    );
    let mut counter_examples: Vec<String> = Vec::new();
    let mut equivalents: Vec<String> = Vec::new();
    let conditions = match &r.kind {
        RuleKind::Exactly { literals, alternatives } => {
            equivalents = literals
                .iter()
                .filter(|(_, same)| !same.is_empty())
                .map(|(l, same)| {
                    format!(
                        "“{}” is, on these scenarios, the same as: {}",
                        literal(l),
                        same.iter().map(literal).collect::<Vec<_>>().join("; ")
                    )
                })
                .collect();
            if *alternatives > 0 {
                equivalents.push(format!(
                    "{alternatives} other rule(s) of {} conditions fit these scenarios as well: a sweep with more contrast would tell them apart",
                    literals.len()
                ));
            }
            Some(one_of_and(
                &literals.iter().map(|(l, _)| literal(l)).collect::<Vec<_>>(),
            ))
        }
        RuleKind::Approximately {
            literals,
            counter_examples: fitted,
        } => {
            counter_examples.extend(fitted.iter().map(case_words));
            Some(one_of_and(&literals.iter().map(literal).collect::<Vec<_>>()))
        }
        RuleKind::Inseparable { scenarios } => {
            counter_examples.extend(scenarios.iter().map(case_words));
            None
        }
        RuleKind::Never | RuleKind::Always => None,
    };
    counter_examples.extend(r.held_out.wrong.iter().map(|c| format!("held out: {}", case_words(c))));
    counter_examples.extend(f.flips.iter().map(|flip| {
        let classes: Vec<&str> = flip.classes.iter().map(|c| c.as_str()).collect();
        format!(
            "{} measured {} times: {}",
            flip.id,
            flip.measurements,
            classes.join(", then ")
        )
    }));
    RuleWords {
        sentence: sentence(f, conditions.as_deref()),
        support,
        equivalents,
        counter_examples,
    }
}

#[cfg(test)]
mod tests {
    use nppbench_analysis::LeakClass;
    use nppbench_analysis::rules::{HeldOut, Rule};
    use nppbench_model::Primitive;

    use super::*;

    /// Generated: a function whose fitted scenarios no feature tells apart, one leaking.
    fn inseparable() -> FunctionRules {
        let rule = |class| Rule {
            primitive: Primitive::CONVERT_8U32F_C1R,
            class,
            kind: RuleKind::Inseparable {
                scenarios: vec![("a".into(), true), ("b".into(), false)],
            },
            measured: 2,
            leaking: 1,
            held_out: HeldOut::default(),
        };
        FunctionRules {
            primitive: Primitive::CONVERT_8U32F_C1R,
            leak: rule(LeakClass::Leak),
            bounded: rule(LeakClass::Bounded),
            flips: Vec::new(),
            race: None,
            wrong: None,
        }
    }

    #[test]
    fn scenarios_no_feature_separates_are_said_to_be_kept_apart() {
        let words = rule_words(&inseparable());
        assert_eq!(
            words.sentence,
            "No condition nppbench measures tells these scenarios apart: 1 leak and 1 do not, with the same width, strides, height, stream, context and threading features; they are kept apart, and nothing is predicted"
        );
        assert_eq!(words.counter_examples, ["a (leaks)", "b (does not leak)"]);
    }
}
