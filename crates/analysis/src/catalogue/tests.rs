//! Each state from made-up entries and call lines (labelled so: no GPU wrote them), and the
//! measured state from the committed knowledge of NPP 13.0.1.

use std::path::Path;

use super::*;

fn line(json: &str) -> CallLine {
    serde_json::from_str(json).unwrap()
}

fn entry(symbol: &str, reasons: &[&str]) -> Entry {
    let reasons: Vec<String> = reasons.iter().map(|r| (*r).to_owned()).collect();
    Entry::new(symbol, Some("nppial"), &reasons)
}

fn knowledge_13_0() -> Knowledge {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../knowledge/npp-13.0.1-sm90.json.gz");
    Knowledge::from_bytes(&std::fs::read(&path).unwrap(), "npp-13.0.1-sm90").unwrap()
}

#[test]
fn each_function_has_one_state_and_the_flagged_come_first_by_family() {
    let entries = [
        entry("nppiZed_8u_C1R_Ctx", &[]),
        entry("nppiAbs_8u_C1R_Ctx", &[]),
        entry("nppiAbs_16s_C1R_Ctx", &[]),
        entry("nppiBee_8u_C1R_Ctx", &[]),
        entry("nppiCee_8u_C1R_Ctx", &["no image: a size query"]),
        entry("nppiDee_8u_C1R_Ctx", &[]),
        entry("nppiEff_8u_C1R_Ctx", &[]),
    ];
    let ran = r#""status":0,"unaligned_status":0,"unaligned_differing_bytes":0"#;
    let calls = [
        line(&format!(r#"{{"symbol":"nppiZed_8u_C1R_Ctx",{ran}}}"#)),
        line(r#"{"symbol":"nppiAbs_8u_C1R_Ctx","status":0,"unaligned_error":"CUDA_ERROR_MISALIGNED_ADDRESS"}"#),
        line(r#"{"symbol":"nppiAbs_16s_C1R_Ctx","status":0,"unaligned_status":0,"unaligned_differing_bytes":12}"#),
        line(r#"{"symbol":"nppiBee_8u_C1R_Ctx","status":-14,"status_name":"NPP_STEP_ERROR"}"#),
        line(&format!(
            r#"{{"symbol":"nppiEff_8u_C1R_Ctx",{ran},"leak_threads":8,"leak_threads_keeping_streams":8}}"#
        )),
        line(&format!(r#"{{"symbol":"nppiOther_8u_C1R_Ctx",{ran}}}"#)),
    ];
    let c = judge("13.0.1.2", &entries, &calls, None);
    let states: Vec<(&str, StateKind)> = c
        .functions
        .iter()
        .map(|f| (f.symbol.as_str(), f.state.kind()))
        .collect();
    assert_eq!(
        states,
        [
            ("nppiAbs_16s_C1R_Ctx", StateKind::Lead),
            ("nppiAbs_8u_C1R_Ctx", StateKind::Lead),
            ("nppiEff_8u_C1R_Ctx", StateKind::Lead),
            ("nppiBee_8u_C1R_Ctx", StateKind::NotRun),
            ("nppiCee_8u_C1R_Ctx", StateKind::NotSynthesisable),
            ("nppiDee_8u_C1R_Ctx", StateKind::NotCalled),
            ("nppiZed_8u_C1R_Ctx", StateKind::Called),
        ]
    );
    assert_eq!(c.functions[0].state, State::Lead(vec![Lead::OtherPixels(12)]));
    assert_eq!(
        c.functions[3].state,
        State::NotRun("refused: NPP_STEP_ERROR".to_owned())
    );
    assert_eq!((c.calls, c.foreign_calls, c.flagged()), (6, 1, 3));
    assert_eq!(c.counts().values().sum::<usize>(), entries.len());
    assert_eq!(c.by_family()[0], ("Abs".to_owned(), [(StateKind::Lead, 2)].into()));
    assert_eq!(c.by_library().len(), 1);
}

#[test]
fn a_function_the_knowledge_measured_is_measured_with_the_hazards_its_scenarios_showed() {
    let k = knowledge_13_0();
    let entries = [
        entry("nppiConvert_8u32f_C1R_Ctx", &[]),
        entry("nppiAdd_8u_C1RSfs_Ctx", &[]),
        entry("nppiResize_8u_C3R_Ctx", &[]),
    ];
    let c = judge("13.0.1.2", &entries, &[], Some(&k));
    let of = |s: &str| &c.functions.iter().find(|f| f.symbol == s).unwrap().state;
    let State::Measured { hazards, rules } = of("nppiConvert_8u32f_C1R_Ctx") else {
        panic!("{:?}", of("nppiConvert_8u32f_C1R_Ctx"))
    };
    assert!(
        hazards.contains(&Hazard::Leak) && hazards.contains(&Hazard::Race),
        "{hazards:?}"
    );
    assert_eq!(rules.primitive.name(), "Convert_8u32f_C1R");
    let State::Measured { hazards, .. } = of("nppiAdd_8u_C1RSfs_Ctx") else {
        panic!()
    };
    assert!(hazards.contains(&Hazard::Wrong), "{hazards:?}");
    assert_eq!(*of("nppiResize_8u_C3R_Ctx"), State::NotCalled);
    assert_eq!(c.knowledge.as_deref(), Some("npp-13.0.1-sm90"));
}

/// Lines made up for the test: other pixels, or a context left dead, at the unaligned
/// destination step is a lead, beside the source step's.
#[test]
fn the_destination_steps_findings_are_leads() {
    let entries = [entry("nppiAddC_8u_C3RSfs_Ctx", &[]), entry("nppiCee_8u_C1R_Ctx", &[])];
    let calls = [
        line(
            r#"{"symbol":"nppiAddC_8u_C3RSfs_Ctx","status":0,"unaligned_status":0,"unaligned_differing_bytes":0,"unaligned_dst_status":0,"unaligned_dst_differing_bytes":96}"#,
        ),
        line(
            r#"{"symbol":"nppiCee_8u_C1R_Ctx","status":0,"unaligned_status":0,"unaligned_differing_bytes":0,"unaligned_dst_error":"sticky: misaligned"}"#,
        ),
    ];
    let c = judge("13.0.1.2", &entries, &calls, None);
    let state = |s: &str| c.functions.iter().find(|f| f.symbol == s).unwrap().state.clone();
    assert_eq!(
        state("nppiAddC_8u_C3RSfs_Ctx"),
        State::Lead(vec![Lead::OtherPixelsAtDestination(96)])
    );
    assert_eq!(
        state("nppiCee_8u_C1R_Ctx"),
        State::Lead(vec![Lead::KilledContextAtDestination("sticky: misaligned".into())])
    );
}

/// Made-up lines: the cards and builds the calls were made with are counted, each function once
/// (its last line), and the builds that are not the headers' named.
#[test]
fn the_cards_and_the_builds_of_the_calls_are_kept_and_other_builds_named() {
    let entries = [entry("nppiAbs_8u_C1R_Ctx", &[]), entry("nppiZed_8u_C1R_Ctx", &[])];
    let on = |symbol: &str, gpu: &str, npp: &str| {
        line(&format!(
            r#"{{"symbol":"{symbol}","status":0,"gpu_uuid":"{gpu}","npp_version":"{npp}"}}"#
        ))
    };
    let calls = [
        on("nppiAbs_8u_C1R_Ctx", "GPU-a", "13.2.0.58"),
        on("nppiAbs_8u_C1R_Ctx", "GPU-b", "13.0.1.2"),
        on("nppiZed_8u_C1R_Ctx", "GPU-a", "13.0.1.2"),
    ];
    let c = judge("13.0.1.2", &entries, &calls, None);
    assert_eq!(
        c.made_on,
        [
            ("GPU-a with NPP 13.0.1.2".to_owned(), 1),
            ("GPU-b with NPP 13.0.1.2".to_owned(), 1)
        ]
    );
    assert!(c.other_builds.is_empty(), "the later line replaces the earlier");
    let c = judge("13.0.1.2", &entries, &calls[..1], None);
    assert_eq!(c.other_builds, ["13.2.0.58"]);
    // A line records NPP's three parts, as `call-catalogue` writes them: the headers' version.
    let c = judge(
        "13.0.1.2",
        &entries,
        &[on("nppiZed_8u_C1R_Ctx", "GPU-a", "13.0.1")],
        None,
    );
    assert!(c.other_builds.is_empty(), "{:?}", c.other_builds);
}

/// Made-up design lines (no GPU wrote them) of `symbol` at each shape of its design: every call
/// ran and matched, and the shapes whose width is not a multiple of 16 kept streams on every
/// thread.
fn design_lines(symbol: &str) -> Vec<crate::calls::design::ShapeLine> {
    use crate::calls::design::{self, Pixels};
    let px = Pixels {
        src_bytes_per_pixel: 1,
        src_sample_bytes: 1,
        dst_bytes_per_pixel: 1,
        dst_sample_bytes: 1,
    };
    design::design(symbol, &px)
        .into_iter()
        .map(|s| design::made_up_line(symbol, px, s, !s.width.is_multiple_of(16)))
        .collect()
}

/// Made-up design lines (no GPU wrote them): a function they measured leaking is measured, with
/// the leak among its hazards and its rules fitted on them, whatever its call line said; one
/// they measured nothing of keeps its call's state.
#[test]
fn a_function_a_design_measured_is_measured() {
    use crate::calls::design::ShapeLine;
    let lines: Vec<ShapeLine> = design_lines("nppiGee_8u_C1R_Ctx")
        .into_iter()
        .chain([ShapeLine {
            symbol: "nppiHaa_8u_C1R_Ctx".into(),
            not_planned: Some("no plan".into()),
            ..ShapeLine::default()
        }])
        .collect();
    let entries = [entry("nppiGee_8u_C1R_Ctx", &[]), entry("nppiHaa_8u_C1R_Ctx", &[])];
    let calls = [
        line(r#"{"symbol":"nppiGee_8u_C1R_Ctx","status":0}"#),
        line(r#"{"symbol":"nppiHaa_8u_C1R_Ctx","status":0}"#),
    ];
    let c = judge_designed("13.0.1.2", &entries, &calls, None, &lines);
    let gee = c.functions.iter().find(|f| f.symbol == "nppiGee_8u_C1R_Ctx").unwrap();
    match &gee.state {
        State::Measured { hazards, rules } => {
            assert_eq!(hazards, &[Hazard::Leak]);
            assert!(rules.primitive.is_generated() && rules.leak.measured > 0);
        }
        other => panic!("{other:?}"),
    }
    let haa = c.functions.iter().find(|f| f.symbol == "nppiHaa_8u_C1R_Ctx").unwrap();
    assert_eq!(haa.state.kind(), StateKind::Called);
    assert_eq!((&gee.throughput_1080p, &haa.throughput_1080p), (&None, &None));
}

/// Made-up design lines and throughput points (no GPU wrote them): each function carries the
/// GB/s of its last point at 1080p, whether the design measured it or its state comes from its
/// call; a point that failed gives why, one at another size none.
#[test]
fn each_function_carries_the_gbps_of_its_throughput_point_at_1080p() {
    use crate::calls::design::{ShapeLine, Throughput, throughput};
    let point = |symbol: &str, (width, height): (u32, u32), ns_per_call: f64| ShapeLine {
        symbol: symbol.into(),
        throughput: Some(Throughput {
            width,
            height,
            calls: throughput::TIMED_CALLS,
            ns_per_call,
            bytes_per_call: 4_147_200,
        }),
        ..ShapeLine::default()
    };
    let mut lines = design_lines("nppiGee_8u_C1R_Ctx");
    lines.extend([
        point("nppiGee_8u_C1R_Ctx", throughput::AT, 2_073_600.0),
        point("nppiGee_8u_C1R_Ctx", throughput::AT, 414_720.0),
        point("nppiHaa_8u_C1R_Ctx", throughput::AT, 1_658_880.0),
        point("nppiJay_8u_C1R_Ctx", (64, 32), 414_720.0),
        ShapeLine {
            symbol: "nppiIyy_8u_C1R_Ctx".into(),
            throughput_error: Some("NPP_SIZE_ERROR".into()),
            ..ShapeLine::default()
        },
    ]);
    let entries = [
        entry("nppiGee_8u_C1R_Ctx", &[]),
        entry("nppiHaa_8u_C1R_Ctx", &[]),
        entry("nppiIyy_8u_C1R_Ctx", &[]),
        entry("nppiJay_8u_C1R_Ctx", &[]),
        entry("nppiKay_8u_C1R_Ctx", &[]),
    ];
    let calls = [line(r#"{"symbol":"nppiHaa_8u_C1R_Ctx","status":0}"#)];
    let c = judge_designed("13.0.1.2", &entries, &calls, None, &lines);
    let of = |s: &str| c.functions.iter().find(|f| f.symbol == s).unwrap();
    assert_eq!(of("nppiGee_8u_C1R_Ctx").state.kind(), StateKind::Measured);
    assert_eq!(
        of("nppiGee_8u_C1R_Ctx").throughput_1080p,
        Some(Ok(10.0)),
        "the last point"
    );
    assert_eq!(of("nppiHaa_8u_C1R_Ctx").state.kind(), StateKind::Called);
    assert_eq!(of("nppiHaa_8u_C1R_Ctx").throughput_1080p, Some(Ok(2.5)));
    assert_eq!(
        of("nppiIyy_8u_C1R_Ctx").throughput_1080p,
        Some(Err("NPP_SIZE_ERROR".into())),
        "its point failed"
    );
    assert_eq!(of("nppiJay_8u_C1R_Ctx").throughput_1080p, None, "not at 1080p");
    assert_eq!(of("nppiKay_8u_C1R_Ctx").throughput_1080p, None, "no design line");
    assert_eq!(
        judge("13.0.1.2", &entries, &calls, None).functions[0].throughput_1080p,
        None
    );
}

/// Made-up design lines (no GPU wrote them) of another version: a function this version did not
/// measure shows the hazards they measured, its state and the counts unchanged; a function this
/// version measured, or that the other lines do not name, shows none.
#[test]
fn a_function_another_versions_design_measured_shows_its_hazards_and_stays_unmeasured() {
    let entries = [
        entry("nppiGee_8u_C1R_Ctx", &[]),
        entry("nppiHaa_8u_C1R_Ctx", &[]),
        entry("nppiIyy_8u_C1R_Ctx", &[]),
    ];
    let own = design_lines("nppiGee_8u_C1R_Ctx");
    let mut other = design_lines("nppiGee_8u_C1R_Ctx");
    other.extend(design_lines("nppiHaa_8u_C1R_Ctx"));
    let before = judge_designed("13.2.0.58", &entries, &[], None, &own);
    let counts = before.counts();
    let c = before.with_other_version("13.0.1", &other);
    assert_eq!(c.counts(), counts);
    let of = |symbol: &str| c.functions.iter().find(|f| f.symbol == symbol).unwrap();
    assert_eq!(of("nppiGee_8u_C1R_Ctx").other_version, None);
    assert_eq!(of("nppiHaa_8u_C1R_Ctx").state, State::NotCalled);
    assert_eq!(
        of("nppiHaa_8u_C1R_Ctx").other_version,
        Some(("13.0.1".to_owned(), vec![Hazard::Leak]))
    );
    assert_eq!(of("nppiIyy_8u_C1R_Ctx").other_version, None);
}
