//! `predict` for a function that no built-in design of the NPP version asked called, where a
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
/// NPP `asked`, from the latest built-in design of another version of its major release that
/// holds its lines ([`crate::knowledge::other_version_lines`], as `trace` takes them); `None`
/// where none does, or where that design measured no shape of it.
pub(super) fn answer_row(args: &PredictArgs, found: &[Declared], asked: &str) -> anyhow::Result<Option<Row>> {
    let short = crate::knowledge::short(asked);
    let d = found
        .iter()
        .find(|d| crate::knowledge::short(&d.version) == short)
        .unwrap_or(&found[0]);
    let Some((version, lines)) = crate::knowledge::other_version_lines(asked, &d.symbol)? else {
        return Ok(None);
    };
    let row = designed::answer_row(args, &d.symbol, &lines)?;
    Ok(row.map(|mut row| {
        relabel(&mut row, asked, &d.symbol, &version);
        row
    }))
}

/// `row`, answered from NPP `version`'s design of `symbol`, said to be so: every basis that is not
/// `none` becomes [`OTHER_VERSION`], the confidence `approximate`, and the reason names both
/// versions first.
fn relabel(row: &mut Row, asked: &str, symbol: &str, version: &str) {
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
        "no design of NPP {asked} called {symbol}; NPP {version}'s design answered, the latest other version of the same major release that did (docs/catalogue.md, \"Across versions\"): {}",
        row.confidence_reason
    );
}
