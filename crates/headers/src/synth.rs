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

/// The channels of the function's images, from its layout (`C3`: 3, `AC4`: 4, `P3`: 1 a plane).
fn channels(layout: &str) -> u64 {
    let l = layout.trim_start_matches('A');
    match l.as_bytes() {
        [b'C', n, ..] if n.is_ascii_digit() => u64::from(n - b'0'),
        _ => 1,
    }
}

/// The planes of a planar layout (`P3R`: 3), for arrays of planes.
fn planes(c: &str, layout: &str) -> u64 {
    let from_decl = c
        .split('[')
        .nth(1)
        .and_then(|s| s.trim_end_matches(']').parse::<u64>().ok());
    from_decl.unwrap_or_else(|| {
        layout
            .split('P')
            .nth(1)
            .and_then(|s| s.chars().next()?.to_digit(10))
            .map_or(3, u64::from)
    })
}

fn is_image(role: Role) -> bool {
    matches!(
        role,
        Role::Source
            | Role::SourcePlanes
            | Role::Destination
            | Role::DestinationPlanes
            | Role::SourceDestination
            | Role::SourceDestinationPlanes
            | Role::Mask
    )
}

fn is_source(role: Role) -> bool {
    matches!(
        role,
        Role::Source | Role::SourcePlanes | Role::SourceDestination | Role::SourceDestinationPlanes | Role::Mask
    )
}

/// A value of an enum NPP accepts at these shapes, by the enum's type or the parameter's name.
fn enum_value(base: &str, name: &str) -> f64 {
    let lower = name.to_ascii_lowercase();
    match base {
        "NppiBorderType" => 2.0,        // NPP_BORDER_REPLICATE
        "NppiMaskSize" => 200.0,        // NPP_MASK_SIZE_3_X_3
        "NppiInterpolationMode" => 1.0, // NPPI_INTER_NN
        "NppiNorm" => 1.0,              // nppiNormL1
        "NppiDifferentialKernel" => 0.0,
        _ if lower.contains("interpolation") => 1.0,
        _ if lower.contains("border") => 2.0,
        _ => 0.0,
    }
}

/// A number for a scalar parameter: varied enough that outputs are not constant, small enough
/// not to saturate every sample.
fn scalar_value(name: &str, e: Elem) -> f64 {
    let lower = name.to_ascii_lowercase();
    if lower.contains("channel") {
        return 0.0;
    }
    if lower.contains("level") || lower.contains("bins") {
        return 4.0;
    }
    if lower.contains("divisor") {
        return 2.0;
    }
    if e.scalar.is_float() { 0.75 } else { 3.0 }
}

/// A size parameter: a mask's 3×3, else the ROI's.
fn size_value(name: &str, s: &Shape) -> (i32, i32) {
    let lower = name.to_ascii_lowercase();
    if lower.contains("mask") || lower.contains("kernel") {
        (3, 3)
    } else {
        (s.width as i32, s.height as i32)
    }
}

/// A point parameter: a mask's anchor at its centre, else the origin.
fn point_value(name: &str) -> (i32, i32) {
    if name.to_ascii_lowercase().contains("anchor") {
        (1, 1)
    } else {
        (0, 0)
    }
}

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
    let channels = channels(&row.formats.layout);
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut args = Vec::new();
    let mut scratch = Vec::new();
    // Steps per image, decided with the image: a step names its image (`with`).
    let mut steps: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for p in &row.params {
        if !is_image(p.role) {
            continue;
        }
        let e = elem(&p.param.base).ok_or_else(|| format!("{}: no sample type", p.param.c))?;
        // A plane and a mask hold one channel; an interleaved image all of them.
        let one_channel = matches!(
            p.role,
            Role::SourcePlanes | Role::DestinationPlanes | Role::SourceDestinationPlanes | Role::Mask
        );
        let per_pixel = if one_channel { e.bytes() } else { e.bytes() * channels };
        let row_bytes = u64::from(shape.width) * per_pixel;
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
            rows: u64::from(shape.height),
            offset: MARGIN_ROWS * step + MARGIN_BYTES,
        };
        let bytes = step * (u64::from(shape.height) + 2 * MARGIN_ROWS);
        let fill = if is_source(p.role) {
            Fill::Pattern
        } else {
            Fill::Sentinel
        };
        let add = |buffers: &mut Vec<Buffer>| {
            buffers.push(Buffer {
                param: p.param.name.clone(),
                role: p.role,
                elem: e,
                bytes,
                fill,
                host: false,
                image: Some(image),
            });
            buffers.len() - 1
        };
        let value = match p.role {
            Role::SourcePlanes | Role::DestinationPlanes | Role::SourceDestinationPlanes => Value::Planes(
                (0..planes(&p.param.c, &row.formats.layout))
                    .map(|_| add(&mut buffers))
                    .collect(),
            ),
            _ => Value::Buffer(add(&mut buffers)),
        };
        steps.insert(p.param.name.clone(), (step, planes(&p.param.c, &row.formats.layout)));
        args.push((
            p.param.name.clone(),
            Arg {
                param: p.param.name.clone(),
                abi: Abi::Pointer,
                value,
            },
        ));
    }
    let mut out = Vec::new();
    for p in &row.params {
        if let Some(i) = args.iter().position(|(n, _)| *n == p.param.name) {
            out.push(args.remove(i).1);
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

/// A number passed by value, or an array of them.
fn numbers(p: &Assigned, value: f64) -> Result<Arg, String> {
    let e = elem(&p.param.base).ok_or_else(|| format!("{}: no number type", p.param.c))?;
    let abi = Abi::Value(e);
    let value = if e.lanes == 2 {
        Value::Complex(value, 1.0)
    } else {
        Value::Number(value)
    };
    Ok(Arg {
        param: p.param.name.clone(),
        abi,
        value,
    })
}

/// The length of a constant array: its declared length (times the inner one: `[3][4]`), else one
/// per channel.
fn array_len(c: &str, channels: u64) -> u64 {
    let dims: Vec<u64> = c
        .split('[')
        .skip(1)
        .filter_map(|s| s.split(']').next()?.parse().ok())
        .collect();
    if dims.is_empty() {
        channels.max(1)
    } else {
        dims.iter().product()
    }
}

#[allow(clippy::too_many_arguments)]
fn argument(
    p: &Assigned,
    row: &FunctionRow,
    all: &Sizers<'_>,
    shape: &Shape,
    steps: &std::collections::BTreeMap<String, (u64, u64)>,
    buffers: &mut Vec<Buffer>,
    scratch: &mut Vec<(usize, CallPlan)>,
) -> Result<Arg, String> {
    let name = p.param.name.clone();
    let channels = channels(&row.formats.layout);
    let device = |buffers: &mut Vec<Buffer>, e: Elem, bytes: u64, fill: Fill, host: bool| {
        buffers.push(Buffer {
            param: name.clone(),
            role: p.role,
            elem: e,
            bytes,
            fill,
            host,
            image: None,
        });
        Value::Buffer(buffers.len() - 1)
    };
    let arg = |abi, value| Arg {
        param: name.clone(),
        abi,
        value,
    };
    Ok(match p.role {
        Role::Step => {
            let (step, planes) = p
                .with
                .as_ref()
                .and_then(|w| steps.get(w))
                .copied()
                .ok_or_else(|| format!("{name}: the step of no image"))?;
            if p.param.array.is_some() {
                let e = elem(&p.param.base).ok_or_else(|| format!("{}: no number type", p.param.c))?;
                arg(Abi::Pointer, Value::Array(e, vec![step as f64; planes as usize]))
            } else {
                numbers(p, step as f64)?
            }
        }
        Role::Roi if p.param.base == "NppiRect" => {
            arg(Abi::Rect, Value::Rect([0, 0, shape.width as i32, shape.height as i32]))
        }
        Role::Roi | Role::Size => {
            let (w, h) = size_value(&name, shape);
            arg(Abi::Pair, Value::Pair(w, h))
        }
        Role::Rect => arg(Abi::Rect, Value::Rect([0, 0, shape.width as i32, shape.height as i32])),
        Role::Point => {
            let (x, y) = point_value(&name);
            arg(Abi::Pair, Value::Pair(x, y))
        }
        Role::ScaleFactor => numbers(p, 0.0)?,
        Role::Enum => arg(
            Abi::Value(Elem {
                scalar: Scalar::I32,
                lanes: 1,
            }),
            Value::Number(enum_value(&p.param.base, &name)),
        ),
        Role::Scalar if p.param.is_value() => {
            let e = elem(&p.param.base).ok_or_else(|| format!("{}: no number type", p.param.c))?;
            numbers(p, scalar_value(&name, e))?
        }
        Role::Scalar | Role::ConstantArray => {
            let e = elem(&p.param.base).ok_or_else(|| format!("{}: no number type", p.param.c))?;
            let n = array_len(&p.param.c, channels);
            let v = scalar_value(&name, e);
            arg(Abi::Pointer, Value::Array(e, (0..n).map(|i| v + i as f64).collect()))
        }
        // Constants per channel are read by the host (`nppiCompareC…`), but for the `…DeviceC…`
        // functions; kernels, tables and levels by the device.
        Role::DeviceArray => {
            let e = elem(&p.param.base).unwrap_or(Elem {
                scalar: Scalar::U8,
                lanes: 1,
            });
            let host = name.starts_with("pConstant") && !row.symbol.contains("DeviceC");
            arg(Abi::Pointer, device(buffers, e, SMALL, Fill::Pattern, host))
        }
        // Bounds are inputs the host reads (`nppiCountInRange…`'s `aLowerBound[3]`).
        Role::Result if name.contains("Bound") => {
            let e = elem(&p.param.base).ok_or_else(|| format!("{}: no number type", p.param.c))?;
            let n = array_len(&p.param.c, channels);
            let v = if name.contains("Upper") { 48.0 } else { 8.0 };
            arg(Abi::Pointer, Value::Array(e, vec![v; n as usize]))
        }
        Role::Result => {
            let e = elem(&p.param.base).unwrap_or(Elem {
                scalar: Scalar::U8,
                lanes: 1,
            });
            // `hp…`: host memory (a buffer size); else device memory.
            let host = name.starts_with("hp");
            arg(Abi::Pointer, device(buffers, e, SMALL, Fill::Zero, host))
        }
        Role::ScratchBuffer => {
            let sizer = p.with.as_ref().ok_or_else(|| format!("{name}: no sizer"))?;
            let (library, params) = all
                .find(sizer)
                .ok_or_else(|| format!("{name}: its sizer {sizer} is not among the prototypes"))?;
            let sizer_plan = plan_sizer(sizer, library, &params, shape, channels)?;
            let value = device(
                buffers,
                Elem {
                    scalar: Scalar::U8,
                    lanes: 1,
                },
                0,
                Fill::Zero,
                false,
            );
            if let Value::Buffer(i) = value {
                scratch.push((i, sizer_plan));
            }
            arg(Abi::Pointer, value)
        }
        Role::Context => arg(Abi::Context, Value::Context),
        other => return Err(format!("{name}: no value for a {other:?} parameter")),
    })
}

/// The plan of a `…GetBufferHostSize…` call: the ROI (or sizes) as the main call's, its result in
/// host memory.
fn plan_sizer(
    symbol: &str,
    library: String,
    params: &[Assigned],
    shape: &Shape,
    channels: u64,
) -> Result<CallPlan, String> {
    let mut buffers = Vec::new();
    let mut args = Vec::new();
    for p in params {
        let name = p.param.name.clone();
        let value = match (p.role, p.param.base.as_str()) {
            (Role::Roi | Role::Size, _) => {
                let (w, h) = size_value(&name, shape);
                Arg {
                    param: name,
                    abi: Abi::Pair,
                    value: Value::Pair(w, h),
                }
            }
            (Role::Context, _) => Arg {
                param: name,
                abi: Abi::Context,
                value: Value::Context,
            },
            (Role::Enum, base) => Arg {
                param: name.clone(),
                abi: Abi::Value(Elem {
                    scalar: Scalar::I32,
                    lanes: 1,
                }),
                value: Value::Number(enum_value(base, &name)),
            },
            (_, _) if p.param.pointers >= 1 => {
                let e = elem(&p.param.base).unwrap_or(Elem {
                    scalar: Scalar::U64,
                    lanes: 1,
                });
                buffers.push(Buffer {
                    param: name.clone(),
                    role: Role::Result,
                    elem: e,
                    bytes: 8,
                    fill: Fill::Zero,
                    host: true,
                    image: None,
                });
                Arg {
                    param: name,
                    abi: Abi::Pointer,
                    value: Value::Buffer(buffers.len() - 1),
                }
            }
            (_, _) if p.param.is_value() => {
                let e = elem(&p.param.base).ok_or_else(|| format!("sizer {symbol}: no value for {}", p.param.c))?;
                let v = if name.to_ascii_lowercase().contains("channel") {
                    channels as f64
                } else {
                    scalar_value(&name, e)
                };
                numbers(p, v)?
            }
            _ => return Err(format!("sizer {symbol}: no value for {}", p.param.c)),
        };
        args.push(value);
    }
    if !buffers.iter().any(|b: &Buffer| b.host) {
        return Err(format!("sizer {symbol}: no result to read the size from"));
    }
    Ok(CallPlan {
        symbol: symbol.to_owned(),
        library,
        args,
        buffers,
        scratch: Vec::new(),
    })
}

#[cfg(test)]
mod tests;
