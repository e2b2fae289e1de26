//! What a call must produce, from the catalogue's CPU reference, and the check of what it did
//! produce: every ROI sample within the row's tolerance, every other byte untouched.

use nppbench_catalog::image::{decode, encode, par_rows, par_rows_weighted, source_pattern};
use nppbench_catalog::{Image, Primitive};
use nppbench_model::{Correctness, Geometry, WrongOutput, WrongSample};

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

/// What one row (or a reduction's values) holds against the reference: its worst error within
/// the tolerance, its first sample beyond it, and the bytes it changed outside the ROI.
#[derive(Default)]
struct RowCheck {
    worst: f64,
    first: Option<WrongSample>,
    outside_bytes: u64,
}

/// Compares a destination buffer with the expected one: each sample within the row's tolerance,
/// every byte outside the ROI (or the reduction's values) untouched. An output that is wrong is
/// a measurement, not an error: it is counted and located in [`Correctness::wrong`]. The error
/// is nppbench's own: buffers of different sizes.
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
    // Each sample beyond the tolerance (or NaN) is wrong; the others raise the worst error.
    let judge = |check: &mut RowCheck, e: &[u8], a: &[u8], at: (u32, u32, u32)| {
        let (e, a) = (decode(row.dst.sample, e), decode(row.dst.sample, a));
        let err = row.tolerance.error(e, a);
        if err > limit || err.is_nan() {
            check.first.get_or_insert(WrongSample {
                row: at.0,
                pixel: at.1,
                channel: at.2,
                expected: e,
                actual: a,
            });
        } else {
            check.worst = check.worst.max(err);
        }
    };
    let (checks, pixels_checked, padding_bytes_checked) = if !row.dst_is_image() {
        let mut check = RowCheck::default();
        for i in 0..dw as usize {
            let at = 8 * i;
            judge(
                &mut check,
                &expected[at..at + size],
                &actual[at..at + size],
                (0, i as u32, 0),
            );
        }
        let value = |x: usize| x % 8 < size && x / 8 < dw as usize;
        check.outside_bytes = (0..expected.len())
            .filter(|&x| !value(x) && expected[x] != actual[x])
            .count() as u64;
        let values = dw as usize * size;
        (vec![check], u64::from(dw), (expected.len() - values) as u64)
    } else {
        // Rows in parallel: each finds its worst error, its first wrong sample and its padding.
        let stride = g.dst_stride as usize;
        let row_bytes = dw as usize * channels * size;
        let mut checks: Vec<RowCheck> = (0..dh as usize).map(|_| RowCheck::default()).collect();
        // One slot per row, each standing for a row of both buffers.
        par_rows_weighted(&mut checks, 1, 2 * stride, |y, slot| {
            let (e_line, a_line) = (
                &expected[y * stride..(y + 1) * stride],
                &actual[y * stride..(y + 1) * stride],
            );
            let check = &mut slot[0];
            // A row identical byte for byte, with no NaN in it, has no error: what a correct call
            // gives, found at memory speed (a 4K image's rows in milliseconds, not tens of them).
            let identical =
                e_line[..row_bytes] == a_line[..row_bytes] && !has_nan(row.dst.sample, &e_line[..row_bytes]);
            for i in (0..row_bytes / size).filter(|_| !identical) {
                let at = (y as u32, (i / channels) as u32, (i % channels) as u32);
                judge(
                    check,
                    &e_line[i * size..(i + 1) * size],
                    &a_line[i * size..(i + 1) * size],
                    at,
                );
            }
            check.outside_bytes = (row_bytes..stride).filter(|&x| e_line[x] != a_line[x]).count() as u64;
        });
        (
            checks,
            u64::from(dw) * u64::from(dh),
            ((stride - row_bytes) * dh as usize) as u64,
        )
    };
    let first = checks.iter().find_map(|c| c.first);
    let outside_bytes = checks.iter().map(|c| c.outside_bytes).sum();
    let wrong = (first.is_some() || outside_bytes > 0).then(|| {
        let located = wrong_pixels(p, g, expected, actual);
        WrongOutput {
            pixels: located.count,
            first,
            rows: located.rows,
            columns: located.columns,
            outside_bytes,
        }
    });
    Ok(Correctness {
        pixels_checked,
        padding_bytes_checked,
        max_abs_error: checks.iter().map(|c| c.worst).fold(0.0, f64::max),
        wrong,
        aligned_twin: None,
    })
}

/// What [`compare`] found wrong, in words: the first wrong sample (or byte outside the ROI) and
/// how many: a failure's reason where a caller must fail (the reference kernel's check).
pub fn wrong_words(p: Primitive, w: &WrongOutput) -> String {
    let name = p.npp_name();
    let first = match w.first {
        Some(s) if p.row().dst_is_image() => format!(
            "at row {}, pixel {}, channel {}: {} where {} is expected",
            s.row, s.pixel, s.channel, s.actual, s.expected
        ),
        Some(s) => format!("at value {}: {} where {} is expected", s.pixel, s.actual, s.expected),
        None => "nowhere in its ROI".to_owned(),
    };
    let outside = match w.outside_bytes {
        0 => String::new(),
        n => format!("; it wrote {n} bytes outside its ROI"),
    };
    format!(
        "{name} output differs from the CPU reference {first} ({} wrong){outside}",
        plural(w.pixels, "pixel")
    )
}

fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
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
    fn a_wrong_pixel_is_counted_and_located_not_an_error() {
        let g = Geometry::new(P, 3, 2, 4);
        let src = source_buffers(P, &g);
        let expected = expected_output(P, &g, &src);
        let right = compare(P, &g, &expected, &expected).unwrap();
        assert_eq!((right.max_abs_error, right.wrong), (0.0, None));
        let mut wrong = expected.clone();
        wrong[16..20].copy_from_slice(&1.5f32.to_le_bytes());
        let c = compare(P, &g, &expected, &wrong).unwrap();
        let w = c.wrong.expect("a wrong pixel is found");
        assert_eq!(
            (w.pixels, w.rows, w.columns, w.outside_bytes),
            (1, Some([1, 1]), Some([0, 0]), 0)
        );
        let first = w.first.unwrap();
        assert_eq!((first.row, first.pixel, first.channel, first.actual), (1, 0, 0, 1.5));
        assert!(wrong_words(P, &w).contains("row 1, pixel 0"), "{}", wrong_words(P, &w));
        let mut spilled = expected.clone();
        spilled[12] = 0;
        let w = compare(P, &g, &expected, &spilled).unwrap().wrong.unwrap();
        assert_eq!((w.pixels, w.first, w.outside_bytes), (0, None, 1));
        assert!(wrong_words(P, &w).contains("outside its ROI"), "{}", wrong_words(P, &w));
        // Buffers of different sizes are nppbench's own fault: the one error left.
        assert!(compare(P, &g, &expected, &expected[1..]).is_err());
    }

    #[test]
    fn identical_rows_pass_at_once_but_a_nan_never_passes() {
        let g = Geometry::new(P, 3, 2, 4);
        let src = source_buffers(P, &g);
        let mut nan = expected_output(P, &g, &src);
        nan[16..20].copy_from_slice(&f32::NAN.to_le_bytes());
        // The same bytes on both sides, a NaN among them: the sample-by-sample check judges it.
        let first = compare(P, &g, &nan, &nan.clone())
            .unwrap()
            .wrong
            .unwrap()
            .first
            .unwrap();
        assert_eq!((first.row, first.pixel), (1, 0));
    }

    #[test]
    fn every_row_has_an_expected_output_that_passes_its_own_check() {
        for p in Primitive::all() {
            let g = Geometry::aligned(p, 19, 6, 16, 16);
            let sources = source_buffers(p, &g);
            let expected = expected_output(p, &g, &sources);
            let c = compare(p, &g, &expected, &expected).unwrap_or_else(|e| panic!("{p}: {e}"));
            assert!(c.pixels_checked > 0 && c.is_right(), "{p}");
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
        assert!(compare(p, &g, &expected, &off_by_one).unwrap().is_right());
        let mut off_by_two = expected.clone();
        off_by_two[0] = off_by_two[0].wrapping_add(2);
        assert!(!compare(p, &g, &expected, &off_by_two).unwrap().is_right());
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
