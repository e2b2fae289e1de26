//! The values a synthesised call passes where its parameters' roles leave a choice: channels
//! and planes from the layout, a valid member of each enum, scalars that keep outputs varied, a
//! mask's size and anchor.

use super::{Elem, Role, Shape};

/// The channels of the function's images, from its layout (`C3`: 3, `AC4`: 4, `P3`: 1 a plane).
pub(super) fn channels(layout: &str) -> u64 {
    let l = layout.trim_start_matches('A');
    match l.as_bytes() {
        [b'C', n, ..] if n.is_ascii_digit() => u64::from(n - b'0'),
        _ => 1,
    }
}

/// The planes of a planar layout (`P3R`: 3), for arrays of planes.
pub(super) fn planes(c: &str, layout: &str) -> u64 {
    let from_decl = c
        .split('[')
        .nth(1)
        .and_then(|s| s.trim_end_matches(']').parse::<u64>().ok());
    from_decl.unwrap_or_else(|| {
        layout
            .split('P')
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
pub(super) fn enum_value(base: &str, name: &str) -> f64 {
    let lower = name.to_ascii_lowercase();
    match base {
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
    if lower.contains("divisor") {
        return 2.0;
    }
    if e.scalar.is_float() { 0.75 } else { 3.0 }
}

/// A size parameter: a mask's 3×3, else the ROI's.
pub(super) fn size_value(name: &str, s: &Shape) -> (i32, i32) {
    let lower = name.to_ascii_lowercase();
    if lower.contains("mask") || lower.contains("kernel") {
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
