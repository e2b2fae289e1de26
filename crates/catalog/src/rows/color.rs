//! `nppicc`: colour conversion — RGB to gray and RGB to YUV, with NPP's documented coefficients.

use crate::reference::{f32op, saturate};
use crate::{Args, DstShape, Format, Image, Library, Row, Sample, Tolerance};

const DOCS: &str = "https://docs.nvidia.com/cuda/npp/image_color_conversion_functions.html";

const U8_1: Format = Format::new(Sample::U8, 1);
const U8_3: Format = Format::new(Sample::U8, 3);
const F32_1: Format = Format::new(Sample::F32, 1);
const F32_3: Format = Format::new(Sample::F32, 3);

fn luma(r: f64, g: f64, b: f64) -> f64 {
    0.299 * r + 0.587 * g + 0.114 * b
}

/// The value in the row's destination type: rounded and saturated for integers.
fn out(row: &Row, v: f64) -> f64 {
    if row.dst.sample.is_float() {
        f32op(v)
    } else {
        saturate(row.dst.sample, v.round())
    }
}

fn rgb_to_gray(row: &Row, src: &[Image], dst: &mut Image) {
    let s = &src[0];
    dst.fill(|x, y, _| out(row, luma(s.at(x, y, 0), s.at(x, y, 1), s.at(x, y, 2))));
}

fn rgb_to_yuv(row: &Row, src: &[Image], dst: &mut Image) {
    let s = &src[0];
    dst.fill(|x, y, c| {
        let (r, g, b) = (s.at(x, y, 0), s.at(x, y, 1), s.at(x, y, 2));
        let v = match c {
            0 => luma(r, g, b),
            1 => -0.147 * r - 0.289 * g + 0.436 * b + 128.0,
            _ => 0.615 * r - 0.515 * g - 0.100 * b + 128.0,
        };
        out(row, v)
    });
}

const fn gray_row(name: &'static str, src: Format, dst: Format, tolerance: Tolerance) -> Row {
    Row {
        name,
        library: Library::Nppicc,
        operation: "RGB to gray",
        src,
        sources: 1,
        dst,
        dst_shape: DstShape::Same,
        args: Args::Map,
        reference: rgb_to_gray,
        tolerance,
        docs: DOCS,
        gpu_reference: None,
    }
}

pub(super) static ROWS: &[Row] = &[
    gray_row("RGBToGray_8u_C3C1R", U8_3, U8_1, Tolerance::Abs(1.0)),
    gray_row("RGBToGray_32f_C3C1R", F32_3, F32_1, Tolerance::Rel(1e-5)),
    Row {
        operation: "RGB to YUV",
        reference: rgb_to_yuv,
        tolerance: Tolerance::Abs(2.0),
        ..gray_row("RGBToYUV_8u_C3R", U8_3, U8_3, Tolerance::Abs(2.0))
    },
];
