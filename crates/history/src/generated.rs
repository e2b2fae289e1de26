//! Generated runs and results for the unit tests, labelled as such: made-up environments and
//! figures with a known answer, not measurements.

use nppbench_analysis::LeakClass;
use nppbench_analysis::compare::ThroughputPasses;

use crate::Db;
use crate::rows::{Kind, MemoryFigures, RunRow, ScenarioRow, ThroughputFigures, Timing};

pub(crate) const H200: &str = "NVIDIA H200 (generated)";

/// A generated run: number `i` (its start time orders it), on `host` with one GPU `uuid`.
pub(crate) fn run(i: usize, host: &str, uuid: &str, npp: &str, driver: &str) -> RunRow {
    RunRow {
        key: format!("generated|{i}|{host}|{uuid}|{npp}"),
        started_at: format!("2026-01-01T{:02}:{:02}:00Z", i / 60, i % 60),
        finished_at: format!("2026-01-01T{:02}:{:02}:30Z", i / 60, i % 60),
        host: host.to_owned(),
        gpu_model: H200.to_owned(),
        gpu_uuids: vec![uuid.to_owned()],
        gpu_models: vec![H200.to_owned()],
        driver_version: Some(driver.to_owned()),
        cuda_driver_api_version: 13000,
        npp_version: npp.to_owned(),
        tool_version: "0.1.0".to_owned(),
        tool_commit: "generated".to_owned(),
        matrix_name: "quick".to_owned(),
        run_schema_version: 2,
        interrupted: false,
        test_hooks: Vec::new(),
    }
}

/// A generated throughput result: `kernel_ns` per call, three passes within ±0.5%.
pub(crate) fn throughput(scenario: &str, uuid: &str, kernel_ns: f64) -> ScenarioRow {
    throughput_passes(scenario, uuid, &[kernel_ns * 0.995, kernel_ns, kernel_ns * 1.005])
}

/// A generated throughput result with these passes' kernel times (their median is its figure).
pub(crate) fn throughput_passes(scenario: &str, uuid: &str, passes: &[f64]) -> ScenarioRow {
    let kernel_ns = nppbench_analysis::median(passes).unwrap();
    let min = passes.iter().copied().fold(f64::INFINITY, f64::min);
    let max = passes.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    ScenarioRow {
        kind: Kind::Throughput,
        scenario_id: format!("tp/{scenario}"),
        primitive: "Convert_8u32f_C1R".to_owned(),
        geometry: "31x31-s32-d128".to_owned(),
        stream: scenario.to_owned(),
        context: "from_stream".to_owned(),
        threading: None,
        gpu_uuid: uuid.to_owned(),
        status: nppbench_model::Status::Ok,
        throughput: Some(ThroughputFigures {
            passes: passes.len() as u32,
            kernel_ns,
            kernel_ns_min: min,
            kernel_ns_max: max,
            timing: Timing::Cupti,
            gbps: Some(4805.0 / kernel_ns),
            host_latency_us: Some(13.0),
            kernels_per_call: Some(2),
            per_pass: Some(ThroughputPasses {
                pixels: 31 * 31,
                event_ns: passes.iter().map(|p| p * 1.2).collect(),
                kernel_ns: passes.to_vec(),
                kernel_summed_ns: passes.to_vec(),
                busy_time_known: true,
                by_layout: None,
                at_once_share: Vec::new(),
                latency_us: vec![13.0; passes.len()],
            }),
        }),
        memory: None,
    }
}

/// A generated memory result of `class`.
pub(crate) fn memory(scenario: &str, uuid: &str, class: LeakClass) -> ScenarioRow {
    let slope = if class == LeakClass::Leak { 1.6 } else { 0.0 };
    ScenarioRow {
        kind: Kind::Memory,
        scenario_id: format!("mem/{scenario}"),
        primitive: "Convert_8u32f_C1R".to_owned(),
        geometry: "31x31-s32-d128".to_owned(),
        stream: "blocking".to_owned(),
        context: "from_stream".to_owned(),
        threading: Some(scenario.to_owned()),
        gpu_uuid: uuid.to_owned(),
        status: nppbench_model::Status::Ok,
        throughput: None,
        memory: Some(MemoryFigures {
            class: Some(class),
            mib_per_thread: Some(slope),
            mib_per_thread_ci: Some((slope - 0.1, slope + 0.1)),
            hidden_streams_per_thread: Some(if slope > 0.0 { 1.0 } else { 0.0 }),
            threads_spawned: 48,
        }),
    }
}

/// Small generated jitter in [−0.5, 0.5], fixed by `i` (a 64-bit LCG step).
pub(crate) fn jitter(i: usize) -> f64 {
    let x = (i as u64 + 1)
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

/// A fresh database in a temporary folder (kept alive by the returned guard).
pub(crate) fn db() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("history.db")).unwrap();
    (dir, db)
}
