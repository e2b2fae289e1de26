//! The database: an SQLite file (rusqlite, SQLite bundled) with a schema version and the
//! migrations that bring an older file up to it. Runs are added one transaction each, so a run
//! is either wholly in the history or not at all.
//!
//! Tables: `runs` (one row per run: identity key, environment), `scenarios` (each scenario's
//! axes, once) and `results` (one row per scenario, GPU and run: status and figures). The schema version is SQLite's `user_version`;
//! `application_id` marks the file as an nppbench history.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nppbench_stats::LeakClass;
use rusqlite::{Connection, OptionalExtension, params};

use crate::HistoryError;
use crate::ingest::{Kind, MemoryFigures, RunRow, ScenarioRow, ThroughputFigures, Timing};

/// "NPBH": SQLite's `application_id` of an nppbench history.
pub const APPLICATION_ID: i32 = 0x4E50_4248;

/// One step of the schema, applied once, in order, in its own transaction.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// The schema version the database has once this step is applied.
    pub version: u32,
    pub what: &'static str,
    pub sql: &'static str,
}

/// Every schema step so far. Append only: a released step is never edited, since databases
/// out there have applied it.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        what: "runs, scenarios (their axes, once each) and results (a scenario on a GPU in a run)",
        sql: "
            CREATE TABLE runs (
                id INTEGER PRIMARY KEY,
                run_key TEXT NOT NULL UNIQUE,
                started_at TEXT NOT NULL,
                finished_at TEXT NOT NULL,
                host TEXT NOT NULL,
                gpu_model TEXT NOT NULL,
                gpu_uuids TEXT NOT NULL,
                gpu_models TEXT NOT NULL,
                driver_version TEXT,
                cuda_driver_api_version INTEGER NOT NULL,
                npp_version TEXT NOT NULL,
                tool_version TEXT NOT NULL,
                tool_commit TEXT NOT NULL,
                matrix_name TEXT NOT NULL,
                run_schema_version INTEGER NOT NULL,
                interrupted INTEGER NOT NULL
            );
            CREATE TABLE scenarios (
                id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL,
                scenario_id TEXT NOT NULL,
                primitive TEXT NOT NULL,
                geometry TEXT NOT NULL,
                stream TEXT NOT NULL,
                context TEXT NOT NULL,
                threading TEXT,
                UNIQUE (kind, scenario_id)
            );
            CREATE TABLE results (
                run_id INTEGER NOT NULL REFERENCES runs (id),
                scenario INTEGER NOT NULL REFERENCES scenarios (id),
                gpu_uuid TEXT NOT NULL,
                gpu_model TEXT NOT NULL,
                status TEXT NOT NULL,
                passes INTEGER,
                kernel_ns REAL,
                kernel_ns_min REAL,
                kernel_ns_max REAL,
                timing TEXT,
                gbps REAL,
                host_latency_us REAL,
                kernels_per_call INTEGER,
                leak_class TEXT,
                mib_per_thread REAL,
                mib_per_thread_lo REAL,
                mib_per_thread_hi REAL,
                threads_spawned INTEGER,
                PRIMARY KEY (run_id, scenario, gpu_uuid)
            ) WITHOUT ROWID;
        ",
    },
    Migration {
        version: 2,
        what: "test hooks of a run, NPP's streams per thread, results by scenario",
        sql: "
            ALTER TABLE runs ADD COLUMN test_hooks TEXT NOT NULL DEFAULT '';
            ALTER TABLE results ADD COLUMN hidden_streams_per_thread REAL;
            CREATE INDEX results_by_scenario ON results (scenario);
        ",
    },
];

/// The schema version this nppbench writes.
pub fn latest_version() -> u32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

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

    /// Adds a run and its results in one transaction; a run whose key is present already
    /// changes nothing.
    pub fn add(&mut self, run: &RunRow, rows: &[ScenarioRow]) -> Result<Added, HistoryError> {
        let path = self.path.clone();
        let err = |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        if self.scenario_ids.is_empty() {
            let mut stmt = self
                .conn
                .prepare("SELECT id, kind, scenario_id FROM scenarios")
                .map_err(err)?;
            let known = stmt
                .query_map([], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
                })
                .map_err(err)?;
            for k in known {
                let (id, kind, scenario) = k.map_err(err)?;
                if let Some(kind) = Kind::parse(&kind) {
                    self.scenario_ids.insert((kind, scenario), id);
                }
            }
        }
        // Scenarios new in this run: known to the cache once the transaction commits.
        let mut new_ids: HashMap<(Kind, String), i64> = HashMap::new();
        let tx = self.conn.transaction().map_err(err)?;
        let present: Option<i64> = tx
            .query_row("SELECT id FROM runs WHERE run_key = ?1", [&run.key], |r| r.get(0))
            .optional()
            .map_err(err)?;
        if present.is_some() {
            return Ok(Added::AlreadyPresent);
        }
        tx.execute(
            "INSERT INTO runs (run_key, started_at, finished_at, host, gpu_model, gpu_uuids, gpu_models,
                driver_version, cuda_driver_api_version, npp_version, tool_version, tool_commit,
                matrix_name, run_schema_version, interrupted, test_hooks)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                run.key,
                run.started_at,
                run.finished_at,
                run.host,
                run.gpu_model,
                run.gpu_uuids.join(","),
                run.gpu_models.join(","),
                run.driver_version,
                run.cuda_driver_api_version,
                run.npp_version,
                run.tool_version,
                run.tool_commit,
                run.matrix_name,
                run.run_schema_version,
                run.interrupted,
                run.test_hooks.join("\n"),
            ],
        )
        .map_err(err)?;
        let run_id = tx.last_insert_rowid();
        {
            let mut new_scenario = tx
                .prepare_cached(
                    "INSERT INTO scenarios (kind, scenario_id, primitive, geometry, stream, context, threading)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(err)?;
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO results (run_id, scenario, gpu_uuid, gpu_model, status, passes, kernel_ns,
                        kernel_ns_min, kernel_ns_max, timing, gbps, host_latency_us, kernels_per_call, leak_class,
                        mib_per_thread, mib_per_thread_lo, mib_per_thread_hi, threads_spawned,
                        hidden_streams_per_thread)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
                     ON CONFLICT DO NOTHING",
                )
                .map_err(err)?;
            for r in rows {
                let key = (r.kind, r.scenario_id.clone());
                let known = self.scenario_ids.get(&key).or_else(|| new_ids.get(&key)).copied();
                let scenario = match known {
                    Some(id) => id,
                    None => {
                        new_scenario
                            .execute(params![
                                r.kind.as_str(),
                                r.scenario_id,
                                r.primitive,
                                r.geometry,
                                r.stream,
                                r.context,
                                r.threading,
                            ])
                            .map_err(err)?;
                        let id = tx.last_insert_rowid();
                        new_ids.insert(key, id);
                        id
                    }
                };
                let t = r.throughput.as_ref();
                let m = r.memory.as_ref();
                insert
                    .execute(params![
                        run_id,
                        scenario,
                        r.gpu_uuid,
                        run.model_of(&r.gpu_uuid),
                        r.status,
                        t.map(|t| t.passes),
                        t.map(|t| t.kernel_ns),
                        t.map(|t| t.kernel_ns_min),
                        t.map(|t| t.kernel_ns_max),
                        t.map(|t| t.timing.as_str()),
                        t.and_then(|t| t.gbps),
                        t.and_then(|t| t.host_latency_us),
                        t.and_then(|t| t.kernels_per_call),
                        m.and_then(|m| m.class).map(LeakClass::as_str),
                        m.and_then(|m| m.mib_per_thread),
                        m.and_then(|m| m.mib_per_thread_ci).map(|c| c.0),
                        m.and_then(|m| m.mib_per_thread_ci).map(|c| c.1),
                        m.map(|m| m.threads_spawned),
                        m.and_then(|m| m.hidden_streams_per_thread),
                    ])
                    .map_err(err)?;
            }
        }
        let results = tx
            .query_row("SELECT count(*) FROM results WHERE run_id = ?1", [run_id], |r| {
                r.get::<_, i64>(0)
            })
            .map_err(err)?;
        tx.commit().map_err(err)?;
        self.scenario_ids.extend(new_ids);
        Ok(Added::New {
            results: results.unsigned_abs() as usize,
        })
    }

    /// Every run, oldest first (by start time).
    pub fn runs(&self) -> Result<Vec<StoredRun>, HistoryError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, run_key, started_at, finished_at, host, gpu_model, gpu_uuids, gpu_models,
                    driver_version, cuda_driver_api_version, npp_version, tool_version, tool_commit,
                    matrix_name, run_schema_version, interrupted, test_hooks
                 FROM runs ORDER BY started_at, id",
            )
            .map_err(self.sqlite())?;
        let split = |s: String| -> Vec<String> {
            if s.is_empty() {
                Vec::new()
            } else {
                s.split(',').map(str::to_owned).collect()
            }
        };
        let rows = stmt
            .query_map([], |r| {
                Ok(StoredRun {
                    id: r.get(0)?,
                    run: RunRow {
                        key: r.get(1)?,
                        started_at: r.get(2)?,
                        finished_at: r.get(3)?,
                        host: r.get(4)?,
                        gpu_model: r.get(5)?,
                        gpu_uuids: split(r.get(6)?),
                        gpu_models: split(r.get(7)?),
                        driver_version: r.get(8)?,
                        cuda_driver_api_version: r.get(9)?,
                        npp_version: r.get(10)?,
                        tool_version: r.get(11)?,
                        tool_commit: r.get(12)?,
                        matrix_name: r.get(13)?,
                        run_schema_version: r.get(14)?,
                        interrupted: r.get(15)?,
                        test_hooks: r.get::<_, String>(16)?.lines().map(str::to_owned).collect(),
                    },
                })
            })
            .map_err(self.sqlite())?;
        rows.collect::<Result<Vec<_>, _>>().map_err(self.sqlite())
    }

    /// Calls `f` with every scenario result, in no particular order.
    pub fn for_each_result(&self, mut f: impl FnMut(StoredResult)) -> Result<(), HistoryError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT s.run_id, c.kind, c.scenario_id, c.primitive, c.geometry, c.stream, c.context, c.threading,
                    s.gpu_uuid, s.gpu_model, s.status, s.passes, s.kernel_ns, s.kernel_ns_min, s.kernel_ns_max,
                    s.timing, s.gbps, s.host_latency_us, s.kernels_per_call, s.leak_class, s.mib_per_thread,
                    s.mib_per_thread_lo, s.mib_per_thread_hi, s.threads_spawned, s.hidden_streams_per_thread
                 FROM results s JOIN scenarios c ON c.id = s.scenario",
            )
            .map_err(self.sqlite())?;
        let mut rows = stmt.query([]).map_err(self.sqlite())?;
        while let Some(r) = rows.next().map_err(self.sqlite())? {
            let stored = read_result(r).map_err(self.sqlite())?;
            f(stored);
        }
        Ok(())
    }
}

fn read_result(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredResult> {
    let kind_text: String = r.get(1)?;
    let kind = Kind::parse(&kind_text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, format!("kind {kind_text:?}").into())
    })?;
    let throughput = match (r.get::<_, Option<f64>>(12)?, kind) {
        (Some(kernel_ns), Kind::Throughput) => Some(ThroughputFigures {
            passes: r.get::<_, Option<u32>>(11)?.unwrap_or(0),
            kernel_ns,
            kernel_ns_min: r.get::<_, Option<f64>>(13)?.unwrap_or(kernel_ns),
            kernel_ns_max: r.get::<_, Option<f64>>(14)?.unwrap_or(kernel_ns),
            timing: r
                .get::<_, Option<String>>(15)?
                .as_deref()
                .and_then(Timing::parse)
                .unwrap_or(Timing::Events),
            gbps: r.get(16)?,
            host_latency_us: r.get(17)?,
            kernels_per_call: r.get(18)?,
        }),
        _ => None,
    };
    let memory = match kind {
        Kind::Memory => {
            let (lo, hi): (Option<f64>, Option<f64>) = (r.get(21)?, r.get(22)?);
            Some(MemoryFigures {
                class: r.get::<_, Option<String>>(19)?.as_deref().and_then(parse_class),
                mib_per_thread: r.get(20)?,
                mib_per_thread_ci: lo.zip(hi),
                threads_spawned: r.get::<_, Option<u32>>(23)?.unwrap_or(0),
                hidden_streams_per_thread: r.get(24)?,
            })
        }
        Kind::Throughput => None,
    };
    Ok(StoredResult {
        run_id: r.get(0)?,
        gpu_model: r.get(9)?,
        row: ScenarioRow {
            kind,
            scenario_id: r.get(2)?,
            primitive: r.get(3)?,
            geometry: r.get(4)?,
            stream: r.get(5)?,
            context: r.get(6)?,
            threading: r.get(7)?,
            gpu_uuid: r.get(8)?,
            status: r.get(10)?,
            throughput,
            memory,
        },
    })
}

/// A leak class from its name (`leak`, `bounded`, `flat`).
pub fn parse_class(s: &str) -> Option<LeakClass> {
    [LeakClass::Leak, LeakClass::Bounded, LeakClass::Flat]
        .into_iter()
        .find(|c| c.as_str() == s)
}

#[cfg(test)]
mod tests;
