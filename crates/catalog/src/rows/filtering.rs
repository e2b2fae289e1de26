//! `nppif`: filtering with border control — box, Gauss and Sobel filters, replicated borders.

use super::correlate;
use crate::reference::{f32op, saturate};
use crate::{Args, BORDER_REPLICATE, DstShape, Format, Image, Library, MASK_SIZE_3_X_3, Row, Sample, Tolerance};

const DOCS: &str = "https://docs.nvidia.com/cuda/npp/image_filtering_functions.html";

const U8_1: Format = Format::new(Sample::U8, 1);
const U8_3: Format = Format::new(Sample::U8, 3);
const S16_1: Format = Format::new(Sample::S16, 1);
const F32_1: Format = Format::new(Sample::F32, 1);

const BOX_3: [f64; 9] = [1.0 / 9.0; 9];
/// NPP's Gauss kernel for a `size × size` mask: separable, sampled from a Gaussian of sigma
/// `0.4 + (size / 2) × 0.6` and normalised (nppi_filtering_functions.h, FilterGaussBorder).
pub(crate) fn gauss_kernel(size: usize) -> Vec<f64> {
    let sigma = 0.4 + (size / 2) as f64 * 0.6;
    let r = (size / 2) as f64;
    let one: Vec<f64> = (0..size)
        .map(|i| (-(i as f64 - r).powi(2) / (2.0 * sigma * sigma)).exp())
        .collect();
    let sum: f64 = one.iter().sum();
    let one: Vec<f64> = one.iter().map(|v| v / sum).collect();
    (0..size * size).map(|k| one[k / size] * one[k % size]).collect()
}

/// The horizontal Sobel kernel as NPP applies it (responds to horizontal edges; rows below minus
/// rows above).
const SOBEL_HORIZ_3: [f64; 9] = [-1.0, -2.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 1.0];

/// The filtered value in the row's destination type: rounded and saturated for integers.
fn filtered(row: &Row, src: &Image, x: usize, y: usize, c: usize, kernel: &[f64]) -> f64 {
    let v = correlate(src, x, y, c, 3, kernel);
    if row.dst.sample.is_float() {
        f32op(v)
    } else {
        saturate(row.dst.sample, v.round())
    }
}

fn box_filter(row: &Row, src: &[Image], dst: &mut Image) {
    dst.fill(|x, y, c| filtered(row, &src[0], x, y, c, &BOX_3));
}

fn gauss(row: &Row, src: &[Image], dst: &mut Image) {
    let kernel = gauss_kernel(3);
    dst.fill(|x, y, c| filtered(row, &src[0], x, y, c, &kernel));
}

fn sobel_horiz(row: &Row, src: &[Image], dst: &mut Image) {
    dst.fill(|x, y, c| filtered(row, &src[0], x, y, c, &SOBEL_HORIZ_3));
}

const fn box_row(name: &'static str, format: Format, tolerance: Tolerance) -> Row {
    Row {
        name,
        library: Library::Nppif,
        operation: "3×3 box filter",
        src: format,
        sources: 1,
        dst: format,
        dst_shape: DstShape::Same,
        args: Args::FilterBox {
            mask: 3,
            border: BORDER_REPLICATE,
        },
        reference: box_filter,
        tolerance,
        docs: DOCS,
        gpu_reference: None,
    }
}

const fn mask_row(
    name: &'static str,
    operation: &'static str,
    src: Format,
    dst: Format,
    reference: crate::Reference,
    tolerance: Tolerance,
) -> Row {
    Row {
        operation,
        dst,
        args: Args::FilterMask {
            mask_size: MASK_SIZE_3_X_3,
            border: BORDER_REPLICATE,
        },
        reference,
        ..box_row(name, src, tolerance)
    }
}

pub(super) static ROWS: &[Row] = &[
    box_row("FilterBoxBorder_8u_C1R", U8_1, Tolerance::Abs(1.0)),
    box_row("FilterBoxBorder_8u_C3R", U8_3, Tolerance::Abs(1.0)),
    box_row("FilterBoxBorder_32f_C1R", F32_1, Tolerance::Rel(1e-5)),
    mask_row(
        "FilterGaussBorder_8u_C1R",
        "3×3 Gauss filter",
        U8_1,
        U8_1,
        gauss,
        Tolerance::Abs(1.0),
    ),
    mask_row(
        "FilterGaussBorder_32f_C1R",
        "3×3 Gauss filter",
        F32_1,
        F32_1,
        gauss,
        Tolerance::Rel(1e-5),
    ),
    mask_row(
        "FilterSobelHorizBorder_8u16s_C1R",
        "3×3 horizontal Sobel filter",
        U8_1,
        S16_1,
        sobel_horiz,
        Tolerance::Exact,
    ),
];
