//! NPP, loaded at run time: `libnppc` and `libnppidei` of NPP 12.x or 13.x, bound by hand.
//!
//! Three layers, as in cudarc: [`sys`] holds the C types and a table of function pointers filled
//! by the loader; `call` turns each `NppStatus` into a `Result`, and `primitive`'s table makes
//! each call through its pointer; the safe types here sit on top. `unsafe` lives in `load` (opening
//! the libraries, looking up symbols) and in the calls of `primitive`'s table, never here.
//!
//! NPP links its own CUDA runtime statically, so the driver is all else a version needs.

mod call;
mod load;
mod primitive;
pub mod sys;

pub use call::{NppError, is_out_of_memory, status_name};
pub use load::{LoadError, NppSearch, Version};
pub use primitive::{DST_FILL, StreamContext, max_abs_error, reference_output, source_pattern};

use std::path::PathBuf;

use nppbench_gpu::DeviceBuffer;
use nppbench_model::{Geometry, Primitive};

/// A loaded NPP: the libraries, kept open for as long as the function pointers are used.
pub struct Npp {
    fns: sys::Functions,
    libraries: Vec<(PathBuf, libloading::Library)>,
    version: Version,
}

impl Npp {
    /// Loads NPP from the first place in `search` that holds both libraries.
    pub fn load(search: &NppSearch) -> Result<Npp, LoadError> {
        load::load(search)
    }

    /// [`nppGetLibVersion`](https://docs.nvidia.com/cuda/npp/index.html).
    pub fn version(&self) -> Version {
        self.version
    }

    /// The file each library was opened from, `libnppc` first.
    pub fn library_paths(&self) -> Vec<PathBuf> {
        self.libraries.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Whether this NPP exports the function `primitive` calls; a missing one is 'not measured'.
    pub fn supports(&self, primitive: Primitive) -> bool {
        primitive::is_available(&self.fns, primitive)
    }

    /// Runs `primitive` over `geometry`'s ROI, from `src` into `dst`, queued on the stream of `ctx`
    /// (for [`Primitive::Convert8u32fC1`],
    /// [`nppiConvert_8u32f_C1R_Ctx`](https://docs.nvidia.com/cuda/archive/11.0_GA/npp/nppi__data__exchange__and__initialization_8h_source.html)).
    ///
    /// The buffers must hold `stride × height` bytes each; this is checked, so a wrong geometry is
    /// an error rather than an out-of-bounds access.
    pub fn run(
        &self,
        primitive: Primitive,
        geometry: &Geometry,
        src: &DeviceBuffer,
        dst: &mut DeviceBuffer,
        ctx: &StreamContext,
    ) -> Result<(), NppError> {
        primitive::run(&self.fns, primitive, geometry, src, dst, ctx)
    }
}
