//! Reading the history back: every run, oldest first, and every stored result.

use nppbench_analysis::LeakClass;
use nppbench_analysis::compare::{ByLayout, ThroughputPasses};

use super::{Db, StoredResult, StoredRun};
use crate::HistoryError;
use crate::rows::{Kind, MemoryFigures, RunRow, ScenarioRow, ThroughputFigures, Timing};

impl Db {
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
                    s.mib_per_thread_lo, s.mib_per_thread_hi, s.threads_spawned, s.hidden_streams_per_thread,
                    s.pixels, s.pass_event_ns, s.pass_kernel_ns, s.pass_kernel_summed_ns, s.busy_time_known,
                    s.pass_latency_us, s.pass_kernel_at_once_ns, s.pass_kernel_in_turn_ns, s.pass_at_once_share
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

/// A stored status word, as [`nppbench_model::Status`] spells it.
fn status_of(text: String) -> rusqlite::Result<nppbench_model::Status> {
    text.parse().map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(10, rusqlite::types::Type::Text, format!("status {text:?}").into())
    })
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
            per_pass: read_passes(r)?,
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
            status: status_of(r.get::<_, String>(10)?)?,
            throughput,
            memory,
        },
    })
}

/// A throughput result's per-pass figures (columns 25 to 33); `None` where the result was added
/// before the history kept them.
fn read_passes(r: &rusqlite::Row<'_>) -> rusqlite::Result<Option<ThroughputPasses>> {
    if r.get::<_, Option<String>>(26)?.is_none() {
        return Ok(None);
    }
    let list = |i: usize| -> rusqlite::Result<Vec<f64>> {
        let text = r.get::<_, Option<String>>(i)?.unwrap_or_default();
        parse_values(&text).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                i,
                rusqlite::types::Type::Text,
                format!("numbers {text:?}").into(),
            )
        })
    };
    Ok(Some(ThroughputPasses {
        pixels: r.get::<_, Option<i64>>(25)?.map_or(0, i64::unsigned_abs),
        event_ns: list(26)?,
        kernel_ns: list(27)?,
        kernel_summed_ns: list(28)?,
        busy_time_known: r.get::<_, Option<bool>>(29)?.unwrap_or(false),
        latency_us: list(30)?,
        by_layout: match (r.get::<_, Option<String>>(31)?, r.get::<_, Option<String>>(32)?) {
            (Some(_), Some(_)) => Some(ByLayout {
                at_once_ns: list(31)?,
                in_turn_ns: list(32)?,
            }),
            _ => None,
        },
        at_once_share: list(33)?,
    }))
}

/// Numbers written by [`super::values_text`]; `None` where one does not parse.
pub fn parse_values(text: &str) -> Option<Vec<f64>> {
    text.split_whitespace().map(|v| v.parse().ok()).collect()
}

/// A leak class from its name (`leak`, `bounded`, `flat`).
pub fn parse_class(s: &str) -> Option<LeakClass> {
    [LeakClass::Leak, LeakClass::Bounded, LeakClass::Flat]
        .into_iter()
        .find(|c| c.as_str() == s)
}
