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

/// Adds the runs `paths` name (files, or folders searched with [`nppbench_model::find_run_files`]). Every file is
/// read and checked before the database is touched: one that is refused (not JSON, not an
/// nppbench run, another schema version, test hooks) leaves the database exactly as it was.
/// Then each run is added in a transaction of its own; one already there changes nothing.
pub fn add_paths(db: &mut Db, paths: &[PathBuf], allow_test_hooks: bool) -> Result<Vec<AddReport>, HistoryError> {
    let mut files = Vec::new();
    for p in paths {
        files.extend(nppbench_model::find_run_files(p)?);
    }
    let prepared = files
        .iter()
        .map(|f| prepare(f, allow_test_hooks))
        .collect::<Result<Vec<_>, _>>()?;
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
