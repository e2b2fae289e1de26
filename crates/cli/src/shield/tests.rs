//! The hazards asked for, the refusals said at exit and the summary's words.

use std::os::unix::process::ExitStatusExt;

use nppbench_model::{SHIELD_SCHEMA_VERSION, ShieldSite, ShieldTotals, TraceStreamKind};

use super::*;

fn report(totals: ShieldTotals, libraries: &[&str]) -> ShieldReport {
    ShieldReport {
        schema_version: SHIELD_SCHEMA_VERSION,
        program: vec!["svc".into()],
        pid: 1,
        forked_from: None,
        hazards: vec![Hazard::Leak, Hazard::Race],
        npp_version: Some("13.0.1".into()),
        knowledge_version: None,
        knowledge_missing: Some("no knowledge for the NPP version loaded (13.0.1)".into()),
        npp_libraries: libraries.iter().map(|s| s.to_string()).collect(),
        end: TraceEnd::Exited { code: None },
        totals,
        sites: vec![ShieldSite {
            function: "nppiConvert_8u32f_C1R_Ctx".into(),
            width: 31,
            height: 8,
            src_step: Some(256),
            dst_step: Some(512),
            stream: TraceStreamKind::PerThreadDefault,
            stream_non_blocking: None,
            declared_flags: 0,
            action: ShieldAction::Rewritten {
                leak: true,
                race: false,
            },
            calls: 3,
        }],
        calls_at_sites_not_listed: 0,
    }
}

#[test]
fn hazards_are_deduplicated_and_wrong_is_refused() {
    assert_eq!(
        hazards(&[HazardArg::Race, HazardArg::Leak, HazardArg::Race]).unwrap(),
        [Hazard::Leak, Hazard::Race]
    );
    let e = hazards(&[HazardArg::Leak, HazardArg::Wrong]).unwrap_err();
    assert!(e.to_string().contains("not built yet"));
    assert_eq!(crate::exit::exit_code(&e), std::process::ExitCode::from(2));
}

#[test]
fn a_run_without_npp_or_without_knowledge_is_refused_at_exit() {
    let none = report(ShieldTotals::default(), &[]);
    assert!(refusal(&none).unwrap().contains("loaded no NPP library"));
    let mut unknown = ShieldTotals::default();
    unknown.add(ShieldAction::NoKnowledge, 4);
    assert!(
        refusal(&report(unknown, &["/x/libnppc.so.13"]))
            .unwrap()
            .contains("13.0.1")
    );
    let mut fine = ShieldTotals::default();
    fine.add(ShieldAction::NotHazardous, 4);
    assert_eq!(refusal(&report(fine, &["/x/libnppc.so.13"])), None);
}

#[test]
fn the_summary_says_what_was_rewritten_and_left_alone() {
    let mut t = ShieldTotals::default();
    t.add(
        ShieldAction::Rewritten {
            leak: true,
            race: false,
        },
        3,
    );
    t.add(ShieldAction::UnknownFunction, 2);
    let mut r = report(t, &["/x/libnppc.so.13"]);
    r.knowledge_version = Some("13.0.1.2".into());
    let s = summary(&r, ExitStatus::from_raw(0));
    assert!(
        s.contains("with the atlas of NPP 13.0.1.2: 5 NPP calls, 3 rewritten"),
        "{s}"
    );
    assert!(
        s.contains("2 left alone (0 not hazardous, 2 of functions the atlas does not know"),
        "{s}"
    );
    assert!(s.contains("nppiConvert_8u32f_C1R_Ctx 31x8 (3 calls)"), "{s}");
    assert!(s.ends_with("The program exited with 0."), "{s}");
}
