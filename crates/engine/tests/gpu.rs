//! The engine on a real GPU: NPP's output, the memory and throughput probes, and the faults a
//! probe must report rather than crash on. Each test skips (saying why) where there is no GPU.

use std::path::Path;

use nppbench_engine::{gpu_available, run_probe};
use nppbench_model::{
    ContextFill, Geometry, MemoryScenario, Primitive, Settings, StreamKind, Threading, ThroughputScenario,
};
use serde_json::{Value, json};

const P: Primitive = Primitive::CONVERT_8U32F_C1R;

/// CUPTI's callbacks and activity records are one per process, and a probe takes them for its
/// whole run: in nppbench every probe is a process of its own; here, where the tests share one
/// process, one probe runs at a time.
static ONE_PROBE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn probe(dir: &Path, request: Value) -> String {
    let _one = ONE_PROBE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let req = dir.join("request.json");
    let answer = dir.join("answer.json");
    std::fs::write(&req, request.to_string()).unwrap();
    run_probe(&req, &answer).unwrap();
    std::fs::read_to_string(answer).unwrap()
}

/// The replies of a memory probe given `scenarios`, one per answer line.
fn memory_batch(dir: &Path, scenarios: &[MemoryScenario], min_calls: u32) -> Vec<Value> {
    let answer = probe(
        dir,
        json!({"probe": "memory", "npp_dir": null, "device": 0, "scenarios": scenarios, "memory_budget_mib": 1024,
               "min_calls": min_calls, "parent_pid": 0}),
    );
    let replies: Vec<Value> = answer
        .lines()
        .map(|l| {
            let line: Value = serde_json::from_str(l).unwrap();
            line["scenario"]["reply"].clone()
        })
        .collect();
    for (i, reply) in replies.iter().enumerate() {
        assert_start_up_steps(reply, i == 0);
    }
    replies
}

/// A measured scenario's start-up steps, in order: the process's own before its first
/// scenario's, then the scenario's setting up step by step, then its baseline.
fn assert_start_up_steps(reply: &Value, first: bool) {
    let Some(steps) = reply["result"]["startup"].as_array() else {
        return;
    };
    let names: Vec<&str> = steps.iter().map(|s| s["phase"].as_str().unwrap()).collect();
    let own = ["stream", "npp", "buffers", "context", "baseline"];
    let want: Vec<&str> = if first {
        ["gpu", "nvml", "cupti"].iter().chain(&own).copied().collect()
    } else {
        own.to_vec()
    };
    assert_eq!(names, want, "{reply}");
    let sum: f64 = steps.iter().map(|s| s["wall_s"].as_f64().unwrap()).sum();
    let startup_ms = reply["result"]["startup_ms"].as_f64().unwrap();
    assert!((sum * 1e3 - startup_ms).abs() < 1e-6, "{reply}");
}

fn memory_of(dir: &Path, scenario: &MemoryScenario, min_calls: u32) -> Value {
    memory_batch(dir, std::slice::from_ref(scenario), min_calls).remove(0)
}

fn memory(dir: &Path, g: Geometry, stream: StreamKind, threading: Threading, calls: u32) -> Value {
    let scenario = MemoryScenario::new(P, g, stream, ContextFill::FromStream, threading, calls);
    // No early stop: these tests count every call.
    memory_of(dir, &scenario, u32::MAX)
}

#[test]
fn environment_probe_describes_gpu_driver_and_npp() {
    if !gpu_available("environment_probe_describes_gpu_driver_and_npp") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let answer: Value = serde_json::from_str(&probe(
        dir.path(),
        json!({"probe": "environment", "npp_dir": null, "devices": {"list": [0]}}),
    ))
    .unwrap();
    let env = &answer["ok"];
    assert!(env["gpu"]["sm_count"].as_u64().unwrap() > 0, "{answer}");
    assert!(env["gpu"]["uuid"].as_str().unwrap().starts_with("GPU-"));
    assert!(env["gpu"]["l2_cache_bytes"].as_u64().unwrap() > 1 << 20, "{answer}");
    assert!(env["npp"]["version"].as_str().unwrap().starts_with("1"), "{answer}");
    // libnppc and every library the catalogue uses, each file recorded.
    let libraries = env["npp"]["libraries"].as_array().unwrap();
    assert!(libraries.len() >= 8, "{answer}");
    assert!(env["npp"]["missing"].as_array().unwrap().is_empty(), "{answer}");
    assert_eq!(env["gpus"].as_array().unwrap().len(), 1);
    assert!(env["cuda_driver_api_version"].as_i64().unwrap() >= 12000);
    assert!(env["copy_ceiling_bytes_per_s"].as_f64().unwrap() > 1e11, "{answer}");
}

#[test]
fn every_threading_model_and_stream_kind_converts_correctly() {
    if !gpu_available("every_threading_model_and_stream_kind_converts_correctly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let g = Geometry::new(P, 31, 31, 32);
    for threading in [
        Threading::Single,
        Threading::ThreadPerCall,
        Threading::Pool(3),
        Threading::ThreadPerCallOwnStream,
    ] {
        for stream in StreamKind::ALL {
            let reply = memory(dir.path(), g, stream, threading, 6);
            assert_eq!(reply["outcome"]["status"], "ok", "{threading} {stream}: {reply}");
            let samples = &reply["result"]["samples"];
            // The warm-up and 6 calls; a pool makes enough to tell its class (2n + 4).
            let calls = 6.max(threading.calls_to_decide()) as usize;
            assert_eq!(samples["call"].as_array().unwrap().len(), 1 + calls, "{threading}");
            let threads: Vec<u64> = samples["threads_spawned"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            let expected_last = match threading {
                Threading::Single => 1,
                Threading::Pool(n) => 1 + n as u64,
                _ => 1 + calls as u64,
            };
            assert_eq!(*threads.last().unwrap(), expected_last, "{threading}");
            assert_eq!(reply["result"]["correctness"]["max_abs_error"], 0.0);
            assert_eq!(reply["result"]["correctness"]["pixels_checked"], 31 * 31);
        }
    }
}

#[test]
fn thread_per_call_on_a_blocking_stream_grows_memory_with_unaligned_width() {
    if !gpu_available("thread_per_call_on_a_blocking_stream_grows_memory_with_unaligned_width") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let reply = memory(
        dir.path(),
        Geometry::new(P, 31, 31, 32),
        StreamKind::Blocking,
        Threading::ThreadPerCall,
        24,
    );
    // The process's own figure (NVML), read where the settle rule judges; never the device's.
    let s: nppbench_model::MemorySeries = serde_json::from_value(reply["result"]["samples"].clone()).unwrap();
    let reads = |c: &u32| nppbench_stats::settle::reads_at(*c, 24, u32::MAX, None);
    let read: Vec<bool> = s.call.iter().map(reads).collect();
    assert_eq!(read.iter().filter(|r| **r).count(), 15, "calls 1, 12 to 25");
    let figures: Vec<(&Option<u64>, &bool)> = s.process_used_bytes.iter().zip(&read).collect();
    let as_read = figures.iter().all(|(v, r)| v.is_some() == **r) && s.device_used_bytes.iter().all(Option::is_none);
    assert!(
        as_read,
        "NVML's figure missing or read where not judged, or the device's read: {s:?}"
    );
    let used: Vec<u64> = figures.iter().filter_map(|(v, _)| **v).collect();
    // Each reading's own time, within the time between its sample and the one before; none unread.
    assert_eq!(s.reading_us.len(), s.len(), "{s:?}");
    for (i, (&r, gap)) in s.reading_us.iter().skip(1).zip(s.elapsed_ms.windows(2)).enumerate() {
        let (read, gap) = (read[i + 1], gap[1] - gap[0]);
        let timed = if read { r > 0.0 && r / 1e3 <= gap } else { r == 0.0 };
        assert!(timed, "reading {} (read: {read}): {r} µs in a gap of {gap} ms", i + 1);
    }
    let growth = used.last().unwrap().saturating_sub(used[0]);
    eprintln!("this process's growth over 24 new threads: {} KiB", growth >> 10);
    // Pinned: the probe sees growth at all where NPP is known to leak (how much: the report's).
    assert!(growth > 0, "no growth seen: {reply}");
}

#[test]
fn a_stride_smaller_than_the_row_fails_the_scenario_without_crashing() {
    if !gpu_available("a_stride_smaller_than_the_row_fails_the_scenario_without_crashing") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let g = Geometry {
        src_stride: 16,
        ..Geometry::new(P, 31, 4, 32)
    };
    let reply = memory(dir.path(), g, StreamKind::NonBlocking, Threading::Single, 2);
    assert_eq!(reply["outcome"]["status"], "failed");
    let reason = reply["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("src_stride 16 is smaller than a source row"),
        "{reason}"
    );
}

#[test]
fn throughput_probe_times_with_criterion_and_checks_output() {
    if !gpu_available("throughput_probe_times_with_criterion_and_checks_output") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        warm_up_ms: 20,
        measurement_ms: 60,
        samples: 10,
        resamples: 1000,
        cold: true,
        ..Settings::default()
    };
    let scenarios: Vec<_> = [Geometry::new(P, 1918, 1080, 1920), Geometry::new(P, 32, 35, 36)]
        .into_iter()
        .map(|g| ThroughputScenario::new(P, g, StreamKind::NonBlocking, ContextFill::FromStream))
        .collect();
    let answer = probe(
        dir.path(),
        json!({"probe": "throughput", "npp_dir": null, "device": 0, "pass": 1, "scenarios": scenarios,
               "settings": settings, "criterion_dir": dir.path().join("criterion"), "parent_pid": 0}),
    );
    let lines: Vec<Value> = answer.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    for line in &lines {
        assert_eq!(line["outcome"]["status"], "ok", "{line}");
        let median = line["result"]["kernel"]["median"]["point_ns"].as_f64().unwrap();
        assert!(median > 100.0 && median < 1e7, "{line}");
        assert!(line["result"]["kernel"]["slope"]["point_ns"].as_f64().unwrap() > 0.0);
        // CUPTI recorded every call's kernels (NPP splits some calls in two), and the kernels of
        // a call take no longer than the call's share of the batch.
        let records = &line["result"]["kernel_records"];
        let kernels = records["kernels"].as_u64().unwrap();
        assert!(kernels >= 200 && kernels % 200 == 0, "{line}");
        assert!(records["per_call_ns"].as_f64().unwrap() <= median * 1.02, "{line}");
        assert_eq!(line["result"]["reference"]["kernel_records"]["kernels"], 200, "{line}");
        // Kernel time per call: the kernels of one call grouped and summed, with an interval.
        let per_call = &line["result"]["per_call"];
        let k = per_call["kernels_per_call"].as_u64().unwrap();
        assert!(
            k >= 1 && per_call["kernels"].as_array().unwrap().len() as u64 == k,
            "{line}"
        );
        let m = per_call["median_ns"].as_f64().unwrap();
        assert!(per_call["lower_ns"].as_f64().unwrap() <= m && m <= per_call["upper_ns"].as_f64().unwrap());
        assert!((m - records["per_call_ns"].as_f64().unwrap()).abs() < 0.2 * m, "{line}");
        // Cold: the L2 flushed before each call; never faster than warm by more than noise.
        let cold = line["result"]["cold"]["median_ns"].as_f64().unwrap();
        assert!(cold > 0.9 * m, "{line}");
        assert!(line["result"]["host_latency"]["median_us"].as_f64().unwrap() > 0.0);
        let device = &line["result"]["device"];
        assert_eq!(device["samples"].as_array().unwrap().len(), 10, "{line}");
        assert!(device["samples"][0]["sm_mhz"].as_u64().unwrap() > 0, "{line}");
        assert_eq!(line["pass"], 1);
        assert!(line["gpu"].as_str().unwrap().starts_with("GPU-"));
        assert_eq!(
            line["result"]["context"]["declared_flags"], 1,
            "a non-blocking stream, declared so"
        );
    }
    assert_eq!(lines[0]["result"]["bytes_per_call"], 1918 * 1080 * 5);
    // At 1080p the leaking geometry's call is two kernels where NPP splits it (unaligned width).
    assert!(lines[0]["result"]["per_call"]["kernels_per_call"].as_u64().unwrap() >= 1);
}

#[test]
fn every_catalogue_primitive_matches_its_cpu_reference() {
    if !gpu_available("every_catalogue_primitive_matches_its_cpu_reference") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for p in Primitive::all() {
        // An unaligned width with padding on both sides, and an aligned one: checked sample by
        // sample, padding included.
        for g in [
            Geometry::aligned(p, 67, 19, 16, 16),
            Geometry::aligned(p, 64, 16, 128, 0),
        ] {
            let s = MemoryScenario::new(
                p,
                g,
                StreamKind::NonBlocking,
                ContextFill::FromStream,
                Threading::Single,
                1,
            );
            let reply = memory_of(dir.path(), &s, u32::MAX);
            let correctness = &reply["result"]["correctness"];
            if reply["outcome"]["status"] != "ok" {
                failures.push(format!("{p} {}: {}", g.label(), reply["outcome"]));
            } else if !correctness["wrong"].is_null() {
                failures.push(format!("{p} {}: wrong output {}", g.label(), correctness["wrong"]));
            } else {
                assert!(correctness["pixels_checked"].as_u64().unwrap() > 0);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_context_filling_converts_correctly_and_is_recorded() {
    if !gpu_available("every_context_filling_converts_correctly_and_is_recorded") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let g = Geometry::new(P, 31, 31, 32);
    for stream in [StreamKind::Blocking, StreamKind::NonBlocking] {
        for context in ContextFill::ALL {
            let s = MemoryScenario::new(P, g, stream, context, Threading::ThreadPerCall, 3);
            let reply = memory_of(dir.path(), &s, u32::MAX);
            assert_eq!(reply["outcome"]["status"], "ok", "{context} {stream}: {reply}");
            let record = &reply["result"]["context"];
            let real = u64::from(stream == StreamKind::NonBlocking);
            assert_eq!(record["stream_flags"], real, "{context} {stream}: {reply}");
            let declared = record["declared_flags"].as_u64().unwrap();
            match context {
                ContextFill::DeclaredBlocking | ContextFill::Zeroed => assert_eq!(declared, 0),
                ContextFill::DeclaredNonBlocking => assert_eq!(declared, 1),
                ContextFill::FromStream => assert_eq!(declared, real, "{context}"),
                // NPP keeps the flags of the stream last set by handle: a stream that reuses a
                // destroyed stream's handle is declared with the old stream's flags (on an H200
                // with NPP 13.0.1, a non-blocking stream declared blocking in 40 of 40 rounds:
                // crates/trace/gpu-evidence/stale_stream_context.cu,
                // reports/stale-stream-context/). The record keeps what NPP declared; it may lag
                // a non-blocking stream, never invent one.
                ContextFill::NppGetStreamContext => {
                    assert!(
                        declared == real || declared == 0,
                        "{context}: declared {declared}, real {real}"
                    )
                }
            }
            if context == ContextFill::Zeroed {
                assert_eq!(record["declared_sm_count"], 0);
            }
        }
    }
}

#[test]
fn a_flat_scenario_stops_once_its_class_is_settled() {
    if !gpu_available("a_flat_scenario_stops_once_its_class_is_settled") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let g = Geometry::new(P, 32, 32, 32);
    let s = MemoryScenario::new(
        P,
        g,
        StreamKind::NonBlocking,
        ContextFill::FromStream,
        Threading::ThreadPerCall,
        40,
    );
    let reply = memory_of(dir.path(), &s, 10);
    assert_eq!(reply["outcome"]["status"], "ok", "{reply}");
    let settled = reply["result"]["settled_after"].as_u64().expect("settled early");
    let calls = reply["result"]["samples"]["call"].as_array().unwrap().len() as u64;
    assert_eq!(calls, settled);
    // Quiet (non-blocking declared: no stream, no growth): flat at half the minimum.
    let quiet_from = nppbench_stats::settle::quiet_from(10, None);
    assert_eq!(calls, u64::from(quiet_from), "{calls} calls");
}

/// The output's oracles in the ordering probe: the race's rounds and the aligned twin.
#[path = "gpu/output.rs"]
mod output;
