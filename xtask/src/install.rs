//! `cargo xtask install`: nppbench and the interposer `trace` preloads, built for release and put
//! side by side (where `nppbench trace` looks for it), in `$CARGO_HOME/bin` or `--to DIR`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use nppbench_model::TraceFile;

use crate::{cargo, check, root};

/// The files installed, as cargo builds them into target/release.
const FILES: [&str; 2] = ["nppbench", TraceFile::LIB_FILE_NAME];

/// `$CARGO_HOME/bin`, else `~/.cargo/bin`: where `cargo install` puts binaries.
fn default_dir() -> anyhow::Result<PathBuf> {
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        return Ok(PathBuf::from(home).join("bin"));
    }
    let home = std::env::var_os("HOME").context("neither CARGO_HOME nor HOME is set: name the folder with --to DIR")?;
    Ok(PathBuf::from(home).join(".cargo/bin"))
}

pub(crate) fn install(to: Option<&Path>) -> anyhow::Result<()> {
    let to = match to {
        Some(dir) => dir.to_owned(),
        None => default_dir()?,
    };
    let mut c = cargo();
    c.args([
        "build",
        "--release",
        "--package",
        "nppbench",
        "--package",
        "nppbench-trace",
    ]);
    check(c, "cargo build --release --package nppbench --package nppbench-trace")?;
    for path in place(&root().join("target/release"), &to)? {
        println!("installed {}", path.display());
    }
    Ok(())
}

/// Copies nppbench and the interposer from `built` into `to` (created), each through a temporary
/// file renamed over the old one (a running nppbench keeps its own); returns the paths written.
fn place(built: &Path, to: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    let mut written = Vec::new();
    for name in FILES {
        let from = built.join(name);
        let dest = to.join(name);
        let tmp = to.join(format!(".{name}.installing"));
        std::fs::copy(&from, &tmp).with_context(|| format!("copying {} to {}", from.display(), tmp.display()))?;
        std::fs::rename(&tmp, &dest).with_context(|| format!("writing {}", dest.display()))?;
        written.push(dest);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo install --path crates/cli` left out libnppbench_trace.so, so `trace` failed after
    /// the README's own install: both files land side by side, replacing an older install.
    #[test]
    fn install_puts_the_interposer_beside_nppbench() {
        let built = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        let to = to.path().join("bin");
        for name in FILES {
            std::fs::write(built.path().join(name), format!("new {name}")).unwrap();
        }
        std::fs::create_dir_all(&to).unwrap();
        std::fs::write(to.join("nppbench"), "old").unwrap();
        let written = place(built.path(), &to).unwrap();
        assert_eq!(written, [to.join("nppbench"), to.join(TraceFile::LIB_FILE_NAME)]);
        assert_eq!(std::fs::read_to_string(to.join("nppbench")).unwrap(), "new nppbench");
        assert!(to.join(TraceFile::LIB_FILE_NAME).is_file());
        // A build that lacks one says which.
        std::fs::remove_file(built.path().join(TraceFile::LIB_FILE_NAME)).unwrap();
        let err = format!("{:#}", place(built.path(), &to).unwrap_err());
        assert!(err.contains(TraceFile::LIB_FILE_NAME), "{err}");
    }

    #[test]
    fn the_readme_installs_with_cargo_xtask_install() {
        let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
        assert!(readme.contains("\ncargo xtask install "), "README's install line");
        assert!(!readme.contains("cargo install --path crates/cli"));
    }
}
