//! `nppial`: arithmetic and logical operations — AddC, MulC, Add, Sub, Mul, AbsDiff, And.

use super::{map, zip};
use crate::reference::{f32op, saturate, scaled};
use crate::{Args, Constant, DstShape, Format, Image, Library, Row, Sample, Tolerance};

const DOCS: &str = "https://docs.nvidia.com/cuda/npp/image_arithmetic_and_logical_operations.html";

const U8_1: Format = Format::new(Sample::U8, 1);
const U8_3: Format = Format::new(Sample::U8, 3);
const U16_1: Format = Format::new(Sample::U16, 1);
const F32_1: Format = Format::new(Sample::F32, 1);
const F32_3: Format = Format::new(Sample::F32, 3);

/// `v` as the row's destination type: scaled and saturated for integers, single precision for
/// floats.
fn result(row: &Row, v: f64, scale: Option<i32>) -> f64 {
    if row.dst.sample.is_float() {
        f32op(v)
    } else {
        scaled(row.dst.sample, v, scale.unwrap_or(0))
    }
}

fn add_c(row: &Row, src: &[Image], dst: &mut Image) {
    let Args::MapConst { constant, scale } = row.args else {
        unreachable!("AddC rows take MapConst")
    };
    map(src, dst, |v, c| result(row, v + constant.channel(c), scale));
}

fn mul_c(row: &Row, src: &[Image], dst: &mut Image) {
    let Args::MapConst { constant, scale } = row.args else {
        unreachable!("MulC rows take MapConst")
    };
    map(src, dst, |v, c| result(row, v * constant.channel(c), scale));
}

fn binary_scale(row: &Row) -> Option<i32> {
    match row.args {
        Args::Binary { scale } => scale,
        _ => unreachable!("two-source arithmetic rows take Binary"),
    }
}

fn add(row: &Row, src: &[Image], dst: &mut Image) {
    let scale = binary_scale(row);
    zip(src, dst, |a, b, _| result(row, a + b, scale));
}

/// NPP subtracts the first source from the second: `dst = src2 − src1`.
fn sub(row: &Row, src: &[Image], dst: &mut Image) {
    let scale = binary_scale(row);
    zip(src, dst, |a, b, _| result(row, b - a, scale));
}

fn mul(row: &Row, src: &[Image], dst: &mut Image) {
    let scale = binary_scale(row);
    zip(src, dst, |a, b, _| result(row, a * b, scale));
}

fn abs_diff(row: &Row, src: &[Image], dst: &mut Image) {
    zip(src, dst, |a, b, _| result(row, (a - b).abs(), None));
}

fn and(row: &Row, src: &[Image], dst: &mut Image) {
    zip(src, dst, |a, b, _| {
        saturate(row.dst.sample, f64::from(a as u32 & b as u32))
    });
}

const fn base(name: &'static str, operation: &'static str, format: Format, args: Args) -> Row {
    Row {
        name,
        library: Library::Nppial,
        operation,
        src: format,
        sources: 1,
        dst: format,
        dst_shape: DstShape::Same,
        args,
        reference: add_c,
        tolerance: Tolerance::Exact,
        docs: DOCS,
        gpu_reference: None,
    }
}

const fn add_c_row(name: &'static str, format: Format, constant: Constant, scale: Option<i32>) -> Row {
    base(name, "add a constant", format, Args::MapConst { constant, scale })
}

const fn mul_c_row(name: &'static str, format: Format, constant: Constant, scale: Option<i32>) -> Row {
    Row {
        reference: mul_c,
        ..base(
            name,
            "multiply by a constant",
            format,
            Args::MapConst { constant, scale },
        )
    }
}

const fn binary(
    name: &'static str,
    operation: &'static str,
    format: Format,
    scale: Option<i32>,
    reference: crate::Reference,
) -> Row {
    Row {
        sources: 2,
        reference,
        ..base(name, operation, format, Args::Binary { scale })
    }
}

pub(super) static ROWS: &[Row] = &[
    add_c_row("AddC_8u_C1RSfs", U8_1, Constant::One(37.0), Some(0)),
    add_c_row(
        "AddC_8u_C3RSfs",
        U8_3,
        Constant::PerChannel(&[10.0, 100.0, 200.0]),
        Some(0),
    ),
    add_c_row("AddC_16u_C1RSfs", U16_1, Constant::One(1000.0), Some(0)),
    add_c_row("AddC_32f_C1R", F32_1, Constant::One(1.25), None),
    mul_c_row("MulC_8u_C1RSfs", U8_1, Constant::One(3.0), Some(1)),
    mul_c_row("MulC_32f_C1R", F32_1, Constant::One(1.5), None),
    mul_c_row("MulC_32f_C3R", F32_3, Constant::PerChannel(&[0.5, 2.0, -1.0]), None),
    binary("Add_8u_C1RSfs", "add two images", U8_1, Some(0), add),
    binary("Add_16u_C1RSfs", "add two images", U16_1, Some(0), add),
    binary("Add_32f_C1R", "add two images", F32_1, None, add),
    binary("Sub_8u_C1RSfs", "subtract two images", U8_1, Some(0), sub),
    binary("Sub_32f_C1R", "subtract two images", F32_1, None, sub),
    binary("Mul_8u_C1RSfs", "multiply two images", U8_1, Some(8), mul),
    binary("Mul_32f_C1R", "multiply two images", F32_1, None, mul),
    binary("AbsDiff_8u_C1R", "absolute difference", U8_1, None, abs_diff),
    binary("AbsDiff_32f_C1R", "absolute difference", F32_1, None, abs_diff),
    binary("And_8u_C1R", "bitwise and", U8_1, None, and),
];
