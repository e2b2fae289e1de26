//! A synthesised call of any catalogued function (issue #45): from its row (the parameters with
//! their roles, read from NPP's headers) and a shape (the ROI, the steps), every argument's ABI
//! type and value, and the buffers the call needs. Images get margins on every side, so that a
//! function that reads around its ROI (a filter without a border) stays inside its allocation;
//! scalars, constants and enums get values chosen so that outputs are not constant and enums
//! name a valid member. A scratch buffer is sized at run time by its sizer function, itself
//! planned here. No GPU: `nppbench_npp::generic` allocates, fills and calls.

use serde::Serialize;

use crate::files::Prototypes;
use crate::generate::FunctionRow;
use crate::roles::{Assigned, Role, Types, assign};

mod args;
mod values;

use args::argument;
use values::{channels, dst_channels, is_image, is_source, planes, sides};

/// How a C value is passed, as libffi types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl Scalar {
    pub fn bytes(self) -> u64 {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }
}

/// A sample type: a scalar, or a pair of them (a complex number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Elem {
    pub scalar: Scalar,
    pub lanes: u8,
}

impl Elem {
    pub fn bytes(self) -> u64 {
        self.scalar.bytes() * u64::from(self.lanes)
    }
}

/// The sample type NPP's typedef (or C's own type) names.
pub fn elem(base: &str) -> Option<Elem> {
    let one = |scalar| Some(Elem { scalar, lanes: 1 });
    let two = |scalar| Some(Elem { scalar, lanes: 2 });
    match base {
        "Npp8u" | "unsigned char" => one(Scalar::U8),
        "Npp8s" | "char" | "signed char" => one(Scalar::I8),
        "Npp16u" | "unsigned short" => one(Scalar::U16),
        "Npp16s" | "short" | "Npp16f" | "Npp16f_2" => one(Scalar::I16),
        "Npp32u" | "unsigned int" | "unsigned" => one(Scalar::U32),
        "Npp32s" | "int" => one(Scalar::I32),
        "Npp64u" | "unsigned long long" | "size_t" => one(Scalar::U64),
        "Npp64s" | "long long" => one(Scalar::I64),
        "Npp32f" | "float" => one(Scalar::F32),
        "Npp64f" | "double" => one(Scalar::F64),
        "Npp16sc" => two(Scalar::I16),
        "Npp32sc" => two(Scalar::I32),
        "Npp64sc" => two(Scalar::I64),
        "Npp32fc" => two(Scalar::F32),
        "Npp64fc" => two(Scalar::F64),
        _ => None,
    }
}

/// How an argument is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Abi {
    /// A number by value (a complex number: the struct of two).
    Value(Elem),
    Pointer,
    /// `NppiSize` and `NppiPoint`: two ints.
    Pair,
    /// `NppiRect`: four ints.
    Rect,
    Context,
}

/// What fills a buffer before the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fill {
    /// Values that vary by position, small enough for every type (0 to 63, as the type).
    Pattern,
    /// A byte NPP never writes by chance, to tell written from left alone.
    Sentinel,
    Zero,
}

/// Device (or, for `host`, host) memory a call reads or writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Buffer {
    /// The parameter it is passed as.
    pub param: String,
    pub role: Role,
    pub elem: Elem,
    pub bytes: u64,
    pub fill: Fill,
    pub host: bool,
    /// An image: its step, the ROI's row bytes and rows, and where the ROI starts in the buffer.
    pub image: Option<ImageLayout>,
}

/// Where an image's ROI lies in its buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ImageLayout {
    pub step: u64,
    pub row_bytes: u64,
    pub rows: u64,
    /// Bytes from the buffer's start to the ROI's first pixel.
    pub offset: u64,
}

/// An argument's value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    /// A number, as its ABI type.
    Number(f64),
    /// A complex number.
    Complex(f64, f64),
    Pair(i32, i32),
    Rect([i32; 4]),
    /// The buffer's address (plus its ROI's offset where it is an image).
    Buffer(usize),
    /// A host array of the buffers' ROI addresses (planes).
    Planes(Vec<usize>),
    /// A host array of numbers of `elem` (constants, steps per plane).
    Array(Elem, Vec<f64>),
    Context,
}

/// One argument.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arg {
    pub param: String,
    pub abi: Abi,
    pub value: Value,
}

/// A synthesised call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallPlan {
    pub symbol: String,
    pub library: String,
    pub args: Vec<Arg>,
    pub buffers: Vec<Buffer>,
    /// The buffer a sizer function sizes at run time, and the sizer's own call (whose host
    /// result holds the size).
    pub scratch: Vec<(usize, CallPlan)>,
}

/// The shape a call is synthesised at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub width: u32,
    pub height: u32,
    /// A source image's step past its row bytes and margins; `None`: rounded up to 512 bytes.
    pub src_step: Option<u64>,
    pub dst_step: Option<u64>,
}

/// Rows and bytes kept around every image's ROI.
pub const MARGIN_ROWS: u64 = 8;
pub const MARGIN_BYTES: u64 = 64;
/// What a scratch buffer, a device array or a result gets where nothing sizes it more closely.
const SMALL: u64 = 64 * 1024;

/// A version's prototypes, where a scratch buffer's sizer is looked up (a sizer may have no
/// `_Ctx` form, and so no row).
pub struct Sizers<'a> {
    prototypes: &'a Prototypes,
    types: Types,
}

impl<'a> Sizers<'a> {
    pub fn new(prototypes: &'a Prototypes) -> Sizers<'a> {
        let types = prototypes
            .types
            .iter()
            .map(|(kind, name)| (name.clone(), *kind))
            .collect();
        Sizers { prototypes, types }
    }

    /// The sizer `symbol`'s library and parameters with their roles.
    fn find(&self, symbol: &str) -> Option<(String, Vec<Assigned>)> {
        let (_, library, line) = self.prototypes.functions.iter().find(|(s, _, _)| s == symbol)?;
        let parsed = crate::prototype::parse(line).ok()?;
        Some((library.clone()?, assign(&parsed, &self.types)))
    }
}

/// The plan of `row`'s call at `shape`; `Err` says why it cannot be planned.
pub fn plan(row: &FunctionRow, all: &Sizers<'_>, shape: &Shape) -> Result<CallPlan, String> {
    if !row.synthesisable {
        return Err(row.reasons.join("; "));
    }
    let library = row.library.clone().ok_or("exported by no library")?;
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut scratch = Vec::new();
    // Steps per image, decided with the image: a step names its image (`with`).
    let mut steps: Steps = Default::default();
    let mut args = Vec::new();
    for p in row.params.iter().filter(|p| is_image(p.role)) {
        args.push(image(p, row, shape, &mut buffers, &mut steps)?);
    }
    let mut out = Vec::new();
    for p in &row.params {
        if let Some(i) = args.iter().position(|a| a.param == p.param.name) {
            out.push(args.remove(i));
            continue;
        }
        out.push(argument(p, row, all, shape, &steps, &mut buffers, &mut scratch)?);
    }
    Ok(CallPlan {
        symbol: row.symbol.clone(),
        library,
        args: out,
        buffers,
        scratch,
    })
}

/// Each image's step and planes, by its parameter's name.
type Steps = std::collections::BTreeMap<String, (u64, u64)>;

/// The argument of image `p`: its buffer (or one a plane) with margins, and its step in `steps`.
fn image(
    p: &Assigned,
    row: &FunctionRow,
    shape: &Shape,
    buffers: &mut Vec<Buffer>,
    steps: &mut Steps,
) -> Result<Arg, String> {
    let e = elem(&p.param.base).ok_or_else(|| format!("{}: no sample type", p.param.c))?;
    // A plane and a mask hold one channel; an interleaved image all of them. Sources (and
    // in-place images) take the layout's first part, destinations its last.
    let one_channel = matches!(
        p.role,
        Role::SourcePlanes | Role::DestinationPlanes | Role::SourceDestinationPlanes | Role::Mask
    );
    let destination = matches!(p.role, Role::Destination | Role::DestinationPlanes);
    let side_channels = if destination {
        dst_channels(&row.formats.layout)
    } else {
        channels(&row.formats.layout)
    };
    let per_pixel = if one_channel {
        e.bytes()
    } else {
        e.bytes() * side_channels
    };
    let (src_part, dst_part) = sides(&row.formats.layout);
    let part = if destination { dst_part } else { src_part };
    // A transpose's ROI is its source's: its destination has the ROI's height as its width.
    let (width, height) = if destination && crate::name::operation(&row.symbol) == "Transpose" {
        (shape.height, shape.width)
    } else {
        (shape.width, shape.height)
    };
    let row_bytes = u64::from(width) * per_pixel;
    let wanted = if is_source(p.role) {
        shape.src_step
    } else {
        shape.dst_step
    };
    let step = wanted.unwrap_or_else(|| (row_bytes + 2 * MARGIN_BYTES).div_ceil(512) * 512);
    if step < row_bytes + 2 * MARGIN_BYTES {
        return Err(format!(
            "{}: a step of {step} leaves no margin for {row_bytes} bytes a row",
            p.param.name
        ));
    }
    let image = ImageLayout {
        step,
        row_bytes,
        rows: u64::from(height),
        offset: MARGIN_ROWS * step + MARGIN_BYTES,
    };
    let buffer = Buffer {
        param: p.param.name.clone(),
        role: p.role,
        elem: e,
        bytes: step * (u64::from(height) + 2 * MARGIN_ROWS),
        fill: if is_source(p.role) {
            Fill::Pattern
        } else {
            Fill::Sentinel
        },
        host: false,
        image: Some(image),
    };
    let mut add = || {
        buffers.push(buffer.clone());
        buffers.len() - 1
    };
    let planes = planes(&p.param.c, part);
    let value = match p.role {
        Role::SourcePlanes | Role::DestinationPlanes | Role::SourceDestinationPlanes => {
            Value::Planes((0..planes).map(|_| add()).collect())
        }
        _ => Value::Buffer(add()),
    };
    steps.insert(p.param.name.clone(), (step, planes));
    Ok(Arg {
        param: p.param.name.clone(),
        abi: Abi::Pointer,
        value,
    })
}

#[cfg(test)]
mod tests;
