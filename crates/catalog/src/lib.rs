//! The catalogue of NPP functions nppbench measures: one declarative row each.
//!
//! A [`Row`] says everything about a function that is not GPU code: its name, the library that
//! exports it, the C argument list it takes ([`Args`]), its pixel formats, the size of its
//! destination, a CPU reference and how exact NPP must be. From the row follow the symbol looked
//! up at run time, the availability check, the buffers, the bytes moved and the correctness
//! check. Adding a function is one row in `rows/`; the GPU side (`nppbench-npp`) needs a new
//! adapter only for an [`Args`] variant it has not seen.
//!
//! A [`Primitive`] names a row; it is what matrices, scenario ids and run.json carry.

#![forbid(unsafe_code)]

pub mod image;
mod library;
pub mod reference;
pub use reference::GpuReference;
mod generated;
mod rows;
pub mod signature;

use std::fmt;
use std::sync::LazyLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use image::Image;
pub use library::Library;

/// One sample's type: NPP's `Npp8u`, `Npp16u`, `Npp16s`, `Npp32f`, `Npp64f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sample {
    U8,
    U16,
    S16,
    F32,
    F64,
}

impl Sample {
    pub fn bytes(self) -> u64 {
        match self {
            Sample::U8 => 1,
            Sample::U16 | Sample::S16 => 2,
            Sample::F32 => 4,
            Sample::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Sample::F32 | Sample::F64)
    }

    /// `8u`, `16u`, `16s`, `32f`, `64f`, as NVIDIA's names spell them.
    pub fn npp_name(self) -> &'static str {
        match self {
            Sample::U8 => "8u",
            Sample::U16 => "16u",
            Sample::S16 => "16s",
            Sample::F32 => "32f",
            Sample::F64 => "64f",
        }
    }
}

/// A pixel: its sample type and channel count (1, 3 or 4, packed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Format {
    pub sample: Sample,
    pub channels: u8,
}

impl Format {
    pub const fn new(sample: Sample, channels: u8) -> Format {
        Format { sample, channels }
    }

    pub fn bytes_per_pixel(self) -> u64 {
        self.sample.bytes() * u64::from(self.channels)
    }
}

/// A constant argument: one value per channel. NPP takes a one-channel constant by value and a
/// several-channel one as a pointer to an array, each in the row's sample type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Constant {
    One(f64),
    PerChannel(&'static [f64]),
}

impl Constant {
    /// The value for channel `c`.
    pub fn channel(&self, c: usize) -> f64 {
        match self {
            Constant::One(v) => *v,
            Constant::PerChannel(v) => v[c % v.len()],
        }
    }
}

/// `NppCmpOp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Less = 0,
    LessEq = 1,
    Eq = 2,
    GreaterEq = 3,
    Greater = 4,
}

impl CmpOp {
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            CmpOp::Less => a < b,
            CmpOp::LessEq => a <= b,
            CmpOp::Eq => a == b,
            CmpOp::GreaterEq => a >= b,
            CmpOp::Greater => a > b,
        }
    }
}

/// `NppiBorderType::NPP_BORDER_REPLICATE`: the only border nppbench uses.
pub const BORDER_REPLICATE: i32 = 2;
/// `NppiMaskSize::NPP_MASK_SIZE_3_X_3`.
pub const MASK_SIZE_3_X_3: i32 = 200;
/// `NppiMaskSize::NPP_MASK_SIZE_5_X_5`.
pub const MASK_SIZE_5_X_5: i32 = 201;
/// `NppRoundMode::NPP_RND_NEAR` (ties to even).
pub const ROUND_NEAR: i32 = 0;
/// `NppiAxis::NPP_HORIZONTAL_AXIS` (flip rows) and `NPP_VERTICAL_AXIS` (flip columns).
pub const HORIZONTAL_AXIS: i32 = 0;
pub const VERTICAL_AXIS: i32 = 1;
/// `NppiInterpolationMode::NPPI_INTER_NN`, `NPPI_INTER_LINEAR`, `NPPI_INTER_SUPER`.
pub const INTER_NN: i32 = 1;
pub const INTER_LINEAR: i32 = 2;
pub const INTER_SUPER: i32 = 8;

/// The C argument list of a row's function, with the values nppbench passes. Every list ends
/// with the `NppStreamContext`; `src`/`dst` are a device pointer and its row step in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Args {
    /// `(src, step, dst, step, NppiSize roi, ctx)`: Convert, Copy, Transpose, colour conversion.
    Map,
    /// `(src, step, dst, step, roi, int, ctx)`: a rounding mode (Convert to integers), an axis
    /// (Mirror).
    MapInt(i32),
    /// `(src, step, dst, step, roi, const int order[N], ctx)`: SwapChannels.
    MapOrder(&'static [i32]),
    /// `(src, step, constant, dst, step, roi, [int scale], ctx)`: AddC, MulC; the constant by
    /// value for one channel, else a pointer to one per channel.
    MapConst { constant: Constant, scale: Option<i32> },
    /// `(src1, step, src2, step, dst, step, roi, [int scale], ctx)`: Add, Sub, Mul, AbsDiff.
    Binary { scale: Option<i32> },
    /// `(src1, step, src2, step, dst, step, roi, NppCmpOp, ctx)`: Compare.
    Compare(CmpOp),
    /// `(value, dst, step, roi, ctx)`: Set; by value for one channel, else a pointer.
    Set(Constant),
    /// `(src, step, dst, step, roi, threshold by value, NppCmpOp, ctx)`: Threshold.
    Threshold { threshold: f64, op: CmpOp },
    /// `(src, step, NppiSize srcSize, NppiPoint srcOffset, dst, step, NppiSize roi, NppiSize
    /// mask, NppiPoint anchor, NppiBorderType, ctx)`: FilterBoxBorder.
    FilterBox { mask: u32, border: i32 },
    /// `(src, step, srcSize, srcOffset, dst, step, roi, NppiMaskSize, NppiBorderType, ctx)`:
    /// FilterGaussBorder, FilterSobel…Border.
    FilterMask { mask_size: i32, border: i32 },
    /// `(src, step, NppiSize srcSize, NppiRect srcRect, dst, step, NppiSize dstSize, NppiRect
    /// dstRect, int interpolation, ctx)`: Resize.
    Resize { interpolation: i32 },
    /// `(src, step, roi, Npp8u *buffer, out, ctx)`: Sum, Mean; the scratch buffer's size from
    /// NPP's own `…GetBufferHostSize` function, named here.
    Reduce { buffer_size: &'static str },
    /// `(src, step, roi, out1, out2, Npp8u *buffer, ctx)`: MinMax.
    Reduce2 { buffer_size: &'static str },
}

/// The destination's size, from the source ROI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DstShape {
    /// The same width and height.
    Same,
    /// Width and height swapped (Transpose).
    Transposed,
    /// Width and height times `num / den`, rounded down (Resize).
    Scaled { num: u32, den: u32 },
    /// `count` values of the destination sample type, 8 bytes apart (reductions).
    Scalars { count: u32 },
}

/// How close NPP's output must be to the CPU reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    Exact,
    /// At most this absolute difference (1.0: one step of an integer type, for rounding).
    Abs(f64),
    /// At most this difference relative to the reference value (at least 1).
    Rel(f64),
}

impl Tolerance {
    /// Whether `actual` is close enough to `expected`; the error as a number.
    pub fn error(self, expected: f64, actual: f64) -> f64 {
        if expected.is_nan() || actual.is_nan() {
            return f64::INFINITY;
        }
        let d = (expected - actual).abs();
        match self {
            Tolerance::Exact | Tolerance::Abs(_) => d,
            Tolerance::Rel(_) => d / expected.abs().max(1.0),
        }
    }

    pub fn limit(self) -> f64 {
        match self {
            Tolerance::Exact => 0.0,
            Tolerance::Abs(x) | Tolerance::Rel(x) => x,
        }
    }
}

/// Computes the expected destination from the source images (one per source, ROI only, samples
/// as `f64`), reading the row's own constants from its [`Args`]. `dst` comes sized and zeroed; a
/// reduction's values are its samples in order.
pub type Reference = fn(row: &Row, sources: &[Image], dst: &mut Image);

/// One NPP function, described by everything that is not GPU code.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// NVIDIA's name without `nppi` and `_Ctx`: `Convert_8u32f_C1R`.
    pub name: &'static str,
    pub library: Library,
    /// What the function does, in a few words, for the atlas page.
    pub operation: &'static str,
    /// The source pixel format (for Set, which has no source, the destination's).
    pub src: Format,
    /// Source images the function reads: 0 (Set), 1, or 2 (Add, Sub, …).
    pub sources: u8,
    pub dst: Format,
    pub dst_shape: DstShape,
    pub args: Args,
    pub reference: Reference,
    pub tolerance: Tolerance,
    /// NVIDIA's documentation of the function's group.
    pub docs: &'static str,
    /// The kernel of nppbench's own timed beside this function, where there is one.
    pub gpu_reference: Option<GpuReference>,
}

impl Row {
    /// The exported symbol: `nppiConvert_8u32f_C1R_Ctx`.
    pub fn symbol(&self) -> String {
        format!("nppi{}_Ctx", self.name)
    }

    /// The destination's width and height for a source ROI of `width × height`.
    pub fn dst_size(&self, width: u32, height: u32) -> (u32, u32) {
        match self.dst_shape {
            DstShape::Same => (width, height),
            DstShape::Transposed => (height, width),
            DstShape::Scaled { num, den } => (
                (u64::from(width) * u64::from(num) / u64::from(den)) as u32,
                (u64::from(height) * u64::from(num) / u64::from(den)) as u32,
            ),
            DstShape::Scalars { count } => (count, 1),
        }
    }

    /// Whether the destination is an image (with rows, a stride and padding) rather than a few
    /// values.
    pub fn dst_is_image(&self) -> bool {
        !matches!(self.dst_shape, DstShape::Scalars { .. })
    }

    /// Bytes a call reads plus writes for a source ROI of `width × height`: each source pixel
    /// read once per source, each destination pixel written once.
    pub fn bytes_moved(&self, width: u32, height: u32) -> u64 {
        let pixels = u64::from(width) * u64::from(height);
        let read = pixels * self.src.bytes_per_pixel() * u64::from(self.sources);
        let written = if self.dst_is_image() {
            let (w, h) = self.dst_size(width, height);
            u64::from(w) * u64::from(h) * self.dst.bytes_per_pixel()
        } else {
            0
        };
        read + written
    }
}

/// Every row, in the order pages list them.
static ROWS: LazyLock<Vec<&'static Row>> = LazyLock::new(|| rows::ALL.iter().flat_map(|t| t.iter()).collect());

/// Every row.
pub fn rows() -> &'static [&'static Row] {
    &ROWS
}

/// An NPP function under test: a row of the catalogue, or a function known only from NPP's
/// headers ([`Primitive::generated`]: its calls synthesised from the parameters' roles, issue #45),
/// which has no row. Written in matrices and run.json as the name (`Convert_8u32f_C1R`); NVIDIA's
/// full spelling (`nppiConvert_8u32f_C1R_Ctx`) is read too.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Primitive(u16);

impl Primitive {
    /// `nppiConvert_8u32f_C1R_Ctx`: the first row, and the primitive of runs made before the
    /// primitive was an axis.
    pub const CONVERT_8U32F_C1R: Primitive = Primitive(0);

    /// Every primitive, in catalogue order.
    pub fn all() -> impl Iterator<Item = Primitive> {
        (0..ROWS.len() as u16).map(Primitive)
    }

    /// Its position in the catalogue (0 for [`Primitive::CONVERT_8U32F_C1R`]).
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// The row. Panics for a [generated](Primitive::generated) function, which has none: code
    /// that may see one asks [`Primitive::is_generated`] first.
    pub fn row(self) -> &'static Row {
        match ROWS.get(usize::from(self.0)) {
            Some(row) => row,
            None => panic!(
                "{} is known from NPP's headers alone and has no catalogue row",
                self.name()
            ),
        }
    }

    /// The name: `Convert_8u32f_C1R`.
    pub fn name(self) -> &'static str {
        match self.generated_entry() {
            Some(g) => g.name,
            None => self.row().name,
        }
    }

    /// The function's symbol: `nppiConvert_8u32f_C1R_Ctx`.
    pub fn npp_name(self) -> String {
        format!("nppi{}_Ctx", self.name())
    }

    /// The primitive named `name`: the row's name, NVIDIA's full spelling, or the name runs of
    /// schema version 1 used (`convert8u32f_c1`).
    /// A [generated](Primitive::generated) function's name is found once registered.
    pub fn from_name(name: &str) -> Option<Primitive> {
        let bare = bare_name(name);
        if bare == "convert8u32f_c1" {
            return Some(Primitive::CONVERT_8U32F_C1R);
        }
        Primitive::all()
            .find(|p| p.name() == bare)
            .or_else(|| Primitive::registered(bare))
    }

    /// Bytes one source pixel occupies (for Set, one destination pixel).
    pub fn src_bytes_per_pixel(self) -> u64 {
        match self.generated_entry() {
            Some(g) => g.src_bytes_per_pixel,
            None => self.row().src.bytes_per_pixel(),
        }
    }

    /// Bytes one destination pixel occupies.
    pub fn dst_bytes_per_pixel(self) -> u64 {
        match self.generated_entry() {
            Some(g) => g.dst_bytes_per_pixel,
            None => self.row().dst.bytes_per_pixel(),
        }
    }
}

impl Default for Primitive {
    fn default() -> Self {
        Primitive::CONVERT_8U32F_C1R
    }
}

impl fmt::Debug for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Primitive {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Primitive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Primitive::from_name(&name).ok_or_else(|| serde::de::Error::custom(unknown_primitive(&name)))
    }
}

/// `Convert_8u32f_C1R` of `nppiConvert_8u32f_C1R_Ctx` (a bare name is left as it is).
pub(crate) fn bare_name(name: &str) -> &str {
    let bare = name.strip_prefix("nppi").unwrap_or(name);
    bare.strip_suffix("_Ctx").unwrap_or(bare)
}

/// The message for a name no row has.
pub fn unknown_primitive(name: &str) -> String {
    format!(
        "unknown NPP primitive {name:?}; `nppbench primitives` lists the {} known ones",
        ROWS.len()
    )
}

#[cfg(test)]
mod tests;
