//! Finding CUDA toolkit libraries (CUPTI, NVRTC) that cudarc opens by bare name: the one search,
//! for nppbench's probes (`nppbench-gpu`) and the interposer alike.
//!
//! cudarc dlopens `libcupti.so`, `libcupti.so.13`, … by name, so a toolkit outside the loader's
//! path is not found. Opening the file by full path first makes the later open by soname find
//! the library already mapped. The handle is never closed: the library stays mapped for the
//! process's life.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The folders a toolkit library is looked for in, in order.
pub fn toolkit_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            let home = PathBuf::from(home);
            dirs.push(home.join("lib64"));
            dirs.push(home.join("extras/CUPTI/lib64"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs.push(PathBuf::from("/usr/local/cuda/extras/CUPTI/lib64"));
    dirs
}

/// Opens `lib<name>.so.{13,12}` (or the unversioned file) from the first toolkit folder holding
/// one, and keeps it open. Returns the path opened, or `None` when no folder has it (the system
/// loader may still find it).
pub fn preload(name: &str) -> Option<PathBuf> {
    for dir in toolkit_dirs() {
        for file in [
            format!("lib{name}.so.13"),
            format!("lib{name}.so.12"),
            format!("lib{name}.so"),
        ] {
            let path = dir.join(&file);
            if path.exists() && open(&path) {
                return Some(path);
            }
        }
    }
    None
}

/// Opens `path` for the process's life; whether it opened.
fn open(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: opening a CUDA toolkit library runs only its own initialisers; the handle is never
    // closed, so the library stays mapped.
    !unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW) }.is_null()
}
