//! Adding runs to the history: each file read and checked (not an nppbench run, another schema,
//! test hooks) before the database is touched, then turned into rows ([`crate::rows`]) and added
//! one run per transaction.

use std::path::{Path, PathBuf};

use nppbench_model::RunFile;

use crate::HistoryError;
use crate::db::{Added, Db};
use crate::rows::{RunRow, ScenarioRow, scenario_rows};

/// A run read, checked and turned into rows, ready to be added.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub path: PathBuf,
    pub run: RunRow,
    pub rows: Vec<ScenarioRow>,
}

/// Reads `path` and turns it into rows. A run made with test hooks is refused unless
/// `allow_test_hooks`.
pub fn prepare(path: &Path, allow_test_hooks: bool) -> Result<Prepared, HistoryError> {
    let run = RunFile::read(path)?;
    if !run.test_hooks.is_empty() && !allow_test_hooks {
        return Err(HistoryError::TestHooks {
            path: path.to_owned(),
            hooks: run.test_hooks.join(", "),
        });
    }
    Ok(Prepared {
        path: path.to_owned(),
        run: RunRow::of(&run),
        rows: scenario_rows(&run),
    })
}

/// What adding one file did.
#[derive(Debug, Clone)]
pub struct AddReport {
    pub path: PathBuf,
    pub run: RunRow,
    pub added: Added,
}

/// A file a folder held that is not added, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub why: String,
}

/// The runs `paths` name, read and checked, and the files of their folders that were skipped.
/// A file named itself must be a run that may be added: one that is refused (not JSON, not an
/// nppbench run, another schema version, test hooks) is an error. A folder gives every run file
/// in or below it that reads as a run, whatever its name (`quick-3.json` as well as `run.json`),
/// in [`nppbench_model::find_run_files`]'s order and then by path; each other `.json` or
/// `.json.gz` file, and each copy of a run taken before from it, is skipped, saying why. A folder
/// with no run that can be added is an error.
pub fn prepare_paths(paths: &[PathBuf], allow_test_hooks: bool) -> Result<(Vec<Prepared>, Vec<Skipped>), HistoryError> {
    let mut prepared = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        if p.is_dir() {
            let (runs, left) = prepare_folder(p, allow_test_hooks)?;
            prepared.extend(runs);
            skipped.extend(left);
        } else {
            for f in nppbench_model::find_run_files(p)? {
                prepared.push(prepare(&f, allow_test_hooks)?);
            }
        }
    }
    Ok((prepared, skipped))
}

/// Every `.json` and `.json.gz` file in or below `dir` that reads as a run (see [`prepare_paths`]).
fn prepare_folder(dir: &Path, allow_test_hooks: bool) -> Result<(Vec<Prepared>, Vec<Skipped>), HistoryError> {
    let mut files = match nppbench_model::find_run_files(dir) {
        Ok(files) => files,
        Err(nppbench_model::ModelError::NoRuns { .. }) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let mut rest = Vec::new();
    json_files(dir, &mut rest)?;
    rest.sort();
    rest.retain(|f| !files.contains(f));
    files.extend(rest);
    let mut taken: Vec<Prepared> = Vec::new();
    let mut skipped = Vec::new();
    for path in files {
        let why = match prepare(&path, allow_test_hooks) {
            Ok(p) => match taken.iter().find(|t| t.run.key == p.run.key) {
                None => {
                    taken.push(p);
                    continue;
                }
                Some(first) => format!("a copy of {}", first.path.display()),
            },
            Err(HistoryError::Run(e)) => e.to_string(),
            Err(HistoryError::TestHooks { hooks, .. }) => {
                format!("made with test hooks ({hooks}): --allow-test-hooks adds it")
            }
            Err(e) => return Err(e),
        };
        skipped.push(Skipped { path, why });
    }
    if taken.is_empty() {
        if skipped.is_empty() {
            // No JSON at all: the model's message says what the folder holds.
            nppbench_model::find_run_files(dir)?;
        }
        return Err(HistoryError::NoRunIn {
            path: dir.to_owned(),
            skipped: skipped
                .iter()
                .map(|s| format!("{}: {}", s.path.display(), s.why))
                .collect::<Vec<_>>()
                .join("; "),
        });
    }
    Ok((taken, skipped))
}

/// The `.json` and `.json.gz` files in or below `dir`, never through a symbolic link nor into
/// nppbench's work folders (`.nppbench-work`).
fn json_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), HistoryError> {
    let io = |source| HistoryError::Io {
        path: dir.to_owned(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let (path, kind) = (entry.path(), entry.file_type().map_err(io)?);
        let name = entry.file_name().to_string_lossy().into_owned();
        if kind.is_dir() && name != ".nppbench-work" {
            json_files(&path, out)?;
        } else if kind.is_file() && nppbench_model::is_json_name(&name) {
            out.push(path);
        }
    }
    Ok(())
}

/// Adds runs already read and checked, each in a transaction of its own; one already there
/// changes nothing.
pub fn add_prepared(db: &mut Db, prepared: Vec<Prepared>) -> Result<Vec<AddReport>, HistoryError> {
    prepared
        .into_iter()
        .map(|p| {
            let added = db.add(&p.run, &p.rows)?;
            Ok(AddReport {
                path: p.path,
                run: p.run,
                added,
            })
        })
        .collect()
}

/// Adds the runs `paths` name ([`prepare_paths`]). Every file is read and checked before the
/// database is touched: one named itself that is refused leaves the database exactly as it was.
/// Then each run is added in a transaction of its own; one already there changes nothing.
pub fn add_paths(db: &mut Db, paths: &[PathBuf], allow_test_hooks: bool) -> Result<Vec<AddReport>, HistoryError> {
    let (prepared, _) = prepare_paths(paths, allow_test_hooks)?;
    add_prepared(db, prepared)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports").join(path)
    }

    /// A folder of `quick-N.json` files (as reports/calibration holds) gave none of them: only
    /// run.json and run-N-*.json were looked for, and nothing said so.
    #[test]
    fn a_folder_gives_every_run_file_it_can_read_and_says_what_it_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("sub")).unwrap();
        let a = committed("h100-quick-npp-13.0.1/run.json.gz");
        for (from, to) in [
            (a.clone(), "sub/run.json"),
            (a, "quick-1.json"),
            (committed("h200-quick-npp-12.2.3/run.json.gz"), "quick-2.json"),
            (
                committed("calibration/delay-100-cycles-npp-13.0.1-1.json.gz"),
                "delay.json",
            ),
        ] {
            std::fs::copy(from, d.join(to)).unwrap();
        }
        std::fs::write(d.join("trace.json"), r#"{"name": "something else"}"#).unwrap();
        std::fs::write(d.join("notes.txt"), "not looked at").unwrap();

        let (taken, skipped) = prepare_paths(&[d.to_owned()], false).unwrap();
        let taken: Vec<_> = taken.iter().map(|p| p.path.clone()).collect();
        assert_eq!(taken, [d.join("sub/run.json"), d.join("quick-2.json")]);
        let said: Vec<(PathBuf, &str)> = skipped.iter().map(|s| (s.path.clone(), s.why.as_str())).collect();
        assert_eq!(said.len(), 3, "{said:?}");
        assert_eq!(said[0].0, d.join("delay.json"));
        assert!(
            said[0].1.contains("test hooks") && said[0].1.contains("--allow-test-hooks"),
            "{said:?}"
        );
        assert_eq!(
            said[1],
            (
                d.join("quick-1.json"),
                format!("a copy of {}", d.join("sub/run.json").display()).as_str()
            )
        );
        assert_eq!(said[2].0, d.join("trace.json"));
        assert!(said[2].1.contains("not an nppbench run.json"), "{said:?}");
        // With test hooks allowed, the hooked run is taken too.
        let (taken, _) = prepare_paths(&[d.to_owned()], true).unwrap();
        assert_eq!(taken.len(), 3);
    }

    #[test]
    fn a_folder_with_no_run_that_can_be_added_is_refused_saying_why() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("trace.json"), r#"{"name": "x"}"#).unwrap();
        let err = prepare_paths(&[dir.path().to_owned()], false).unwrap_err();
        assert!(err.is_bad_input(), "{err}");
        assert!(err.to_string().contains("trace.json: "), "{err}");
        std::fs::remove_file(dir.path().join("trace.json")).unwrap();
        let err = prepare_paths(&[dir.path().to_owned()], false).unwrap_err();
        assert!(err.to_string().contains("nothing"), "{err}");
    }
}
