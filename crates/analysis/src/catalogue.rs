//! Every function a version's headers declare, each in one state (issue #45): measured by that
//! version's knowledge (the hazards its scenarios showed, and its rules); a lead, where its calls
//! from roles (`nppbench call-catalogue`) found what only a measurement can confirm; called, with
//! nothing found; not run (NPP refused the call, or it failed, and how); not yet called; or not
//! synthesisable, with every reason. This crate reads no header: the CLI makes the [`Entry`]s
//! from `nppbench_headers`' rows.

use std::collections::BTreeMap;

use nppbench_model::Primitive;
use serde::Serialize;

use crate::calls::{CallLine, Lead, Outcome, Unaligned};
use crate::evidence::{Evidence, FunctionRules};
use crate::knowledge::{Knowledge, short_version};

/// A function the headers declare, as its catalogue row gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub symbol: String,
    /// The library that exports it; `None` where none does.
    pub library: Option<String>,
    /// Every reason a call cannot be synthesised; empty where one can.
    pub reasons: Vec<String>,
}

impl Entry {
    pub fn new(symbol: &str, library: Option<&str>, reasons: &[String]) -> Entry {
        Entry {
            symbol: symbol.to_owned(),
            library: library.map(str::to_owned),
            reasons: reasons.to_vec(),
        }
    }
}

/// A hazard some measured scenario of a function showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hazard {
    Leak,
    Race,
    Wrong,
}

/// A function's state, one of six.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    /// Measured by the knowledge: the hazards its scenarios showed (none: it showed none), and
    /// its rules.
    Measured {
        hazards: Vec<Hazard>,
        rules: Box<FunctionRules>,
    },
    Lead(Vec<Lead>),
    /// Called from its roles, and nothing found; what the leak and race oracles did not judge,
    /// and why, where they did not ([`CallLine::oracles_missing`]).
    Called(Option<String>),
    /// Its call could not be made or NPP refused it: how.
    NotRun(String),
    /// A call can be synthesised, but none of the calls given is of it.
    NotCalled,
    /// Every reason no call can be synthesised.
    NotSynthesisable(Vec<String>),
}

impl State {
    /// The state in words, as the page of every function and `predict` say it; `None` for a
    /// measured function, whose rules say more.
    pub fn words(&self) -> Option<String> {
        Some(match self {
            State::Measured { .. } => return None,
            State::Lead(leads) => leads.iter().map(Lead::words).collect::<Vec<_>>().join("; "),
            State::Called(None) => "nothing found".to_owned(),
            State::Called(Some(why)) => {
                format!("nothing found; the leak and race oracles did not judge it ({why})")
            }
            State::NotRun(how) => how.clone(),
            State::NotCalled => "not among the calls given".to_owned(),
            State::NotSynthesisable(reasons) => reasons.join("; "),
        })
    }
}

/// The six states by name, in the order pages count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StateKind {
    Measured,
    Lead,
    Called,
    NotRun,
    NotCalled,
    NotSynthesisable,
}

impl StateKind {
    pub const ALL: [StateKind; 6] = [
        StateKind::Measured,
        StateKind::Lead,
        StateKind::Called,
        StateKind::NotRun,
        StateKind::NotCalled,
        StateKind::NotSynthesisable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StateKind::Measured => "measured",
            StateKind::Lead => "lead",
            StateKind::Called => "called",
            StateKind::NotRun => "not run",
            StateKind::NotCalled => "not called",
            StateKind::NotSynthesisable => "not synthesisable",
        }
    }
}

impl State {
    pub fn kind(&self) -> StateKind {
        match self {
            State::Measured { .. } => StateKind::Measured,
            State::Lead(_) => StateKind::Lead,
            State::Called(_) => StateKind::Called,
            State::NotRun(_) => StateKind::NotRun,
            State::NotCalled => StateKind::NotCalled,
            State::NotSynthesisable(_) => StateKind::NotSynthesisable,
        }
    }

    /// Whether a reader should look first: a measured hazard, or a lead.
    pub fn flagged(&self) -> bool {
        match self {
            State::Measured { hazards, .. } => !hazards.is_empty(),
            State::Lead(_) => true,
            _ => false,
        }
    }
}

/// One function and its state.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub symbol: String,
    pub library: Option<String>,
    /// The name's stem (`Add` of `nppiAdd_8u_C1RSfs_Ctx`): the functions of one operation.
    pub family: String,
    pub state: State,
    /// GB/s of its design's throughput point at 1080p ([`crate::calls::design::Throughput`]),
    /// whatever its state comes from, or why the point failed; `None` without one.
    pub throughput_1080p: Option<Result<f64, String>>,
    /// For a function this version did not measure: the version of another design that did, and
    /// the hazards its shapes showed ([`Catalogue::with_other_version`]); `None` otherwise.
    pub other_version: Option<(String, Vec<Hazard>)>,
}

/// Every function of a version's headers, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalogue {
    /// The headers' NPP version (`13.0.1.2`).
    pub version: String,
    /// Flagged first, then by family and symbol.
    pub functions: Vec<Function>,
    /// The knowledge's name (`npp-13.0.1-sm90`), where one was given.
    pub knowledge: Option<String>,
    /// Call lines given, and those of symbols the headers do not declare (another version's).
    pub calls: usize,
    pub foreign_calls: usize,
    /// The cards and NPP builds the calls were made with, where their lines record them
    /// ([`crate::calls::made_on`]).
    pub made_on: Vec<(String, usize)>,
    /// The NPP builds of the calls' lines that are not the headers' version (calls of another
    /// version judged with these headers).
    pub other_builds: Vec<String>,
}

/// `Add` of `nppiAdd_8u_C1RSfs_Ctx`.
pub fn family(symbol: &str) -> &str {
    let bare = symbol.strip_prefix("nppi").unwrap_or(symbol);
    bare.split('_').next().unwrap_or(bare)
}

/// Each entry in its state, from the calls (the last line of a symbol counts, so that a later
/// run's lines replace an earlier's) and the knowledge of the same version.
pub fn judge(version: &str, entries: &[Entry], calls: &[CallLine], knowledge: Option<&Knowledge>) -> Catalogue {
    judge_designed(version, entries, calls, knowledge, &[])
}

/// [`judge`], with the design lines of the same version (`call-catalogue --design`): a function
/// no knowledge measured whose lines hold measured shapes is measured by them, with the hazards
/// its shapes showed and the rules fitted on them. A line of a name registered with other pixel
/// sizes is left out. Each function gets the GB/s of its lines' throughput point at 1080p (the
/// last, where several have one).
pub fn judge_designed(
    version: &str,
    entries: &[Entry],
    calls: &[CallLine],
    knowledge: Option<&Knowledge>,
    designs: &[crate::calls::design::ShapeLine],
) -> Catalogue {
    let lines_of = lines_by_symbol(designs);
    let designed: BTreeMap<&str, State> = lines_of
        .into_iter()
        .filter_map(|(symbol, lines)| {
            let evidence = crate::calls::design::evidence(&lines).ok()?;
            let rules = evidence.rules().into_iter().next()?;
            let hazards = hazards_of(&evidence, rules.primitive);
            Some((
                symbol,
                State::Measured {
                    hazards,
                    rules: Box::new(rules),
                },
            ))
        })
        .collect();
    let points = points_1080p(designs);
    let by_symbol: BTreeMap<&str, &CallLine> = calls.iter().map(|l| (l.symbol.as_str(), l)).collect();
    let declared: std::collections::BTreeSet<&str> = entries.iter().map(|e| e.symbol.as_str()).collect();
    let mut functions: Vec<Function> = entries
        .iter()
        .map(|e| Function {
            symbol: e.symbol.clone(),
            library: e.library.clone(),
            family: family(&e.symbol).to_owned(),
            state: match (
                state(e, by_symbol.get(e.symbol.as_str()).copied(), knowledge),
                designed.get(e.symbol.as_str()),
            ) {
                (State::Measured { hazards, rules }, _) => State::Measured { hazards, rules },
                (_, Some(d)) => d.clone(),
                (other, None) => other,
            },
            throughput_1080p: points.get(e.symbol.as_str()).cloned(),
            other_version: None,
        })
        .collect();
    functions
        .sort_by(|a, b| (!a.state.flagged(), &a.family, &a.symbol).cmp(&(!b.state.flagged(), &b.family, &b.symbol)));
    Catalogue {
        version: version.to_owned(),
        functions,
        knowledge: knowledge.map(Knowledge::name),
        calls: by_symbol.len(),
        foreign_calls: by_symbol.keys().filter(|s| !declared.contains(*s)).count(),
        made_on: crate::calls::made_on(by_symbol.values().copied()),
        other_builds: by_symbol
            .values()
            .filter_map(|l| l.npp_version.clone())
            // Lines record NPP's three parts (`13.0.1`), headers its build too (`13.0.1.2`).
            .filter(|v| short_version(v) != short_version(version))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect(),
    }
}

/// `designs` grouped by symbol, each group in the file's order.
fn lines_by_symbol(
    designs: &[crate::calls::design::ShapeLine],
) -> BTreeMap<&str, Vec<crate::calls::design::ShapeLine>> {
    let mut lines_of: BTreeMap<&str, Vec<crate::calls::design::ShapeLine>> = BTreeMap::new();
    for l in designs {
        lines_of.entry(l.symbol.as_str()).or_default().push(l.clone());
    }
    lines_of
}

/// Each symbol's GB/s at 1080p, or why its point failed, from the last of its design lines with
/// a point there or a failed one.
fn points_1080p(designs: &[crate::calls::design::ShapeLine]) -> BTreeMap<&str, Result<f64, String>> {
    designs
        .iter()
        .filter_map(|l| {
            let point = match (&l.throughput, &l.throughput_error) {
                (Some(t), _) if (t.width, t.height) == crate::calls::design::throughput::AT => Ok(t.gbps()?),
                (None, Some(why)) => Err(why.clone()),
                _ => return None,
            };
            Some((l.symbol.as_str(), point))
        })
        .collect()
}

fn state(e: &Entry, call: Option<&CallLine>, knowledge: Option<&Knowledge>) -> State {
    let measured = knowledge.and_then(|k| {
        let p = Primitive::from_name(&e.symbol)?;
        let rules = k.rules.iter().find(|r| r.primitive == p)?;
        Some(State::Measured {
            hazards: hazards_of(&k.evidence, p),
            rules: Box::new(rules.clone()),
        })
    });
    if let Some(m) = measured {
        return m;
    }
    if !e.reasons.is_empty() {
        return State::NotSynthesisable(e.reasons.clone());
    }
    match call {
        Some(line) => called(line),
        None => State::NotCalled,
    }
}

/// The state of a function that no knowledge measured, from its calls' `line`: not run (how),
/// a lead (what its calls found), or called with nothing found.
pub fn called(line: &CallLine) -> State {
    let mut leads = Vec::new();
    match line.outcome() {
        Outcome::NotPlanned(why) => return State::NotRun(format!("not planned: {why}")),
        Outcome::EndedProcess(how) => return State::NotRun(format!("ended its process: {how}")),
        Outcome::Failed(why) => return State::NotRun(format!("failed: {why}")),
        Outcome::Refused(status) => return State::NotRun(format!("refused: {status}")),
        Outcome::Ran(Unaligned::Faulted(e)) => leads.push(Lead::KilledContext(e)),
        Outcome::Ran(Unaligned::Differs(n)) => leads.push(Lead::OtherPixels(n)),
        Outcome::Ran(_) => {}
    }
    match line.destination_step() {
        Unaligned::Faulted(e) => leads.push(Lead::KilledContextAtDestination(e)),
        Unaligned::Differs(n) => leads.push(Lead::OtherPixelsAtDestination(n)),
        _ => {}
    }
    leads.extend(line.leads());
    if leads.is_empty() {
        State::Called(line.oracles_missing())
    } else {
        State::Lead(leads)
    }
}

/// The hazards `p`'s pooled scenarios showed.
fn hazards_of(evidence: &Evidence, p: Primitive) -> Vec<Hazard> {
    let of_p = || evidence.cases.iter().filter(move |c| c.primitive == p);
    let mut out = Vec::new();
    if of_p().any(|c| c.leaks()) {
        out.push(Hazard::Leak);
    }
    if of_p().any(|c| c.race == Some(true)) {
        out.push(Hazard::Race);
    }
    if evidence
        .outputs
        .iter()
        .chain(&evidence.cases)
        .any(|c| c.primitive == p && c.wrong == Some(true))
    {
        out.push(Hazard::Wrong);
    }
    out
}

impl Catalogue {
    /// Each function this version did not measure and that none given before named, with the
    /// hazards the design lines `designs` of NPP `version` (another version) showed, where they
    /// measured it. Its state and the counts are unchanged: only a measurement of this version
    /// makes a function measured.
    pub fn with_other_version(mut self, version: &str, designs: &[crate::calls::design::ShapeLine]) -> Catalogue {
        let lines_of = lines_by_symbol(designs);
        for f in &mut self.functions {
            if f.state.kind() == StateKind::Measured || f.other_version.is_some() {
                continue;
            }
            let Some(lines) = lines_of.get(f.symbol.as_str()) else {
                continue;
            };
            let Ok(evidence) = crate::calls::design::evidence(lines) else {
                continue;
            };
            let Some(p) = evidence.cases.first().map(|c| c.primitive) else {
                continue;
            };
            f.other_version = Some((version.to_owned(), hazards_of(&evidence, p)));
        }
        self
    }

    /// Functions in each state.
    pub fn counts(&self) -> BTreeMap<StateKind, usize> {
        let mut out = BTreeMap::new();
        for f in &self.functions {
            *out.entry(f.state.kind()).or_insert(0) += 1;
        }
        out
    }

    /// Functions in each state, per library (the functions no library exports under `none`), in
    /// name order.
    pub fn by_library(&self) -> Vec<(String, BTreeMap<StateKind, usize>)> {
        self.grouped(|f| f.library.clone().unwrap_or_else(|| "none".to_owned()))
    }

    /// Functions in each state, per family, in name order.
    pub fn by_family(&self) -> Vec<(String, BTreeMap<StateKind, usize>)> {
        self.grouped(|f| f.family.clone())
    }

    fn grouped(&self, key: impl Fn(&Function) -> String) -> Vec<(String, BTreeMap<StateKind, usize>)> {
        let mut out: BTreeMap<String, BTreeMap<StateKind, usize>> = BTreeMap::new();
        for f in &self.functions {
            *out.entry(key(f)).or_default().entry(f.state.kind()).or_insert(0) += 1;
        }
        out.into_iter().collect()
    }

    pub fn flagged(&self) -> usize {
        self.functions.iter().filter(|f| f.state.flagged()).count()
    }
}

#[cfg(test)]
mod tests;
