//! `predict` for a function NPP's headers declare that no knowledge measured (issue #45): every
//! hazard answered `unknown`, saying whose headers declare it, which library exports it, and how
//! to measure it, so that a user who calls `nppiResize_8u_C3R_Ctx` learns that nppbench has not
//! measured it rather than that it does not exist.

use nppbench_analysis::predict::{Basis, Confidence, race_word, wrong_word};

use super::{PredictArgs, Row};
use crate::knowledge::Known;

/// A function of the built-in headers: its symbol, the version whose headers declare it, the
/// library exporting it there, and how many image functions those headers declare.
pub(super) struct Declared {
    pub(super) symbol: String,
    pub(super) version: String,
    pub(super) library: Option<String>,
    pub(super) functions: usize,
}

/// Every built-in version's headers that declare `name` (`Resize_8u_C3R`,
/// `nppiResize_8u_C3R_Ctx`), in version order; empty where none does (a typo).
pub(super) fn declared(name: &str) -> Vec<Declared> {
    crate::catalogue::built_in_all()
        .into_iter()
        .filter_map(|p| {
            let (symbol, library) = crate::catalogue::declared(&p, name)?;
            Some(Declared {
                symbol: symbol.to_owned(),
                version: p.version.clone(),
                library: library.map(str::to_owned),
                functions: p.functions.iter().filter(|(s, _, _)| s.ends_with("_Ctx")).count(),
            })
        })
        .collect()
}

/// The answer for `found` (non-empty), asked of `known` (the knowledge of one NPP version): what
/// its calls of the function found, where it holds them, else how to call it.
pub(super) fn row(args: &PredictArgs, found: &[Declared], known: &Known) -> Row {
    let (version, from, measured) = (&known.version, &known.from, known.rules.len());
    let short = crate::knowledge::short(version);
    let (d, of_version) = match found.iter().find(|d| crate::knowledge::short(&d.version) == short) {
        Some(d) => (d, true),
        None => (&found[0], false),
    };
    let library = d.library.as_deref().unwrap_or("no library");
    let headers = if of_version {
        format!(
            "{} is one of the {} image functions NPP {}'s headers declare (exported by {library})",
            d.symbol, d.functions, d.version
        )
    } else {
        format!(
            "{} is declared by NPP {}'s headers (exported by {library}); nppbench carries no headers of NPP {version}",
            d.symbol, d.version
        )
    };
    let called = known.calls.as_ref().and_then(|c| Some((c, c.line(&d.symbol)?)));
    let (reason, rule) = match called {
        Some((calls, line)) => {
            let state = nppbench_analysis::catalogue::called(line);
            let words = state.words().unwrap_or_default();
            let lead = if matches!(state, nppbench_analysis::catalogue::State::Lead(_)) {
                ": leads, which only measuring its scenarios confirms"
            } else {
                ""
            };
            let roi = match (line.width, line.height) {
                (Some(w), Some(h)) => format!(" at {w}×{h}"),
                _ => String::new(),
            };
            (
                format!(
                    "{headers}, but {from} measured {measured} functions and not this one; its call from its roles{roi} ({}): {words}{lead}",
                    calls.source
                ),
                format!("no scenario of this function was measured; its call{roi}: {words}"),
            )
        }
        None => (
            format!(
                "{headers}, but {from} measured {measured} functions and not this one: `nppbench call-catalogue --only {}` calls it on a GPU and says whether it is worth measuring",
                d.symbol
            ),
            "no scenario of this function was measured".to_owned(),
        ),
    };
    let name = d.symbol.trim_start_matches("nppi").trim_end_matches("_Ctx").to_owned();
    let src_stride = args.src_stride.unwrap_or_default();
    Row {
        primitive: name,
        width: args.width.unwrap_or_default(),
        height: args.height.unwrap_or_default(),
        src_stride,
        dst_stride: args.dst_stride.unwrap_or(src_stride),
        stream: args.stream.to_string(),
        context: args.context.to_string(),
        threading: args.threading.to_string(),
        predicted_class: "unknown".to_owned(),
        basis: Basis::None.as_str().to_owned(),
        confidence: Confidence::None.as_str().to_owned(),
        confidence_reason: reason,
        deciding: String::new(),
        fixes: String::new(),
        rule,
        race_class: race_word(None).to_owned(),
        race_basis: Basis::None.as_str().to_owned(),
        race_rule: String::new(),
        wrong_class: wrong_word(None).to_owned(),
        wrong_basis: Basis::None.as_str().to_owned(),
        wrong_rule: String::new(),
        wrong_fixes: String::new(),
        measured_class: None,
        measured_race: None,
        measured_wrong: None,
    }
}
