//! The aligned twin, an oracle that needs no CPU reference: the same call on the same pixels with
//! every stride rounded up to [`TWIN_ALIGN`] bytes. Where a function computes wrong pixels only
//! at unaligned strides, the twin's output (laid out again at the scenario's strides) differs
//! from the scenario's; where the function is right, or wrong at every stride, they agree. The
//! CPU reference does not depend on strides, so the twin's sources and output are the scenario's
//! pixels repacked, and a test checks exactly that on every catalogued function.

use nppbench_catalog::Primitive;
use nppbench_model::Geometry;

use crate::check::DST_FILL;

/// The twin's strides are multiples of this many bytes.
pub const TWIN_ALIGN: u64 = 512;

/// `g` with each stride the row's bytes rounded up to [`TWIN_ALIGN`]; a reduction's values and
/// Set's one stride (source and destination alike) as every geometry has them. `None` where `g`
/// is aligned already (its own twin) or the aligned strides would not fit NPP's `int`.
pub fn twin_geometry(p: Primitive, g: &Geometry) -> Option<Geometry> {
    let row = p.row();
    let align = |bytes: u64| u32::try_from(bytes.max(1).next_multiple_of(TWIN_ALIGN)).ok();
    let (dst_w, _) = g.dst_size(p);
    let dst_stride = if row.dst_is_image() {
        align(u64::from(dst_w) * p.dst_bytes_per_pixel())?
    } else {
        g.dst_stride
    };
    let src_stride = if row.sources > 0 {
        align(u64::from(g.width) * p.src_bytes_per_pixel())?
    } else {
        dst_stride
    };
    let twin = Geometry {
        src_stride,
        dst_stride,
        ..*g
    };
    (twin != *g && twin.validate(p).is_ok()).then_some(twin)
}

/// Each source of a call at `g` (as [`crate::source_buffers`] makes them) laid out at the twin's
/// source stride: the same pixels, the padding zero.
pub fn twin_sources(p: Primitive, g: &Geometry, twin: &Geometry, sources: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let row_bytes = (u64::from(g.width) * p.src_bytes_per_pixel()) as usize;
    sources
        .iter()
        .map(|s| {
            repack(
                s,
                g.height as usize,
                row_bytes,
                g.src_stride as usize,
                twin.src_stride as usize,
                0,
            )
        })
        .collect()
}

/// The twin's destination laid out at `g`'s destination stride, the padding [`DST_FILL`]: what
/// the scenario's call must give if it computes what the twin computed. A reduction's values are
/// the same bytes at any stride.
pub fn from_twin(p: Primitive, g: &Geometry, twin: &Geometry, twin_output: &[u8]) -> Vec<u8> {
    if !p.row().dst_is_image() {
        return twin_output.to_vec();
    }
    let (dst_w, dst_h) = g.dst_size(p);
    let row_bytes = (u64::from(dst_w) * p.dst_bytes_per_pixel()) as usize;
    repack(
        twin_output,
        dst_h as usize,
        row_bytes,
        twin.dst_stride as usize,
        g.dst_stride as usize,
        DST_FILL,
    )
}

/// `rows` rows of `row_bytes` each, read `from` bytes apart and written `to` bytes apart, every
/// other byte `fill`.
fn repack(bytes: &[u8], rows: usize, row_bytes: usize, from: usize, to: usize, fill: u8) -> Vec<u8> {
    let mut out = vec![fill; to * rows];
    for y in 0..rows {
        out[y * to..y * to + row_bytes].copy_from_slice(&bytes[y * from..y * from + row_bytes]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compare, expected_output, source_buffers};

    /// The CPU reference does not depend on strides: for every catalogued function, the
    /// reference of the twin's repacked sources, laid out again at the scenario's strides, is the
    /// scenario's own reference byte for byte. So the twin stands for the reference wherever NPP
    /// is right at aligned strides.
    #[test]
    fn the_twin_of_every_function_computes_the_same_pixels_at_aligned_strides() {
        let mut checked = 0;
        for p in Primitive::all() {
            let g = Geometry::new(p, 37, 5, 0);
            let g = Geometry {
                src_stride: (37 * p.src_bytes_per_pixel() + 3 * p.row().src.sample.bytes()) as u32,
                dst_stride: if p.row().dst_is_image() {
                    (37 * p.dst_bytes_per_pixel() + 5 * p.row().dst.sample.bytes()) as u32
                } else {
                    g.dst_stride
                },
                ..g
            };
            let g = if p.row().sources == 0 {
                Geometry {
                    src_stride: g.dst_stride,
                    ..g
                }
            } else {
                g
            };
            if g.validate(p).is_err() {
                continue;
            }
            let twin = twin_geometry(p, &g).unwrap_or_else(|| panic!("{p}: no twin of {}", g.label()));
            assert!(
                (twin.src_stride as u64).is_multiple_of(TWIN_ALIGN) || p.row().sources == 0,
                "{p}"
            );
            let sources = source_buffers(p, &g);
            let expected = expected_output(p, &g, &sources);
            let twin_expected = expected_output(p, &twin, &twin_sources(p, &g, &twin, &sources));
            let relaid = from_twin(p, &g, &twin, &twin_expected);
            assert_eq!(relaid, expected, "{p}: the twin's pixels differ from the scenario's");
            assert!(compare(p, &g, &relaid, &expected).unwrap().is_right(), "{p}");
            checked += 1;
        }
        assert!(checked > 40, "{checked} functions checked");
    }

    #[test]
    fn an_aligned_geometry_is_its_own_twin() {
        let p = Primitive::from_name("Copy_8u_C1R").unwrap();
        assert_eq!(twin_geometry(p, &Geometry::new(p, 100, 4, 512)), None);
        let twin = twin_geometry(p, &Geometry::new(p, 100, 4, 101)).unwrap();
        assert_eq!((twin.src_stride, twin.dst_stride), (512, 512));
    }

    #[test]
    fn repacking_keeps_the_rows_and_fills_the_rest() {
        let src = [1, 2, 9, 3, 4, 9];
        assert_eq!(repack(&src, 2, 2, 3, 4, 0xA5), [1, 2, 0xA5, 0xA5, 3, 4, 0xA5, 0xA5]);
    }
}
