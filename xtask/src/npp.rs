//! NPP versions: fetched from their wheels into `.npp/VERSION/`, and named on the command line
//! as `system`, a fetched version or a folder.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use crate::{BadInput, check, nppbench, root};

/// `--npp` as the nppbench binary takes it: `None` for the default search.
pub(crate) fn npp_dir(spec: &str) -> anyhow::Result<Option<PathBuf>> {
    if spec == "system" {
        return Ok(None);
    }
    let fetched = root().join(".npp").join(spec);
    if fetched.is_dir() {
        return Ok(Some(fetched));
    }
    let dir = PathBuf::from(spec);
    if dir.is_dir() {
        return Ok(Some(dir));
    }
    Err(BadInput(format!(
        "--npp {spec}: not `system`, not a fetched version (.npp/{spec}/ is missing: run `cargo xtask npp fetch {spec}`), and not a folder"
    ))
    .into())
}

/// Downloads the wheel of NPP `version` into `tmp` (pip keeps one already there) and returns its
/// path.
pub(crate) fn download_wheel(version: &str, tmp: &Path) -> anyhow::Result<PathBuf> {
    let package = wheel_package(version)?;
    std::fs::create_dir_all(tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut pip = Command::new("python3");
    pip.args([
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        "3.12",
    ])
    .args([
        "--platform",
        "manylinux2014_x86_64",
        "--platform",
        "manylinux_2_27_x86_64",
        "--platform",
        "manylinux_2_28_x86_64",
    ])
    .arg("--dest")
    .arg(tmp)
    .arg(format!("{package}=={version}"));
    check(
        pip,
        &format!("pip download {package}=={version} (is the version right, and the package index reachable?)"),
    )?;
    std::fs::read_dir(tmp)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .with_context(|| format!("pip left no wheel in {}", tmp.display()))
}

/// The Python package that carries NPP `version`.
fn wheel_package(version: &str) -> anyhow::Result<&'static str> {
    match version.split('.').next() {
        Some("12") => Ok("nvidia-npp-cu12"),
        Some("13") => Ok("nvidia-npp"),
        _ => Err(BadInput(format!(
            "NPP {version}: nppbench knows NPP 12.x (nvidia-npp-cu12) and 13.x (nvidia-npp)"
        ))
        .into()),
    }
}

pub(crate) fn fetch(version: &str) -> anyhow::Result<()> {
    let major = version.split('.').next().unwrap_or_default();
    let dest = root().join(".npp").join(version);
    let wheel = download_wheel(version, &root().join("target/npp-wheels").join(version))?;
    std::fs::create_dir_all(&dest).with_context(|| format!("creating {}", dest.display()))?;
    // Every NPP library of the wheel (each needs only libnppc and the driver: NPP links its CUDA
    // runtime statically); nppbench opens a library when a function of it is first measured.
    let script = format!(
        "import zipfile,sys,os\nz=zipfile.ZipFile(sys.argv[1])\nfound=set()\nfor n in z.namelist():\n  b=os.path.basename(n)\n  if b.startswith('libnpp') and b.endswith('.so.{major}'):\n    open(os.path.join(sys.argv[2],b),'wb').write(z.read(n)); found.add(b)\nprint(len(found), 'libraries:', ' '.join(sorted(found)))\nsys.exit(0 if 'libnppc.so.{major}' in found else 3)\n"
    );
    let mut py = Command::new("python3");
    py.arg("-c").arg(script).arg(&wheel).arg(&dest);
    check(
        py,
        &format!(
            "extracting the NPP libraries (libnpp*.so.{major}) from {}",
            wheel.display()
        ),
    )?;
    // The version NPP reports (nppGetLibVersion needs no GPU).
    let mut info = nppbench(&["npp", "--npp"]);
    info.arg(&dest);
    check(info, "nppbench npp (checking what was fetched)")?;
    println!("{}", dest.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_packages_by_major_version() {
        assert_eq!(wheel_package("12.2.3.2").unwrap(), "nvidia-npp-cu12");
        assert_eq!(wheel_package("13.0.1.2").unwrap(), "nvidia-npp");
        assert!(wheel_package("11.8").unwrap_err().to_string().contains("12.x"));
    }

    #[test]
    fn unknown_npp_spec_says_how_to_fetch() {
        let err = npp_dir("12.9.9.9").unwrap_err().to_string();
        assert!(err.contains("cargo xtask npp fetch 12.9.9.9"), "{err}");
        assert!(npp_dir("system").unwrap().is_none());
    }
}
