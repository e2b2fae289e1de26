//! The history as CSV: every scenario result joined with its run's environment, one row each,
//! oldest run first; a throughput result's per-pass figures (what compare judges it by) as
//! space-separated numbers. Columns are only ever appended.

use std::io::Write;

use rusqlite::types::ValueRef;

use crate::HistoryError;
use crate::db::Db;

/// The columns, in order: the run's, then the result's.
pub const COLUMNS: &[&str] = &[
    "run_key",
    "started_at",
    "finished_at",
    "host",
    "run_gpu_model",
    "run_gpu_uuids",
    "driver_version",
    "cuda_driver_api_version",
    "npp_version",
    "nppbench_version",
    "nppbench_commit",
    "matrix",
    "test_hooks",
    "kind",
    "scenario_id",
    "primitive",
    "geometry",
    "stream",
    "context",
    "threading",
    "gpu_uuid",
    "gpu_model",
    "status",
    "passes",
    "kernel_ns",
    "kernel_ns_min",
    "kernel_ns_max",
    "timing",
    "gbps",
    "host_latency_us",
    "kernels_per_call",
    "leak_class",
    "mib_per_thread",
    "mib_per_thread_lo",
    "mib_per_thread_hi",
    "threads_spawned",
    "hidden_streams_per_thread",
    "pixels",
    "pass_event_ns",
    "pass_kernel_ns",
    "pass_kernel_summed_ns",
    "busy_time_known",
    "pass_latency_us",
    "pass_kernel_at_once_ns",
    "pass_kernel_in_turn_ns",
];

const QUERY: &str = "
    SELECT r.run_key, r.started_at, r.finished_at, r.host, r.gpu_model, r.gpu_uuids, r.driver_version,
        r.cuda_driver_api_version, r.npp_version, r.tool_version, r.tool_commit, r.matrix_name, r.test_hooks,
        c.kind, c.scenario_id, c.primitive, c.geometry, c.stream, c.context, c.threading, s.gpu_uuid,
        s.gpu_model, s.status, s.passes, s.kernel_ns, s.kernel_ns_min, s.kernel_ns_max, s.timing, s.gbps,
        s.host_latency_us, s.kernels_per_call, s.leak_class, s.mib_per_thread, s.mib_per_thread_lo,
        s.mib_per_thread_hi, s.threads_spawned, s.hidden_streams_per_thread, s.pixels, s.pass_event_ns,
        s.pass_kernel_ns, s.pass_kernel_summed_ns, s.busy_time_known, s.pass_latency_us,
        s.pass_kernel_at_once_ns, s.pass_kernel_in_turn_ns
    FROM results s JOIN runs r ON r.id = s.run_id JOIN scenarios c ON c.id = s.scenario
    ORDER BY r.started_at, r.id, c.kind, c.scenario_id, s.gpu_uuid";

/// Writes every result of `db` as CSV to `out`; returns the number of rows.
pub fn write_csv(db: &Db, out: impl Write) -> Result<u64, HistoryError> {
    let sqlite = |source| HistoryError::Sqlite {
        path: db.path().to_owned(),
        source,
    };
    let mut w = csv::Writer::from_writer(out);
    w.write_record(COLUMNS)?;
    let mut stmt = db.connection().prepare(QUERY).map_err(sqlite)?;
    let mut rows = stmt.query([]).map_err(sqlite)?;
    let mut n = 0;
    let mut record: Vec<String> = Vec::with_capacity(COLUMNS.len());
    while let Some(row) = rows.next().map_err(sqlite)? {
        record.clear();
        for i in 0..COLUMNS.len() {
            record.push(match row.get_ref(i).map_err(sqlite)? {
                ValueRef::Null => String::new(),
                ValueRef::Integer(v) => v.to_string(),
                ValueRef::Real(v) => v.to_string(),
                ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
            });
        }
        w.write_record(&record)?;
        n += 1;
    }
    w.flush().map_err(|e| HistoryError::Csv(e.into()))?;
    Ok(n)
}
