//! NPP, loaded at run time: `libnppc` and, on demand, each library a primitive needs (`nppial`,
//! `nppicc`, `nppidei`, `nppif`, `nppig`, `nppist`, `nppitc`), of NPP 12.x or 13.x, bound by hand.
//!
//! Three layers, as in cudarc: [`sys`] holds the C types and the function-pointer type of every
//! argument list the catalogue knows; `load` opens the libraries and looks symbols up, and
//! `launch` calls a catalogue row's function through its symbol with the signature its row
//! declares (`unsafe fn`s: the caller vouches for the symbol and the buffers); `status` turns
//! each `NppStatus` into a `Result`; the safe types here sit on top and check what `launch`'s
//! safety sections ask, save what [`Npp::run`] says it leaves to its caller.
//!
//! NPP links its own CUDA runtime statically, so the driver is all else a version needs.

mod check;
pub mod generic;
mod launch;
mod load;
mod status;
mod twin;
/// NPP's C types, from `nppbench-npp-sys` (a crate of its own, for the interposer).
pub use nppbench_npp_sys as sys;

pub use check::{DST_FILL, WrongPixels, compare, expected_output, source_buffers, wrong_pixels, wrong_words};
pub use load::{LoadError, NppSearch, Version, is_missing_library};
pub use nppbench_catalog::Library;
pub use status::{NppError, is_out_of_memory, status_name};
pub use twin::{TWIN_ALIGN, from_twin, twin_geometry, twin_sources};

use std::ffi::c_int;
use std::path::PathBuf;
use std::sync::OnceLock;

use nppbench_gpu::{DeviceBuffer, DeviceProps, Stream};
use nppbench_model::{ContextFill, ContextRecord, Geometry, Primitive};

use crate::launch::Launch;
use crate::load::Libraries;
use crate::status::check;
use crate::sys::{NppStreamContext, NppiSize, RawFn};

/// `cudaStreamNonBlocking`, as `nStreamFlags` declares a non-blocking stream.
const NON_BLOCKING: u32 = 1;

/// A loaded NPP: its libraries, kept open for as long as the function pointers are used.
pub struct Npp {
    libs: Libraries,
    version: Version,
    /// Each primitive's function, looked up when first used (or why it is unavailable).
    functions: Vec<OnceLock<Result<RawFn, String>>>,
}

/// `NppStreamContext` for one stream on one device, filled one of the ways real code fills it.
#[derive(Debug, Clone, Copy)]
pub struct StreamContext {
    raw: NppStreamContext,
    record: ContextRecord,
}

// SAFETY: the context holds a stream handle and device numbers; CUDA stream handles may be used
// from any host thread, and the numbers are plain data.
unsafe impl Send for StreamContext {}
// SAFETY: as above; the context is never mutated after creation.
unsafe impl Sync for StreamContext {}

impl StreamContext {
    /// What this context declares, beside what its stream really is.
    pub fn record(&self) -> ContextRecord {
        self.record
    }
}

/// The device properties NVIDIA documents for the context, flags from the stream.
fn from_stream(stream: &Stream, props: &DeviceProps) -> NppStreamContext {
    NppStreamContext {
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
    }
}

impl Npp {
    /// Loads NPP's core library from the first place in `search` that holds it; the others are
    /// opened from the same place when a primitive first needs them.
    pub fn load(search: &NppSearch) -> Result<Npp, LoadError> {
        let (libs, get_lib_version) = Libraries::load(search)?;
        // SAFETY: nppGetLibVersion takes nothing and returns a pointer to a static struct (or NULL).
        let v = unsafe { get_lib_version().as_ref() }.ok_or_else(|| LoadError {
            tried: vec![("libnppc".into(), "nppGetLibVersion returned NULL".into())],
        })?;
        Ok(Npp {
            libs,
            version: Version {
                major: v.major,
                minor: v.minor,
                build: v.build,
            },
            functions: Primitive::all().map(|_| OnceLock::new()).collect(),
        })
    }

    /// [`nppGetLibVersion`](https://docs.nvidia.com/cuda/npp/index.html).
    pub fn version(&self) -> Version {
        self.version
    }

    /// The name this NPP's headers give `status` (NPP 13.2 numbered its errors anew).
    pub fn status_name(&self, status: nppbench_npp_sys::NppStatus) -> &'static str {
        status_name(status, self.version)
    }

    /// The file each library was opened from so far, `libnppc` first.
    pub fn library_paths(&self) -> Vec<PathBuf> {
        self.libs.paths()
    }

    /// Opens every library the catalogue uses; returns those this NPP lacks, with why.
    pub fn load_all(&self) -> Vec<(Library, String)> {
        Library::ALL
            .into_iter()
            .filter_map(|lib| self.libs.get(lib).err().map(|why| (lib, why)))
            .collect()
    }

    fn function(&self, p: Primitive) -> Result<RawFn, String> {
        let row = p.row();
        self.functions[p.index()]
            .get_or_init(|| self.libs.symbol(row.library, &row.symbol()))
            .clone()
    }

    /// Whether this NPP exports the function `p` calls; the reason when not (the primitive is
    /// then 'not measured').
    pub fn available(&self, p: Primitive) -> Result<(), String> {
        self.function(p).map(drop)
    }

    /// The stream context for calls on `stream`, filled as `fill` says (see
    /// [`ContextFill`]). `NppGetStreamContext` sets NPP's stream (`nppSetStream`) and reads it
    /// back (`nppGetStreamContext`), as legacy code does, on the calling thread.
    pub fn context(&self, fill: ContextFill, stream: &Stream, props: &DeviceProps) -> Result<StreamContext, NppError> {
        let mut raw = from_stream(stream, props);
        match fill {
            ContextFill::FromStream => {}
            ContextFill::Zeroed => {
                raw = NppStreamContext {
                    h_stream: stream.raw().cast(),
                    ..NppStreamContext::zeroed()
                }
            }
            ContextFill::DeclaredBlocking => raw.n_stream_flags = 0,
            ContextFill::DeclaredNonBlocking => raw.n_stream_flags = NON_BLOCKING,
            ContextFill::NppGetStreamContext => {
                let unavailable = |reason: String| NppError::Unavailable {
                    function: "nppGetStreamContext".into(),
                    reason,
                };
                let set = self.libs.symbol(Library::Nppc, "nppSetStream").map_err(unavailable)?;
                let get = self
                    .libs
                    .symbol(Library::Nppc, "nppGetStreamContext")
                    .map_err(unavailable)?;
                // SAFETY: `set` and `get` were just looked up by name in libnppc, which `self`
                // keeps open; `stream` is borrowed, so alive, for the call.
                let (status, ctx) = unsafe { launch::legacy_context(set, get, stream.raw().cast()) };
                check("nppSetStream/nppGetStreamContext", status, self.version, String::new)?;
                raw = ctx;
            }
        }
        Ok(StreamContext {
            raw,
            record: ContextRecord {
                declared_flags: raw.n_stream_flags,
                stream_flags: stream.query_flags().unwrap_or(stream.flags()),
                declared_device: raw.n_cuda_device_id,
                declared_sm_count: raw.n_multi_processor_count,
            },
        })
    }

    /// The scratch buffer a reduction needs for `g`, from NPP's own `…GetBufferHostSize`
    /// function; 0 for every other primitive.
    pub fn scratch_bytes(&self, p: Primitive, g: &Geometry, ctx: &StreamContext) -> Result<u64, NppError> {
        let row = p.row();
        let (nppbench_catalog::Args::Reduce { buffer_size } | nppbench_catalog::Args::Reduce2 { buffer_size }) =
            row.args
        else {
            return Ok(0);
        };
        let f = self
            .libs
            .symbol(row.library, buffer_size)
            .map_err(|reason| NppError::Unavailable {
                function: buffer_size.to_owned(),
                reason,
            })?;
        // SAFETY: `f` is the row's `…GetBufferHostSize_…_Ctx` function, looked up by the name the
        // row declares in the row's library, which `self` keeps open.
        let (status, size) = unsafe { launch::buffer_size(f, roi(g), ctx.raw) };
        check(buffer_size, status, self.version, || {
            format!("width {} height {}", g.width, g.height)
        })?;
        Ok(size)
    }

    /// Runs `p` over `g`'s ROI from `sources` into `dst`, queued on the stream of `ctx` (the
    /// function is named by [`Primitive::npp_name`] and documented at the row's
    /// [`docs`](nppbench_catalog::Row::docs)).
    ///
    /// The buffers must hold the geometry (sources `src_stride × height` bytes, the destination
    /// [`Geometry::dst_bytes`], a reduction's scratch [`Npp::scratch_bytes`]); this is checked,
    /// so a wrong geometry is an error rather than an out-of-bounds access — except the size of
    /// a reduction's scratch buffer (only its presence is checked) and the life of `ctx`'s
    /// stream, which must outlive the call.
    pub fn run(
        &self,
        p: Primitive,
        g: &Geometry,
        sources: &[&DeviceBuffer],
        dst: &mut DeviceBuffer,
        scratch: Option<&DeviceBuffer>,
        ctx: &StreamContext,
    ) -> Result<(), NppError> {
        let row = p.row();
        let function = row.symbol();
        let bad = |details: String| NppError::BadArgument {
            function: function.clone(),
            details,
        };
        g.validate(p).map_err(|e| bad(e.to_string()))?;
        if sources.len() != usize::from(row.sources) {
            return Err(bad(format!(
                "{} source buffers given, {} needed",
                sources.len(),
                row.sources
            )));
        }
        if let Some(s) = sources.iter().find(|s| s.len() < g.src_bytes()) {
            return Err(bad(format!(
                "source buffer of {} bytes < src_stride × height = {}",
                s.len(),
                g.src_bytes()
            )));
        }
        if dst.len() < g.dst_bytes(p) {
            return Err(bad(format!(
                "destination buffer of {} bytes < the {} its geometry needs",
                dst.len(),
                g.dst_bytes(p)
            )));
        }
        let scratch_needed = matches!(
            row.args,
            nppbench_catalog::Args::Reduce { .. } | nppbench_catalog::Args::Reduce2 { .. }
        );
        if scratch_needed && scratch.is_none() {
            return Err(bad("a reduction needs its scratch buffer".into()));
        }
        let f = self.function(p).map_err(|reason| NppError::Unavailable {
            function: function.clone(),
            reason,
        })?;
        let (dw, dh) = g.dst_size(p);
        // validate() bounded every field by i32::MAX.
        let launch = Launch {
            sources: [0, 1].map(|i| sources.get(i).map_or(0, |b| b.device_ptr())),
            src_step: g.src_stride as c_int,
            dst: dst.device_ptr(),
            dst_step: g.dst_stride as c_int,
            roi: roi(g),
            dst_size: NppiSize {
                width: dw as c_int,
                height: dh as c_int,
            },
            scratch: scratch.map_or(0, DeviceBuffer::device_ptr),
            ctx: ctx.raw,
        };
        // SAFETY: `f` is `p`'s own function, looked up by `row.symbol()` in the libraries `self`
        // keeps open; the checks above bound each source and the destination by the geometry
        // (validated, so the steps hold a row) and require a reduction's scratch buffer, whose
        // size, like the liveness of `ctx`'s stream, is the caller's (see this function's
        // documentation: sized by `Npp::scratch_bytes`, the stream alive while its context is used).
        let status = unsafe { launch::call(row, f, &launch) };
        check(&function, status, self.version, || {
            format!(
                "width {} height {} src_stride {} dst_stride {}",
                g.width, g.height, g.src_stride, g.dst_stride
            )
        })
    }
}

fn roi(g: &Geometry) -> NppiSize {
    NppiSize {
        width: g.width as c_int,
        height: g.height as c_int,
    }
}
