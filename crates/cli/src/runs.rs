//! The runs a command is given, found in the model's one order (`find_run_files`) and read,
//! and the folders a command writes to, checked before anything is written.

use std::path::{Path, PathBuf};

use nppbench_model::{ModelError, RunFile, find_run_files};

use crate::exit::bad_input;

/// Every run the paths name, in order, with the file each came from.
pub(crate) fn read_runs(paths: &[PathBuf]) -> anyhow::Result<Vec<(PathBuf, RunFile)>> {
    let mut out = Vec::new();
    for p in paths {
        for path in find(p)? {
            let run = RunFile::read(&path).map_err(bad_input)?;
            out.push((path, run));
        }
    }
    Ok(out)
}

/// The run files a path names; a path that names none is bad input, a folder that cannot be
/// read is not.
fn find(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    find_run_files(path).map_err(|e| match e {
        ModelError::Io { .. } => anyhow::Error::new(e),
        other => bad_input(other),
    })
}

/// `--out` must be a folder (or not exist yet).
pub(crate) fn check_out_dir(out: &Path) -> anyhow::Result<()> {
    if out.exists() && !out.is_dir() {
        return Err(bad_input(format!(
            "--out {}: is a file; give a folder (it is created if missing)",
            out.display()
        )));
    }
    Ok(())
}

/// `--npp` must be a folder.
pub(crate) fn check_npp_dir(dir: &Path) -> anyhow::Result<()> {
    if !dir.is_dir() {
        return Err(bad_input(format!(
            "--npp {}: no such folder; point it at the folder that holds libnppc.so.N and the other NPP libraries",
            dir.display()
        )));
    }
    Ok(())
}

/// What identifies a run: when it started, on which GPU, with which NPP.
fn run_identity(r: &RunFile) -> (String, String, String) {
    (
        r.started_at.clone(),
        r.environment.gpu.uuid.clone(),
        r.environment.npp.version.clone(),
    )
}

/// A report folder that already holds other runs is not overwritten without --force.
pub(crate) fn check_not_another_report(out: &Path, runs: &[RunFile], force: bool) -> anyhow::Result<()> {
    if force || !out.is_dir() {
        return Ok(());
    }
    let Ok(existing) = find_run_files(out) else {
        return Ok(());
    };
    let ours: Vec<_> = runs.iter().map(run_identity).collect();
    for path in existing {
        let Ok(other) = RunFile::read(&path) else { continue };
        if !ours.contains(&run_identity(&other)) {
            return Err(bad_input(format!(
                "--out {} holds the report of another run ({}, {}); choose another folder, or pass --force to replace it",
                out.display(),
                other.short_label(),
                other.started_at
            )));
        }
    }
    Ok(())
}

/// The NPP version every run shares (and that `--npp-version` asks for, where given); runs of
/// several versions are bad input.
pub(crate) fn one_npp_version(
    runs: &[(PathBuf, nppbench_model::RunFile)],
    asked: Option<&str>,
) -> anyhow::Result<String> {
    let versions: Vec<(String, &Path)> = runs
        .iter()
        .map(|(p, r)| (r.environment.npp.full_version(), p.as_path()))
        .collect();
    let first = versions[0].0.clone();
    if let Some((other, path)) = versions.iter().find(|(v, _)| *v != first) {
        return Err(bad_input(format!(
            "the runs given are of several NPP versions ({first}, and {other} in {}): give runs of one version",
            path.display()
        )));
    }
    if let Some(asked) = asked
        && !(first == asked || first.starts_with(&format!("{asked}.")))
    {
        return Err(bad_input(format!(
            "--npp-version {asked}: the runs given are of NPP {first}"
        )));
    }
    Ok(first)
}
