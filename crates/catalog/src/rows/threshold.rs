//! `nppitc`: threshold and compare.

use super::{map, zip};
use crate::{Args, CmpOp, DstShape, Format, Image, Library, Row, Sample, Tolerance};

const DOCS: &str = "https://docs.nvidia.com/cuda/npp/image_threshold_and_compare_operations.html";

const U8_1: Format = Format::new(Sample::U8, 1);
const F32_1: Format = Format::new(Sample::F32, 1);

/// Where `pixel OP threshold` holds, the pixel becomes the threshold; elsewhere it is kept.
fn threshold(row: &Row, src: &[Image], dst: &mut Image) {
    let Args::Threshold { threshold, op } = row.args else {
        unreachable!("Threshold rows take Threshold")
    };
    map(src, dst, |v, _| if op.holds(v, threshold) { threshold } else { v });
}

/// 255 where `src1 OP src2` holds, else 0.
fn compare(row: &Row, src: &[Image], dst: &mut Image) {
    let Args::Compare(op) = row.args else {
        unreachable!("Compare rows take Compare")
    };
    zip(src, dst, |a, b, _| if op.holds(a, b) { 255.0 } else { 0.0 });
}

const fn threshold_row(name: &'static str, format: Format, value: f64, op: CmpOp) -> Row {
    Row {
        name,
        library: Library::Nppitc,
        operation: "threshold",
        src: format,
        sources: 1,
        dst: format,
        dst_shape: DstShape::Same,
        args: Args::Threshold { threshold: value, op },
        reference: threshold,
        tolerance: Tolerance::Exact,
        docs: DOCS,
        gpu_reference: None,
    }
}

const fn compare_row(name: &'static str, format: Format, op: CmpOp) -> Row {
    Row {
        operation: "compare two images",
        sources: 2,
        dst: U8_1,
        args: Args::Compare(op),
        reference: compare,
        ..threshold_row(name, format, 0.0, op)
    }
}

pub(super) static ROWS: &[Row] = &[
    threshold_row("Threshold_8u_C1R", U8_1, 128.0, CmpOp::Greater),
    threshold_row("Threshold_32f_C1R", F32_1, 0.5, CmpOp::Less),
    compare_row("Compare_8u_C1R", U8_1, CmpOp::Greater),
    compare_row("Compare_32f_C1R", F32_1, CmpOp::LessEq),
];
