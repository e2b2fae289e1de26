//! The hazards asked for, the refusals said at exit and the summary's words.

use std::os::unix::process::ExitStatusExt;

use nppbench_model::{SHIELD_SCHEMA_VERSION, ShieldCost, ShieldSite, ShieldTotals, TraceStreamKind};

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
                wrong: false,
            },
            calls: 3,
            shield_ns: 900,
        }],
        calls_at_sites_not_listed: 0,
        cost: ShieldCost::default(),
    }
}

#[test]
fn hazards_are_deduplicated_in_one_order() {
    assert_eq!(
        hazards(&[HazardArg::Wrong, HazardArg::Race, HazardArg::Leak, HazardArg::Race]),
        [Hazard::Leak, Hazard::Race, Hazard::Wrong]
    );
}

#[test]
fn an_unknown_hazard_is_refused_with_the_names_it_takes() {
    use clap::Parser;
    let Err(e) = crate::args::Cli::try_parse_from(["nppbench", "shield", "--hazards", "leak,bleed", "--", "prog"])
    else {
        panic!("--hazards bleed was taken");
    };
    let text = e.to_string();
    assert!(text.contains("bleed") && text.contains("wrong"), "{text}");
    assert_eq!(e.exit_code(), 2);
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
            wrong: false,
        },
        3,
    );
    t.add(ShieldAction::UnknownFunction, 2);
    let mut r = report(t, &["/x/libnppc.so.13"]);
    r.knowledge_version = Some("13.0.1.2".into());
    r.cost.shield_ns = 1_000;
    r.cost.left_alone_ns = 100;
    let s = summary(&r, ExitStatus::from_raw(0));
    assert!(s.contains("200 ns a call (50 ns a call left alone)"), "{s}");
    assert!(!s.contains("staging copied"), "nothing staged: {s}");
    assert!(
        s.contains("with the atlas of NPP 13.0.1.2: 5 NPP calls, 3 rewritten"),
        "{s}"
    );
    assert!(
        s.contains("2 left alone (0 not hazardous, 2 of functions the atlas does not know"),
        "{s}"
    );
    assert!(
        s.contains("nppiConvert_8u32f_C1R_Ctx 31x8 steps 256/512 (3 calls)"),
        "{s}"
    );
    assert!(s.ends_with("The program exited with 0."), "{s}");
}

#[test]
fn the_summary_says_what_was_staged_and_what_could_not_be() {
    let mut t = ShieldTotals::default();
    t.add(
        ShieldAction::Rewritten {
            leak: false,
            race: false,
            wrong: true,
        },
        4,
    );
    t.add(
        ShieldAction::NotStaged {
            leak: false,
            race: false,
        },
        1,
    );
    let mut r = report(t, &["/x/libnppc.so.13"]);
    r.cost = ShieldCost {
        shield_ns: 50_000,
        left_alone_ns: 1_000,
        staged_bytes: 3 << 20,
        staging_peak_bytes: Some(1 << 20),
    };
    let s = summary(&r, ExitStatus::from_raw(0));
    assert!(
        s.contains("4 rewritten (0 leaking, 0 racing, declared non-blocking; 4 computing wrong pixels, staged"),
        "{s}"
    );
    assert!(s.contains("1 computing wrong pixels could not be staged"), "{s}");
    assert!(s.contains("staging copied 3.0 MiB and held at most 1.0 MiB"), "{s}");
}
