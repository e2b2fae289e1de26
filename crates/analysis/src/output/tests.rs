//! The output class of generated records (labelled as such: JSON written here, not measured):
//! schema 4's recorded wrong output, an older run's mismatch failure, a fault, a tolerance miss.

use serde_json::json;

use super::*;

fn record(primitive: &str, outcome: serde_json::Value, wrong: Option<serde_json::Value>) -> MemoryRecord {
    with_twin(primitive, outcome, wrong, serde_json::Value::Null)
}

fn with_twin(
    primitive: &str,
    outcome: serde_json::Value,
    wrong: Option<serde_json::Value>,
    twin: serde_json::Value,
) -> MemoryRecord {
    let result = wrong.map(|w| {
        json!({
            "baseline": {"device_used_bytes": null, "process_used_bytes": 0},
            "samples": {"call": [], "threads_spawned": [], "elapsed_ms": [], "latency_us": [],
                        "device_used_bytes": [], "process_used_bytes": []},
            "wall_ms": 1.0,
            "correctness": {"pixels_checked": 4, "padding_bytes_checked": 0, "max_abs_error": 0.0,
                            "wrong": if w.is_null() { serde_json::Value::Null } else { w },
                            "aligned_twin": twin},
        })
    });
    serde_json::from_value(json!({
        "scenario": {"id": format!("mem/{primitive}/8x2-s9-d128/legacy_default/from_stream/single"),
                     "primitive": primitive,
                     "geometry": {"width": 8, "height": 2, "src_stride": 9, "dst_stride": 128},
                     "stream": "legacy_default", "context": "from_stream", "threading": "single", "calls": 4},
        "outcome": outcome,
        "result": result,
    }))
    .unwrap()
}

#[test]
fn a_recorded_wrong_output_of_an_exact_function_is_wrong_with_its_facts() {
    let w = json!({"pixels": 3, "first": {"row": 1, "pixel": 2, "channel": 0, "expected": 215.0, "actual": 123.0},
                   "rows": [1, 1], "columns": [2, 4], "outside_bytes": 0});
    let c = OutputClass::of(&record("Copy_8u_C1R", json!({"status": "ok"}), Some(w)));
    let OutputClass::Wrong(f) = &c else { panic!("{c:?}") };
    assert_eq!(
        (f.pixels, f.columns, f.first_error()),
        (Some(3), Some([2, 4]), Some(92.0))
    );
    assert_eq!((c.as_str(), c.wrong()), ("wrong", Some(true)));
    let right = OutputClass::of(&record(
        "Copy_8u_C1R",
        json!({"status": "ok"}),
        Some(serde_json::Value::Null),
    ));
    assert_eq!((right.as_str(), right.wrong()), ("right", Some(false)));
}

#[test]
fn an_older_runs_mismatch_failure_is_a_class_not_a_failure() {
    let reason = "nppiCopy_8u_C1R_Ctx output differs from the CPU reference at row 7, pixel 0, channel 0: \
                  123 where 215 is expected (error 92 > 0)";
    let c = OutputClass::of(&record(
        "Copy_8u_C1R",
        json!({"status": "failed", "kind": "mismatch", "reason": reason}),
        None,
    ));
    let OutputClass::Wrong(f) = &c else { panic!("{c:?}") };
    let first = f.first.unwrap();
    assert_eq!(
        (first.row, first.pixel, first.expected, first.actual),
        (7, 0, 215.0, 123.0)
    );
    assert_eq!(f.pixels, None, "an older run counted only the first");
}

#[test]
fn a_tolerance_miss_of_nppbenchs_own_reference_is_not_npps_defect() {
    let reason = "nppiResize_32f_C1R_Ctx output differs from the CPU reference at row 3, pixel 9, channel 0: \
                  0.5 where 0.25 is expected (error 0.2 > 0.01)";
    let c = OutputClass::of(&record(
        "Resize_32f_C1R",
        json!({"status": "failed", "kind": "mismatch", "reason": reason}),
        None,
    ));
    assert!(matches!(c, OutputClass::ReferenceMiss(_)), "{c:?}");
    assert_eq!(c.wrong(), None, "never fitted as NPP's wrong pixels");
}

#[test]
fn a_misaligned_address_faults_and_other_failures_are_not_measured() {
    let fault = OutputClass::of(&record(
        "AddC_8u_C3RSfs",
        json!({"status": "failed", "kind": "gpu",
               "reason": "cuStreamSynchronize: CUDA_ERROR_MISALIGNED_ADDRESS (misaligned address)"}),
        None,
    ));
    assert_eq!((fault.as_str(), fault.wrong()), ("faults", Some(true)));
    let npp = OutputClass::of(&record(
        "MinMax_8u_C1R",
        json!({"status": "failed", "kind": "npp", "reason": "NPP_CUDA_KERNEL_EXECUTION_ERROR"}),
        None,
    ));
    assert_eq!((npp.as_str(), npp.wrong()), ("not_measured", None));
}

#[test]
fn a_reason_that_names_no_sample_reads_as_none() {
    assert_eq!(first_from_reason("the destination is 3 bytes, 4 expected"), None);
    let v = first_from_reason(
        "nppiMean_8u_C1R_Ctx output differs from the CPU reference at value 0: 3 where 4 is expected (error 1 > 0)",
    )
    .unwrap();
    assert_eq!((v.pixel, v.actual, v.expected), (0, 3.0, 4.0));
}

/// The committed H100 atlas of NPP 13.0.1 (seven runs of the bisected sampler) filed the wrong
/// outputs of nine exact 8u functions, and Resize_32f_C1R's tolerance misses, as failures; the
/// same scenarios of the 12.2.3 atlas are right. Judged as classes, the first are wrong, the
/// second are misses of nppbench's own reference on both versions, and the evidence holds them
/// as output cases with a wrong rule per function.
#[test]
fn the_committed_atlases_wrong_outputs_are_a_class_per_version() {
    let reports = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let judged = |version: &str| {
        let folder = reports.join(format!("h100-atlas-bisected-npp-{version}"));
        let runs: Vec<nppbench_model::RunFile> = nppbench_model::find_run_files(&folder)
            .unwrap()
            .iter()
            .map(|f| nppbench_model::RunFile::read(f).unwrap())
            .collect();
        let analyses: Vec<crate::RunAnalysis<'_>> = runs.iter().map(crate::RunAnalysis::new).collect();
        let mut wrong = std::collections::BTreeSet::new();
        let mut misses = 0;
        for m in analyses.iter().flat_map(|a| &a.memory) {
            match &m.output {
                OutputClass::Wrong(_) => {
                    wrong.insert(m.record.scenario.primitive.to_string());
                }
                OutputClass::ReferenceMiss(_) => {
                    assert_eq!(m.record.scenario.primitive.to_string(), "Resize_32f_C1R");
                    misses += 1;
                }
                _ => {}
            }
        }
        let evidence = crate::evidence::pool(&analyses.iter().collect::<Vec<_>>());
        let with_wrong_rule = evidence.rules().iter().filter(|f| f.wrong.is_some()).count();
        (wrong, misses, with_wrong_rule)
    };
    let (wrong, misses, rules) = judged("13.0.1");
    assert_eq!(wrong.len(), 9, "{wrong:?}");
    assert!(wrong.iter().all(|p| p.contains("_8u_C1R")), "{wrong:?}");
    assert!(misses > 0 && rules >= 9);
    let (wrong, misses, _) = judged("12.2.3");
    assert!(wrong.is_empty(), "12.2.3 computes them right: {wrong:?}");
    assert!(misses > 0, "the same tolerance misses, on both versions");
}

/// A function with a tolerance that missed nppbench's reference is NPP's wrong pixels only where
/// its own aligned twin (the same call at 512-byte strides) disagrees with it too.
#[test]
fn the_aligned_twin_tells_npps_defect_from_a_miss_of_nppbenchs_reference() {
    let miss = json!({"pixels": 1, "first": {"row": 0, "pixel": 1, "channel": 0, "expected": 0.25, "actual": 0.5},
                      "rows": [0, 0], "columns": [1, 1], "outside_bytes": 0});
    let ok = json!({"status": "ok"});
    let twin =
        |wrong: Option<&serde_json::Value>| json!({"src_stride": 512, "dst_stride": 512, "wrong": wrong.cloned()});
    let agrees = OutputClass::of(&with_twin("Resize_32f_C1R", ok.clone(), Some(miss.clone()), twin(None)));
    assert_eq!(
        agrees.as_str(),
        "reference_miss",
        "NPP agrees with itself: our reference is strict"
    );
    let disagrees = OutputClass::of(&with_twin(
        "Resize_32f_C1R",
        ok.clone(),
        Some(miss.clone()),
        twin(Some(&miss)),
    ));
    assert_eq!((disagrees.as_str(), disagrees.wrong()), ("wrong", Some(true)));
    // An exact function is judged by its CPU reference, whatever the twin says.
    let exact = OutputClass::of(&with_twin("Copy_8u_C1R", ok.clone(), Some(miss.clone()), twin(None)));
    assert_eq!(exact.as_str(), "wrong");
    // Runs since 2026-12-08 have the twin in the ordering rounds (the ordering probe checks it on
    // the configuration's first call): read alike.
    let in_rounds = |t: serde_json::Value| {
        let mut r = with_twin(
            "Resize_32f_C1R",
            ok.clone(),
            Some(miss.clone()),
            serde_json::Value::Null,
        );
        let result = r.result.as_mut().unwrap();
        assert!(result.correctness.aligned_twin.is_none());
        result.ordering = Some(nppbench_model::OrderingRounds {
            aligned_twin: serde_json::from_value(t).unwrap(),
            ..Default::default()
        });
        OutputClass::of(&r)
    };
    assert_eq!(in_rounds(twin(None)).as_str(), "reference_miss");
    assert_eq!(in_rounds(twin(Some(&miss))).as_str(), "wrong");
}
