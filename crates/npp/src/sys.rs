//! The C side of NPP: `#[repr(C)]` types from `nppdefs.h` and the table of function pointers
//! the loader fills. Nothing here is safe to call directly.

use std::ffi::{c_int, c_uint, c_void};

/// `NppStatus`: 0 is success, negative values are errors, positive values are warnings.
pub type NppStatus = c_int;

/// `NppiSize`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NppiSize {
    pub width: c_int,
    pub height: c_int,
}

/// `NppStreamContext` (NPP 10.1 and later), passed by value to every `_Ctx` function; see
/// [nppdefs.h](https://docs.nvidia.com/cuda/npp/index.html).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NppStreamContext {
    pub h_stream: *mut c_void,
    pub n_cuda_device_id: c_int,
    pub n_multi_processor_count: c_int,
    pub n_max_threads_per_multi_processor: c_int,
    pub n_max_threads_per_block: c_int,
    pub n_shared_mem_per_block: usize,
    pub n_cuda_dev_attr_compute_capability_major: c_int,
    pub n_cuda_dev_attr_compute_capability_minor: c_int,
    pub n_stream_flags: c_uint,
    pub n_reserved0: c_int,
}

/// `NppLibraryVersion`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NppLibraryVersion {
    pub major: c_int,
    pub minor: c_int,
    pub build: c_int,
}

/// `nppGetLibVersion` (libnppc): see [NPP core](https://docs.nvidia.com/cuda/npp/index.html).
pub type GetLibVersion = unsafe extern "C" fn() -> *const NppLibraryVersion;

/// `nppiConvert_8u32f_C1R_Ctx` (libnppidei), declared in
/// [nppi_data_exchange_and_initialization.h](https://docs.nvidia.com/cuda/archive/11.0_GA/npp/nppi__data__exchange__and__initialization_8h_source.html);
/// see also the [NPP image conversion functions](https://docs.nvidia.com/cuda/npp/index.html).
pub type Convert8u32fC1RCtx = unsafe extern "C" fn(
    p_src: *const u8,
    n_src_step: c_int,
    p_dst: *mut f32,
    n_dst_step: c_int,
    o_size_roi: NppiSize,
    ctx: NppStreamContext,
) -> NppStatus;

/// Every NPP function nppbench calls. A function only some versions export is an `Option`.
#[derive(Clone, Copy)]
pub struct Functions {
    pub get_lib_version: GetLibVersion,
    pub convert_8u32f_c1r_ctx: Option<Convert8u32fC1RCtx>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_context_matches_the_c_layout() {
        // nppdefs.h on LP64: pointer, four ints, size_t, four ints.
        assert_eq!(std::mem::size_of::<NppStreamContext>(), 48);
        assert_eq!(std::mem::offset_of!(NppStreamContext, n_shared_mem_per_block), 24);
        assert_eq!(std::mem::offset_of!(NppStreamContext, n_stream_flags), 40);
    }
}
