//! The database: an SQLite file (rusqlite, SQLite bundled) with a schema version and the
//! migrations that bring an older file up to it. Runs are added one transaction each, so a run
//! is either wholly in the history or not at all.
//!
//! Tables: `runs` (one row per run: identity key, environment), `scenarios` (each scenario's
//! axes, once) and `results` (one row per scenario, GPU and run: status and figures, and for
//! throughput each pass's figures as compare reads them). The schema version is SQLite's
//! `user_version`; `application_id` marks the file as an nppbench history.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

mod read;
mod schema;
mod write;

pub use read::{parse_class, parse_values};
pub use schema::{MIGRATIONS, Migration, latest_version};
pub use write::values_text;

use crate::HistoryError;
use crate::rows::{Kind, RunRow, ScenarioRow};

/// "NPBH": SQLite's `application_id` of an nppbench history.
pub const APPLICATION_ID: i32 = 0x4E50_4248;

/// What adding a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// Added, with this many results (a scenario listed twice for one GPU counts once).
    New { results: usize },
    /// A run with the same key is in the history already: nothing changed.
    AlreadyPresent,
}

/// A run as the database holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    pub id: i64,
    pub run: RunRow,
}

/// A scenario result as the database holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResult {
    pub run_id: i64,
    pub gpu_model: String,
    pub row: ScenarioRow,
}

/// An open history.
#[derive(Debug)]
pub struct Db {
    conn: Connection,
    path: PathBuf,
    /// The `scenarios` ids seen so far (committed ones only).
    scenario_ids: HashMap<(Kind, String), i64>,
}

impl Db {
    /// Opens the history at `path`, creating it when missing, and migrates it to the latest
    /// schema. A file that is not an nppbench history is refused and left as it was.
    pub fn open(path: &Path) -> Result<Db, HistoryError> {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(dir) = parent.filter(|d| !d.is_dir()) {
            return Err(HistoryError::NoFolder { path: dir.to_owned() });
        }
        let conn = Connection::open(path).map_err(|source| HistoryError::Sqlite {
            path: path.to_owned(),
            source,
        })?;
        let mut db = Db {
            conn,
            path: path.to_owned(),
            scenario_ids: HashMap::new(),
        };
        db.check_and_migrate()?;
        Ok(db)
    }

    /// Opens a history that must exist already (to report or export it).
    pub fn open_existing(path: &Path) -> Result<Db, HistoryError> {
        if !path.is_file() {
            return Err(HistoryError::Missing { path: path.to_owned() });
        }
        Db::open(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }

    fn sqlite(&self) -> impl Fn(rusqlite::Error) -> HistoryError + '_ {
        |source| HistoryError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn check_and_migrate(&mut self) -> Result<(), HistoryError> {
        let not_history = |message: &str| HistoryError::NotAHistory {
            path: self.path.clone(),
            message: message.to_owned(),
        };
        let pragma = |name: &str| -> Result<i64, HistoryError> {
            self.conn
                .pragma_query_value(None, name, |r| r.get::<_, i64>(0))
                .map_err(|e| match e.sqlite_error_code() {
                    Some(rusqlite::ErrorCode::NotADatabase) => not_history("not an SQLite database"),
                    _ => self.sqlite()(e),
                })
        };
        let app = pragma("application_id")?;
        let version = pragma("user_version")?;
        let tables: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(self.sqlite())?;
        if app != i64::from(APPLICATION_ID) && (app != 0 || tables > 0) {
            return Err(not_history("an SQLite database of something else"));
        }
        let version = u32::try_from(version).map_err(|_| not_history("its schema version is negative"))?;
        if version > latest_version() {
            return Err(HistoryError::TooNew {
                path: self.path.clone(),
                found: version,
                known: latest_version(),
            });
        }
        // WAL with NORMAL: commits are not synced one by one, only the log at its checkpoints.
        self.conn
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;
                 PRAGMA cache_size = -32000;",
            )
            .map_err(self.sqlite())?;
        for m in MIGRATIONS.iter().filter(|m| m.version > version) {
            let path = self.path.clone();
            let err = |source| HistoryError::Sqlite {
                path: path.clone(),
                source,
            };
            let tx = self.conn.transaction().map_err(err)?;
            tx.execute_batch(m.sql).map_err(err)?;
            tx.pragma_update(None, "application_id", APPLICATION_ID).map_err(err)?;
            tx.pragma_update(None, "user_version", m.version).map_err(err)?;
            tx.commit().map_err(err)?;
        }
        Ok(())
    }

    /// The schema version of the open database (the latest, once opened).
    pub fn schema_version(&self) -> Result<u32, HistoryError> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(self.sqlite())
    }

    /// Runs and scenario results held.
    pub fn counts(&self) -> Result<(u64, u64), HistoryError> {
        let count = |table: &str| -> Result<u64, HistoryError> {
            self.conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get::<_, i64>(0))
                .map(|n| n.unsigned_abs())
                .map_err(self.sqlite())
        };
        Ok((count("runs")?, count("results")?))
    }
}

#[cfg(test)]
mod tests;
