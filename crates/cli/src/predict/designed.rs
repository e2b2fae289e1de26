//! `predict` for a function known from its headers alone that a design measured (issue #45):
//! its shapes (`call-catalogue --design`, held in the knowledge) are its evidence, its rules are
//! fitted on them by the atlas's own search, and the question is answered as for a row's
//! function: measured where a shape is the scenario asked, else by the rules.

use nppbench_analysis::calls::design;
use nppbench_analysis::predict::{answer, query};

use super::{PredictArgs, Row, row};
use crate::exit::bad_input;

/// The answer for `symbol` from its design lines, or `None` where they hold no shape measured.
pub(super) fn answer_row(args: &PredictArgs, symbol: &str, lines: &[design::ShapeLine]) -> anyhow::Result<Option<Row>> {
    // Shapes NPP all refused measure nothing: the function is answered as unmeasured.
    let Some(designed) = design::Designed::of(symbol, lines).map_err(bad_input)? else {
        return Ok(None);
    };
    let primitive = designed.primitive;
    let (width, height, src_stride) = (
        args.width.unwrap_or_default(),
        args.height.unwrap_or_default(),
        args.src_stride.unwrap_or_default(),
    );
    // The destination keeps the source's padding in pixels, as for a row's function.
    let g = design::generated_geometry(primitive, (width, height), src_stride, args.dst_stride)
        .map_err(|e| bad_input(format!("{}: {e}", primitive.name())))?;
    let q = query(primitive, g, args.stream, args.context, args.threading);
    let (evidence, rules) = (&designed.evidence, &designed.rules);
    Ok(Some(row(&q, &answer(evidence, rules, &q), evidence, rules)))
}
