//! The rows, one file per NPP library (group of functions). A row's CPU reference sits in it.

mod arithmetic;
mod color;
mod data_exchange;
mod filtering;
mod geometry;
mod statistics;
mod threshold;

use crate::{Image, Row};

/// Every table, in the order pages list them. `data_exchange` comes first: its first row is
/// [`crate::Primitive::CONVERT_8U32F_C1R`].
pub(crate) static ALL: &[&[Row]] = &[
    data_exchange::ROWS,
    arithmetic::ROWS,
    threshold::ROWS,
    filtering::ROWS,
    geometry::ROWS,
    color::ROWS,
    statistics::ROWS,
];

#[cfg(test)]
pub(crate) use filtering::gauss_kernel as gauss_kernel_for_tests;

/// `dst = f(src, channel)`, sample by sample.
pub(crate) fn map(src: &[Image], dst: &mut Image, f: impl Fn(f64, usize) -> f64 + Sync) {
    let s = &src[0];
    dst.fill(|x, y, c| f(s.at(x, y, c), c));
}

/// `dst = f(a, b, channel)` over two sources.
pub(crate) fn zip(src: &[Image], dst: &mut Image, f: impl Fn(f64, f64, usize) -> f64 + Sync) {
    let (a, b) = (&src[0], &src[1]);
    dst.fill(|x, y, c| f(a.at(x, y, c), b.at(x, y, c), c));
}

/// A 3×3 (or larger, odd) convolution with replicated borders; `weights` row-major, applied
/// as correlation (weight (i, j) on the pixel at (x + i − r, y + j − r)).
pub(crate) fn correlate(src: &Image, x: usize, y: usize, c: usize, size: usize, weights: &[f64]) -> f64 {
    let r = (size / 2) as i64;
    let mut sum = 0.0;
    for j in 0..size {
        for i in 0..size {
            let w = weights[j * size + i];
            if w != 0.0 {
                sum += w * src.clamped(x as i64 + i as i64 - r, y as i64 + j as i64 - r, c);
            }
        }
    }
    sum
}
