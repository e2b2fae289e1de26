//! `nppist`: statistics — Sum, Mean, MinMax, each with a scratch buffer sized by NPP's own
//! `…GetBufferHostSize` function.

use crate::{Args, DstShape, Format, Image, Library, Row, Sample, Tolerance};

const DOCS: &str = "https://docs.nvidia.com/cuda/npp/image_statistics_functions.html";

const U8_1: Format = Format::new(Sample::U8, 1);
const F32_1: Format = Format::new(Sample::F32, 1);
const F64_1: Format = Format::new(Sample::F64, 1);

fn sum(_: &Row, src: &[Image], dst: &mut Image) {
    dst.data[0] = src[0].data.iter().sum();
}

fn mean(_: &Row, src: &[Image], dst: &mut Image) {
    let s = &src[0];
    dst.data[0] = s.data.iter().sum::<f64>() / s.data.len().max(1) as f64;
}

fn min_max(_: &Row, src: &[Image], dst: &mut Image) {
    let s = &src[0].data;
    dst.data[0] = s.iter().copied().fold(f64::INFINITY, f64::min);
    dst.data[1] = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
}

const fn reduce(name: &'static str, operation: &'static str, src: Format, buffer_size: &'static str) -> Row {
    Row {
        name,
        library: Library::Nppist,
        operation,
        src,
        sources: 1,
        dst: F64_1,
        dst_shape: DstShape::Scalars { count: 1 },
        args: Args::Reduce { buffer_size },
        reference: sum,
        tolerance: Tolerance::Rel(1e-9),
        docs: DOCS,
        gpu_reference: None,
    }
}

const fn min_max_row(name: &'static str, format: Format, buffer_size: &'static str) -> Row {
    Row {
        dst: format,
        dst_shape: DstShape::Scalars { count: 2 },
        args: Args::Reduce2 { buffer_size },
        reference: min_max,
        tolerance: Tolerance::Exact,
        ..reduce(name, "minimum and maximum", format, buffer_size)
    }
}

pub(super) static ROWS: &[Row] = &[
    reduce("Sum_8u_C1R", "sum", U8_1, "nppiSumGetBufferHostSize_8u_C1R_Ctx"),
    Row {
        tolerance: Tolerance::Rel(1e-5),
        ..reduce("Sum_32f_C1R", "sum", F32_1, "nppiSumGetBufferHostSize_32f_C1R_Ctx")
    },
    Row {
        reference: mean,
        ..reduce("Mean_8u_C1R", "mean", U8_1, "nppiMeanGetBufferHostSize_8u_C1R_Ctx")
    },
    Row {
        reference: mean,
        tolerance: Tolerance::Rel(1e-5),
        ..reduce("Mean_32f_C1R", "mean", F32_1, "nppiMeanGetBufferHostSize_32f_C1R_Ctx")
    },
    min_max_row("MinMax_8u_C1R", U8_1, "nppiMinMaxGetBufferHostSize_8u_C1R_Ctx"),
    min_max_row("MinMax_32f_C1R", F32_1, "nppiMinMaxGetBufferHostSize_32f_C1R_Ctx"),
];
