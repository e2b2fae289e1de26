//! What a call must produce, from the catalogue's CPU reference, and the check of what it did
//! produce: every ROI sample within the row's tolerance, every other byte untouched.

use nppbench_catalog::image::{decode, encode, par_rows, par_rows_weighted, source_pattern};
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
    if !row.dst_is_image() {
        for (i, v) in dst.data.iter().enumerate() {
            encode(row.dst.sample, *v, &mut out[8 * i..8 * i + size]);
        }
        return out;
    }
    let per_row = dw as usize * channels;
    par_rows(&mut out, g.dst_stride as usize, |y, line| {
        for (i, v) in dst.data[y * per_row..(y + 1) * per_row].iter().enumerate() {
            encode(row.dst.sample, *v, &mut line[i * size..(i + 1) * size]);
        }
    });
    out
}

/// The first difference found, by row order.
struct Difference {
    at: usize,
    message: String,
}

/// Compares a destination buffer with the expected one: each sample within the row's tolerance,
/// every byte outside the ROI (or the reduction's values) untouched. The error says where the
/// first difference is.
pub fn compare(p: Primitive, g: &Geometry, expected: &[u8], actual: &[u8]) -> Result<Correctness, String> {
    let row = p.row();
    let name = p.npp_name();
    if expected.len() != actual.len() {
        return Err(format!(
            "{name}: the destination is {} bytes, {} expected",
            actual.len(),
            expected.len()
        ));
    }
    let size = row.dst.sample.bytes() as usize;
    let (dw, dh) = g.dst_size(p);
    let channels = usize::from(row.dst.channels);
    let limit = row.tolerance.limit();
    let judge = |e: &[u8], a: &[u8]| {
        let (e, a) = (decode(row.dst.sample, e), decode(row.dst.sample, a));
        (row.tolerance.error(e, a), e, a)
    };
    if !row.dst_is_image() {
        let mut worst: f64 = 0.0;
        for i in 0..dw as usize {
            let at = 8 * i;
            let (err, e, a) = judge(&expected[at..at + size], &actual[at..at + size]);
            if err > limit || err.is_nan() {
                return Err(format!(
                    "{name} output differs from the CPU reference at value {i}: {a} where {e} is expected (error {err} > {limit})"
                ));
            }
            worst = worst.max(err);
        }
        let values: Vec<usize> = (0..dw as usize).flat_map(|i| 8 * i..8 * i + size).collect();
        if let Some(x) = (0..expected.len()).find(|x| !values.contains(x) && expected[*x] != actual[*x]) {
            return Err(format!("{name} wrote outside its values: byte {x}"));
        }
        return Ok(Correctness {
            pixels_checked: u64::from(dw),
            padding_bytes_checked: (expected.len() - values.len()) as u64,
            max_abs_error: worst,
        });
    }
    // Rows in parallel: each finds its worst error and its first difference.
    let stride = g.dst_stride as usize;
    let row_bytes = dw as usize * channels * size;
    let mut per_row: Vec<(f64, Option<Difference>)> = (0..dh as usize).map(|_| (0.0, None)).collect();
    // One slot per row, each standing for a row of both buffers.
    par_rows_weighted(&mut per_row, 1, 2 * stride, |y, slot| {
        let (e_line, a_line) = (
            &expected[y * stride..(y + 1) * stride],
            &actual[y * stride..(y + 1) * stride],
        );
        let mut worst: f64 = 0.0;
        // A row identical byte for byte, with no NaN in it, has no error: what a correct call
        // gives, found at memory speed (a 4K image's rows in milliseconds, not tens of them).
        let identical = e_line[..row_bytes] == a_line[..row_bytes] && !has_nan(row.dst.sample, &e_line[..row_bytes]);
        for i in (0..row_bytes / size).filter(|_| !identical) {
            let (err, e, a) = judge(&e_line[i * size..(i + 1) * size], &a_line[i * size..(i + 1) * size]);
            if err > limit || err.is_nan() {
                let (x, c) = (i / channels, i % channels);
                slot[0].1 = Some(Difference {
                    at: i,
                    message: format!(
                        "{name} output differs from the CPU reference at row {y}, pixel {x}, channel {c}: {a} where {e} is expected (error {err} > {limit})"
                    ),
                });
                return;
            }
            worst = worst.max(err);
        }
        if let Some(x) = (row_bytes..stride).find(|&x| e_line[x] != a_line[x]) {
            slot[0].1 = Some(Difference {
                at: x,
                message: format!("{name} wrote outside its ROI: row {y}, byte {x} of the stride padding"),
            });
            return;
        }
        slot[0].0 = worst;
    });
    if let Some(d) = per_row.iter_mut().find_map(|(_, d)| d.take()) {
        debug_assert!(d.at < stride);
        return Err(d.message);
    }
    Ok(Correctness {
        pixels_checked: u64::from(dw) * u64::from(dh),
        padding_bytes_checked: ((stride - row_bytes) * dh as usize) as u64,
        max_abs_error: per_row.iter().map(|(w, _)| *w).fold(0.0, f64::max),
    })
}

/// Whether any sample of `bytes` is a NaN (never, for integer samples).
fn has_nan(sample: nppbench_catalog::Sample, bytes: &[u8]) -> bool {
    use nppbench_catalog::Sample;
    matches!(sample, Sample::F32 | Sample::F64)
        && bytes
            .chunks_exact(sample.bytes() as usize)
            .any(|b| decode(sample, b).is_nan())
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
    fn identical_rows_pass_at_once_but_a_nan_never_passes() {
        let g = Geometry::new(P, 3, 2, 4);
        let src = source_buffers(P, &g);
        let mut nan = expected_output(P, &g, &src);
        nan[16..20].copy_from_slice(&f32::NAN.to_le_bytes());
        // The same bytes on both sides, a NaN among them: the sample-by-sample check judges it.
        let err = compare(P, &g, &nan, &nan.clone()).unwrap_err();
        assert!(err.contains("row 1, pixel 0"), "{err}");
    }

    #[test]
    fn every_row_has_an_expected_output_that_passes_its_own_check() {
        for p in Primitive::all() {
            let g = Geometry::aligned(p, 19, 6, 16, 16);
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

/// Where an output differs from the reference: how many pixels (values, for a reduction), and
/// the first and last column and row among them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WrongPixels {
    pub count: u64,
    pub columns: Option<[u32; 2]>,
    pub rows: Option<[u32; 2]>,
}

impl WrongPixels {
    fn add(&mut self, x: u32, y: u32) {
        self.count += 1;
        let widen = |r: Option<[u32; 2]>, v: u32| Some(r.map_or([v, v], |[lo, hi]| [lo.min(v), hi.max(v)]));
        self.columns = widen(self.columns, x);
        self.rows = widen(self.rows, y);
    }
}

/// Every pixel (value) of `actual` that differs from `expected` beyond the function's
/// tolerance, as [`compare`] judges one: what a race leaves, counted and located rather than
/// failed at the first.
pub fn wrong_pixels(p: Primitive, g: &Geometry, expected: &[u8], actual: &[u8]) -> WrongPixels {
    let row = p.row();
    let size = row.dst.sample.bytes() as usize;
    let (dw, dh) = g.dst_size(p);
    let channels = usize::from(row.dst.channels);
    let limit = row.tolerance.limit();
    let wrong_at = |e: &[u8], a: &[u8]| {
        let err = row
            .tolerance
            .error(decode(row.dst.sample, e), decode(row.dst.sample, a));
        err > limit || err.is_nan()
    };
    let mut out = WrongPixels::default();
    if expected.len() != actual.len() {
        return out;
    }
    if !row.dst_is_image() {
        for i in 0..dw as usize {
            let at = 8 * i;
            if wrong_at(&expected[at..at + size], &actual[at..at + size]) {
                out.add(i as u32, 0);
            }
        }
        return out;
    }
    let stride = g.dst_stride as usize;
    let pixel = channels * size;
    let row_bytes = dw as usize * pixel;
    for y in 0..dh as usize {
        let (e, a) = (
            &expected[y * stride..y * stride + row_bytes],
            &actual[y * stride..y * stride + row_bytes],
        );
        if e == a && !has_nan(row.dst.sample, e) {
            continue;
        }
        for x in 0..dw as usize {
            let px = x * pixel..(x + 1) * pixel;
            // Identical bytes are right (a NaN reference aside): only differing pixels are decoded.
            if e[px.clone()] == a[px.clone()] && !has_nan(row.dst.sample, &e[px.clone()]) {
                continue;
            }
            let wrong = (0..channels).any(|c| {
                let at = px.start + c * size;
                wrong_at(&e[at..at + size], &a[at..at + size])
            });
            if wrong {
                out.add(x as u32, y as u32);
            }
        }
    }
    out
}

#[cfg(test)]
mod wrong_pixel_tests {
    //! Generated outputs, labelled as such: a reference output with its last columns replaced.
    use super::*;

    #[test]
    fn stale_last_columns_are_counted_and_located() {
        let p = Primitive::from_name("Copy_8u_C1R").unwrap();
        let g = Geometry::new(p, 31, 4, 32);
        let sources = source_buffers(p, &g);
        let expected = expected_output(p, &g, &sources);
        assert_eq!(wrong_pixels(p, &g, &expected, &expected), WrongPixels::default());
        let mut actual = expected.clone();
        for y in 1..3 {
            for x in 29..31 {
                actual[y * 32 + x] = actual[y * 32 + x].wrapping_add(1);
            }
        }
        // The padding byte (column 31) is not a pixel: changing it is not a wrong pixel.
        actual[32 + 31] ^= 0xff;
        let w = wrong_pixels(p, &g, &expected, &actual);
        assert_eq!((w.count, w.columns, w.rows), (4, Some([29, 30]), Some([1, 2])));
    }
}
