//! `predict` for a function known from its headers alone that a design measured (issue #45):
//! its shapes (`call-catalogue --design`, held in the knowledge) are its evidence, its rules are
//! fitted on them by the atlas's own search, and the question is answered as for a row's
//! function: measured where a shape is the scenario asked, else by the rules.

use nppbench_analysis::calls::design;
use nppbench_analysis::predict::{answer, query};
use nppbench_model::Geometry;

use super::{PredictArgs, Row, row};
use crate::exit::bad_input;

/// The answer for `symbol` from its design lines, or `None` where they hold no shape measured.
pub(super) fn answer_row(args: &PredictArgs, symbol: &str, lines: &[design::ShapeLine]) -> anyhow::Result<Option<Row>> {
    // Shapes NPP all refused measure nothing: the function is answered as unmeasured.
    let Some(designed) = design::Designed::of(symbol, lines).map_err(bad_input)? else {
        return Ok(None);
    };
    let (primitive, px) = (designed.primitive, designed.pixels);
    let (width, height, src_stride) = (
        args.width.unwrap_or_default(),
        args.height.unwrap_or_default(),
        args.src_stride.unwrap_or_default(),
    );
    let row_bytes = u64::from(width) * u64::from(px.src_bytes_per_pixel);
    if u64::from(src_stride) < row_bytes {
        return Err(bad_input(format!(
            "{}: a source stride of {src_stride} bytes is shorter than a row of {width} pixels ({row_bytes} bytes)",
            primitive.name()
        )));
    }
    // The destination keeps the source's padding in pixels, as for a row's function.
    let dst_stride = args
        .dst_stride
        .unwrap_or_else(|| design::default_dst_step(primitive, src_stride));
    let g = Geometry {
        width,
        height,
        src_stride,
        dst_stride,
        padded_from: None,
    };
    let q = query(primitive, g, args.stream, args.context, args.threading);
    let (evidence, rules) = (&designed.evidence, &designed.rules);
    Ok(Some(row(&q, &answer(evidence, rules, &q), evidence, rules)))
}
