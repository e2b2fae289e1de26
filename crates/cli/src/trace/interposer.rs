//! Where `nppbench trace` finds the interposer, `libnppbench_trace.so`: `$NPPBENCH_TRACE_LIB`,
//! else beside the nppbench executable, where `cargo xtask install` puts it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::Context;
use nppbench_model::TraceFile;

/// What to do where the interposer is not found.
const HOW: &str = "install nppbench with `cargo xtask install` (the binary and the interposer, side by side), \
                   build it with `cargo build --release -p nppbench-trace` (it lands beside nppbench in \
                   target/release), or name it with NPPBENCH_TRACE_LIB";

/// The interposer of this nppbench.
pub(crate) fn interposer() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the nppbench binary")?;
    find(std::env::var_os(TraceFile::LIB_VAR), &exe)
}

/// The interposer named by `var` (`$NPPBENCH_TRACE_LIB`), else the one beside `exe`; the error
/// names every path tried.
fn find(var: Option<OsString>, exe: &Path) -> anyhow::Result<PathBuf> {
    if let Some(p) = var {
        let p = PathBuf::from(p);
        anyhow::ensure!(
            p.is_file(),
            "{}={} is not a file; {HOW}",
            TraceFile::LIB_VAR,
            p.display()
        );
        return Ok(p);
    }
    let beside = exe.with_file_name(TraceFile::LIB_FILE_NAME);
    anyhow::ensure!(
        beside.is_file(),
        "the interposer {} was not found: tried {} (beside nppbench; {} is unset); {HOW}",
        TraceFile::LIB_FILE_NAME,
        beside.display(),
        TraceFile::LIB_VAR
    );
    Ok(beside)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo install --path crates/cli` left the interposer out, and the error said to build it
    /// rather than how to install both.
    #[test]
    fn the_interposer_is_found_beside_the_executable_and_the_error_names_the_paths_tried() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("nppbench");
        let err = find(None, &exe).unwrap_err().to_string();
        let beside = dir.path().join(TraceFile::LIB_FILE_NAME);
        assert!(err.contains(&format!("tried {}", beside.display())), "{err}");
        assert!(
            err.contains("NPPBENCH_TRACE_LIB is unset") && err.contains("cargo xtask install"),
            "{err}"
        );
        std::fs::write(&beside, "").unwrap();
        assert_eq!(find(None, &exe).unwrap(), beside);
        // The variable wins, and a wrong one is named.
        let named = dir.path().join("elsewhere.so");
        let err = find(Some(named.clone().into()), &exe).unwrap_err().to_string();
        assert!(err.contains(&named.display().to_string()), "{err}");
        std::fs::write(&named, "").unwrap();
        assert_eq!(find(Some(named.clone().into()), &exe).unwrap(), named);
    }
}
