//! `predict` for a function that no built-in design of the NPP version asked measured, where a
//! built-in design of another version of the same major release did (issue #45): answered from
//! that design, every basis `other_version` and the confidence `approximate`, the reason naming
//! the version that answered. On the functions both measured, NPP 13.0.1's designs predict
//! 13.2.0.58's shapes about as well as 13.2.0.58's own held-out shapes are predicted, and the
//! other way round (docs/catalogue.md, "Across versions"). No answer crosses a major release:
//! the wrong pixels of NPP 13 are not 12's.

use nppbench_analysis::predict::{Basis, Confidence};

use super::unmeasured::Declared;
use super::{PredictArgs, Row, designed};

/// What the basis columns say of an answer from another version's design.
pub(super) const OTHER_VERSION: &str = "other_version";

/// The answer for `found`'s function (every built-in version whose headers declare it), asked of
/// NPP `asked`, from the built-in design of another version of the same major release, the
/// latest first; `None` where no such design measured it.
pub(super) fn answer_row(args: &PredictArgs, found: &[Declared], asked: &str) -> anyhow::Result<Option<Row>> {
    let short = crate::knowledge::short(asked);
    let mut others: Vec<&Declared> = found
        .iter()
        .filter(|d| crate::knowledge::short(&d.version) != short && major(&d.version) == major(asked))
        .collect();
    others.sort_by_key(|d| std::cmp::Reverse(parts(&d.version)));
    for d in others {
        let lines = crate::knowledge::built_in_design_lines(&d.version, &d.symbol)?;
        if let Some(mut row) = designed::answer_row(args, &d.symbol, &lines)? {
            relabel(&mut row, asked, d);
            return Ok(Some(row));
        }
    }
    Ok(None)
}

/// A version's first part: `13` of `13.2.0.58`.
fn major(version: &str) -> &str {
    version.split('.').next().unwrap_or_default()
}

/// A version's parts as numbers, for ordering (`13.10` after `13.2`).
fn parts(version: &str) -> Vec<u32> {
    version.split('.').filter_map(|p| p.parse().ok()).collect()
}

/// `row`, answered from `d`'s design, said to be so: every basis that is not `none` becomes
/// [`OTHER_VERSION`], the confidence `approximate`, and the reason names both versions first.
fn relabel(row: &mut Row, asked: &str, d: &Declared) {
    let none = Basis::None.as_str();
    for basis in [&mut row.basis, &mut row.race_basis, &mut row.wrong_basis] {
        if basis != none {
            *basis = OTHER_VERSION.to_owned();
        }
    }
    if row.confidence != Confidence::None.as_str() {
        row.confidence = Confidence::Approximate.as_str().to_owned();
    }
    row.confidence_reason = format!(
        "no design of NPP {asked} measured {}; NPP {}'s design answered, the nearest of the same major release (docs/catalogue.md, \"Across versions\"): {}",
        d.symbol, d.version, row.confidence_reason
    );
}
