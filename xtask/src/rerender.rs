//! `cargo xtask rerender`: every committed report under reports/ rendered again from its runs by
//! the nppbench built here (after a change to the report).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use nppbench_model::find_run_files;

use crate::{build_nppbench, check, root};

/// Every committed report folder, rendered again by the nppbench built here.
pub(crate) fn rerender() -> anyhow::Result<()> {
    let bin = build_nppbench()?;
    // The folders of reports/ and of its folders (reports/calibration/same-1-vs-2-3-4/).
    let subdirs = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect()
    };
    let top = subdirs(&root().join("reports"));
    let mut dirs: Vec<PathBuf> = top.iter().flat_map(|d| subdirs(d)).chain(top.iter().cloned()).collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.strip_prefix(root()).unwrap_or(&dir).display().to_string();
        let mut c = Command::new(&bin);
        c.current_dir(root());
        if dir.join("compare.args").exists() {
            // One argument a line: the runs (paths from the repository root) and the flags.
            let args = std::fs::read_to_string(dir.join("compare.args"))?;
            c.arg("compare")
                .args(args.lines().map(str::trim).filter(|l| !l.is_empty()))
                .arg("--out")
                .arg(&dir);
            // A compare that trips its gates exits 3, one whose runs do not compare 4: the page
            // is written either way.
            let status = c.status().with_context(|| format!("rendering {name}"))?;
            if !matches!(status.code(), Some(0 | 3 | 4)) {
                bail!("rendering {name} failed ({status})");
            }
        } else if holds_a_report(&dir) {
            c.args(["report", "--from"]).arg(&dir).arg("--out").arg(&dir);
            check(c, &format!("rendering {name}"))?;
        }
    }
    Ok(())
}

/// Whether `dir` is a report: it holds runs of its own (run.json, run-N-*.json or
/// runs/N/run.json), not only in folders below it, which are reports of their own.
fn holds_a_report(dir: &Path) -> bool {
    let runs_dir = dir.join("runs");
    find_run_files(dir).is_ok_and(|files| {
        files
            .iter()
            .all(|f| f.parent() == Some(dir) || f.parent().and_then(Path::parent) == Some(&runs_dir))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_a_folder_with_runs_of_its_own() {
        let reports = root().join("reports");
        assert!(holds_a_report(&reports.join("h100-npp-13.0.1")));
        assert!(holds_a_report(&reports.join("h100-atlas-bisected-npp-13.0.1")));
        // Runs named otherwise, folders of reports, and the history are not reports.
        assert!(!holds_a_report(&reports.join("calibration")));
        assert!(!holds_a_report(&reports));
        assert!(!holds_a_report(&reports.join("history")));
    }
}
