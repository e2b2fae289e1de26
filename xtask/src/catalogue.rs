//! `cargo xtask catalogue VERSION…`: NPP's image functions from the headers of each version's
//! wheel, written to `catalogue/npp-VERSION/` (docs/catalogue.md). The wheel goes to the
//! temporary folder and is never committed; the parsing is `nppbench-headers`' (tree-sitter), run
//! through cargo so that xtask's own build stays light.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use crate::npp::download_wheel;
use crate::{cargo, check, root};

/// Where the catalogue folders live.
pub(crate) fn catalogue_root() -> PathBuf {
    root().join("catalogue")
}

/// Fetches `version`'s wheel, unpacks its headers and libraries, and writes its folder.
pub(crate) fn generate(version: &str) -> anyhow::Result<()> {
    let tmp = std::env::temp_dir().join("nppbench-wheels").join(version);
    let wheel = download_wheel(version, &tmp)?;
    let headers = tmp.join("include");
    let libs = tmp.join("lib");
    unpack(&wheel, &headers, &libs)?;
    let mut c = headers_tool();
    c.args(["extract", "--version", version, "--headers"])
        .arg(&headers)
        .arg("--libs")
        .arg(&libs)
        .arg("--out")
        .arg(catalogue_root().join(format!("npp-{version}")));
    check(c, "nppbench-headers extract")
}

/// Writes every committed folder's rows again from its prototypes (after a change to the roles).
pub(crate) fn regenerate() -> anyhow::Result<()> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(catalogue_root())
        .with_context(|| format!("reading {}", catalogue_root().display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("prototypes.tsv.gz").is_file())
        .collect();
    dirs.sort();
    let mut c = headers_tool();
    c.arg("generate").args(&dirs);
    check(c, "nppbench-headers generate")
}

fn headers_tool() -> Command {
    let mut c = cargo();
    c.args(["run", "--quiet", "--package", "nppbench-headers", "--"]);
    c
}

/// The wheel's `include/*.h` into `headers` and `lib/libnpp*.so.*` into `libs`.
fn unpack(wheel: &Path, headers: &Path, libs: &Path) -> anyhow::Result<()> {
    for dir in [headers, libs] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let script = "import zipfile,sys,os\nz=zipfile.ZipFile(sys.argv[1])\nn_h=n_l=0\nfor n in z.namelist():\n  b=os.path.basename(n)\n  if '/include/' in n and b.endswith('.h'):\n    open(os.path.join(sys.argv[2],b),'wb').write(z.read(n)); n_h+=1\n  elif '/lib/' in n and b.startswith('libnpp') and '.so' in b:\n    open(os.path.join(sys.argv[3],b),'wb').write(z.read(n)); n_l+=1\nsys.exit(0 if n_h and n_l else 3)\n";
    let mut py = Command::new("python3");
    py.arg("-c").arg(script).arg(wheel).arg(headers).arg(libs);
    check(
        py,
        &format!("unpacking the headers and libraries of {}", wheel.display()),
    )
}
