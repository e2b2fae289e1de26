//! The generated rows: each `nppi…_Ctx` function's parameters with roles, formats, whether a
//! hand-written catalogue row overrides it, and whether a call can be synthesised (every reason
//! why not). Written to `functions.jsonl.gz` and counted in `summary.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::files::{FUNCTIONS, Prototypes, SUMMARY, write_gz};
use crate::name::{Formats, formats};
use crate::roles::{Assigned, Role, Types, assign};
use crate::sizer::Sizers;
use crate::{HeaderError, prototype};

/// One function's generated row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionRow {
    pub symbol: String,
    /// The library exporting it (`nppial`); `None` where none does.
    pub library: Option<String>,
    pub formats: Formats,
    pub params: Vec<Assigned>,
    /// Whether a hand-written row of `nppbench-catalog` (its CPU reference, its tolerance)
    /// overrides this one.
    #[serde(rename = "override")]
    pub overridden: bool,
    pub synthesisable: bool,
    /// Every reason a call cannot be synthesised; empty when it can.
    pub reasons: Vec<String>,
}

/// Every function's row, in the prototypes' order (by symbol).
pub fn rows(prototypes: &Prototypes) -> Result<Vec<FunctionRow>, HeaderError> {
    let types: Types = prototypes
        .types
        .iter()
        .map(|(kind, name)| (name.clone(), *kind))
        .collect();
    let sizers = Sizers::new(prototypes.functions.iter().map(|(s, _, _)| s.as_str()));
    let hand_written: BTreeSet<String> = nppbench_catalog::rows().iter().map(|r| r.symbol()).collect();
    prototypes
        .functions
        .iter()
        .filter(|(symbol, _, _)| symbol.ends_with("_Ctx"))
        .map(|(symbol, library, line)| {
            let parsed = prototype::parse(line)?;
            let mut params = assign(&parsed, &types);
            for p in params.iter_mut().filter(|p| p.role == Role::ScratchBuffer) {
                p.with = sizers.find(symbol, &p.param.name);
            }
            let formats = formats(symbol);
            let reasons = reasons(library.is_some(), &formats, &params);
            Ok(FunctionRow {
                symbol: symbol.clone(),
                library: library.clone(),
                formats,
                params,
                overridden: hand_written.contains(symbol),
                synthesisable: reasons.is_empty(),
                reasons,
            })
        })
        .collect()
}

fn reasons(exported: bool, formats: &Formats, params: &[Assigned]) -> Vec<String> {
    let mut reasons = Vec::new();
    if !exported {
        reasons.push("not exported: no library of this version exports it".to_owned());
    }
    if formats.samples.is_empty() {
        reasons.push("no sample type: the name gives none (8u, 16s, 32f …)".to_owned());
    }
    let images = params.iter().any(|p| p.role.is_image());
    if !images {
        reasons.push(
            "no image: it reads and writes no image with a step (a buffer-size query, a batch of descriptors, a host-side helper)"
                .to_owned(),
        );
    }
    for p in params {
        let name = &p.param.name;
        let c = &p.param.c;
        match (p.role, &p.with) {
            (Role::Unknown, _) => reasons.push(format!("role unknown: {c}")),
            (Role::ScratchBuffer, None) => {
                reasons.push(format!("buffer unsized: no …GetBufferSize… function sizes {name}"))
            }
            (Role::DeviceArray, None) => {
                reasons.push(format!("array unsized: no parameter gives the length of {name}"))
            }
            (role, _) if (role.is_image() || role == Role::Mask) && p.param.base == "void" => {
                reasons.push(format!("untyped image: {c} (the sample type is a run-time enum)"))
            }
            _ => {}
        }
    }
    reasons
}

/// The counts `summary.json` holds.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub version: String,
    pub functions: usize,
    pub synthesisable: usize,
    pub overridden: usize,
    pub not_exported: usize,
    /// Functions not synthesisable for each kind of reason (the text before `:`).
    pub reasons: BTreeMap<String, usize>,
    /// How many parameters have each role, over every function.
    pub roles: BTreeMap<String, usize>,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} functions, {} synthesisable, {} overridden by hand-written rows, {} exported by no library",
            self.functions, self.synthesisable, self.overridden, self.not_exported
        )
    }
}

pub fn summary(version: &str, rows: &[FunctionRow]) -> Summary {
    let mut reasons = BTreeMap::new();
    let mut roles = BTreeMap::new();
    for row in rows {
        let kinds: BTreeSet<&str> = row.reasons.iter().map(|r| r.split(':').next().unwrap_or(r)).collect();
        for kind in kinds {
            *reasons.entry(kind.to_owned()).or_insert(0) += 1;
        }
        for p in &row.params {
            let role = serde_json::to_value(p.role).expect("a role serialises");
            *roles.entry(role.as_str().unwrap_or_default().to_owned()).or_insert(0) += 1;
        }
    }
    Summary {
        version: version.to_owned(),
        functions: rows.len(),
        synthesisable: rows.iter().filter(|r| r.synthesisable).count(),
        overridden: rows.iter().filter(|r| r.overridden).count(),
        not_exported: rows.iter().filter(|r| r.library.is_none()).count(),
        reasons,
        roles,
    }
}

/// The text of `functions.jsonl.gz` and of `summary.json`, from the prototypes.
pub fn texts(prototypes: &Prototypes) -> Result<(String, String), HeaderError> {
    Ok(texts_of(&prototypes.version, &rows(prototypes)?))
}

fn texts_of(version: &str, rows: &[FunctionRow]) -> (String, String) {
    let mut functions = String::new();
    for row in rows {
        functions.push_str(&serde_json::to_string(row).expect("a row serialises"));
        functions.push('\n');
    }
    let mut summary_text = serde_json::to_string_pretty(&summary(version, rows)).expect("a summary serialises");
    summary_text.push('\n');
    (functions, summary_text)
}

/// Writes `dir`'s rows and summary from `prototypes`; returns the summary.
pub fn write(dir: &Path, prototypes: &Prototypes) -> Result<Summary, HeaderError> {
    let rows = rows(prototypes)?;
    let (functions, summary_text) = texts_of(&prototypes.version, &rows);
    write_gz(&dir.join(FUNCTIONS), &functions)?;
    let path = dir.join(SUMMARY);
    std::fs::write(&path, summary_text).map_err(|e| HeaderError::Io(path, e))?;
    Ok(summary(&prototypes.version, &rows))
}

#[cfg(test)]
mod tests;
