//! The tests of `calls`: lines made up for each, no GPU.

use super::*;

/// Lines made up for the test, one of each kind the command writes.
fn line(json: &str) -> CallLine {
    serde_json::from_str(json).unwrap()
}

#[test]
fn each_kind_of_line_has_its_outcome_and_the_counts_come_most_first() {
    let lines = [
        line(r#"{"symbol":"a","not_planned":"no image: a size query"}"#),
        line(r#"{"symbol":"b","ended_process":"signal: 11 (SIGSEGV)"}"#),
        line(r#"{"symbol":"c","status":-14,"status_name":"NPP_STEP_ERROR"}"#),
        line(r#"{"symbol":"d","status":0,"unaligned_status":0,"unaligned_differing_bytes":0}"#),
        line(r#"{"symbol":"e","status":0,"unaligned_status":0,"unaligned_differing_bytes":12}"#),
        line(r#"{"symbol":"f","status":0,"unaligned_error":"sticky: misaligned address"}"#),
        line(r#"{"symbol":"g","status":0,"unaligned_status":0,"unaligned_differing_bytes":0}"#),
        line(r#"{"symbol":"h","error":"h: its sizer returned -6"}"#),
        line(r#"{"symbol":"i","error":"i: its sizer returned -6"}"#),
    ];
    assert_eq!(lines[4].outcome(), Outcome::Ran(Unaligned::Differs(12)));
    assert_eq!(
        lines[5].outcome(),
        Outcome::Ran(Unaligned::Faulted("sticky: misaligned address".into()))
    );
    let s = summarize(&lines);
    // Ties in name order.
    assert_eq!(s[0], ("failed: its sizer returned -6".to_owned(), 2));
    assert_eq!(s[1], ("ran; the same at the unaligned step".to_owned(), 2));
    assert!(s.contains(&("refused: NPP_STEP_ERROR".to_owned(), 1)));
    assert!(s.contains(&("not planned: no image".to_owned(), 1)));
    assert_eq!(s.iter().map(|x| x.1).sum::<usize>(), lines.len());
    assert!(lead_counts(&lines).is_empty(), "no oracle ran on these lines");
}

/// Lines made up for the test: the destination step's outcome, counted apart, and the
/// wrong-pixel and fault flags from either step (no wrong-pixel flag where neither compared
/// outputs).
#[test]
fn the_destination_step_is_counted_apart_and_either_step_flags_wrong_pixels() {
    let at = |src: &str, dst: &str| line(&format!(r#"{{"symbol":"a","status":0,{src}{dst}}}"#));
    let same = r#""unaligned_status":0,"unaligned_differing_bytes":0"#;
    let dead = r#""unaligned_error":"sticky: misaligned address""#;
    let lines = [
        at(same, r#","unaligned_dst_status":0,"unaligned_dst_differing_bytes":40"#),
        at(same, r#","unaligned_dst_status":0,"unaligned_dst_differing_bytes":0"#),
        at(same, r#","unaligned_dst_error":"sticky: misaligned address""#),
        at(dead, ""),
        at(same, ""),
    ];
    assert_eq!(lines[0].destination_step(), Unaligned::Differs(40));
    assert_eq!(lines[0].outcome(), Outcome::Ran(Unaligned::Same));
    let flags: Vec<Option<bool>> = lines.iter().map(CallLine::wrong_pixels).collect();
    assert_eq!(flags, [Some(true), Some(false), Some(false), None, Some(false)]);
    // A fault at either step is a fault; a step that ran without one is not.
    let faults: Vec<Option<bool>> = lines.iter().map(CallLine::faults).collect();
    assert_eq!(faults, [Some(false), Some(false), Some(true), Some(true), Some(false)]);
    assert_eq!(line(r#"{"symbol":"a","status":-4}"#).faults(), None);
    assert_eq!(
        destination_counts(&lines),
        [
            ("killed the context".to_owned(), 1),
            ("other pixels".to_owned(), 1),
            ("the same".to_owned(), 1)
        ]
    );
}

/// Lines made up for the test: the leak oracle's streams kept on half the new threads or
/// more is a lead, on fewer is not; any round that differed is a lead.
#[test]
fn streams_kept_on_half_the_threads_and_a_round_that_differed_are_leads() {
    let ran = r#""status":0,"unaligned_status":0,"unaligned_differing_bytes":0"#;
    let leak = |kept: u32| {
        line(&format!(
            r#"{{"symbol":"a",{ran},"leak_threads":8,"leak_threads_keeping_streams":{kept},"race_rounds":4,"race_rounds_differing":0}}"#
        ))
    };
    assert_eq!(leak(4).leads(), [Lead::StreamsKept { threads: 8, kept: 4 }]);
    assert!(leak(3).leads().is_empty());
    assert!(leak(0).leads().is_empty());
    let race = line(&format!(
        r#"{{"symbol":"b",{ran},"leak_threads":8,"leak_threads_keeping_streams":0,"race_rounds":4,"race_rounds_differing":1}}"#
    ));
    assert_eq!(
        race.leads(),
        [Lead::RoundsDiffered {
            rounds: 4,
            differing: 1
        }]
    );
    let counts = lead_counts(&[leak(8), leak(1), race]);
    assert_eq!(
        counts,
        [
            ("NPP kept streams on half its new threads or more".to_owned(), 1),
            ("a round with its inputs written late gave other outputs".to_owned(), 1)
        ]
    );
}

/// Lines made up for the test: a function the oracles could not judge says why (a sticky
/// error's call and code without the driver's words, the function's name left out); one
/// they judged says nothing.
#[test]
fn a_function_the_oracles_did_not_judge_is_counted_by_why() {
    let sticky = line(
        r#"{"symbol":"t","status":0,"oracles_error":"sticky: cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"}"#,
    );
    let refused = line(r#"{"symbol":"u","status":0,"oracles_error":"u: NPP returned -6 at 1918x32"}"#);
    let unplanned = line(r#"{"symbol":"v","status":0,"oracles_not_planned":"pSrc: a step of 4 leaves no margin"}"#);
    let no_cupti =
        line(r#"{"symbol":"w","status":0,"leak_not_measured":"no CUPTI","race_rounds":4,"race_rounds_differing":0}"#);
    let step = line(r#"{"symbol":"y","status":0,"oracles_status":-14}"#);
    assert_eq!(
        step.oracles_missing().as_deref(),
        Some("refused at their geometry: status -14")
    );
    let named = line(r#"{"symbol":"z","status":0,"oracles_status":-14,"oracles_status_name":"NPP_STEP_ERROR"}"#);
    assert_eq!(
        named.oracles_missing().as_deref(),
        Some("refused at their geometry: NPP_STEP_ERROR")
    );
    let judged = line(
        r#"{"symbol":"x","status":0,"leak_threads":8,"leak_threads_keeping_streams":0,"race_rounds":4,"race_rounds_differing":0}"#,
    );
    assert_eq!(
        sticky.oracles_missing().as_deref(),
        Some("failed: sticky: cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS")
    );
    assert_eq!(
        refused.oracles_missing().as_deref(),
        Some("failed: NPP returned -6 at 1918x32")
    );
    assert_eq!(judged.oracles_missing(), None);
    let before_them = line(r#"{"symbol":"o","status":0,"unaligned_status":0,"unaligned_differing_bytes":0}"#);
    assert_eq!(before_them.oracles_missing().as_deref(), Some("not asked"));
    let not_run = line(r#"{"symbol":"r","status":-14}"#);
    assert_eq!(not_run.oracles_missing(), None, "not run: nothing to judge");
    let counts = oracles_missing(&[sticky.clone(), sticky, refused, unplanned, no_cupti, judged]);
    assert_eq!(
        counts[0],
        (
            "failed: sticky: cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS".to_owned(),
            2
        )
    );
    assert_eq!(counts.iter().map(|c| c.1).sum::<usize>(), 5);
    assert!(counts.contains(&("not planned at their geometry: pSrc".to_owned(), 1)));
    assert!(counts.contains(&("leak not measured: no CUPTI".to_owned(), 1)));
}

/// Lines made up for the test: the cards and builds that called them, the most first; a line
/// that records neither is not counted.
#[test]
fn the_cards_and_builds_are_counted_the_most_first() {
    let at = |extra: &str| line(&format!(r#"{{"symbol":"a","status":0{extra}}}"#));
    let lines = [
        at(r#","gpu_uuid":"GPU-b","npp_version":"13.0.1.2""#),
        at(r#","gpu_uuid":"GPU-a","npp_version":"13.0.1.2""#),
        at(r#","gpu_uuid":"GPU-b","npp_version":"13.0.1.2""#),
        at(""),
    ];
    assert_eq!(
        made_on(&lines),
        [
            ("GPU-b with NPP 13.0.1.2".to_owned(), 2),
            ("GPU-a with NPP 13.0.1.2".to_owned(), 1)
        ]
    );
}
