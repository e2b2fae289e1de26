//! The output of NPP's calls on a real GPU, judged in the ordering probe: the race's rounds
//! (where the first call split, and everywhere) and the aligned twin against the memory probe's
//! CPU reference check.

use serde_json::{Value, json};

use super::{P, memory_of, probe};
use nppbench_engine::gpu_available;
use nppbench_model::{ContextFill, Geometry, MemoryScenario, Primitive, StreamKind, Threading};

/// Convert_8u32f_C1R at 1918×1080 (aligned strides, a width not a multiple of 16: where NPP
/// splits the call on a blocking stream), one scenario of each stream kind and context filling.
fn convert_1080p(kinds: &[(StreamKind, ContextFill)]) -> Vec<MemoryScenario> {
    let g = Geometry::new(P, 1918, 1080, 1920);
    kinds
        .iter()
        .map(|&(stream, context)| MemoryScenario::new(P, g, stream, context, Threading::Single, 3))
        .collect()
}

/// An ordering probe's answer lines for `scenarios`, one each, in order; `race_rounds` as the
/// request says it (`None`: the default).
fn ordering_lines(dir: &std::path::Path, scenarios: &[MemoryScenario], race_rounds: Option<&str>) -> Vec<Value> {
    let mut request = json!({"probe": "ordering", "npp_dir": null, "device": 0, "scenarios": scenarios});
    if let Some(r) = race_rounds {
        request["race_rounds"] = json!(r);
    }
    let answer = probe(dir, request);
    let lines: Vec<Value> = answer.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), scenarios.len(), "{answer}");
    for (line, s) in lines.iter().zip(scenarios) {
        assert_eq!(line["id"], s.id.as_str());
    }
    lines
}

/// The race probe can fail both ways (#29): it finds the race where NPP splits the call onto a
/// stream of its own (Convert_8u32f_C1R, 1918×1080, a blocking stream whose context declares it
/// blocking), and finds none on the legacy default stream, nor where the context declares a
/// non-blocking stream, with the same geometry, in one batch.
#[test]
fn ordering_rounds_find_the_race_on_a_blocking_stream_and_none_on_the_legacy_stream() {
    if !gpu_available("ordering_rounds_find_the_race_on_a_blocking_stream_and_none_on_the_legacy_stream") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scenarios = convert_1080p(&[
        (StreamKind::Blocking, ContextFill::FromStream),
        (StreamKind::LegacyDefault, ContextFill::FromStream),
        (StreamKind::Blocking, ContextFill::DeclaredNonBlocking),
        (StreamKind::PerThreadDefault, ContextFill::FromStream),
    ]);
    let lines = ordering_lines(dir.path(), &scenarios, Some("always"));
    let rounds = |i: usize| lines[i]["rounds"].clone();
    for i in 0..lines.len() {
        assert_eq!(rounds(i)["rounds"], 4, "{}", rounds(i));
    }
    let blocking = rounds(0);
    assert!(blocking["wrong_rounds"].as_u64().unwrap() >= 3, "{blocking}");
    // The last columns, past the last full chunk, are NPP's second kernel's.
    let columns = blocking["columns"].as_array().unwrap();
    assert!(
        columns[1].as_u64().unwrap() == 1917 && columns[0].as_u64().unwrap() > 1800,
        "{blocking}"
    );
    assert_eq!(rounds(1)["wrong_rounds"], 0, "legacy: {}", rounds(1));
    assert_eq!(rounds(2)["wrong_rounds"], 0, "declared non-blocking: {}", rounds(2));
    assert!(
        rounds(3)["wrong_rounds"].as_u64().unwrap() >= 3,
        "per-thread: {}",
        rounds(3)
    );
    // CUPTI saw the racing calls' work split over two streams, the others' on the caller's alone.
    let elsewhere = |i: usize| {
        rounds(i)["first_call"]["elsewhere"]
            .as_u64()
            .expect("first call recorded")
    };
    let on_caller = |i: usize| {
        rounds(i)["first_call"]["on_caller"]
            .as_u64()
            .expect("first call recorded")
    };
    assert!(elsewhere(0) > 0 && elsewhere(3) > 0, "{blocking} {}", rounds(3));
    for i in [1, 2] {
        assert!(elsewhere(i) == 0 && on_caller(i) > 0, "{}", rounds(i));
    }
}

/// With rounds only where the call split (the default), the race is still found where NPP splits
/// the call, and the configurations whose work all ran on the caller's stream are ordered with no
/// round made.
#[test]
fn rounds_where_the_call_split_find_the_race_and_skip_the_rest() {
    if !gpu_available("rounds_where_the_call_split_find_the_race_and_skip_the_rest") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scenarios = convert_1080p(&[
        (StreamKind::Blocking, ContextFill::FromStream),
        (StreamKind::LegacyDefault, ContextFill::FromStream),
        (StreamKind::Blocking, ContextFill::DeclaredNonBlocking),
    ]);
    let rounds: Vec<nppbench_model::OrderingRounds> = ordering_lines(dir.path(), &scenarios, None)
        .iter()
        .map(|l| serde_json::from_value(l["rounds"].clone()).unwrap())
        .collect();
    assert!(rounds[0].rounds == 4 && rounds[0].wrong_rounds >= 3, "{:?}", rounds[0]);
    for r in &rounds[1..] {
        assert!(r.ordered_by_one_stream(), "{r:?}");
    }
}

/// The wrong-pixel hazard's two oracles on the GPU: Copy_8u_C1R at a source stride 6 bytes past a
/// multiple of 16 and a destination stride a multiple of 128 (a configuration NPP 13.0.1 and
/// 13.2.0 were measured to compute wrong, 12.2.3 right). The scenario measures on (its memory
/// samples are kept), the CPU reference (the memory probe's) and the aligned twin (the ordering
/// probe's) agree on whether the output is wrong, and with NPP 13 it is, with NPP 12 it is not;
/// at an aligned source stride both say right.
#[test]
fn the_cpu_reference_and_the_aligned_twin_agree_on_npps_wrong_pixels() {
    if !gpu_available("the_cpu_reference_and_the_aligned_twin_agree_on_npps_wrong_pixels") {
        return;
    }
    let copy = Primitive::from_name("Copy_8u_C1R").unwrap();
    let npp = nppbench_npp::Npp::load(&nppbench_npp::NppSearch::new(None)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (src_stride, npp13_wrong) in [(518, true), (512, false)] {
        let g = Geometry {
            src_stride,
            dst_stride: 896,
            ..Geometry::new(copy, 512, 256, src_stride)
        };
        let s = MemoryScenario::new(
            copy,
            g,
            StreamKind::LegacyDefault,
            ContextFill::FromStream,
            Threading::Single,
            2,
        );
        let reply = memory_of(dir.path(), &s, u32::MAX);
        assert_eq!(reply["outcome"]["status"], "ok", "{}: {}", g.label(), reply["outcome"]);
        let c = &reply["result"]["correctness"];
        assert!(
            reply["result"]["samples"]["call"].as_array().unwrap().len() >= 2,
            "measured on"
        );
        assert!(c["aligned_twin"].is_null(), "the twin is the ordering probe's: {c}");
        let line = ordering_lines(dir.path(), std::slice::from_ref(&s), None).remove(0);
        let twin = &line["rounds"]["aligned_twin"];
        assert_eq!(
            (twin["src_stride"].as_u64(), twin["dst_stride"].as_u64()),
            (Some(512), Some(512)),
            "{line}"
        );
        assert!(twin["not_measured"].is_null(), "{twin}");
        assert_eq!(
            c["wrong"].is_null(),
            twin["wrong"].is_null(),
            "the two oracles disagree: {c} against {twin}"
        );
        // NPP 12.2.3 computes this configuration right; 13.0.1 and 13.2.0 wrong (run the test
        // with NPPBENCH_NPP_DIR at each version's folder).
        assert_eq!(
            !c["wrong"].is_null(),
            npp13_wrong && npp.version().major >= 13,
            "NPP {}: {}: {c}",
            npp.version(),
            g.label()
        );
    }
}
