//! The commands that print what nppbench knows without measuring: the catalogue, a preset's
//! matrix, an NPP's version and files.

use std::path::PathBuf;

use nppbench_model::catalog::Format;
use nppbench_model::{Preset, Primitive};

use crate::exit::unavailable;
use crate::runs::check_npp_dir;

/// `nppbench primitives`: the catalogue, one function a line.
pub(crate) fn primitives() {
    println!(
        "{:<36} {:<8} {:<10} {:<10} operation",
        "primitive", "library", "source", "destination"
    );
    let fmt = |f: Format| format!("{}×{}", f.sample.npp_name(), f.channels);
    for p in Primitive::all() {
        let r = p.row();
        let src = if r.sources == 0 { "—".to_owned() } else { fmt(r.src) };
        println!(
            "{:<36} {:<8} {:<10} {:<10} {}",
            r.name,
            r.library,
            src,
            fmt(r.dst),
            r.operation
        );
    }
}

/// `nppbench preset NAME`: the preset's matrix file.
pub(crate) fn preset(preset: Preset) {
    print!("{}", preset.toml());
}

/// `nppbench npp`: NPP loaded (no GPU needed), its version and files.
pub(crate) fn npp(npp: Option<PathBuf>) -> anyhow::Result<()> {
    if let Some(dir) = &npp {
        check_npp_dir(dir)?;
    }
    // No NPP found is one failure whether the folder was named or searched: it exits as `run`
    // does on a machine without one (a folder that does not exist is bad input, above).
    let lib = nppbench_engine::load_npp(npp.as_deref()).map_err(unavailable)?;
    println!("NPP {}", lib.version());
    for path in lib.library_paths() {
        println!("{}", path.display());
    }
    Ok(())
}
