//! The table of primitives: for each, the NPP function it calls, a CPU reference and how exact
//! the output must be. Adding a primitive is a row here and a variant of
//! [`nppbench_model::Primitive`].

use std::ffi::c_int;

use nppbench_gpu::{DeviceBuffer, DeviceProps, Stream};
use nppbench_model::{Correctness, Geometry, Primitive};

use crate::call::{NppError, check};
use crate::sys::{Functions, NppStatus, NppStreamContext, NppiSize};

/// The byte the destination is filled with before a call: padding must keep it.
pub const DST_FILL: u8 = 0xA5;

/// `NppStreamContext` for one stream on one device.
#[derive(Debug, Clone, Copy)]
pub struct StreamContext {
    raw: NppStreamContext,
}

// SAFETY: the context holds a stream handle and device numbers; CUDA stream handles may be used
// from any host thread, and the numbers are plain data.
unsafe impl Send for StreamContext {}
// SAFETY: as above; the context is never mutated after creation.
unsafe impl Sync for StreamContext {}

impl StreamContext {
    /// Fills the context the way `nppGetStreamContext` would for `stream`.
    pub fn new(stream: &Stream, props: &DeviceProps) -> StreamContext {
        StreamContext {
            raw: NppStreamContext {
                h_stream: stream.raw().cast(),
                n_cuda_device_id: props.ordinal as c_int,
                n_multi_processor_count: props.sm_count,
                n_max_threads_per_multi_processor: props.max_threads_per_sm,
                n_max_threads_per_block: props.max_threads_per_block,
                n_shared_mem_per_block: props.shared_mem_per_block,
                n_cuda_dev_attr_compute_capability_major: props.compute_capability.0,
                n_cuda_dev_attr_compute_capability_minor: props.compute_capability.1,
                n_stream_flags: stream.flags(),
                n_reserved0: 0,
            },
        }
    }
}

/// One row of the table.
struct Row {
    primitive: Primitive,
    /// Calls the function, or returns `None` when this NPP does not export it.
    launch: fn(&Functions, &Launch) -> Option<NppStatus>,
    /// Fills one destination row from one source row.
    reference_row: fn(src: &[u8], dst: &mut [u8]),
    /// The largest difference between two destination rows' pixels.
    max_abs_error: fn(expected: &[u8], actual: &[u8]) -> f64,
    /// The largest error accepted.
    tolerance: f64,
}

/// A launch's arguments, checked against the buffers before any call.
struct Launch {
    src: u64,
    src_step: c_int,
    dst: u64,
    dst_step: c_int,
    roi: NppiSize,
    ctx: NppStreamContext,
}

const TABLE: &[Row] = &[Row {
    primitive: Primitive::Convert8u32fC1,
    launch: |fns, a| {
        let f = fns.convert_8u32f_c1r_ctx?;
        // SAFETY: `run` checked that both buffers hold `step × height` bytes and that the steps
        // hold a row; the pointers are live device allocations; the context names a live stream.
        Some(unsafe {
            f(
                a.src as *const u8,
                a.src_step,
                a.dst as *mut f32,
                a.dst_step,
                a.roi,
                a.ctx,
            )
        })
    },
    reference_row: |src, dst| {
        for (s, d) in src.iter().zip(dst.chunks_exact_mut(4)) {
            d.copy_from_slice(&f32::from(*s).to_ne_bytes());
        }
    },
    max_abs_error: |expected, actual| {
        expected
            .chunks_exact(4)
            .zip(actual.chunks_exact(4))
            .map(|(e, a)| {
                let e = f32::from_ne_bytes(e.try_into().unwrap_or_default());
                let a = f32::from_ne_bytes(a.try_into().unwrap_or_default());
                if e.is_nan() || a.is_nan() {
                    f64::INFINITY
                } else {
                    f64::from((e - a).abs())
                }
            })
            .fold(0.0, f64::max)
    },
    tolerance: 0.0,
}];

fn row(primitive: Primitive) -> &'static Row {
    TABLE
        .iter()
        .find(|r| r.primitive == primitive)
        .expect("every Primitive has a row in TABLE (checked by a test)")
}

pub(crate) fn is_available(fns: &Functions, primitive: Primitive) -> bool {
    match primitive {
        Primitive::Convert8u32fC1 => fns.convert_8u32f_c1r_ctx.is_some(),
    }
}

pub(crate) fn run(
    fns: &Functions,
    primitive: Primitive,
    g: &Geometry,
    src: &DeviceBuffer,
    dst: &mut DeviceBuffer,
    ctx: &StreamContext,
) -> Result<(), NppError> {
    let function = primitive.npp_name();
    let bad = |details: String| NppError::BadArgument { function, details };
    g.validate(primitive).map_err(|e| bad(e.to_string()))?;
    if src.len() < g.src_bytes() {
        return Err(bad(format!(
            "source buffer of {} bytes < src_stride × height = {}",
            src.len(),
            g.src_bytes()
        )));
    }
    if dst.len() < g.dst_bytes() {
        return Err(bad(format!(
            "destination buffer of {} bytes < dst_stride × height = {}",
            dst.len(),
            g.dst_bytes()
        )));
    }
    // validate() bounded every field by i32::MAX.
    let launch = Launch {
        src: src.device_ptr(),
        src_step: g.src_stride as c_int,
        dst: dst.device_ptr(),
        dst_step: g.dst_stride as c_int,
        roi: NppiSize {
            width: g.width as c_int,
            height: g.height as c_int,
        },
        ctx: ctx.raw,
    };
    let status = (row(primitive).launch)(fns, &launch).ok_or(NppError::Missing { function })?;
    check(function, status, || {
        format!(
            "width {} height {} src_stride {} dst_stride {}",
            g.width, g.height, g.src_stride, g.dst_stride
        )
    })
}

/// A non-trivial source image of `stride × height` bytes: every byte value occurs, neighbours
/// differ, and padding is filled too (so the padded-ROI fix reads defined data).
pub fn source_pattern(g: &Geometry) -> Vec<u8> {
    // 151 is odd, so any 256 consecutive bytes take every value once.
    (0..g.src_bytes() as usize)
        .map(|i| ((i * 151 + 17) % 256) as u8)
        .collect()
}

/// The destination buffer the CPU reference expects after one call on a buffer filled with
/// [`DST_FILL`]: the ROI converted, every other byte untouched. `g` must be valid
/// ([`Geometry::validate`]) and `src` hold `src_stride × height` bytes.
pub fn reference_output(primitive: Primitive, g: &Geometry, src: &[u8]) -> Vec<u8> {
    assert!(
        g.validate(primitive).is_ok() && src.len() as u64 >= g.src_bytes(),
        "reference_output needs a valid geometry and a whole source image"
    );
    let mut dst = vec![DST_FILL; g.dst_bytes() as usize];
    let src_row = (u64::from(g.width) * primitive.src_bytes_per_pixel()) as usize;
    let dst_row = (u64::from(g.width) * primitive.dst_bytes_per_pixel()) as usize;
    for y in 0..g.height as usize {
        let s = &src[y * g.src_stride as usize..][..src_row];
        let d = &mut dst[y * g.dst_stride as usize..][..dst_row];
        (row(primitive).reference_row)(s, d);
    }
    dst
}

/// Compares NPP's destination buffer with the reference: pixel error within the primitive's
/// tolerance, padding bytes untouched. The error says where the first difference is.
pub fn max_abs_error(
    primitive: Primitive,
    g: &Geometry,
    expected: &[u8],
    actual: &[u8],
) -> Result<Correctness, String> {
    let r = row(primitive);
    let dst_row = (u64::from(g.width) * primitive.dst_bytes_per_pixel()) as usize;
    let stride = g.dst_stride as usize;
    let mut worst: f64 = 0.0;
    let mut padding = 0u64;
    for y in 0..g.height as usize {
        let (e, a) = (&expected[y * stride..][..stride], &actual[y * stride..][..stride]);
        let err = (r.max_abs_error)(&e[..dst_row], &a[..dst_row]);
        if err > r.tolerance {
            return Err(format!(
                "{} output differs from the CPU reference in row {y}: max abs error {err} > {}",
                primitive.npp_name(),
                r.tolerance
            ));
        }
        worst = worst.max(err);
        if let Some(x) = (dst_row..stride).find(|&x| e[x] != a[x]) {
            return Err(format!(
                "{} wrote outside its ROI: row {y}, byte {x} of the stride padding",
                primitive.npp_name()
            ));
        }
        padding += (stride - dst_row) as u64;
    }
    Ok(Correctness {
        pixels_checked: g.pixels(),
        padding_bytes_checked: padding,
        max_abs_error: worst,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_primitive_has_a_row() {
        for p in Primitive::ALL {
            assert_eq!(row(p).primitive, p);
        }
    }

    #[test]
    fn source_pattern_is_not_trivial() {
        let g = Geometry::new(Primitive::Convert8u32fC1, 31, 31, 32);
        let src = source_pattern(&g);
        let distinct: std::collections::BTreeSet<_> = src.iter().collect();
        assert_eq!(distinct.len(), 256);
    }

    #[test]
    fn reference_converts_the_roi_and_leaves_padding() {
        let p = Primitive::Convert8u32fC1;
        let g = Geometry::new(p, 3, 2, 4);
        let src = vec![0, 1, 255, 9, 7, 8, 200, 9];
        let dst = reference_output(p, &g, &src);
        let px = |y: usize, x: usize| f32::from_ne_bytes(dst[y * 16 + x * 4..][..4].try_into().unwrap());
        assert_eq!((px(0, 0), px(0, 2), px(1, 0), px(1, 2)), (0.0, 255.0, 7.0, 200.0));
        assert!(dst[12..16].iter().all(|&b| b == DST_FILL));
    }

    #[test]
    fn a_wrong_pixel_fails_the_comparison() {
        let p = Primitive::Convert8u32fC1;
        let g = Geometry::new(p, 3, 2, 4);
        let src = source_pattern(&g);
        let expected = reference_output(p, &g, &src);
        assert_eq!(max_abs_error(p, &g, &expected, &expected).unwrap().max_abs_error, 0.0);
        let mut wrong = expected.clone();
        wrong[16..20].copy_from_slice(&1.5f32.to_ne_bytes());
        let err = max_abs_error(p, &g, &expected, &wrong).unwrap_err();
        assert!(err.contains("row 1"), "{err}");
        let mut spilled = expected.clone();
        spilled[12] = 0;
        let err = max_abs_error(p, &g, &expected, &spilled).unwrap_err();
        assert!(err.contains("outside its ROI"), "{err}");
    }
}
