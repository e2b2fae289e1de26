//! Finding CUDA toolkit libraries (CUPTI, NVRTC) that cudarc opens by bare name.
//!
//! cudarc dlopens `libcupti.so`, `libcupti.so.13`, … by name, so a toolkit outside the loader's
//! path is not found. Opening the file by full path first makes the later open by soname find
//! the library already mapped.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use libloading::Library;

/// Libraries opened here stay open for the life of the process.
static KEPT: Mutex<Vec<Library>> = Mutex::new(Vec::new());

/// The folders a toolkit library is looked for in, in order.
pub(crate) fn toolkit_dirs() -> Vec<PathBuf> {
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
pub(crate) fn preload(name: &str) -> Option<PathBuf> {
    for dir in toolkit_dirs() {
        for file in [
            format!("lib{name}.so.13"),
            format!("lib{name}.so.12"),
            format!("lib{name}.so"),
        ] {
            let path = dir.join(&file);
            if !path.exists() {
                continue;
            }
            if let Some(lib) = open(&path) {
                KEPT.lock().unwrap_or_else(|p| p.into_inner()).push(lib);
                return Some(path);
            }
        }
    }
    None
}

fn open(path: &Path) -> Option<Library> {
    // SAFETY: opening a CUDA toolkit library runs only its own initialisers.
    unsafe { Library::new(path) }.ok()
}
