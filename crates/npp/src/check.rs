//! What a call must produce, from the catalogue's CPU reference, and the check of what it did
//! produce: every ROI sample within the row's tolerance, every other byte untouched.

use nppbench_catalog::image::{decode, encode, source_pattern};
use nppbench_catalog::{Image, Primitive};
use nppbench_model::{Correctness, Geometry};

/// The byte the destination is filled with before a call: padding must keep it.
pub const DST_FILL: u8 = 0xA5;

/// The source buffers of a call: one per source, `src_stride × height` bytes of a non-trivial
/// pattern each (padding included, so a padded ROI reads defined data).
pub fn source_buffers(p: Primitive, g: &Geometry) -> Vec<Vec<u8>> {
    let row = p.row();
    (0..usize::from(row.sources))
        .map(|seed| source_pattern(row.src.sample, g.src_bytes() as usize, seed))
        .collect()
}

/// The destination buffer the CPU reference expects after one call on a buffer filled with
/// [`DST_FILL`]: the ROI (or a reduction's values, 8 bytes apart) as the reference computes it,
/// every other byte untouched. `g` must be valid ([`Geometry::validate`]) and `sources` as
/// [`source_buffers`] makes them.
pub fn expected_output(p: Primitive, g: &Geometry, sources: &[Vec<u8>]) -> Vec<u8> {
    assert!(
        g.validate(p).is_ok() && sources.iter().all(|s| s.len() as u64 >= g.src_bytes()),
        "expected_output needs a valid geometry and whole source images"
    );
    let row = p.row();
    let images: Vec<Image> = sources
        .iter()
        .map(|s| Image::from_bytes(s, row.src, g.width as usize, g.height as usize, g.src_stride as usize))
        .collect();
    let (dw, dh) = g.dst_size(p);
    let channels = usize::from(row.dst.channels);
    let mut dst = Image::new(dw as usize, dh as usize, channels);
    (row.reference)(row, &images, &mut dst);
    let mut out = vec![DST_FILL; g.dst_bytes(p) as usize];
    let size = row.dst.sample.bytes() as usize;
    for (i, v) in dst.data.iter().enumerate() {
        let at = sample_offset(p, g, i);
        encode(row.dst.sample, *v, &mut out[at..at + size]);
    }
    out
}

/// Where the destination's `i`th sample (row-major, channels interleaved) lives in its buffer.
fn sample_offset(p: Primitive, g: &Geometry, i: usize) -> usize {
    let row = p.row();
    let size = row.dst.sample.bytes() as usize;
    if !row.dst_is_image() {
        return 8 * i;
    }
    let per_row = g.dst_size(p).0 as usize * usize::from(row.dst.channels);
    (i / per_row) * g.dst_stride as usize + (i % per_row) * size
}

/// Compares a destination buffer with the expected one: each sample within the row's tolerance,
/// every byte outside the ROI (or the reduction's values) untouched. The error says where the
/// first difference is.
pub fn compare(p: Primitive, g: &Geometry, expected: &[u8], actual: &[u8]) -> Result<Correctness, String> {
    let row = p.row();
    if expected.len() != actual.len() {
        return Err(format!(
            "{}: the destination is {} bytes, {} expected",
            p.npp_name(),
            actual.len(),
            expected.len()
        ));
    }
    let size = row.dst.sample.bytes() as usize;
    let (dw, dh) = g.dst_size(p);
    let channels = usize::from(row.dst.channels);
    let samples = if row.dst_is_image() {
        dw as usize * dh as usize * channels
    } else {
        dw as usize
    };
    let mut written = vec![false; expected.len()];
    let mut worst: f64 = 0.0;
    for i in 0..samples {
        let at = sample_offset(p, g, i);
        let (e, a) = (
            decode(row.dst.sample, &expected[at..at + size]),
            decode(row.dst.sample, &actual[at..at + size]),
        );
        let err = row.tolerance.error(e, a);
        if err > row.tolerance.limit() || err.is_nan() {
            let per_row = (dw as usize * channels).max(1);
            let (y, x, c) = (i / per_row, (i % per_row) / channels.max(1), i % channels.max(1));
            let what = if row.dst_is_image() {
                format!("row {y}, pixel {x}, channel {c}")
            } else {
                format!("value {i}")
            };
            return Err(format!(
                "{} output differs from the CPU reference at {what}: {a} where {e} is expected (error {err} > {})",
                p.npp_name(),
                row.tolerance.limit()
            ));
        }
        worst = worst.max(err);
        written[at..at + size].iter_mut().for_each(|w| *w = true);
    }
    let mut padding = 0u64;
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        if written[i] {
            continue;
        }
        padding += 1;
        if e != a {
            let (y, x) = (i / g.dst_stride.max(1) as usize, i % g.dst_stride.max(1) as usize);
            return Err(format!(
                "{} wrote outside its ROI: row {y}, byte {x} of the stride padding",
                p.npp_name()
            ));
        }
    }
    Ok(Correctness {
        pixels_checked: if row.dst_is_image() {
            u64::from(dw) * u64::from(dh)
        } else {
            u64::from(dw)
        },
        padding_bytes_checked: padding,
        max_abs_error: worst,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Primitive = Primitive::CONVERT_8U32F_C1R;

    fn prim(name: &str) -> Primitive {
        Primitive::from_name(name).unwrap()
    }

    #[test]
    fn reference_converts_the_roi_and_leaves_padding() {
        let g = Geometry::new(P, 3, 2, 4);
        let src = vec![vec![0, 1, 255, 9, 7, 8, 200, 9]];
        let dst = expected_output(P, &g, &src);
        let px = |y: usize, x: usize| f32::from_le_bytes(dst[y * 16 + x * 4..][..4].try_into().unwrap());
        assert_eq!((px(0, 0), px(0, 2), px(1, 0), px(1, 2)), (0.0, 255.0, 7.0, 200.0));
        assert!(dst[12..16].iter().all(|&b| b == DST_FILL));
    }

    #[test]
    fn a_wrong_pixel_fails_the_comparison() {
        let g = Geometry::new(P, 3, 2, 4);
        let src = source_buffers(P, &g);
        let expected = expected_output(P, &g, &src);
        assert_eq!(compare(P, &g, &expected, &expected).unwrap().max_abs_error, 0.0);
        let mut wrong = expected.clone();
        wrong[16..20].copy_from_slice(&1.5f32.to_le_bytes());
        let err = compare(P, &g, &expected, &wrong).unwrap_err();
        assert!(err.contains("row 1, pixel 0"), "{err}");
        let mut spilled = expected.clone();
        spilled[12] = 0;
        let err = compare(P, &g, &expected, &spilled).unwrap_err();
        assert!(err.contains("outside its ROI"), "{err}");
    }

    #[test]
    fn every_row_has_an_expected_output_that_passes_its_own_check() {
        for p in Primitive::all() {
            let g = Geometry::aligned(p, 19, 6, 16, 4);
            let sources = source_buffers(p, &g);
            let expected = expected_output(p, &g, &sources);
            let c = compare(p, &g, &expected, &expected).unwrap_or_else(|e| panic!("{p}: {e}"));
            assert!(c.pixels_checked > 0, "{p}");
            if p.row().dst_is_image() {
                assert!(c.padding_bytes_checked > 0, "{p}: padding is checked");
            }
        }
    }

    #[test]
    fn tolerance_lets_rounding_pass_and_no_more() {
        let p = prim("FilterBoxBorder_8u_C1R");
        let g = Geometry::aligned(p, 8, 4, 16, 0);
        let expected = expected_output(p, &g, &source_buffers(p, &g));
        let mut off_by_one = expected.clone();
        off_by_one[0] = off_by_one[0].wrapping_add(1);
        assert!(compare(p, &g, &expected, &off_by_one).is_ok());
        let mut off_by_two = expected.clone();
        off_by_two[0] = off_by_two[0].wrapping_add(2);
        assert!(compare(p, &g, &expected, &off_by_two).is_err());
    }

    #[test]
    fn reductions_write_their_values_and_nothing_else() {
        let p = prim("MinMax_8u_C1R");
        let g = Geometry::aligned(p, 16, 16, 16, 0);
        let expected = expected_output(p, &g, &source_buffers(p, &g));
        // The pattern holds every byte value: the minimum 0 at offset 0, the maximum 255 at 8.
        assert_eq!((expected[0], expected[8]), (0, 255));
        assert!(expected[1..8].iter().all(|b| *b == DST_FILL));
    }
}
