//! `nppig`: geometry transforms — Mirror, and Resize to half size by super-sampling.

use crate::reference::{f32op, saturate};
use crate::{
    Args, DstShape, Format, HORIZONTAL_AXIS, INTER_SUPER, Image, Library, Row, Sample, Tolerance, VERTICAL_AXIS,
};

const DOCS: &str = "https://docs.nvidia.com/cuda/npp/image_geometry_transforms_functions.html";

const U8_1: Format = Format::new(Sample::U8, 1);
const U8_3: Format = Format::new(Sample::U8, 3);
const F32_1: Format = Format::new(Sample::F32, 1);

fn mirror(row: &Row, src: &[Image], dst: &mut Image) {
    let Args::MapInt(axis) = row.args else {
        unreachable!("Mirror rows take MapInt")
    };
    let s = &src[0];
    let (w, h) = (s.width, s.height);
    dst.fill(|x, y, c| match axis {
        HORIZONTAL_AXIS => s.at(x, h - 1 - y, c),
        VERTICAL_AXIS => s.at(w - 1 - x, y, c),
        _ => s.at(w - 1 - x, h - 1 - y, c),
    });
}

/// The share of source pixel `i` (covering `[i, i + 1)`) inside `[lo, hi)`.
fn overlap(i: usize, lo: f64, hi: f64) -> f64 {
    let (a, b) = (i as f64, i as f64 + 1.0);
    (b.min(hi) - a.max(lo)).max(0.0)
}

/// Super-sampling: each destination pixel is the area-weighted mean of the source pixels its
/// footprint covers (the footprint is `src / dst` source pixels wide and high).
fn resize_super(row: &Row, src: &[Image], dst: &mut Image) {
    let s = &src[0];
    let (sx, sy) = (s.width as f64 / dst.width as f64, s.height as f64 / dst.height as f64);
    let sample = row.dst.sample;
    dst.fill(|x, y, c| {
        let (x0, x1) = (x as f64 * sx, (x + 1) as f64 * sx);
        let (y0, y1) = (y as f64 * sy, (y + 1) as f64 * sy);
        let mut sum = 0.0;
        for j in (y0.floor() as usize)..(y1.ceil() as usize).min(s.height) {
            let wy = overlap(j, y0, y1);
            for i in (x0.floor() as usize)..(x1.ceil() as usize).min(s.width) {
                sum += wy * overlap(i, x0, x1) * s.at(i, j, c);
            }
        }
        let v = sum / (sx * sy);
        if sample.is_float() {
            f32op(v)
        } else {
            saturate(sample, v.round())
        }
    });
}

const fn mirror_row(name: &'static str, format: Format, axis: i32) -> Row {
    Row {
        name,
        library: Library::Nppig,
        operation: "mirror",
        src: format,
        sources: 1,
        dst: format,
        dst_shape: DstShape::Same,
        args: Args::MapInt(axis),
        reference: mirror,
        tolerance: Tolerance::Exact,
        docs: DOCS,
        gpu_reference: None,
    }
}

const fn resize_row(name: &'static str, format: Format, tolerance: Tolerance) -> Row {
    Row {
        operation: "resize to half size (super-sampling)",
        dst_shape: DstShape::Scaled { num: 1, den: 2 },
        args: Args::Resize {
            interpolation: INTER_SUPER,
        },
        reference: resize_super,
        tolerance,
        ..mirror_row(name, format, 0)
    }
}

pub(super) static ROWS: &[Row] = &[
    mirror_row("Mirror_8u_C1R", U8_1, VERTICAL_AXIS),
    mirror_row("Mirror_8u_C3R", U8_3, HORIZONTAL_AXIS),
    mirror_row("Mirror_32f_C1R", F32_1, HORIZONTAL_AXIS),
    resize_row("Resize_8u_C1R", U8_1, Tolerance::Abs(1.0)),
    resize_row("Resize_32f_C1R", F32_1, Tolerance::Rel(1e-3)),
];
