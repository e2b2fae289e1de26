//! Every run of one NPP version is evidence: the measured memory scenarios of all the runs given
//! (of one NPP version and GPU model), pooled, with the scenarios whose class differed between
//! the processes that measured them set apart, and each function's rules derived from the pool.

use std::collections::BTreeMap;

use nppbench_model::Primitive;
use nppbench_stats::LeakClass;

use crate::RunAnalysis;
use crate::rules::{self, Case, Feature, Rule, RuleKind};

/// A run's rules, from its scenarios alone. They live here, beside the pool they are drawn from,
/// so that `run` need not know `evidence` (which reads runs).
impl RunAnalysis<'_> {
    /// Each primitive's rules from this run's scenarios alone (see [`pool`] for the rules of
    /// several runs pooled).
    pub fn function_rules(&self) -> Vec<FunctionRules> {
        pool(&[self]).rules()
    }

    /// The leak rule of each primitive, from this run's scenarios alone.
    pub fn rules(&self) -> Vec<Rule> {
        self.function_rules().into_iter().map(|f| f.leak).collect()
    }
}

/// A scenario measured in several processes that did not agree on its class.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Flip {
    pub id: String,
    pub primitive: Primitive,
    /// Each class it was measured in, once each, in first-seen order.
    pub classes: Vec<LeakClass>,
    /// The processes (measurements) that saw it.
    pub measurements: usize,
}

/// A function's rules from the pooled evidence.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FunctionRules {
    pub primitive: Primitive,
    /// Leaks, or not.
    pub leak: Rule,
    /// Among the scenarios that do not leak: bounded growth, or flat.
    pub bounded: Rule,
    /// Scenarios whose class is not stable between processes: kept out of the fit, and the
    /// function kept out of "if and only if".
    pub flips: Vec<Flip>,
    /// Races (the ordering rounds found wrong pixels), or not, derived alike from the scenarios
    /// whose race was measured; `None` where none was.
    pub race: Option<Rule>,
    /// Computes wrong pixels (or faults) with every call synchronised, or not, derived alike from
    /// the scenarios whose output was judged ([`Evidence::outputs`]); `None` where none was.
    pub wrong: Option<Rule>,
}

impl FunctionRules {
    /// The class the rules give a scenario of this function.
    pub fn predict(&self, c: &Case) -> LeakClass {
        if self.leak.predicts(c) {
            LeakClass::Leak
        } else if self.bounded.predicts(c) {
            LeakClass::Bounded
        } else {
            LeakClass::Flat
        }
    }

    /// Whether the race rule says a scenario races; `None` where no race was measured.
    pub fn predict_race(&self, c: &Case) -> Option<bool> {
        self.race.as_ref().map(|r| r.predicts(c))
    }

    pub fn predict_wrong(&self, c: &Case) -> Option<bool> {
        self.wrong.as_ref().map(|r| r.predicts(c))
    }

    /// Whether "leaks if and only if" is earned: the leak rule fits and predicts every held-out
    /// scenario, and no scenario of the function flips between processes.
    pub fn earned(&self) -> bool {
        self.leak.earned() && self.flips.is_empty()
    }
}

/// The pooled scenarios of some runs.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Evidence {
    /// One case per scenario id whose class every measurement agreed on.
    pub cases: Vec<Case>,
    /// Scenarios measured whose calls could not tell their class ([`conclusive`]).
    pub inconclusive: usize,
    pub flips: Vec<Flip>,
    /// One case per scenario id whose output every measurement judged alike (`wrong` set; its
    /// `class` the leak class where one was measured, else `Undecided`: an older run's wrong
    /// output ended the scenario before its memory was measured).
    pub outputs: Vec<Case>,
    /// Scenario ids whose output was wrong in one measurement and right in another.
    pub output_flips: Vec<String>,
    /// Measurements pooled (a scenario measured in two runs counts twice).
    pub measurements: usize,
    pub runs: usize,
}

/// Whether a scenario's calls can tell its class: a pool of n threads behaves as new threads for
/// its first n calls, so only more than 2n calls tell bounded growth from a leak. A scenario that
/// made fewer (a pool larger than the early stop's calls) is left out of the evidence.
pub fn conclusive(m: &crate::MemoryAnalysis<'_>) -> bool {
    match m.record.scenario.threading.thread_bound() {
        // Flat before then: quiet once each thread had called (`memory::analyse_memory`).
        Some(n) if n > 1 => m.calls > 2 * n || m.class == Some(crate::LeakClass::Flat),
        _ => true,
    }
}

/// Each measured memory scenario of a run as a case: failed ones, with no class, and those
/// whose calls cannot tell their class ([`conclusive`]) left out.
pub fn cases_of(a: &RunAnalysis<'_>) -> Vec<Case> {
    a.memory
        .iter()
        .filter(|m| conclusive(m))
        .filter_map(|m| Some(case_of(m, m.class?)))
        .collect()
}

/// Each memory scenario of a run whose output was judged right or wrong, as a case.
pub fn output_cases_of(a: &RunAnalysis<'_>) -> Vec<Case> {
    a.memory
        .iter()
        .filter(|m| m.output.wrong().is_some())
        .map(|m| case_of(m, m.class.filter(|_| conclusive(m)).unwrap_or(LeakClass::Undecided)))
        .collect()
}

fn case_of(m: &crate::MemoryAnalysis<'_>, class: LeakClass) -> Case {
    let s = &m.record.scenario;
    Case {
        id: s.id.clone(),
        primitive: s.primitive,
        geometry: s.geometry,
        stream: s.stream,
        context: s.context,
        threading: s.threading,
        declared_non_blocking: m
            .record
            .result
            .as_ref()
            .and_then(|r| r.context)
            .map(|c| c.declared_flags & 1 == 1),
        class,
        race: m.race.races(),
        wrong: m.output.wrong(),
        held_out: s.held_out,
    }
}

/// The scenarios of `runs` pooled: a scenario measured in several runs (or twice in one) is one
/// case where every measurement agreed, and a [`Flip`] where they did not.
pub fn pool(runs: &[&RunAnalysis<'_>]) -> Evidence {
    let inconclusive = runs
        .iter()
        .map(|a| a.memory.iter().filter(|m| m.class.is_some() && !conclusive(m)).count())
        .sum();
    let measured: Vec<Case> = runs.iter().flat_map(|a| cases_of(a)).collect();
    let measurements = measured.len();
    let mut cases = Vec::new();
    let mut flips = Vec::new();
    for seen in by_id(measured) {
        let mut classes: Vec<LeakClass> = Vec::new();
        for c in &seen {
            if !classes.contains(&c.class) {
                classes.push(c.class);
            }
        }
        if classes.len() == 1 {
            cases.push(agreed(seen));
        } else {
            flips.push(Flip {
                id: seen[0].id.clone(),
                primitive: seen[0].primitive,
                classes,
                measurements: seen.len(),
            });
        }
    }
    // The outputs likewise: one case where every measurement agreed on `wrong`, the id set
    // apart where they did not.
    let mut outputs = Vec::new();
    let mut output_flips = Vec::new();
    for seen in by_id(runs.iter().flat_map(|a| output_cases_of(a)).collect()) {
        if seen.iter().all(|c| c.wrong == seen[0].wrong) {
            outputs.push(agreed(seen));
        } else {
            output_flips.push(seen[0].id.clone());
        }
    }
    Evidence {
        cases,
        inconclusive,
        flips,
        outputs,
        output_flips,
        measurements,
        runs: runs.len(),
    }
}

/// `cases` grouped by scenario id, each group in the order its id was first seen.
fn by_id(cases: Vec<Case>) -> Vec<Vec<Case>> {
    let mut groups: BTreeMap<String, Vec<Case>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for c in cases {
        let seen = groups.entry(c.id.clone()).or_default();
        if seen.is_empty() {
            order.push(c.id.clone());
        }
        seen.push(c);
    }
    order
        .into_iter()
        .map(|id| groups.remove(&id).expect("every id in order was seen"))
        .collect()
}

/// One case for measurements that agreed: held out only where every run that measured it held
/// it out.
fn agreed(seen: Vec<Case>) -> Case {
    let held_out = seen.iter().all(|c| c.held_out);
    let mut case = seen.into_iter().next().expect("a scenario seen once at least");
    case.held_out = held_out;
    case
}

impl Evidence {
    /// Each function's rules, in catalogue order.
    pub fn rules(&self) -> Vec<FunctionRules> {
        let mut primitives: Vec<Primitive> = self.cases.iter().map(|c| c.primitive).collect();
        primitives.extend(self.outputs.iter().map(|c| c.primitive));
        primitives.extend(self.flips.iter().map(|f| f.primitive));
        primitives.sort();
        primitives.dedup();
        // The functions measured wrong (in any scenario, held out or not: which functions are
        // affected is a measurement; each rule is fitted on fitted scenarios alone).
        let mut wrong: Vec<Primitive> = self
            .outputs
            .iter()
            .filter(|c| c.wrong == Some(true))
            .map(|c| c.primitive)
            .collect();
        wrong.sort();
        wrong.dedup();
        primitives.into_iter().map(|p| self.rules_of(p, &wrong)).collect()
    }

    /// `p`'s rules; `measured_wrong` the functions measured computing wrong pixels, sorted.
    fn rules_of(&self, p: Primitive, measured_wrong: &[Primitive]) -> FunctionRules {
        let cases: Vec<Case> = self.cases.iter().filter(|c| c.primitive == p).cloned().collect();
        let not_leaking: Vec<Case> = cases.iter().filter(|c| !c.leaks()).cloned().collect();
        let leak = rules::discover(p, &cases, LeakClass::Leak);
        let derived = match &leak.kind {
            RuleKind::Exactly { literals, .. } => {
                vec![Feature::LeaksWithNewThreads(
                    literals.iter().map(|(l, _)| l.clone()).collect(),
                )]
            }
            _ => Vec::new(),
        };
        // The race as a class of its own: racing scenarios are the rule's class.
        let racing: Vec<Case> = cases
            .iter()
            .filter_map(|c| {
                let races = c.race?;
                Some(Case {
                    class: if races { LeakClass::Leak } else { LeakClass::Flat },
                    ..c.clone()
                })
            })
            .collect();
        // Wrong pixels likewise. A function measured wrong is fitted with the other functions of
        // its pixel-format family (the same source and destination formats and tolerance)
        // measured wrong too: one function alone rarely has the wrong scenarios to fit a rule
        // on. A function never wrong is fitted on its own: its family holds functions NPP
        // computes right where others of it are wrong (Transpose and Mirror beside Copy). Where
        // a row starts is tried too.
        // A function known from its headers alone has no row to tell its family by, and its
        // design holds its own wrong scenarios: it is fitted alone.
        let ever_wrong = |q: Primitive| measured_wrong.binary_search(&q).is_ok();
        let family = |q: Primitive| {
            let (a, b) = (q.row(), p.row());
            a.src == b.src && a.dst == b.dst && a.sources == b.sources && a.tolerance == b.tolerance
        };
        let p_wrong = ever_wrong(p) && !p.is_generated();
        let pooled = |q: Primitive| q == p || (p_wrong && !q.is_generated() && family(q) && ever_wrong(q));
        let wrong: Vec<Case> = self
            .outputs
            .iter()
            .filter(|c| pooled(c.primitive))
            .filter_map(|c| {
                let wrong = c.wrong?;
                Some(Case {
                    class: if wrong { LeakClass::Leak } else { LeakClass::Flat },
                    ..c.clone()
                })
            })
            .collect();
        FunctionRules {
            primitive: p,
            bounded: rules::discover_with(p, &not_leaking, LeakClass::Bounded, &derived),
            leak,
            flips: self.flips.iter().filter(|f| f.primitive == p).cloned().collect(),
            race: (!racing.is_empty()).then(|| rules::discover(p, &racing, LeakClass::Leak)),
            wrong: (!wrong.is_empty() && wrong.iter().any(|c| c.primitive == p))
                .then(|| rules::discover_with(p, &wrong, LeakClass::Leak, &rules::row_start_features())),
        }
    }
}

/// The runs given, grouped by NPP version and GPU model (each group one body of evidence), in
/// first-seen order: (version, GPU model, indices into `runs`).
pub fn groups(runs: &[RunAnalysis<'_>]) -> Vec<(String, String, Vec<usize>)> {
    let mut out: Vec<(String, String, Vec<usize>)> = Vec::new();
    for (i, a) in runs.iter().enumerate() {
        let key = (a.npp_version(), a.run.environment.gpu.name.clone());
        match out.iter_mut().find(|(v, g, _)| (v, g) == (&key.0, &key.1)) {
            Some((_, _, members)) => members.push(i),
            None => out.push((key.0, key.1, vec![i])),
        }
    }
    out
}

/// A scenario measured in two runs in different classes (or, `Difference<bool>`, racing in one
/// and not the other): what shows that their rules differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference<T = LeakClass> {
    pub primitive: Primitive,
    pub id: String,
    pub base: T,
    pub candidate: T,
}

/// Each function's first scenario measured in both runs whose class differs, by function.
pub fn differences(base: &RunAnalysis<'_>, candidate: &RunAnalysis<'_>) -> Vec<Difference> {
    first_differences(base, candidate, |c| Some(c.class))
}

/// Each function's first scenario whose race both runs measured and that races in one only.
pub fn race_differences(base: &RunAnalysis<'_>, candidate: &RunAnalysis<'_>) -> Vec<Difference<bool>> {
    first_differences(base, candidate, |c| c.race)
}

/// Each function's first scenario of `base` whose `of` both runs have and that differs in
/// `candidate`.
fn first_differences<T: Copy + PartialEq>(
    base: &RunAnalysis<'_>,
    candidate: &RunAnalysis<'_>,
    of: impl Fn(&Case) -> Option<T>,
) -> Vec<Difference<T>> {
    let theirs = cases_of(candidate);
    let mut out: Vec<Difference<T>> = Vec::new();
    for b in cases_of(base) {
        let Some(mine) = of(&b) else {
            continue;
        };
        if out.iter().any(|d| d.primitive == b.primitive) {
            continue;
        }
        if let Some(other) = theirs
            .iter()
            .filter(|c| c.id == b.id)
            .find_map(|c| of(c).filter(|x| *x != mine))
        {
            out.push(Difference {
                primitive: b.primitive,
                id: b.id.clone(),
                base: mine,
                candidate: other,
            });
        }
    }
    out
}
