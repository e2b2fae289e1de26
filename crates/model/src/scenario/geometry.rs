//! The geometry axis: an image's region of interest and row strides, and the checks NPP needs
//! of them before any GPU work.

use serde::{Deserialize, Serialize};

use crate::catalog::DstShape;
use crate::{ModelError, Primitive};

/// The alignment NPP's fast paths care about, in bytes.
const ALIGNMENT: u32 = 16;

/// The image a call works on: its region of interest and the row strides of its buffers.
///
/// Widths and heights are in pixels, strides in bytes. The ROI is the source's (for Set, which
/// has no source, the destination's); the destination's size follows from the primitive
/// (transposed, half size, …). Where bytes matter (alignment, what a call moves) they come from
/// the primitive's pixel format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Geometry {
    /// Region-of-interest width, in pixels.
    pub width: u32,
    /// Region-of-interest height, in rows.
    pub height: u32,
    /// Source row stride, in bytes (for Set, the destination's).
    pub src_stride: u32,
    /// Destination row stride, in bytes. A reduction has no rows: its values lie 8 bytes apart,
    /// and its `dst_stride` is always their span ([`Geometry::values_bytes`]).
    pub dst_stride: u32,
    /// Set when this is the padded-ROI fix of an unaligned width: the width it was rounded up from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub padded_from: Option<u32>,
}

fn round_up(v: u64, to: u64) -> u64 {
    v.div_ceil(to.max(1)) * to.max(1)
}

fn clamp_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl Geometry {
    /// A geometry with an explicit source stride; the destination's stride keeps the same
    /// padding in pixels (`8u→32f`, width 31, stride 32: destination stride 128).
    pub fn new(primitive: Primitive, width: u32, height: u32, src_stride: u32) -> Self {
        let row = primitive.row();
        let dst_stride = if row.sources == 0 {
            src_stride
        } else if let Some(values) = Geometry::values_bytes(primitive) {
            values
        } else {
            let pad_px = u64::from(src_stride)
                .div_ceil(primitive.src_bytes_per_pixel())
                .saturating_sub(u64::from(width));
            let (dst_w, _) = row.dst_size(width, height);
            clamp_u32((u64::from(dst_w) + pad_px) * primitive.dst_bytes_per_pixel())
        };
        Geometry {
            width,
            height,
            src_stride,
            dst_stride,
            padded_from: None,
        }
    }

    /// A geometry whose strides are each row's bytes rounded up to a multiple of `align`, plus
    /// `extra` bytes: one description that fits every pixel format.
    pub fn aligned(primitive: Primitive, width: u32, height: u32, align: u32, extra: u32) -> Self {
        let row = primitive.row();
        let stride = |bytes: u64| clamp_u32(round_up(bytes, u64::from(align)) + u64::from(extra));
        let src_stride = stride(u64::from(width) * primitive.src_bytes_per_pixel());
        let (dst_w, _) = row.dst_size(width, height);
        let dst_stride = match Geometry::values_bytes(primitive) {
            Some(values) => values,
            None => stride(u64::from(dst_w) * primitive.dst_bytes_per_pixel()),
        };
        Geometry {
            width,
            height,
            src_stride,
            dst_stride,
            padded_from: None,
        }
    }

    /// A reduction's destination in bytes: its values, 8 bytes apart (what it writes, whatever
    /// the image); `None` for a function whose destination is an image.
    pub fn values_bytes(primitive: Primitive) -> Option<u32> {
        match primitive.row().dst_shape {
            DstShape::Scalars { count } => Some(8 * count),
            _ => None,
        }
    }

    /// A source row's bytes (for Set, a destination row's): what NPP's alignment paths see.
    pub fn width_bytes(&self, primitive: Primitive) -> u64 {
        u64::from(self.width) * primitive.src_bytes_per_pixel()
    }

    /// Whether a row's bytes are a multiple of 16.
    pub fn width_aligned(&self, primitive: Primitive) -> bool {
        self.width_bytes(primitive).is_multiple_of(u64::from(ALIGNMENT))
    }

    pub fn src_stride_aligned(&self) -> bool {
        self.src_stride.is_multiple_of(ALIGNMENT)
    }

    /// The destination's width and height.
    pub fn dst_size(&self, primitive: Primitive) -> (u32, u32) {
        primitive.row().dst_size(self.width, self.height)
    }

    /// The padded-ROI fix: the width rounded up until a row's bytes are a multiple of 16, inside
    /// the same strides, if the width is unaligned and both strides have room for it.
    pub fn padded_roi(&self, primitive: Primitive) -> Option<Geometry> {
        if self.width_aligned(primitive) {
            return None;
        }
        let bpp = primitive.src_bytes_per_pixel();
        let step = u64::from(ALIGNMENT) / gcd(u64::from(ALIGNMENT), bpp);
        let padded = clamp_u32(round_up(u64::from(self.width), step));
        let candidate = Geometry {
            width: padded,
            padded_from: Some(self.width),
            ..*self
        };
        candidate.validate(primitive).is_ok().then_some(candidate)
    }

    /// A short stable label, `31x31 s32/128` (`+pad` for the padded-ROI fix).
    pub fn label(&self) -> String {
        let pad = if self.padded_from.is_some() { " pad" } else { "" };
        format!(
            "{}x{} s{}/{}{pad}",
            self.width, self.height, self.src_stride, self.dst_stride
        )
    }

    /// The id fragment used in scenario ids: no spaces or slashes.
    pub fn key(&self) -> String {
        let pad = match self.padded_from {
            Some(w) => format!("-pad{w}"),
            None => String::new(),
        };
        format!(
            "{}x{}-s{}-d{}{pad}",
            self.width, self.height, self.src_stride, self.dst_stride
        )
    }

    /// Source buffer size in bytes (one source; a two-source primitive has two).
    pub fn src_bytes(&self) -> u64 {
        u64::from(self.src_stride) * u64::from(self.height)
    }

    /// Destination buffer size in bytes for `primitive`: `dst_stride` × the destination's
    /// rows, or a reduction's values ([`Geometry::values_bytes`]), never its `dst_stride`.
    pub fn dst_bytes(&self, primitive: Primitive) -> u64 {
        let (_, h) = self.dst_size(primitive);
        match Geometry::values_bytes(primitive) {
            Some(values) => u64::from(values),
            None => u64::from(self.dst_stride) * u64::from(h),
        }
    }

    /// Every device buffer a call of `primitive` needs, in bytes (sources and destination).
    pub fn buffer_bytes(&self, primitive: Primitive) -> u64 {
        self.src_bytes() * u64::from(primitive.row().sources) + self.dst_bytes(primitive)
    }

    pub fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// Checks what NPP needs of a geometry before any GPU work: sizes at least 1, strides that
    /// hold a row and are whole samples, everything within NPP's `int` arguments; and strides
    /// that agree with what the function has (a reduction's `dst_stride` is its values' span;
    /// Set's two strides are its one destination's).
    pub fn validate(&self, primitive: Primitive) -> Result<(), ModelError> {
        let ctx = || format!("geometry {} for {primitive}", self.label());
        let row = primitive.row();
        for (name, v) in [
            ("width", self.width),
            ("height", self.height),
            ("src_stride", self.src_stride),
            ("dst_stride", self.dst_stride),
        ] {
            if v == 0 {
                return Err(ModelError::invalid(
                    ctx(),
                    format!("{name} is 0; it must be at least 1"),
                ));
            }
            if v > i32::MAX as u32 {
                return Err(ModelError::invalid(
                    ctx(),
                    format!("{name} {v} exceeds NPP's limit of {}", i32::MAX),
                ));
            }
        }
        let (dst_w, dst_h) = self.dst_size(primitive);
        if dst_w == 0 || dst_h == 0 {
            return Err(ModelError::invalid(
                ctx(),
                format!("the destination would be {dst_w}x{dst_h}; use a larger image"),
            ));
        }
        if row.sources > 0 {
            let src_row = self.width_bytes(primitive);
            if u64::from(self.src_stride) < src_row {
                return Err(ModelError::invalid(
                    ctx(),
                    format!(
                        "src_stride {} is smaller than a source row ({src_row} bytes = width {} × {})",
                        self.src_stride,
                        self.width,
                        primitive.src_bytes_per_pixel()
                    ),
                ));
            }
            whole_units("src_stride", self.src_stride, row.src).map_err(|m| ModelError::invalid(ctx(), m))?;
        }
        if row.dst_is_image() {
            let dst_row = u64::from(dst_w) * primitive.dst_bytes_per_pixel();
            if u64::from(self.dst_stride) < dst_row {
                return Err(ModelError::invalid(
                    ctx(),
                    format!(
                        "dst_stride {} is smaller than a destination row ({dst_row} bytes = width {dst_w} × {})",
                        self.dst_stride,
                        primitive.dst_bytes_per_pixel()
                    ),
                ));
            }
            whole_units("dst_stride", self.dst_stride, row.dst).map_err(|m| ModelError::invalid(ctx(), m))?;
        }
        consistent_strides(self, primitive).map_err(|m| ModelError::invalid(ctx(), m))
    }
}

/// A reduction's `dst_stride` is its values' span, and Set's `src_stride` (it has no source) is
/// its destination's: any other stride names something the function does not have.
fn consistent_strides(g: &Geometry, primitive: Primitive) -> Result<(), String> {
    if let DstShape::Scalars { count } = primitive.row().dst_shape {
        let values = 8 * count;
        if g.dst_stride != values {
            return Err(format!(
                "dst_stride {} does not fit {primitive}: a reduction writes {count} value(s) 8 bytes apart, not rows, so its dst_stride is {values}; leave dst_stride out",
                g.dst_stride
            ));
        }
    }
    if primitive.row().sources == 0 && g.src_stride != g.dst_stride {
        return Err(format!(
            "src_stride {} and dst_stride {} differ, but {primitive} has no source: its one stride is the destination's; give the same value to both",
            g.src_stride, g.dst_stride
        ));
    }
    Ok(())
}

/// A stride must hold whole samples; a four-channel image's, whole pixels (NPP answers other
/// strides with NPP_NOT_EVEN_STEP_ERROR, as measured with NPP 13.0).
fn whole_units(name: &str, stride: u32, format: crate::catalog::Format) -> Result<(), String> {
    let (unit, what) = if format.channels == 4 {
        (
            format.bytes_per_pixel(),
            "pixels (NPP takes no other stride for four-channel images)",
        )
    } else {
        (format.sample.bytes(), "samples")
    };
    if u64::from(stride) % unit != 0 {
        return Err(format!("{name} {stride} is not a whole number of {unit}-byte {what}"));
    }
    Ok(())
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Primitive = Primitive::CONVERT_8U32F_C1R;

    fn prim(name: &str) -> Primitive {
        Primitive::from_name(name).unwrap()
    }

    #[test]
    fn stride_smaller_than_row_is_rejected() {
        let g = Geometry::new(P, 31, 31, 30);
        let err = g.validate(P).unwrap_err().to_string();
        assert!(
            err.contains("src_stride 30 is smaller than a source row (31 bytes"),
            "{err}"
        );
        let g = Geometry {
            dst_stride: 120,
            ..Geometry::new(P, 31, 31, 32)
        };
        let err = g.validate(P).unwrap_err().to_string();
        assert!(err.contains("dst_stride 120"), "{err}");
    }

    #[test]
    fn strides_must_hold_whole_samples() {
        let p = prim("Copy_32f_C1R");
        let err = Geometry::new(p, 7, 2, 30).validate(p).unwrap_err().to_string();
        assert!(err.contains("not a whole number of 4-byte samples"), "{err}");
        // Four channels: whole pixels.
        let c4 = prim("Copy_16u_C4R");
        let err = Geometry::aligned(c4, 255, 4, 128, 4)
            .validate(c4)
            .unwrap_err()
            .to_string();
        assert!(err.contains("whole number of 8-byte pixels"), "{err}");
        assert!(Geometry::aligned(c4, 255, 4, 128, 16).validate(c4).is_ok());
    }

    #[test]
    fn zero_size_is_rejected() {
        let err = Geometry::new(P, 0, 4, 16).validate(P).unwrap_err().to_string();
        assert!(err.contains("width is 0"), "{err}");
        let half = prim("Resize_8u_C1R");
        let err = Geometry::new(half, 1, 4, 16).validate(half).unwrap_err().to_string();
        assert!(err.contains("destination would be 0x2"), "{err}");
    }

    #[test]
    fn destination_stride_keeps_the_padding_in_pixels() {
        // The ids of runs made before the primitive axis: 31 px in 32 bytes → 128 bytes of floats.
        assert_eq!(Geometry::new(P, 31, 31, 32).dst_stride, 128);
        assert_eq!(Geometry::new(P, 1918, 1080, 1928).dst_stride, 7712);
        // A transpose's destination rows are the source's columns.
        let t = prim("Transpose_8u_C1R");
        assert_eq!(Geometry::new(t, 31, 40, 32).dst_stride, 41);
        // Set has no source: the one stride is the destination's.
        let set = prim("Set_8u_C1R");
        assert_eq!(Geometry::new(set, 31, 4, 32).dst_stride, 32);
    }

    #[test]
    fn aligned_strides_fit_every_pixel_format() {
        let rgb = prim("Copy_8u_C3R");
        let g = Geometry::aligned(rgb, 255, 4, 128, 16);
        assert_eq!((g.src_stride, g.dst_stride), (768 + 16, 768 + 16));
        assert!(g.validate(rgb).is_ok());
        let f = prim("Convert_8u32f_C1R");
        let g = Geometry::aligned(f, 255, 4, 128, 4);
        assert_eq!((g.src_stride, g.dst_stride), (260, 1028));
    }

    #[test]
    fn padded_roi_rounds_width_bytes_up_inside_the_stride() {
        let g = Geometry::new(P, 31, 31, 32);
        let padded = g.padded_roi(P).unwrap();
        assert_eq!(
            (padded.width, padded.src_stride, padded.padded_from),
            (32, 32, Some(31))
        );
        assert!(Geometry::new(P, 32, 32, 32).padded_roi(P).is_none());
        // No room in the stride: 1919 rounds to 1920 > 1919.
        assert!(Geometry::new(P, 1919, 4, 1919).padded_roi(P).is_none());
        // 32-bit floats: 4 pixels make 16 bytes.
        let f = prim("Copy_32f_C1R");
        let g = Geometry::aligned(f, 31, 4, 128, 0);
        assert_eq!(g.padded_roi(f).unwrap().width, 32);
        assert!(Geometry::aligned(f, 32, 4, 128, 0).padded_roi(f).is_none());
    }

    /// Mean_8u_C1R at 1×100, stride 1, given `dst_stride = 1` by a matrix: its 8-byte result
    /// was encoded into a 1-byte destination and the probe panicked.
    #[test]
    fn a_reductions_destination_is_its_values_never_its_dst_stride() {
        let mean = prim("Mean_8u_C1R");
        let g = Geometry {
            dst_stride: 1,
            ..Geometry::new(mean, 1, 100, 1)
        };
        assert_eq!(g.dst_bytes(mean), 8);
        let err = g.validate(mean).unwrap_err().to_string();
        assert!(
            err.contains("dst_stride 1 does not fit Mean_8u_C1R") && err.contains("its dst_stride is 8"),
            "{err}"
        );
        let min_max = prim("MinMax_32f_C1R");
        assert_eq!(Geometry::new(min_max, 3, 9, 12).dst_bytes(min_max), 16);
        assert!(Geometry::aligned(min_max, 3, 9, 64, 4).validate(min_max).is_ok());
    }

    #[test]
    fn set_with_two_different_strides_is_refused() {
        let set = prim("Set_8u_C1R");
        let g = Geometry {
            dst_stride: 64,
            ..Geometry::new(set, 31, 4, 32)
        };
        let err = g.validate(set).unwrap_err().to_string();
        assert!(err.contains("src_stride 32 and dst_stride 64 differ"), "{err}");
        assert!(Geometry::new(set, 31, 4, 32).validate(set).is_ok());
    }
}
