//! Adding a run to the history: its row and every scenario result, in one transaction.

use std::collections::HashMap;

use nppbench_analysis::LeakClass;
use rusqlite::{OptionalExtension, params};

use super::{Added, Db};
use crate::HistoryError;
use crate::rows::{Kind, RunRow, ScenarioRow};

impl Db {
    /// Adds a run and its results in one transaction; a run whose key is present already
    /// changes nothing.
    pub fn add(&mut self, run: &RunRow, rows: &[ScenarioRow]) -> Result<Added, HistoryError> {
        let path = self.path.clone();
        let err = |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        self.load_scenario_ids()?;
        // Scenarios new in this run: known to the cache once the transaction commits.
        let mut new_ids: HashMap<(Kind, String), i64> = HashMap::new();
        let tx = self.conn.transaction().map_err(err)?;
        let present: Option<i64> = tx
            .query_row("SELECT id FROM runs WHERE run_key = ?1", [&run.key], |r| r.get(0))
            .optional()
            .map_err(err)?;
        if let Some(run_id) = present {
            // Results added before the history kept per-pass figures get them now.
            fill_passes(&tx, run_id, rows, &self.scenario_ids).map_err(err)?;
            tx.commit().map_err(err)?;
            return Ok(Added::AlreadyPresent);
        }
        let run_id = insert_run(&tx, run).map_err(err)?;
        insert_results(&tx, run, run_id, rows, &self.scenario_ids, &mut new_ids).map_err(err)?;
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

    /// The ids of the scenarios already in the database, read once.
    fn load_scenario_ids(&mut self) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let err = |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        if self.scenario_ids.is_empty() {
            let mut stmt = self
                .conn
                .prepare("SELECT id, kind, scenario_id FROM scenarios")
                .map_err(&err)?;
            let known = stmt
                .query_map([], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
                })
                .map_err(&err)?;
            for k in known {
                let (id, kind, scenario) = k.map_err(&err)?;
                if let Some(kind) = Kind::parse(&kind) {
                    self.scenario_ids.insert((kind, scenario), id);
                }
            }
        }
        Ok(())
    }
}

/// The run's row; returns its id.
fn insert_run(tx: &rusqlite::Transaction<'_>, run: &RunRow) -> rusqlite::Result<i64> {
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
    )?;
    Ok(tx.last_insert_rowid())
}

/// Every scenario result of the run, each scenario's axes stored once (`new_ids` collects the
/// scenarios new in this run).
fn insert_results(
    tx: &rusqlite::Transaction<'_>,
    run: &RunRow,
    run_id: i64,
    rows: &[ScenarioRow],
    known_ids: &HashMap<(Kind, String), i64>,
    new_ids: &mut HashMap<(Kind, String), i64>,
) -> rusqlite::Result<()> {
    {
        let mut new_scenario = tx.prepare_cached(
            "INSERT INTO scenarios (kind, scenario_id, primitive, geometry, stream, context, threading)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO results (run_id, scenario, gpu_uuid, gpu_model, status, passes, kernel_ns,
                    kernel_ns_min, kernel_ns_max, timing, gbps, host_latency_us, kernels_per_call, leak_class,
                    mib_per_thread, mib_per_thread_lo, mib_per_thread_hi, threads_spawned,
                    hidden_streams_per_thread, pixels, pass_event_ns, pass_kernel_ns, pass_kernel_summed_ns,
                    busy_time_known, pass_latency_us, pass_kernel_at_once_ns, pass_kernel_in_turn_ns,
                    pass_at_once_share)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
                    ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)
                 ON CONFLICT DO NOTHING",
        )?;
        for r in rows {
            let key = (r.kind, r.scenario_id.clone());
            let known = known_ids.get(&key).or_else(|| new_ids.get(&key)).copied();
            let scenario = match known {
                Some(id) => id,
                None => {
                    new_scenario.execute(params![
                        r.kind.as_str(),
                        r.scenario_id,
                        r.primitive,
                        r.geometry,
                        r.stream,
                        r.context,
                        r.threading,
                    ])?;
                    let id = tx.last_insert_rowid();
                    new_ids.insert(key, id);
                    id
                }
            };
            let t = r.throughput.as_ref();
            let m = r.memory.as_ref();
            let p = PassColumns::of(r);
            insert.execute(params![
                run_id,
                scenario,
                r.gpu_uuid,
                run.model_of(&r.gpu_uuid),
                r.status.as_str(),
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
                p.pixels,
                p.event_ns,
                p.kernel_ns,
                p.kernel_summed_ns,
                p.busy_time_known,
                p.latency_us,
                p.at_once_ns,
                p.in_turn_ns,
                p.at_once_share,
            ])?;
        }
    }
    Ok(())
}

/// A result's per-pass columns: each list as [`values_text`] writes it; all `None` where the row
/// has no per-pass figures.
#[derive(Debug, Default)]
struct PassColumns {
    pixels: Option<i64>,
    event_ns: Option<String>,
    kernel_ns: Option<String>,
    kernel_summed_ns: Option<String>,
    busy_time_known: Option<bool>,
    latency_us: Option<String>,
    /// Each layout's per-pass figures; `None` where the passes did not know their layouts apart.
    at_once_ns: Option<String>,
    in_turn_ns: Option<String>,
    /// Each pass's share of calls whose kernels ran at once (empty where none recorded it).
    at_once_share: Option<String>,
}

impl PassColumns {
    fn of(r: &ScenarioRow) -> PassColumns {
        let Some(p) = r.throughput.as_ref().and_then(|t| t.per_pass.as_ref()) else {
            return PassColumns::default();
        };
        PassColumns {
            pixels: i64::try_from(p.pixels).ok(),
            event_ns: Some(values_text(&p.event_ns)),
            kernel_ns: Some(values_text(&p.kernel_ns)),
            kernel_summed_ns: Some(values_text(&p.kernel_summed_ns)),
            busy_time_known: Some(p.busy_time_known),
            latency_us: Some(values_text(&p.latency_us)),
            at_once_ns: p.by_layout.as_ref().map(|l| values_text(&l.at_once_ns)),
            in_turn_ns: p.by_layout.as_ref().map(|l| values_text(&l.in_turn_ns)),
            at_once_share: Some(values_text(&p.at_once_share)),
        }
    }
}

/// Numbers as one text: space-separated, each as Rust writes an `f64` (the shortest text that
/// reads back as the same number).
pub fn values_text(values: &[f64]) -> String {
    values.iter().map(f64::to_string).collect::<Vec<_>>().join(" ")
}

/// The per-pass figures of a run already in the history, where its results have none (they were
/// added before the history kept them).
fn fill_passes(
    tx: &rusqlite::Transaction<'_>,
    run_id: i64,
    rows: &[ScenarioRow],
    known_ids: &HashMap<(Kind, String), i64>,
) -> rusqlite::Result<()> {
    let mut fill = tx.prepare_cached(
        "UPDATE results SET pixels = ?4, pass_event_ns = ?5, pass_kernel_ns = ?6, pass_kernel_summed_ns = ?7,
            busy_time_known = ?8, pass_latency_us = ?9, pass_kernel_at_once_ns = ?10, pass_kernel_in_turn_ns = ?11,
            pass_at_once_share = ?12
         WHERE run_id = ?1 AND scenario = ?2 AND gpu_uuid = ?3 AND pass_event_ns IS NULL",
    )?;
    for r in rows {
        let Some(&scenario) = known_ids.get(&(r.kind, r.scenario_id.clone())) else {
            continue;
        };
        let p = PassColumns::of(r);
        if p.event_ns.is_some() {
            fill.execute(params![
                run_id,
                scenario,
                r.gpu_uuid,
                p.pixels,
                p.event_ns,
                p.kernel_ns,
                p.kernel_summed_ns,
                p.busy_time_known,
                p.latency_us,
                p.at_once_ns,
                p.in_turn_ns,
                p.at_once_share,
            ])?;
        }
    }
    Ok(())
}
