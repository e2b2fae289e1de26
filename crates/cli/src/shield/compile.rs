//! The atlas's rules compiled into the shield's plan: per NPP version and GPU model (the runs
//! pooled as `trace` and `predict` pool them), each function's leak, race and wrong-pixel rules
//! (`nppbench_analysis::evidence::FunctionRules`) as tests the interposer evaluates per call.
//!
//! A rule's literals on the threading model are dropped: a call cannot tell whether the program
//! will call from new threads, so a configuration counts as hazardous where its rule holds under
//! some threading model. A rule no measured feature fits (inseparable), a race never measured,
//! and a literal the interposer cannot evaluate make the hazard unknown: such calls are left
//! alone and counted.

use nppbench_analysis::evidence::FunctionRules;
use nppbench_analysis::knowledge::Knowledge;
use nppbench_analysis::rules::{Feature, LARGE_PIXELS, Literal, Rule, RuleKind};
use nppbench_model::{
    Condition, Hazard, HazardRule, SHIELD_SCHEMA_VERSION, ShieldFunction, ShieldKnowledge, ShieldPlan, ShieldTest,
};

/// A literal as a test; `Ok(None)` for a literal on the threading model (dropped), `Err` for one
/// the interposer cannot evaluate.
fn test(l: &Literal) -> Result<Option<ShieldTest>, String> {
    let condition = match &l.feature {
        Feature::SrcRowBytesMultiple(m) => Condition::SrcRowBytesMultiple(*m),
        Feature::DstRowBytesMultiple(m) => Condition::DstRowBytesMultiple(*m),
        Feature::WidthPixelsMultiple(m) => Condition::WidthMultiple(*m),
        Feature::SrcStrideMultiple(m) => Condition::SrcStepMultiple(*m),
        Feature::DstStrideMultiple(m) => Condition::DstStepMultiple(*m),
        Feature::SrcRowBytesAtLeast(k) => Condition::SrcRowBytesAtLeast(*k),
        Feature::DstRowBytesAtLeast(k) => Condition::DstRowBytesAtLeast(*k),
        Feature::WidthAtLeast(k) => Condition::WidthAtLeast(*k),
        Feature::HeightAtLeast(k) => Condition::HeightAtLeast(*k),
        Feature::LargeImage => Condition::PixelsAtLeast(LARGE_PIXELS),
        Feature::DeclaresNonBlocking => Condition::DeclaresNonBlocking,
        Feature::StreamIn(set) => Condition::StreamIn(set.clone()),
        Feature::ContextIn(set) => Condition::ContextIn(set.clone()),
        Feature::NewThreadPerCall | Feature::ThreadsAtLeast(_) => return Ok(None),
        Feature::LeaksWithNewThreads(_) => return Err("a condition derived from another rule".into()),
        Feature::SrcRowStartsIn(lo, hi) => Condition::SrcRowStartsIn(*lo, *hi),
    };
    Ok(Some(ShieldTest {
        condition,
        holds: l.holds,
    }))
}

/// A rule as the shield applies it.
pub(crate) fn hazard_rule(rule: &Rule) -> HazardRule {
    match &rule.kind {
        RuleKind::Never => HazardRule::Never,
        RuleKind::Always => HazardRule::Always,
        RuleKind::Inseparable { .. } => {
            HazardRule::Unknown("no feature nppbench measures tells the configurations apart".into())
        }
        RuleKind::Exactly { .. } | RuleKind::Approximately { .. } => {
            let tests: Result<Vec<Option<ShieldTest>>, String> = rule.conditions().into_iter().map(test).collect();
            match tests {
                Ok(t) => HazardRule::When(t.into_iter().flatten().collect()),
                Err(why) => HazardRule::Unknown(why),
            }
        }
    }
}

fn function(f: &FunctionRules) -> ShieldFunction {
    ShieldFunction {
        symbol: f.primitive.row().symbol(),
        src_bytes_per_pixel: f.primitive.src_bytes_per_pixel() as u32,
        dst_bytes_per_pixel: f.primitive.dst_bytes_per_pixel() as u32,
        leak: hazard_rule(&f.leak),
        race: f
            .race
            .as_ref()
            .map_or_else(|| HazardRule::Unknown("no race was measured".into()), hazard_rule),
        wrong: f.wrong.as_ref().map_or_else(
            || HazardRule::Unknown("no output of the function was judged".into()),
            hazard_rule,
        ),
    }
}

/// The plan for `hazards` from `knowledge` (the built-in knowledge, or that of the atlas runs
/// given: one per NPP version and GPU), in its order; a version with no function ruled on is left
/// out.
pub(crate) fn plan(knowledge: &[Knowledge], hazards: &[Hazard]) -> ShieldPlan {
    let knowledge = knowledge
        .iter()
        .filter_map(|k| {
            let functions: Vec<ShieldFunction> = k
                .rules
                .iter()
                .filter(|f| f.leak.measured + f.leak.held_out.total > 0)
                .map(function)
                .collect();
            (!functions.is_empty()).then(|| ShieldKnowledge {
                npp_version: k.npp_version.clone(),
                gpu: k.gpu_models.join(" and "),
                runs: k.sources.len(),
                functions,
            })
        })
        .collect();
    ShieldPlan {
        schema_version: SHIELD_SCHEMA_VERSION,
        hazards: hazards.to_vec(),
        knowledge,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nppbench_analysis::LeakClass;
    use nppbench_analysis::rules::HeldOut;
    use nppbench_model::{Primitive, StreamKind};

    fn rule(kind: RuleKind) -> Rule {
        Rule {
            primitive: Primitive::from_name("Convert_8u32f_C1R").unwrap(),
            class: LeakClass::Leak,
            kind,
            measured: 4,
            leaking: 2,
            held_out: HeldOut::default(),
        }
    }

    fn lit(feature: Feature, holds: bool) -> (Literal, Vec<Literal>) {
        (Literal { feature, holds }, Vec::new())
    }

    #[test]
    fn threading_literals_are_dropped_and_the_rest_kept_in_order() {
        let r = rule(RuleKind::Exactly {
            literals: vec![
                lit(Feature::StreamIn(vec![StreamKind::Blocking]), true),
                lit(Feature::NewThreadPerCall, true),
                lit(Feature::SrcStrideMultiple(64), false),
            ],
            alternatives: 0,
        });
        assert_eq!(
            hazard_rule(&r),
            HazardRule::When(vec![
                ShieldTest {
                    condition: Condition::StreamIn(vec![StreamKind::Blocking]),
                    holds: true
                },
                ShieldTest {
                    condition: Condition::SrcStepMultiple(64),
                    holds: false
                },
            ])
        );
    }

    #[test]
    fn an_inseparable_rule_or_a_derived_condition_is_unknown() {
        assert!(matches!(
            hazard_rule(&rule(RuleKind::Inseparable { scenarios: Vec::new() })),
            HazardRule::Unknown(_)
        ));
        let derived = rule(RuleKind::Approximately {
            literals: vec![Literal {
                feature: Feature::LeaksWithNewThreads(Vec::new()),
                holds: true,
            }],
            counter_examples: Vec::new(),
        });
        assert!(matches!(hazard_rule(&derived), HazardRule::Unknown(_)));
        assert_eq!(hazard_rule(&rule(RuleKind::Always)), HazardRule::Always);
    }
}
