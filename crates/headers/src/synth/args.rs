//! Each parameter's argument in a synthesised call, by its role (the images are placed first, in
//! `plan`), and the plan of a scratch buffer's sizer call.

use super::values::{array_values, channels, enum_value, point_value, scalar_value, size_value};
use super::*;

/// A number passed by value, or an array of them.
pub(super) fn numbers(p: &Assigned, value: f64) -> Result<Arg, String> {
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
pub(super) fn array_len(c: &str, channels: u64) -> u64 {
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
pub(super) fn argument(
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
            Value::Number(enum_value(&row.symbol, &p.param.base, &name)),
        ),
        Role::Scalar if p.param.is_value() => {
            let e = elem(&p.param.base).ok_or_else(|| format!("{}: no number type", p.param.c))?;
            numbers(p, scalar_value(&name, e))?
        }
        Role::Scalar | Role::ConstantArray => {
            let e = elem(&p.param.base).ok_or_else(|| format!("{}: no number type", p.param.c))?;
            let n = array_len(&p.param.c, channels);
            let v = scalar_value(&name, e);
            let values = array_values(&name, n, shape).unwrap_or_else(|| (0..n).map(|i| v + i as f64).collect());
            arg(Abi::Pointer, Value::Array(e, values))
        }
        Role::DeviceArray | Role::Result | Role::ScratchBuffer => memory(p, row, all, shape, buffers, scratch)?,
        Role::Context => arg(Abi::Context, Value::Context),
        other => return Err(format!("{name}: no value for a {other:?} parameter")),
    })
}

/// The argument of a parameter that points at memory other than an image: an array NPP reads,
/// a result it writes, a scratch buffer its sizer sizes.
fn memory(
    p: &Assigned,
    row: &FunctionRow,
    all: &Sizers<'_>,
    shape: &Shape,
    buffers: &mut Vec<Buffer>,
    scratch: &mut Vec<(usize, CallPlan)>,
) -> Result<Arg, String> {
    let name = p.param.name.clone();
    let channels = channels(&row.formats.layout);
    // A buffer of its own (device memory, or host where `host`): its index.
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
        buffers.len() - 1
    };
    let arg = |abi, value| Arg {
        param: name.clone(),
        abi,
        value,
    };
    Ok(match p.role {
        // Constants per channel are read by the host (`nppiCompareC…`), but for the `…DeviceC…`
        // functions; kernels, tables and levels by the device.
        Role::DeviceArray => {
            let e = elem(&p.param.base).unwrap_or(Elem {
                scalar: Scalar::U8,
                lanes: 1,
            });
            let host = name.starts_with("pConstant") && !row.symbol.contains("DeviceC");
            if p.param.pointers >= 1 && p.param.array.is_some() {
                // `const Npp32s * pValues[3]`: a host array of one device array per channel
                // (one device array read as that host array ended the child by SIGSEGV: LUT,
                // LUT_Linear, LUT_Cubic, LUTPalette, on the H100 runs). The `LUT_Trilinear`
                // functions' `Npp8u * pLevels[3]` are host arrays, the headers say ("Host pointer
                // to an array of 3 host pointers"); as device arrays they ended the child by
                // SIGSEGV on 12.2.3.2 and 13.0.1.
                let on_host = row.symbol.contains("LUT_Trilinear");
                let tables = (0..array_len(&p.param.c, channels))
                    .map(|_| device(buffers, e, SMALL, Fill::Pattern, on_host))
                    .collect();
                arg(Abi::Pointer, Value::Planes(tables))
            } else {
                arg(
                    Abi::Pointer,
                    Value::Buffer(device(buffers, e, SMALL, Fill::Pattern, host)),
                )
            }
        }
        // A noise level per channel (`nppiFilterWienerBorder…`'s `aNoise[4]`, between 0 and 1) is
        // an input the host reads, as device memory it ended the child by SIGSEGV.
        Role::Result if name == "aNoise" => {
            let e = elem(&p.param.base).ok_or_else(|| format!("{}: no number type", p.param.c))?;
            let n = array_len(&p.param.c, channels);
            arg(Abi::Pointer, Value::Array(e, vec![0.5; n as usize]))
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
            arg(Abi::Pointer, Value::Buffer(device(buffers, e, SMALL, Fill::Zero, host)))
        }
        Role::ScratchBuffer => {
            let sizer = p.with.as_ref().ok_or_else(|| format!("{name}: no sizer"))?;
            let (library, params) = all
                .find(sizer)
                .ok_or_else(|| format!("{name}: its sizer {sizer} is not among the prototypes"))?;
            let sizer_plan = plan_sizer(sizer, library, &params, shape, channels)?;
            let bytes = Elem {
                scalar: Scalar::U8,
                lanes: 1,
            };
            let i = device(buffers, bytes, 0, Fill::Zero, false);
            scratch.push((i, sizer_plan));
            arg(Abi::Pointer, Value::Buffer(i))
        }
        other => return Err(format!("{name}: no memory for a {other:?} parameter")),
    })
}

/// The plan of a `…GetBufferHostSize…` call: the ROI (or sizes) as the main call's, its result in
/// host memory.
pub(super) fn plan_sizer(
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
                value: Value::Number(enum_value(symbol, base, &name)),
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
