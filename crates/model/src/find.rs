//! Finding run files: the one order in which a path names runs, for every command that takes
//! runs (`report`, `compare`, `history add`, `cargo xtask rerender`).

use std::path::{Path, PathBuf};

use crate::{ModelError, RunFile};

/// The folder nppbench keeps a run's work in while it runs: never a finished run.
const WORK_DIR: &str = ".nppbench-work";

/// The run files `path` names, in this order:
///
/// 1. a file: itself (whatever its name);
/// 2. a folder holding `run.json`: that file alone;
/// 3. else a folder holding a report of several runs, `run-N-*.json` (`run-2-npp-13.0.1.json`):
///    those, in N's order;
/// 4. else a folder holding a run of several `--npp`, `runs/N/run.json`: those, in N's order;
/// 5. else any other folder: the runs of each folder in it, by name, each by rules 2 to 5
///    (`.nppbench-work` folders and symbolic links skipped).
///
/// Where a rule names `run.json` or `run-N-*.json`, the same name with `.gz` after it serves too:
/// a run gzip-compressed, as runs too large to commit whole are committed
/// ([`RunFile::read`] reads either).
///
/// So a run is taken once even where a report keeps it twice (`run-1-*.json` beside
/// `runs/1/run.json`), and a folder of reports gives each report's runs in turn.
///
/// A path that does not exist, or a folder with no run in or below it, is an error that says
/// what the folder holds.
pub fn find_run_files(path: &Path) -> Result<Vec<PathBuf>, ModelError> {
    if !path.exists() {
        return Err(ModelError::NoSuchPath { path: path.to_owned() });
    }
    if !path.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let found = runs_in_folder(path)?;
    if found.is_empty() {
        return Err(ModelError::NoRuns {
            path: path.to_owned(),
            holds: holdings(path)?,
        });
    }
    Ok(found)
}

/// Whether a file's name is a JSON file's, gzip-compressed or not (`.json`, `.json.gz`): runs are
/// read either way.
pub fn is_json_name(name: &str) -> bool {
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// Rules 2 to 5 of [`find_run_files`] for one folder; empty where it holds no run.
fn runs_in_folder(dir: &Path) -> Result<Vec<PathBuf>, ModelError> {
    if let Some(run) = run_json(dir) {
        return Ok(vec![run]);
    }
    let here = entries(dir)?;
    let several = numbered(here.iter().filter_map(|(name, path)| {
        let n = name.strip_prefix("run-")?.split(['-', '.']).next()?.parse().ok()?;
        (is_json_name(name) && path.is_file()).then(|| (n, path.clone()))
    }));
    if !several.is_empty() {
        return Ok(several);
    }
    let runs_dir = dir.join("runs");
    if runs_dir.is_dir() {
        let by_npp = numbered(
            entries(&runs_dir)?
                .into_iter()
                .filter_map(|(name, path)| Some((name.parse().ok()?, run_json(&path)?))),
        );
        if !by_npp.is_empty() {
            return Ok(by_npp);
        }
    }
    let mut found = Vec::new();
    for (name, path) in here {
        let real_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if real_dir && name != WORK_DIR {
            found.extend(runs_in_folder(&path)?);
        }
    }
    Ok(found)
}

/// `dir/run.json`, else `dir/run.json.gz` (the same run gzip-compressed, as runs too large to
/// commit whole are committed), where it is a file.
fn run_json(dir: &Path) -> Option<PathBuf> {
    ["run.json", "run.json.gz"]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
}

/// Paths in the order of their numbers (ties, never expected, by path).
fn numbered(items: impl Iterator<Item = (u32, PathBuf)>) -> Vec<PathBuf> {
    let mut items: Vec<(u32, PathBuf)> = items.collect();
    items.sort();
    items.into_iter().map(|(_, path)| path).collect()
}

/// A folder's entries, `(name, path)`, sorted by name.
fn entries(dir: &Path) -> Result<Vec<(String, PathBuf)>, ModelError> {
    let io = |source| ModelError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        out.push((entry.file_name().to_string_lossy().into_owned(), entry.path()));
    }
    out.sort();
    Ok(out)
}

/// What a folder holds, for the message of one without runs: the first twelve names.
fn holdings(dir: &Path) -> Result<String, ModelError> {
    let names: Vec<String> = entries(dir)?.into_iter().map(|(name, _)| name).collect();
    if names.is_empty() {
        return Ok("nothing".to_owned());
    }
    let shown = names.iter().take(12).cloned().collect::<Vec<_>>().join(", ");
    Ok(if names.len() > 12 {
        format!("{shown}, and {} more", names.len() - 12)
    } else {
        shown
    })
}

impl RunFile {
    /// The run.json files one folder below `dir` (`reports/*/run.json`, or `run.json.gz`),
    /// sorted by path: the committed reports of one run each. To take every run a path names,
    /// use [`find_run_files`].
    pub fn find_in(dir: &Path) -> Vec<PathBuf> {
        let mut runs: Vec<_> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|d| run_json(&d.path()))
            .collect();
        runs.sort();
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}").unwrap();
        }
        dir
    }

    fn found(dir: &Path, under: &str) -> Vec<String> {
        find_run_files(&dir.join(under))
            .unwrap()
            .iter()
            .map(|f| f.strip_prefix(dir).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn a_folder_gives_its_own_runs_in_the_documented_order() {
        let d = tree(&[
            "one/run.json",
            "one/run-1-npp-12.json",
            "several/run-10-npp-13.json",
            "several/run-2-npp-12.json",
            "several/run-x.json",
            "several/runs/1/run.json",
            "npps/runs/2/run.json",
            "npps/runs/10/run.json",
            "npps/runs/notes/run.json",
        ]);
        let p = d.path();
        assert_eq!(found(p, "one"), ["one/run.json"]);
        assert_eq!(
            found(p, "several"),
            ["several/run-2-npp-12.json", "several/run-10-npp-13.json"]
        );
        assert_eq!(found(p, "npps"), ["npps/runs/2/run.json", "npps/runs/10/run.json"]);
        assert_eq!(found(p, "one/run-1-npp-12.json"), ["one/run-1-npp-12.json"]);
    }

    /// A run committed gzip-compressed is found where its run.json would be, by every rule.
    #[test]
    fn a_gzip_compressed_run_is_found_where_its_run_json_would_be() {
        let d = tree(&[
            "one/run.json.gz",
            "both/run.json",
            "both/run.json.gz",
            "several/run-2-npp-12.json.gz",
            "several/run-1-npp-13.json",
            "several/run-3.json.txt",
            "npps/runs/1/run.json.gz",
            "npps/runs/2/run.json",
        ]);
        let p = d.path();
        assert_eq!(found(p, "one"), ["one/run.json.gz"]);
        assert_eq!(found(p, "both"), ["both/run.json"], "the run once");
        assert_eq!(
            found(p, "several"),
            ["several/run-1-npp-13.json", "several/run-2-npp-12.json.gz"]
        );
        assert_eq!(found(p, "npps"), ["npps/runs/1/run.json.gz", "npps/runs/2/run.json"]);
        assert_eq!(
            RunFile::find_in(p),
            [p.join("both/run.json"), p.join("one/run.json.gz")]
        );
    }

    #[test]
    fn a_folder_of_reports_gives_each_reports_runs_without_work_folders() {
        let d = tree(&[
            "reports/b/run-1-x.json",
            "reports/b/runs/1/run.json",
            "reports/a/run.json",
            "reports/a/deeper/run.json",
            "reports/c/d/run.json",
            "reports/c/notes.json",
            "reports/e/.nppbench-work/run.json",
        ]);
        assert_eq!(
            found(d.path(), "reports"),
            ["reports/a/run.json", "reports/b/run-1-x.json", "reports/c/d/run.json"]
        );
    }

    #[test]
    fn a_folder_without_runs_says_what_it_holds() {
        let d = tree(&["empty/notes.txt", "empty/sub/summary.md"]);
        let err = find_run_files(&d.path().join("empty")).unwrap_err().to_string();
        assert!(
            err.contains("holds no run.json") && err.contains("(it holds: notes.txt, sub)"),
            "{err}"
        );
        let err = find_run_files(&d.path().join("nowhere")).unwrap_err().to_string();
        assert!(err.ends_with("nowhere: no such file or folder"), "{err}");
    }

    #[test]
    fn every_committed_run_is_found_and_reads() {
        let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
        let runs = find_run_files(&reports).unwrap();
        let names: Vec<String> = runs
            .iter()
            .map(|f| f.strip_prefix(&reports).unwrap().display().to_string())
            .collect();
        assert!(
            names
                .iter()
                .any(|n| n.contains("/run-") && (n.ends_with(".json") || n.ends_with(".json.gz"))),
            "a report of several runs (run-N-*.json, or gzipped): {names:?}"
        );
        assert!(
            names.contains(&"h100-quick-npp-13.0.1/run.json.gz".to_owned()),
            "{names:?}"
        );
        for path in &runs {
            RunFile::read(path).unwrap();
        }
    }
}
