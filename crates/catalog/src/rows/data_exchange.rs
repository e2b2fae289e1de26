//! `nppidei`: data exchange and initialisation — Convert, Copy, Set, Transpose, SwapChannels.

use super::map;
use crate::reference::{round_half_even, saturate};
use crate::{Args, Constant, DstShape, Format, GpuReference, Image, Library, ROUND_NEAR, Row, Sample, Tolerance};

const DOCS: &str = "https://docs.nvidia.com/cuda/npp/image_data_exchange_and_initialization.html";

const U8_1: Format = Format::new(Sample::U8, 1);
const U8_3: Format = Format::new(Sample::U8, 3);
const U8_4: Format = Format::new(Sample::U8, 4);
const U16_1: Format = Format::new(Sample::U16, 1);
const U16_4: Format = Format::new(Sample::U16, 4);
const F32_1: Format = Format::new(Sample::F32, 1);
const F32_3: Format = Format::new(Sample::F32, 3);
const F32_4: Format = Format::new(Sample::F32, 4);

fn copy(_: &Row, src: &[Image], dst: &mut Image) {
    map(src, dst, |v, _| v);
}

/// Convert to an integer type, rounding to nearest (the row's `NPP_RND_NEAR`) and saturating.
fn to_integer(row: &Row, src: &[Image], dst: &mut Image) {
    let sample = row.dst.sample;
    map(src, dst, |v, _| saturate(sample, round_half_even(v)));
}

fn transpose(_: &Row, src: &[Image], dst: &mut Image) {
    let s = &src[0];
    dst.fill(|x, y, c| s.at(y, x, c));
}

/// Each destination channel `c` is the source's channel `order[c]`.
fn swap(row: &Row, src: &[Image], dst: &mut Image) {
    let Args::MapOrder(order) = row.args else {
        unreachable!("SwapChannels rows take MapOrder")
    };
    let s = &src[0];
    dst.fill(|x, y, c| s.at(x, y, order[c] as usize));
}

fn set_reference(row: &Row, _: &[Image], dst: &mut Image) {
    let Args::Set(value) = row.args else {
        unreachable!("Set rows take Set")
    };
    dst.fill(|_, _, c| value.channel(c));
}

const fn convert(name: &'static str, src: Format, dst: Format) -> Row {
    Row {
        name,
        library: Library::Nppidei,
        operation: "convert the sample type",
        src,
        sources: 1,
        dst,
        dst_shape: DstShape::Same,
        args: Args::Map,
        reference: copy,
        tolerance: Tolerance::Exact,
        docs: DOCS,
        gpu_reference: None,
    }
}

const fn copy_row(name: &'static str, format: Format) -> Row {
    Row {
        operation: "copy",
        ..convert(name, format, format)
    }
}

const fn set(name: &'static str, format: Format, value: Constant) -> Row {
    Row {
        operation: "set every pixel to a constant",
        sources: 0,
        args: Args::Set(value),
        reference: set_reference,
        ..convert(name, format, format)
    }
}

const fn transpose_row(name: &'static str, format: Format) -> Row {
    Row {
        operation: "transpose",
        dst_shape: DstShape::Transposed,
        reference: transpose,
        ..convert(name, format, format)
    }
}

const fn swap_row(name: &'static str, format: Format, order: &'static [i32]) -> Row {
    Row {
        operation: "reorder channels",
        args: Args::MapOrder(order),
        reference: swap,
        ..convert(name, format, format)
    }
}

const fn to_integer_row(name: &'static str, dst: Format) -> Row {
    Row {
        args: Args::MapInt(ROUND_NEAR),
        reference: to_integer,
        ..convert(name, F32_1, dst)
    }
}

pub(super) static ROWS: &[Row] = &[
    Row {
        gpu_reference: Some(GpuReference::ConvertU8ToF32),
        ..convert("Convert_8u32f_C1R", U8_1, F32_1)
    },
    convert("Convert_8u32f_C3R", U8_3, F32_3),
    convert("Convert_8u32f_C4R", U8_4, F32_4),
    convert("Convert_8u16u_C1R", U8_1, U16_1),
    convert("Convert_16u32f_C1R", U16_1, F32_1),
    to_integer_row("Convert_32f8u_C1R", U8_1),
    to_integer_row("Convert_32f16u_C1R", U16_1),
    copy_row("Copy_8u_C1R", U8_1),
    copy_row("Copy_8u_C3R", U8_3),
    copy_row("Copy_16u_C4R", U16_4),
    copy_row("Copy_32f_C1R", F32_1),
    copy_row("Copy_32f_C3R", F32_3),
    set("Set_8u_C1R", U8_1, Constant::One(77.0)),
    set("Set_8u_C4R", U8_4, Constant::PerChannel(&[1.0, 2.0, 254.0, 255.0])),
    set("Set_32f_C3R", F32_3, Constant::PerChannel(&[1.5, -2.25, 3.0])),
    transpose_row("Transpose_8u_C1R", U8_1),
    transpose_row("Transpose_16u_C1R", U16_1),
    transpose_row("Transpose_32f_C1R", F32_1),
    swap_row("SwapChannels_8u_C3R", U8_3, &[2, 1, 0]),
    swap_row("SwapChannels_8u_C4R", U8_4, &[3, 0, 1, 2]),
];
