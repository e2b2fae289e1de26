//! Any catalogued function called from its synthesised plan (`nppbench_headers::synth`), through
//! libffi with the ABI types the plan gives (issue #45): buffers allocated and filled as the plan
//! says, scratch buffers sized by their sizer's own call, the call queued on the context's stream,
//! and, once the caller has synchronised, every written image's ROI and every result read back.
//! The hand-written rows (`launch.rs`) stay the path of the 61 functions with CPU references;
//! this one serves every function by its roles alone, its outputs judged by oracles (the same
//! call synchronised, the same call at aligned strides), never by a reference.

use libffi::middle::{Arg, Cif, CodePtr, Type};
use nppbench_gpu::{DeviceBuffer, Gpu};
use nppbench_headers::roles::Role;
use nppbench_headers::synth::{Abi, Buffer, CallPlan, Elem, Fill, ImageLayout, MARGIN_BYTES, Scalar, Value};
use nppbench_npp_sys::{NppStatus, NppStreamContext};

use crate::{Npp, NppError, StreamContext};

mod again;
pub use again::Snapshot;

/// A planned call made: NPP's status, and the buffers it used (read back with [`Made::outputs`]
/// once the stream is synchronised).
pub struct Made<'p> {
    pub status: NppStatus,
    plan: &'p CallPlan,
    device: Vec<Option<DeviceBuffer>>,
    host: Vec<Vec<u8>>,
}

/// What a call wrote: each destination image's ROI rows and each result, by parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outputs {
    pub by_param: Vec<(String, Vec<u8>)>,
}

/// One value as libffi passes it: its type and its bytes, kept alive for the call.
struct Slot {
    ty: Type,
    bytes: Vec<u64>,
}

fn scalar_type(s: Scalar) -> Type {
    match s {
        Scalar::I8 => Type::i8(),
        Scalar::U8 => Type::u8(),
        Scalar::I16 => Type::i16(),
        Scalar::U16 => Type::u16(),
        Scalar::I32 => Type::i32(),
        Scalar::U32 => Type::u32(),
        Scalar::I64 => Type::i64(),
        Scalar::U64 => Type::u64(),
        Scalar::F32 => Type::f32(),
        Scalar::F64 => Type::f64(),
    }
}

fn elem_type(e: Elem) -> Type {
    if e.lanes == 1 {
        scalar_type(e.scalar)
    } else {
        Type::structure((0..e.lanes).map(|_| scalar_type(e.scalar)))
    }
}

/// `v` as `s`'s bytes, little-endian.
fn scalar_bytes(s: Scalar, v: f64) -> Vec<u8> {
    match s {
        Scalar::I8 => (v as i8).to_le_bytes().to_vec(),
        Scalar::U8 => (v as u8).to_le_bytes().to_vec(),
        Scalar::I16 => (v as i16).to_le_bytes().to_vec(),
        Scalar::U16 => (v as u16).to_le_bytes().to_vec(),
        Scalar::I32 => (v as i32).to_le_bytes().to_vec(),
        Scalar::U32 => (v as u32).to_le_bytes().to_vec(),
        Scalar::I64 => (v as i64).to_le_bytes().to_vec(),
        Scalar::U64 => (v as u64).to_le_bytes().to_vec(),
        Scalar::F32 => (v as f32).to_le_bytes().to_vec(),
        Scalar::F64 => v.to_le_bytes().to_vec(),
    }
}

/// Bytes in 8-byte words (aligned for any scalar or struct of them).
fn words(bytes: &[u8]) -> Vec<u64> {
    let mut w = vec![0u64; bytes.len().div_ceil(8).max(1)];
    for (i, b) in bytes.iter().enumerate() {
        w[i / 8] |= u64::from(*b) << (8 * (i % 8));
    }
    w
}

/// `n` bytes of `e`'s values 0 to 63 varying by position (`Fill::Pattern`).
fn pattern(e: Elem, n: u64) -> Vec<u8> {
    let size = e.scalar.bytes() as usize;
    let count = n as usize / size;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..count {
        let v = ((i * 7 + (i / 61) * 13) % 64) as f64;
        out.extend(scalar_bytes(e.scalar, v));
    }
    out.resize(n as usize, 0);
    out
}

/// An image's pattern by position in the image, margins included (`Fill::Pattern`): the same
/// pixel holds the same value whatever the step, so that a call at two steps reads the same
/// image, its margins too. `seed` is the image's place among the call's patterned images (its
/// planes each one): no two of a call's images hold the same pixels, nor one the other's shifted
/// by a constant, so that a difference, a norm of one against another, a logical xor or a
/// comparison gives outputs that vary (with one pattern for all, 371 of the 3,428 functions that
/// ran on the first H100 runs gave one value throughout: NormDiff, Sub, Xor …).
fn image_pattern(e: Elem, im: &ImageLayout, n: u64, seed: u64) -> Vec<u8> {
    let size = e.scalar.bytes();
    let mut out = Vec::with_capacity(n as usize);
    for r in 0..n / im.step {
        for k in 0..im.step / size {
            // Columns from the ROI's left edge, rows from the image's top.
            let col = (k * size) as i64 - MARGIN_BYTES as i64;
            let s = seed as i64;
            let v = (col.rem_euclid(509) * (7 + 2 * s) + r as i64 * (13 + 4 * s) + 5 * s) % 64;
            out.extend(scalar_bytes(e.scalar, v as f64));
        }
        out.resize(((r + 1) * im.step) as usize, 0);
    }
    out.resize(n as usize, 0);
    out
}

fn context_type() -> Type {
    Type::structure([
        Type::pointer(),
        Type::i32(),
        Type::i32(),
        Type::i32(),
        Type::i32(),
        Type::usize(),
        Type::i32(),
        Type::i32(),
        Type::u32(),
        Type::i32(),
    ])
}

/// An argument the plan cannot pass, or a buffer it could not have, as NPP's own error.
fn bad(plan: &CallPlan, details: String) -> NppError {
    NppError::BadArgument {
        function: plan.symbol.clone(),
        details,
    }
}

impl Npp {
    /// Makes `plan`'s call on `ctx`'s stream: allocates and fills its buffers, sizes its scratch
    /// buffers by their sizers, and calls. The call is queued, not waited for.
    pub fn call_planned<'p>(&self, gpu: &Gpu, plan: &'p CallPlan, ctx: &StreamContext) -> Result<Made<'p>, NppError> {
        let (mut device, mut host) = allocate(gpu, &plan.buffers).map_err(|e| bad(plan, e.to_string()))?;
        for (i, sizer) in &plan.scratch {
            let sized = self.call_planned(gpu, sizer, ctx)?;
            if sized.status < 0 {
                return Err(bad(plan, format!("{} returned {}", sizer.symbol, sized.status)));
            }
            let h = sized
                .host
                .iter()
                .zip(&sizer.buffers)
                .find(|(_, b)| b.host)
                .map(|(h, b)| (h, b.elem))
                .ok_or_else(|| bad(plan, format!("{} wrote no size", sizer.symbol)))?;
            let mut word = [0u8; 8];
            word[..h.1.bytes().min(8) as usize].copy_from_slice(&h.0[..h.1.bytes().min(8) as usize]);
            let bytes = u64::from_le_bytes(word).max(1);
            device[*i] = Some(DeviceBuffer::alloc(gpu, bytes).map_err(|e| bad(plan, e.to_string()))?);
        }
        let status = self.invoke(plan, ctx, &device, &mut host)?;
        Ok(Made {
            status,
            plan,
            device,
            host,
        })
    }

    /// `plan`'s function called with the buffers given, on `ctx`'s stream (queued); its status.
    fn invoke(
        &self,
        plan: &CallPlan,
        ctx: &StreamContext,
        device: &[Option<DeviceBuffer>],
        host: &mut [Vec<u8>],
    ) -> Result<NppStatus, NppError> {
        let f = self
            .libs
            .symbol_named(&plan.library, &plan.symbol)
            .map_err(|reason| NppError::Unavailable {
                function: plan.symbol.clone(),
                reason,
            })?;
        // Host arrays (planes, constants, steps) outlive the call.
        let mut arrays: Vec<Vec<u64>> = Vec::new();
        let slots = slots(plan, &ctx.raw, device, host, &mut arrays).map_err(|e| bad(plan, e))?;
        let cif = Cif::new(slots.iter().map(|s| s.ty.clone()), Type::i32());
        let args: Vec<Arg> = slots.iter().map(|s| Arg::new(&s.bytes[0])).collect();
        // SAFETY: `f` is `plan.symbol`, looked up in the library the prototypes name; the cif is
        // built from the prototype's parameters as the headers declare them (numbers by their
        // typedefs' C types, NppiSize/NppiPoint/NppiRect and NppStreamContext as the structs of
        // their fields, pointers as pointers), so libffi passes each as the C ABI does. Every
        // pointer is a buffer of `device` (allocated with the margins the plan gives around each
        // image, its scratch sized by its sizer), of `host`, a host array alive until the call
        // returns, or NPP's own stream handle.
        let status: NppStatus = unsafe { cif.call(CodePtr::from_fun(f), &args) };
        drop(arrays);
        Ok(status)
    }
}

/// Each argument's libffi type and bytes; host arrays (planes, constants, steps) go to `arrays`,
/// which must outlive the call.
fn slots(
    plan: &CallPlan,
    ctx: &NppStreamContext,
    device: &[Option<DeviceBuffer>],
    host: &mut [Vec<u8>],
    arrays: &mut Vec<Vec<u64>>,
) -> Result<Vec<Slot>, String> {
    let address = |i: usize, device: &[Option<DeviceBuffer>], host: &mut [Vec<u8>]| -> u64 {
        let offset = plan.buffers[i].image.map_or(0, |im| im.offset);
        match &device[i] {
            Some(d) => d.device_ptr() + offset,
            None => host[i].as_mut_ptr() as u64,
        }
    };
    let mut slots: Vec<Slot> = Vec::new();
    for a in &plan.args {
        let slot = match (&a.abi, &a.value) {
            (Abi::Value(e), Value::Number(v)) => Slot {
                ty: elem_type(*e),
                bytes: words(&scalar_bytes(e.scalar, *v)),
            },
            (Abi::Value(e), Value::Complex(re, im)) => Slot {
                ty: elem_type(*e),
                bytes: words(&[scalar_bytes(e.scalar, *re), scalar_bytes(e.scalar, *im)].concat()),
            },
            (Abi::Pair, Value::Pair(x, y)) => Slot {
                ty: Type::structure([Type::i32(), Type::i32()]),
                bytes: words(&[x.to_le_bytes(), y.to_le_bytes()].concat()),
            },
            (Abi::Rect, Value::Rect(r)) => Slot {
                ty: Type::structure([Type::i32(), Type::i32(), Type::i32(), Type::i32()]),
                bytes: words(&r.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()),
            },
            (Abi::Context, Value::Context) => Slot {
                ty: context_type(),
                bytes: context_words(ctx),
            },
            (Abi::Pointer, Value::Buffer(i)) => Slot {
                ty: Type::pointer(),
                bytes: vec![address(*i, device, host)],
            },
            (Abi::Pointer, Value::Planes(planes)) => {
                arrays.push(planes.iter().map(|i| address(*i, device, host)).collect());
                Slot {
                    ty: Type::pointer(),
                    bytes: vec![arrays.last().unwrap().as_ptr() as u64],
                }
            }
            (Abi::Pointer, Value::Array(e, values)) => {
                arrays.push(words(
                    &values
                        .iter()
                        .flat_map(|v| scalar_bytes(e.scalar, *v))
                        .collect::<Vec<u8>>(),
                ));
                Slot {
                    ty: Type::pointer(),
                    bytes: vec![arrays.last().unwrap().as_ptr() as u64],
                }
            }
            (abi, value) => return Err(format!("{}: {abi:?} cannot pass {value:?}", a.param)),
        };
        slots.push(slot);
    }
    Ok(slots)
}

/// The context's fields as the struct's bytes, in C's layout (repr(C)).
fn context_words(ctx: &NppStreamContext) -> Vec<u64> {
    let size = std::mem::size_of::<NppStreamContext>();
    let mut w = vec![0u64; size.div_ceil(8)];
    // SAFETY: copies the repr(C) struct's bytes into a buffer at least as large.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (ctx as *const NppStreamContext).cast::<u8>(),
            w.as_mut_ptr().cast::<u8>(),
            size,
        )
    };
    w
}

/// A plan's memory: device buffers (`None` for host ones and scratch not yet sized), host buffers.
type Memory = (Vec<Option<DeviceBuffer>>, Vec<Vec<u8>>);

/// The plan's buffers: device memory filled as planned (`None` for a scratch buffer, sized later,
/// and for host buffers), host memory zeroed.
fn allocate(gpu: &Gpu, buffers: &[Buffer]) -> Result<Memory, nppbench_gpu::GpuError> {
    let mut device = Vec::new();
    let mut host = Vec::new();
    // The patterned images so far: the next one's seed.
    let mut images = 0;
    for b in buffers {
        if b.host {
            device.push(None);
            host.push(match b.fill {
                Fill::Pattern => pattern(b.elem, b.bytes.max(8)),
                _ => vec![0u8; b.bytes.max(8) as usize],
            });
            continue;
        }
        host.push(Vec::new());
        if b.role == Role::ScratchBuffer {
            device.push(None);
            continue;
        }
        let mut d = DeviceBuffer::alloc(gpu, b.bytes.max(1))?;
        match b.fill {
            Fill::Pattern => d.upload(&match b.image {
                Some(im) => {
                    images += 1;
                    image_pattern(b.elem, &im, b.bytes, images - 1)
                }
                None => pattern(b.elem, b.bytes),
            })?,
            Fill::Sentinel | Fill::Zero => d.fill(again::refill(b.fill))?,
        }
        device.push(Some(d));
    }
    Ok((device, host))
}

/// Whether NPP writes a buffer of this role.
fn written(role: Role) -> bool {
    matches!(
        role,
        Role::Destination
            | Role::DestinationPlanes
            | Role::SourceDestination
            | Role::SourceDestinationPlanes
            | Role::Result
    )
}

impl<'p> Made<'p> {
    /// The plan the call was made by.
    pub fn plan(&self) -> &'p CallPlan {
        self.plan
    }
}

impl Made<'_> {
    /// What the call wrote, read once the caller synchronised its stream: each destination
    /// image's ROI rows (planes in order) and each result.
    pub fn outputs(&self) -> Result<Outputs, nppbench_gpu::GpuError> {
        self.outputs_from(|i| match &self.device[i] {
            Some(d) => d.download(),
            None => Ok(self.host[i].clone()),
        })
    }

    /// The outputs, each written buffer's bytes given by `bytes` (by buffer index) and cut to its
    /// ROI.
    fn outputs_from(
        &self,
        mut bytes: impl FnMut(usize) -> Result<Vec<u8>, nppbench_gpu::GpuError>,
    ) -> Result<Outputs, nppbench_gpu::GpuError> {
        let mut by_param = Vec::new();
        for (i, b) in self.plan.buffers.iter().enumerate() {
            if !written(b.role) {
                continue;
            }
            let bytes = bytes(i)?;
            let roi = match b.image {
                Some(im) => (0..im.rows)
                    .flat_map(|y| {
                        let start = (im.offset + y * im.step) as usize;
                        bytes[start..start + im.row_bytes as usize].to_vec()
                    })
                    .collect(),
                None => bytes,
            };
            by_param.push((b.param.clone(), roi));
        }
        Ok(Outputs { by_param })
    }
}

impl Outputs {
    /// Whether any output holds two different bytes (an output all one value tells little).
    pub fn varies(&self) -> bool {
        self.by_param
            .iter()
            .any(|(_, b)| b.first().is_some_and(|f| b.iter().any(|x| x != f)))
    }

    /// Bytes that differ from `other`'s, output by output.
    pub fn differing_bytes(&self, other: &Outputs) -> u64 {
        self.by_param
            .iter()
            .zip(&other.by_param)
            .map(|((_, a), (_, b))| a.iter().zip(b).filter(|(x, y)| x != y).count() as u64)
            .sum()
    }
}

#[cfg(test)]
mod tests;
