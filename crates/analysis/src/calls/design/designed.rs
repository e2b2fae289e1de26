//! A designed function as the atlas's machinery takes it: its generated primitive, its design
//! lines as evidence, and the rules the atlas's own search fits on them. What `predict` answers a
//! function known from its headers alone with, and what `trace` predicts its call sites from.

use nppbench_model::{Geometry, Primitive};

use super::{ShapeLine, evidence};
use crate::evidence::{Evidence, FunctionRules};

/// A function's design, ready to answer: a scenario is asked of `evidence` and `rules` as of an
/// atlas's (`crate::predict::answer`).
#[derive(Debug, Clone)]
pub struct Designed {
    /// The function as a [generated](Primitive::generated) primitive, with its lines' pixel sizes.
    pub primitive: Primitive,
    pub evidence: Evidence,
    /// Fitted on the lines' shapes (held-out ones left out of the fit); never empty.
    pub rules: Vec<FunctionRules>,
}

impl Designed {
    /// `symbol`'s design from its lines (`nppiAbsDiffC_16u_C1R_Ctx`, of one NPP version); `None`
    /// where no line has pixels, or where no rule could be fitted (NPP refused every shape:
    /// nothing was measured). Errors where a line's pixels disagree with those the name was
    /// registered with.
    pub fn of(symbol: &str, lines: &[ShapeLine]) -> Result<Option<Designed>, String> {
        let Some(pixels) = lines.iter().find_map(|l| l.pixels) else {
            return Ok(None);
        };
        let evidence = evidence(lines)?;
        let rules = evidence.rules();
        if rules.is_empty() {
            return Ok(None);
        }
        let primitive = Primitive::generated(
            symbol,
            u64::from(pixels.src_bytes_per_pixel),
            u64::from(pixels.dst_bytes_per_pixel),
        )?;
        Ok(Some(Designed {
            primitive,
            evidence,
            rules,
        }))
    }
}

/// The destination step of a generated function's call where none is given: the source's
/// padding kept in pixels, as for a row's function; the source's step where the function writes
/// no image (a reduction) or has no source.
fn default_dst_step(primitive: Primitive, src_step: u32) -> u32 {
    let (src_bpp, dst_bpp) = (primitive.src_bytes_per_pixel(), primitive.dst_bytes_per_pixel());
    match (u64::from(src_step) * dst_bpp).checked_div(src_bpp) {
        Some(d) if dst_bpp > 0 => u32::try_from(d).unwrap_or(u32::MAX),
        _ => src_step,
    }
}

/// The geometry of a call of a generated function at `width` × `height` with a source step of
/// `src` bytes and a destination step of `dst` (where none is given, [`default_dst_step`]): with
/// no catalogue row to check it against, only a source step shorter than a row is refused.
pub fn generated_geometry(
    p: Primitive,
    (width, height): (u32, u32),
    src: u32,
    dst: Option<u32>,
) -> Result<Geometry, String> {
    let row = u64::from(width) * p.src_bytes_per_pixel();
    if u64::from(src) < row {
        return Err(format!(
            "a source stride of {src} bytes is shorter than a row of {width} pixels ({row} bytes)"
        ));
    }
    Ok(Geometry {
        width,
        height,
        src_stride: src,
        dst_stride: dst.unwrap_or_else(|| default_dst_step(p, src)),
        padded_from: None,
    })
}
