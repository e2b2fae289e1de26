//! The values a synthesised call passes where its parameters' roles leave a choice: channels
//! and planes from the layout, a valid member of each enum, scalars that keep outputs varied, a
//! mask's size and anchor.

use super::{Elem, Role, Shape};

/// The channels of the function's images, from its layout (`C3`: 3, `AC4`: 4, `P3`: 1 a plane).
pub(super) fn channels(layout: &str) -> u64 {
    token_channels(sides(layout).0)
}

/// The layout's sources' and destination's parts (`P3C3`: `P3`, `C3`; `C1AC4`: `C1`, `AC4`; `C1`:
/// both).
pub(super) fn sides(layout: &str) -> (&str, &str) {
    let b = layout.as_bytes();
    let mut starts = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i] == b'A' {
            i += 1;
        }
        if i < b.len() && (b[i] == b'C' || b[i] == b'P') {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            starts.push(start);
        } else {
            i = start + 1;
        }
    }
    match starts.as_slice() {
        [_, second, ..] => (&layout[..*second], &layout[*second..]),
        _ => (layout, layout),
    }
}

/// The channels an image of one layout part holds: `C3` 3, `AC4` 4, a plane of `P3` 1.
fn token_channels(token: &str) -> u64 {
    match token.trim_start_matches('A').as_bytes() {
        [b'C', n, ..] if n.is_ascii_digit() => u64::from(n - b'0'),
        _ => 1,
    }
}

/// The channels of the destination's images.
pub(super) fn dst_channels(layout: &str) -> u64 {
    token_channels(sides(layout).1)
}

/// The planes of an array of planes: its declared length, else its side's layout part's (`P3`).
pub(super) fn planes(c: &str, part: &str) -> u64 {
    let from_decl = c
        .split('[')
        .nth(1)
        .and_then(|s| s.trim_end_matches(']').parse::<u64>().ok());
    from_decl.unwrap_or_else(|| {
        part.split('P')
            .nth(1)
            .and_then(|s| s.chars().next()?.to_digit(10))
            .map_or(3, u64::from)
    })
}

/// An image the call gets a buffer with margins for: every image, and a mask.
pub(super) fn is_image(role: Role) -> bool {
    role.is_image() || role == Role::Mask
}

pub(super) fn is_source(role: Role) -> bool {
    matches!(
        role,
        Role::Source | Role::SourcePlanes | Role::SourceDestination | Role::SourceDestinationPlanes | Role::Mask
    )
}

/// A value of an enum NPP accepts at these shapes, by the enum's type or the parameter's name.
pub(super) fn enum_value(symbol: &str, base: &str, name: &str) -> f64 {
    let lower = name.to_ascii_lowercase();
    match base {
        // Bayer demosaicing takes only NPPI_INTER_UNDEFINED.
        "NppiInterpolationMode" if symbol.contains("CFATo") => 0.0,
        "NppiBorderType" => 2.0,        // NPP_BORDER_REPLICATE
        "NppiMaskSize" => 200.0,        // NPP_MASK_SIZE_3_X_3
        "NppiInterpolationMode" => 1.0, // NPPI_INTER_NN
        "NppiNorm" => 1.0,              // nppiNormL1
        "NppiDifferentialKernel" => 0.0,
        _ if lower.contains("interpolation") => 1.0,
        _ if lower.contains("border") => 2.0,
        _ => 0.0,
    }
}

/// A number for a scalar parameter: varied enough that outputs are not constant, small enough
/// not to saturate every sample.
pub(super) fn scalar_value(name: &str, e: Elem) -> f64 {
    let lower = name.to_ascii_lowercase();
    if lower.contains("channel") {
        return 0.0;
    }
    if lower.contains("level") || lower.contains("bins") {
        return 4.0;
    }
    // An anchor inside the 3-sample mask the mask sizes get (`nAnchor` of the SumWindow
    // functions: at 3, NPP refused them all with NPP_ANCHOR_ERROR).
    if lower.contains("anchor") {
        return 1.0;
    }
    if lower.contains("divisor") || lower.contains("rate") {
        return 2.0;
    }
    if lower.contains("taps") {
        return 3.0;
    }
    if e.scalar.is_float() { 0.75 } else { 3.0 }
}

/// The numbers of a constant array whose values must make sense together, where counting up from
/// [`scalar_value`] would not (`None`: count up): a quadrangle (`aSrcQuad[4][2]`) the ROI's
/// corners, clockwise; a 3×3 transform (`aCoeffs[3][3]`) the identity. Counted up, the quadrangles
/// were degenerate and the 3×3 matrices singular: on the H100 runs of 13.0.1, NPP refused every
/// WarpAffineQuad and WarpPerspectiveQuad (NPP_QUADRANGLE_ERROR) and WarpPerspective
/// (NPP_COEFFICIENT_ERROR); WarpPerspectiveBack took the singular matrix.
pub(super) fn array_values(name: &str, len: u64, s: &Shape) -> Option<Vec<f64>> {
    let (w, h) = (f64::from(s.width) - 1.0, f64::from(s.height) - 1.0);
    if name.contains("Quad") && len == 8 {
        return Some(vec![0.0, 0.0, w, 0.0, w, h, 0.0, h]);
    }
    if name.contains("Coeffs") && len == 9 {
        return Some(vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    }
    None
}

/// A size parameter: a mask's or a template's 3×3, else the ROI's.
pub(super) fn size_value(name: &str, s: &Shape) -> (i32, i32) {
    let lower = name.to_ascii_lowercase();
    if lower.contains("mask") || lower.contains("kernel") || lower.contains("tpl") {
        (3, 3)
    } else {
        (s.width as i32, s.height as i32)
    }
}

/// A point parameter: a mask's anchor at its centre, else the origin.
pub(super) fn point_value(name: &str) -> (i32, i32) {
    if name.to_ascii_lowercase().contains("anchor") {
        (1, 1)
    } else {
        (0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_splits_into_its_sources_and_destinations_parts() {
        assert_eq!(sides("P3C3"), ("P3", "C3"));
        assert_eq!(sides("C1AC4"), ("C1", "AC4"));
        assert_eq!(sides("AC4C1"), ("AC4", "C1"));
        assert_eq!(sides("C3"), ("C3", "C3"));
        assert_eq!(sides("AC4"), ("AC4", "AC4"));
        assert_eq!((channels("C1C3"), dst_channels("C1C3")), (1, 3));
        assert_eq!((channels("P3AC4"), dst_channels("P3AC4")), (1, 4));
        assert_eq!(planes("const Npp8u * const pSrc[3]", "C1"), 3);
        assert_eq!(planes("Npp8u * pDst", "P4"), 4);
    }
}
