//! The stand-in as the CUDA driver: a copy of the stand-in named `libcuda.so.1`, whose
//! `cuStreamGetFlags` answers [`flags_for`] a handle. A test that loads it gives the interposer a
//! driver to ask a stream's real flags of, found and called the way the real one is (by name,
//! through cudarc), so that what the question costs on a new thread shows without a GPU. The
//! functions the shield stages a call with log each call instead of doing it (`staging.rs`).

use std::ffi::{CString, c_int, c_uint, c_void};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::standin_path;

pub mod staging;

/// The file name the driver is loaded by.
pub const FILE_NAME: &str = "libcuda.so.1";

/// The flags the stand-in driver gives the stream `handle`: bit 4 of the handle (1: non-blocking).
pub fn flags_for(handle: u64) -> u32 {
    ((handle >> 4) & 1) as u32
}

/// Whether the stand-in driver says the stream `handle` still has work queued: bit 5 of the
/// handle.
pub fn pending_for(handle: u64) -> bool {
    (handle >> 5) & 1 == 1
}

/// Copies the stand-in into `dir` as [`FILE_NAME`] (a copy, not a link: the loader would take a
/// link for the stand-in already loaded). A child with `dir` on `LD_LIBRARY_PATH` finds it by
/// name, as cudarc looks the driver up.
pub fn install(dir: &Path) -> Result<PathBuf, String> {
    let from = standin_path().ok_or_else(|| format!("no {} beside the executable", crate::LIB_FILE_NAME))?;
    let to = dir.join(FILE_NAME);
    std::fs::copy(&from, &to).map_err(|e| format!("copying {} to {}: {e}", from.display(), to.display()))?;
    Ok(to)
}

/// Loads the driver copy at `path`, local to its handle (its NPP symbols stay out of the global
/// scope), and returns the handle.
pub(crate) fn load(path: &Path) -> Result<*mut c_void, String> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: the copy is the stand-in, whose initialisers are Rust's own.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(format!("dlopen {}: failed", path.display()));
    }
    Ok(handle)
}

/// How often the driver loaded at `handle` was asked for flags.
pub(crate) fn flags_asked(handle: *mut c_void) -> Option<u64> {
    // SAFETY: a lookup through a handle `load` returned.
    let f = unsafe { libc::dlsym(handle, c"nppbench_trace_standin_flags_asked".as_ptr()) };
    // SAFETY: the stand-in's function below, `extern "C" fn() -> u64`.
    (!f.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> u64>(f)() })
}

static FLAGS_ASKED: AtomicU64 = AtomicU64::new(0);

/// How often this copy's `cuStreamGetFlags` was called.
#[unsafe(no_mangle)]
pub extern "C" fn nppbench_trace_standin_flags_asked() -> u64 {
    FLAGS_ASKED.load(Ordering::Relaxed)
}

/// The stand-in driver's [`cuStreamGetFlags`](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html):
/// writes [`flags_for`] the handle; `CUDA_ERROR_INVALID_VALUE` (1) for a null `flags`.
///
/// # Safety
///
/// `flags` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetFlags(stream: *mut c_void, flags: *mut c_uint) -> c_int {
    FLAGS_ASKED.fetch_add(1, Ordering::Relaxed);
    if flags.is_null() {
        return 1;
    }
    // SAFETY: non-null, and valid for a write (the caller's word).
    unsafe { *flags = flags_for(stream as u64) };
    0
}

/// The stand-in driver's [`cuStreamQuery`](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html):
/// `CUDA_ERROR_NOT_READY` (600) where [`pending_for`] the handle, else `CUDA_SUCCESS`.
#[unsafe(no_mangle)]
pub extern "C" fn cuStreamQuery(stream: *mut c_void) -> c_int {
    if pending_for(stream as u64) { 600 } else { 0 }
}
