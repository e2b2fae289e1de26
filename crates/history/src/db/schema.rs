//! The history's schema: every step, applied once and in order, that brings a database to the
//! version this nppbench writes.

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
    Migration {
        version: 3,
        what: "each throughput result's per-pass figures and image size, as compare judges them",
        // Lists of numbers, space-separated, as Rust writes an f64 (exact on reading back);
        // NULL in results added before this version, which are therefore not judged.
        sql: "
            ALTER TABLE results ADD COLUMN pixels INTEGER;
            ALTER TABLE results ADD COLUMN pass_event_ns TEXT;
            ALTER TABLE results ADD COLUMN pass_kernel_ns TEXT;
            ALTER TABLE results ADD COLUMN pass_kernel_summed_ns TEXT;
            ALTER TABLE results ADD COLUMN busy_time_known INTEGER;
            ALTER TABLE results ADD COLUMN pass_latency_us TEXT;
        ",
    },
    Migration {
        version: 4,
        what: "each throughput result's per-pass kernel time over the calls of each layout apart",
        // NULL where a pass did not know its layouts apart (runs made before 2026-11-27): compare
        // then judges the busy time over all calls, as it does for the run itself.
        sql: "
            ALTER TABLE results ADD COLUMN pass_kernel_at_once_ns TEXT;
            ALTER TABLE results ADD COLUMN pass_kernel_in_turn_ns TEXT;
        ",
    },
    Migration {
        version: 5,
        what: "each throughput result's per-pass share of calls whose kernels ran at once",
        // NULL in results added before this version, and empty where no pass recorded the layout
        // of calls of several kernels: compare then cannot tell whether two runs drew the layouts
        // apart from the shares (issue #49), and judges as it did.
        sql: "
            ALTER TABLE results ADD COLUMN pass_at_once_share TEXT;
        ",
    },
];

/// The schema version this nppbench writes.
pub fn latest_version() -> u32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}
