//! `nppbench report`: render runs into a folder, each run.json copied beside the page.

use std::path::{Path, PathBuf};

use anyhow::Context;
use nppbench_model::RunFile;

use crate::runs::{check_not_another_report, check_out_dir, read_runs};

pub(crate) fn report(from: &[PathBuf], out: &Path, force: bool, atlas: &[PathBuf]) -> anyhow::Result<()> {
    if !atlas.is_empty() {
        anyhow::bail!("--atlas goes with a trace.json in --from (trace pages are not built yet)");
    }
    check_out_dir(out)?;
    let (from, runs): (Vec<PathBuf>, Vec<RunFile>) = read_runs(from)?.into_iter().unzip();
    check_not_another_report(out, &runs, force)?;
    let written = nppbench_report::render_to_dir(&runs, out)
        .with_context(|| format!("rendering the report into {}", out.display()))?;
    // Each run.json beside the page, under the name the page links to.
    for (i, (path, run)) in from.iter().zip(&runs).enumerate() {
        let dest = out.join(nppbench_report::view::run_json_name(i, run, runs.len()));
        if path.canonicalize().ok() != dest.canonicalize().ok() {
            std::fs::copy(path, &dest).with_context(|| format!("copying {} to {}", path.display(), dest.display()))?;
        }
    }
    println!("{}", written.display());
    Ok(())
}
