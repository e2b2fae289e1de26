//! The page of every function a version's headers declare (`nppbench report --catalogue`): the
//! verdict in words first (what is flagged: hazards measured, leads from the calls), the counts
//! by state, a bar per library, each family's counts, then one filterable table of every
//! function, the flagged first and each family together.

use std::collections::BTreeMap;

use nppbench_analysis::catalogue::{Catalogue, Hazard, State, StateKind};
use serde::Serialize;

use super::format::{counted, fmt};
use super::prose::{race_sentence, rule_sentence, wrong_sentence};
use crate::charts::catalogue_libraries::{self, Bar};

/// The page's model: every number formatted.
#[derive(Debug, Serialize)]
pub struct CataloguePage {
    pub title: String,
    pub generated_by: String,
    /// HAZARDS, LEADS or NOTHING FLAGGED.
    pub status: &'static str,
    pub status_class: &'static str,
    pub verdict: String,
    pub notices: Vec<String>,
    /// Where the page's facts come from, in words.
    pub sources: String,
    pub counts: Vec<CountRow>,
    pub libraries_svg: String,
    /// The states' names, the families table's columns.
    pub states: Vec<&'static str>,
    pub families: Vec<GroupRow>,
    pub functions: Vec<FunctionLine>,
}

#[derive(Debug, Serialize)]
pub struct CountRow {
    pub state: &'static str,
    pub functions: String,
    pub meaning: &'static str,
}

/// A family's (or library's) functions in each state, in [`StateKind::ALL`]'s order ("" for none).
#[derive(Debug, Serialize)]
pub struct GroupRow {
    pub name: String,
    pub functions: usize,
    pub flagged: bool,
    pub counts: Vec<String>,
}

/// One function's row, in the table and in functions.csv.
#[derive(Debug, Serialize)]
pub struct FunctionLine {
    pub symbol: String,
    pub library: String,
    pub family: String,
    pub state: &'static str,
    pub flagged: bool,
    /// Its hazards, its leads, why it was not run or cannot be synthesised.
    pub detail: String,
    /// A measured function's rules, in sentences.
    pub rules: String,
    /// GB/s of its design's throughput point at 1080p, one decimal; blank without one.
    pub gbps_1080p: String,
}

fn meaning(kind: StateKind) -> &'static str {
    match kind {
        StateKind::Measured => "scenarios of it measured on a GPU: its leak, race and wrong-pixel classes and rules",
        StateKind::Lead => "its calls from roles found what only a measurement can confirm",
        StateKind::Called => "called from its roles at aligned and unaligned steps: nothing found",
        StateKind::NotRun => "called, but NPP refused the call or it failed",
        StateKind::NotCalled => "a call can be synthesised, but none was made",
        StateKind::NotSynthesisable => "no call can be synthesised from its prototype (the reasons are given)",
    }
}

fn hazard_words(hazards: &[Hazard]) -> String {
    if hazards.is_empty() {
        return "no hazard in its measured scenarios".to_owned();
    }
    hazards
        .iter()
        .map(|h| match h {
            Hazard::Leak => "leaks",
            Hazard::Race => "races",
            Hazard::Wrong => "computes wrong pixels",
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn line(f: &nppbench_analysis::catalogue::Function) -> FunctionLine {
    let (detail, rules) = match &f.state {
        State::Measured { hazards, rules } => {
            let mut sentences = vec![rule_sentence(rules)];
            sentences.extend(rules.race.as_ref().map(race_sentence));
            sentences.extend(rules.wrong.as_ref().map(wrong_sentence));
            (hazard_words(hazards), sentences.join(". "))
        }
        other => {
            let words = other.words().unwrap_or_default();
            let detail = match &f.other_version {
                Some((version, hazards)) => {
                    let sep = if words.is_empty() { "" } else { "; " };
                    format!("{words}{sep}NPP {version}'s design: {}", hazard_words(hazards))
                }
                None => words,
            };
            (detail, String::new())
        }
    };
    FunctionLine {
        symbol: f.symbol.clone(),
        library: f.library.clone().unwrap_or_else(|| "exported by no library".to_owned()),
        family: f.family.clone(),
        state: f.state.kind().as_str(),
        flagged: f.state.flagged(),
        detail,
        rules,
        gbps_1080p: match &f.throughput_1080p {
            Some(Ok(v)) => fmt(*v, 1),
            Some(Err(why)) => format!("failed: {why}"),
            None => String::new(),
        },
    }
}

fn group_row(name: String, counts: &BTreeMap<StateKind, usize>, flagged: bool) -> GroupRow {
    GroupRow {
        name,
        functions: counts.values().sum(),
        flagged,
        counts: StateKind::ALL
            .iter()
            .map(|k| counts.get(k).map_or_else(String::new, usize::to_string))
            .collect(),
    }
}

/// What the page says first: calls or knowledge missing, calls of another build or version.
fn notices(c: &Catalogue, calls_given: bool) -> Vec<String> {
    let mut notices = Vec::new();
    if !calls_given {
        notices.push("No call lines were given (--calls): every function that can be synthesised and was not measured is \"not called\". `nppbench call-catalogue` on a GPU writes them.".to_owned());
    }
    if c.knowledge.is_none() {
        notices.push(format!(
            "No knowledge of NPP {} was given or built in: no function is \"measured\".",
            c.version
        ));
    }
    if !c.other_builds.is_empty() {
        notices.push(format!(
            "Some call lines were made with NPP {}, not with NPP {}, whose headers judge them here: give the calls of this version.",
            c.other_builds.join(", "),
            c.version
        ));
    }
    let mut others: BTreeMap<&str, usize> = BTreeMap::new();
    for (version, _) in c.functions.iter().filter_map(|f| f.other_version.as_ref()) {
        *others.entry(version).or_default() += 1;
    }
    for (version, n) in others {
        notices.push(format!(
            "{n} functions that no design of NPP {} called show what NPP {version}'s design measured, as `nppbench predict` answers them; they keep their state here, since only a measurement of this version counts.",
            c.version
        ));
    }
    if c.foreign_calls > 0 {
        notices.push(format!(
            "{} of the call lines are of functions these headers do not declare: were they made with another NPP version's catalogue?",
            c.foreign_calls
        ));
    }
    notices
}

/// The page's model for `c`; `calls_given` says whether any call lines were given.
pub fn catalogue_page(c: &Catalogue, calls_given: bool) -> Result<CataloguePage, String> {
    let counts = c.counts();
    let n = |k: StateKind| counts.get(&k).copied().unwrap_or(0);
    let hazardous = c
        .functions
        .iter()
        .filter(|f| matches!(&f.state, State::Measured { hazards, .. } if !hazards.is_empty()))
        .count();
    let (status, status_class) = match (hazardous, n(StateKind::Lead)) {
        (0, 0) => ("NOTHING FLAGGED", "pass"),
        (0, _) => ("LEADS", "changed"),
        _ => ("HAZARDS", "fail"),
    };
    let verdict = format!(
        "{} of the {} image functions NPP {}'s headers declare are flagged: {} measured with a hazard, {} from their calls. {} measured in all, {} called with nothing found, {} not run, {} not yet called, {} not synthesisable.",
        c.flagged(),
        c.functions.len(),
        c.version,
        counted(hazardous, "function", "functions"),
        counted(n(StateKind::Lead), "lead", "leads"),
        n(StateKind::Measured),
        n(StateKind::Called),
        n(StateKind::NotRun),
        n(StateKind::NotCalled),
        n(StateKind::NotSynthesisable),
    );
    let notices = notices(c, calls_given);
    let made_on = if c.made_on.is_empty() {
        String::new()
    } else {
        let each: Vec<String> = c.made_on.iter().map(|(on, n)| format!("{n} on {on}")).collect();
        format!(" ({})", each.join(", "))
    };
    let sources = format!(
        "The headers of NPP {}; {}{made_on}{}.",
        c.version,
        counted(c.calls, "call line", "call lines"),
        c.knowledge
            .as_ref()
            .map_or_else(String::new, |k| format!("; the knowledge {k}"))
    );
    let bars: Vec<Bar> = c
        .by_library()
        .into_iter()
        .map(|(library, counts)| Bar {
            library,
            counts: StateKind::ALL
                .iter()
                .map(|k| (*k, counts.get(k).copied().unwrap_or(0)))
                .collect(),
        })
        .collect();
    let libraries_svg =
        catalogue_libraries::render(&format!("NPP {}: functions by library and state", c.version), &bars)?;
    let flagged: std::collections::BTreeSet<&str> = c
        .functions
        .iter()
        .filter(|f| f.state.flagged())
        .map(|f| f.family.as_str())
        .collect();
    let mut families: Vec<GroupRow> = c
        .by_family()
        .into_iter()
        .map(|(name, k)| {
            let is_flagged = flagged.contains(name.as_str());
            group_row(name, &k, is_flagged)
        })
        .collect();
    families.sort_by_key(|f| !f.flagged);
    Ok(CataloguePage {
        title: format!("nppbench: every image function of NPP {}", c.version),
        generated_by: super::format::rendered_by(),
        status,
        status_class,
        verdict,
        notices,
        sources,
        counts: StateKind::ALL
            .iter()
            .map(|k| CountRow {
                state: k.as_str(),
                functions: n(*k).to_string(),
                meaning: meaning(*k),
            })
            .collect(),
        libraries_svg,
        states: StateKind::ALL.iter().map(|k| k.as_str()).collect(),
        families,
        functions: c.functions.iter().map(line).collect(),
    })
}
