//! `cargo xtask knowledge [--check]`: the knowledge files nppbench embeds (`knowledge/*.json.gz`:
//! one per NPP version and GPU architecture, `nppbench_analysis::knowledge`), each made from the
//! committed runs [`SOURCES`] names: the bisected atlas of a version, with the wrong-pixel study
//! of the same version. `--check` makes them again in memory and fails where a committed file
//! differs (a rule's code changed, or a source did): what CI runs.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, bail};
use nppbench_analysis::knowledge::Knowledge;
use nppbench_model::{RunFile, find_run_files};

use crate::root;

/// Each knowledge file's name and the runs (files, or folders of them) it is made from, relative
/// to the repository's root.
pub(crate) const SOURCES: [(&str, &[&str]); 3] = [
    (
        "npp-12.2.3-sm90",
        &[
            "reports/h100-atlas-bisected-npp-12.2.3",
            "reports/wrong-pixels/h200-GPU-fd1537c9/wrong-npp-12.2.3.json.gz",
        ],
    ),
    (
        "npp-13.0.1-sm90",
        &[
            "reports/h100-atlas-bisected-npp-13.0.1",
            "reports/wrong-pixels/h200-GPU-fd1537c9/wrong-npp-13.0.1.json.gz",
        ],
    ),
    (
        "npp-13.2.0-sm90",
        &["reports/wrong-pixels/h200-GPU-fd1537c9/wrong-npp-13.2.0.json.gz"],
    ),
];

/// Who made a file: the crate's version alone, so that the same runs make the same file.
fn made_by() -> String {
    format!("nppbench {}", env!("CARGO_PKG_VERSION"))
}

/// The knowledge `name` is made of, from the runs under `root`.
pub(crate) fn make(root: &Path, name: &str, sources: &[&str]) -> anyhow::Result<Knowledge> {
    let mut runs = Vec::new();
    for s in sources {
        for path in find_run_files(&root.join(s)).with_context(|| format!("{name}: its source {s}"))? {
            let run = RunFile::read(&path)?;
            let shown = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            runs.push((shown, run));
        }
    }
    let named: Vec<(String, &RunFile)> = runs.iter().map(|(n, r)| (n.clone(), r)).collect();
    let k = Knowledge::from_runs(&named, &made_by()).with_context(|| format!("making {name}"))?;
    if k.name() != name {
        bail!("{name}: its runs make {}, not {name}", k.name());
    }
    Ok(k)
}

pub(crate) fn knowledge(check: bool) -> anyhow::Result<()> {
    let root = root();
    let dir = root.join("knowledge");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut drifted = Vec::new();
    for (name, sources) in SOURCES {
        let k = make(&root, name, sources)?;
        let path = dir.join(format!("{name}.json.gz"));
        if check {
            let committed = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            // Read first, for its schema's message; then its text against what the runs make
            // (text, not parsed numbers: a float read back may differ in its last bit).
            Knowledge::from_bytes(&committed, &path.display().to_string())?;
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(committed.as_slice())
                .read_to_end(&mut text)
                .with_context(|| format!("decompressing {}", path.display()))?;
            if text != serde_json::to_vec(&k)? {
                drifted.push(path.display().to_string());
            }
        } else {
            std::fs::write(&path, k.to_gz()).with_context(|| format!("writing {}", path.display()))?;
            println!(
                "{}: NPP {} on {} from {} run(s), {} cases, {} functions' rules",
                path.display(),
                k.npp_version,
                k.gpu_arch,
                k.sources.len(),
                k.evidence.cases.len(),
                k.rules.len()
            );
        }
    }
    if !drifted.is_empty() {
        bail!(
            "{} differ from what their runs make now: run `cargo xtask knowledge` and commit them",
            drifted.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The committed knowledge files are what their runs make with today's code: a change to how
    /// rules are fitted, or to a source, fails here until the files are made again.
    #[test]
    fn the_committed_knowledge_is_what_its_runs_make() {
        super::knowledge(true).unwrap();
    }
}
