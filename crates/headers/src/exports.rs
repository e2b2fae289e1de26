//! Which NPP library exports each function: the dynamic symbols of the wheel's `libnpp*.so.*`,
//! as `nm -D --defined-only` lists them.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// symbol → library (`nppial`), for every library in `dir`.
pub fn exports(dir: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let mut found = BTreeMap::new();
    let mut libraries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnpp") && n.contains(".so"))
        })
        .collect();
    libraries.sort();
    if libraries.is_empty() {
        bail!(
            "no libnpp*.so* in {}: point --libs at the wheel's lib folder",
            dir.display()
        );
    }
    for path in libraries {
        let file = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let library = file
            .strip_prefix("lib")
            .and_then(|n| n.split(".so").next())
            .unwrap_or(file)
            .to_owned();
        let out = Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(&path)
            .output()
            .context("running nm -D (binutils)")?;
        if !out.status.success() {
            bail!(
                "nm -D {} failed: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            // `0000000000123456 T nppiAdd_8u_C1RSfs_Ctx@@libnppial.so.12`
            let mut fields = line.split_whitespace();
            if let (Some(_), Some("T"), Some(symbol)) = (fields.next(), fields.next(), fields.next()) {
                let symbol = symbol.split('@').next().unwrap_or(symbol);
                found.entry(symbol.to_owned()).or_insert_with(|| library.clone());
            }
        }
    }
    Ok(found)
}
