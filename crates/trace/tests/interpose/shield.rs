//! The shield in front of the stand-in NPP, no GPU: the child runs with `libnppbench_trace.so`
//! preloaded and a plan (no trace), the stand-in logs what reached it (every context field), and
//! the report the shield wrote is read back. A call the plan's rules call hazardous reaches NPP
//! with `nStreamFlags` 1 and every other argument as sent; any other call reaches it byte for
//! byte as sent; every call is counted, also after a fork and under SIGTERM.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus};

use nppbench_model::{
    Condition, Hazard, HazardRule, SHIELD_SCHEMA_VERSION, ShieldAction, ShieldFunction, ShieldKnowledge, ShieldPlan,
    ShieldReport, ShieldTest, StreamKind, TraceEnd, TraceFile,
};

use super::{CHILD, RECORDS, interposer, spec_value};

const CONVERT: &str = "nppiConvert_8u32f_C1R_Ctx";
const SET: &str = "nppiSet_8u_C1R_Ctx";

/// What a shielded child did: what it sent, what NPP saw, what the shield said.
pub(super) struct Shielded {
    pub(super) status: ExitStatus,
    /// (symbol, width, line sent).
    pub(super) sent: Vec<(String, i32, String)>,
    /// The stand-in's lines (and its driver's, `cu=…`).
    pub(super) seen: Vec<String>,
    pub(super) report: Option<ShieldReport>,
    /// `shield-<pid>.json` beside it.
    descendants: Vec<ShieldReport>,
    /// The child's standard error, for a failure's message.
    pub(super) stderr: String,
    /// How often the stand-in driver was asked a stream's flags (`driver=1`).
    flags_asked: Option<u64>,
}

fn read_report(path: &Path) -> Option<ShieldReport> {
    let bytes = std::fs::read(path).ok()?;
    Some(serde_json::from_slice(&bytes).expect("shield.json is valid"))
}

fn run_shielded(spec: &str, plan: &ShieldPlan, npp_version: &str) -> Shielded {
    run_shielded_with(spec, plan, npp_version, &[])
}

/// [`run_shielded`] with more variables in the child's environment.
pub(super) fn run_shielded_with(spec: &str, plan: &ShieldPlan, npp_version: &str, env: &[(&str, &str)]) -> Shielded {
    let dir = tempfile::tempdir().unwrap();
    let (plan_path, report, records, log) = (
        dir.path().join("plan.json"),
        dir.path().join("shield.json"),
        dir.path().join("records"),
        dir.path().join("standin.log"),
    );
    std::fs::write(&plan_path, serde_json::to_vec(plan).unwrap()).unwrap();
    let spec = match spec_value(spec, "driver") {
        Some("1") => {
            let driver = nppbench_trace_standin::driver::install(dir.path()).unwrap();
            spec.replace("driver=1", &format!("driver={}", driver.display()))
        }
        _ => spec.to_owned(),
    };
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "caller_child", "--nocapture", "--test-threads", "1"])
        .env(CHILD, &spec)
        .env("LD_LIBRARY_PATH", dir.path())
        .env(RECORDS, &records)
        .env(nppbench_trace_standin::LOG, &log)
        .env(nppbench_trace_standin::NPP_VERSION, npp_version)
        .env(ShieldPlan::PLAN_VAR, &plan_path)
        .env(ShieldPlan::REPORT_VAR, &report)
        .env_remove(TraceFile::OUT_VAR)
        .env_remove(TraceFile::PARENT_VAR)
        .env("LD_PRELOAD", interposer())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&records).unwrap_or_default();
    let sent = text
        .lines()
        .skip(2)
        .map(|l| {
            let f: Vec<&str> = l.splitn(6, '\t').collect();
            (f[0].to_owned(), f[3].parse().unwrap(), f[5].to_owned())
        })
        .collect();
    let seen = std::fs::read_to_string(&log).unwrap_or_default();
    let mut descendants: Vec<ShieldReport> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(ShieldReport::DESCENDANT_PREFIX) && n.ends_with(".json"))
        })
        .filter_map(|p| read_report(&p))
        .collect();
    descendants.sort_by_key(|r| r.pid);
    Shielded {
        status: out.status,
        sent,
        seen: seen.lines().map(str::to_owned).collect(),
        report: read_report(&report),
        descendants,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        flags_asked: text
            .lines()
            .nth(1)
            .and_then(|l| l.trim_start_matches("flags_asked\t").parse().ok()),
    }
}

fn function(symbol: &str, leak: HazardRule, race: HazardRule) -> ShieldFunction {
    ShieldFunction {
        symbol: symbol.into(),
        src_bytes_per_pixel: 1,
        dst_bytes_per_pixel: 4,
        leak,
        race,
        wrong: HazardRule::Never,
    }
}

fn when(condition: Condition, holds: bool) -> HazardRule {
    HazardRule::When(vec![ShieldTest { condition, holds }])
}

/// A plan for NPP 12.2.3 whose Convert leaks from a width of 100 and races on a blocking
/// stream (Set is not in it).
fn plan() -> ShieldPlan {
    ShieldPlan {
        schema_version: SHIELD_SCHEMA_VERSION,
        hazards: vec![Hazard::Leak, Hazard::Race],
        knowledge: vec![ShieldKnowledge {
            npp_version: "12.2.3.2".into(),
            gpu: "stand-in".into(),
            runs: 1,
            functions: vec![function(
                CONVERT,
                when(Condition::WidthAtLeast(100), true),
                when(Condition::StreamIn(vec![StreamKind::Blocking]), true),
            )],
        }],
    }
}

/// The line NPP sees for a call sent as `sent` whose context the shield declared non-blocking.
pub(super) fn declared_non_blocking(sent: &str) -> String {
    assert!(sent.contains(",flags:0,"), "{sent}");
    sent.replace(",flags:0,", ",flags:1,")
}

pub(super) fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn a_leaking_configuration_gets_non_blocking_declared_and_every_other_call_passes_byte_for_byte() {
    let spec = format!("threads=2;calls=4;symbols={CONVERT},{SET};widths=64,128;stream=2;flags=0");
    let run = run_shielded(&spec, &plan(), "12.2.3");
    assert!(run.status.success(), "{:?}", run.status);
    assert_eq!(run.sent.len(), 8);
    let expected: Vec<String> = run
        .sent
        .iter()
        .map(|(symbol, width, sent)| {
            if symbol == CONVERT && *width == 128 {
                declared_non_blocking(sent)
            } else {
                sent.clone()
            }
        })
        .collect();
    assert_eq!(sorted(run.seen.clone()), sorted(expected), "what NPP saw");
    let r = run.report.expect("the shield wrote its report");
    assert_eq!(r.end, TraceEnd::Exited { code: None });
    assert_eq!(r.knowledge_version.as_deref(), Some("12.2.3.2"));
    assert_eq!(r.npp_version.as_deref(), Some("12.2.3"));
    let t = r.totals;
    assert_eq!((t.calls, t.rewritten, t.rewritten_leak, t.rewritten_race), (8, 2, 2, 0));
    assert_eq!((t.not_hazardous, t.unknown_function), (2, 4));
    let rewritten: Vec<_> = r
        .sites
        .iter()
        .filter(|s| matches!(s.action, ShieldAction::Rewritten { .. }))
        .collect();
    assert_eq!(rewritten.len(), 1, "{:?}", r.sites);
    assert_eq!(
        (rewritten[0].function.as_str(), rewritten[0].width, rewritten[0].calls),
        (CONVERT, 128, 2)
    );
    assert_eq!(
        rewritten[0].action,
        ShieldAction::Rewritten {
            leak: true,
            race: false,
            wrong: false
        }
    );
}

#[test]
fn a_racing_configuration_is_told_by_the_streams_real_flags() {
    // Stand-in driver: bit 4 of the handle is the stream's non-blocking flag.
    for (stream, rewritten) in [(0x7d00_0000_0000_u64, true), (0x7d00_0000_0010, false)] {
        let spec = format!("threads=1;calls=3;symbols={CONVERT};widths=64;stream={stream};flags=0;driver=1");
        let run = run_shielded(&spec, &plan(), "12.2.3");
        assert!(run.status.success(), "{:?}", run.status);
        let expected: Vec<String> = run
            .sent
            .iter()
            .map(|(_, _, s)| if rewritten { declared_non_blocking(s) } else { s.clone() })
            .collect();
        assert_eq!(sorted(run.seen.clone()), sorted(expected), "stream {stream:#x}");
        let r = run.report.unwrap();
        assert_eq!(r.totals.rewritten_race, if rewritten { 3 } else { 0 }, "{stream:#x}");
        assert_eq!(r.sites[0].stream_non_blocking, Some(!rewritten));
    }
}

/// A context that declares non-blocking is what the shield passes for the leak and the race: the
/// stream's flags, which the race rule reads, are not asked (a driver call on every call: it cost
/// a program 1 µs a call on an H200), unless the wrong-pixel rule reads them.
#[test]
fn a_call_declaring_non_blocking_asks_nothing_of_the_driver() {
    let spec = format!(
        "threads=1;calls=3;symbols={CONVERT};widths=128;stream={};flags=1;driver=1",
        0x7d00_0000_0000_u64
    );
    let mut plan = plan();
    plan.hazards.push(Hazard::Wrong);
    let run = run_shielded(&spec, &plan, "12.2.3");
    assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
    assert_eq!(
        run.flags_asked,
        Some(0),
        "the wrong pixels shielded too, their rule never"
    );
    assert_eq!(run.report.unwrap().totals.not_hazardous, 3);
    plan.knowledge[0].functions[0].wrong = when(Condition::StreamIn(vec![StreamKind::Blocking]), true);
    let run = run_shielded(&spec, &plan, "12.2.3");
    assert_eq!(run.flags_asked, Some(3), "the wrong-pixel rule reads the stream");
}

#[test]
fn an_npp_version_the_atlas_never_measured_is_left_alone_and_said() {
    let spec = format!("threads=1;calls=2;symbols={CONVERT};widths=128;stream=2;flags=0");
    let run = run_shielded(&spec, &plan(), "13.0.1");
    assert_eq!(
        sorted(run.seen.clone()),
        sorted(run.sent.iter().map(|s| s.2.clone()).collect())
    );
    let r = run.report.unwrap();
    assert_eq!((r.totals.calls, r.totals.no_knowledge, r.totals.rewritten), (2, 2, 0));
    assert_eq!(r.knowledge_version, None);
    assert!(r.knowledge_missing.unwrap().contains("13.0.1"));
}

#[test]
fn a_hazard_the_atlas_cannot_judge_leaves_the_call_alone_and_counts_it() {
    let mut plan = plan();
    plan.knowledge[0].functions[0].race = HazardRule::Unknown("race not measured".into());
    let spec = format!("threads=1;calls=2;symbols={CONVERT};widths=64;stream=2;flags=0");
    let run = run_shielded(&spec, &plan, "12.2.3");
    assert_eq!(
        sorted(run.seen.clone()),
        sorted(run.sent.iter().map(|s| s.2.clone()).collect())
    );
    assert_eq!(run.report.unwrap().totals.unknown_configuration, 2);
}

#[test]
fn a_forked_child_keeps_shielding_and_reports_its_own_calls() {
    let spec = format!("threads=1;calls=2;symbols={CONVERT};widths=128;stream=2;flags=0;then=fork");
    let run = run_shielded(&spec, &plan(), "12.2.3");
    assert!(run.status.success(), "{:?}", run.status);
    // The child's calls reached NPP rewritten too: 2 before the fork, 2 after in each process.
    assert_eq!(run.seen.len(), 6);
    assert!(run.seen.iter().all(|l| l.contains(",flags:1,")), "{:?}", run.seen);
    let parent = run.report.unwrap();
    assert_eq!((parent.totals.calls, parent.totals.rewritten), (4, 4));
    assert_eq!(run.descendants.len(), 1, "the forked child's report");
    let child = &run.descendants[0];
    assert_eq!(child.forked_from, Some(parent.pid));
    assert_eq!((child.totals.calls, child.totals.rewritten), (2, 2));
}

#[test]
fn a_program_ended_by_sigterm_keeps_its_report_and_its_signal() {
    let spec = format!("threads=2;calls=3;symbols={CONVERT};widths=128;stream=2;flags=0;then=term");
    let run = run_shielded(&spec, &plan(), "12.2.3");
    assert_eq!(run.status.signal(), Some(libc::SIGTERM), "{:?}", run.status);
    let r = run.report.expect("the report survives SIGTERM");
    assert_eq!(
        r.end,
        TraceEnd::Signal {
            signal: libc::SIGTERM,
            name: "SIGTERM".into()
        }
    );
    assert_eq!((r.totals.calls, r.totals.rewritten_leak), (6, 6));
}

#[test]
fn a_program_that_exits_with_a_status_keeps_it_under_the_shield() {
    let spec = format!("threads=1;calls=1;symbols={CONVERT};widths=128;stream=2;then=exit");
    let run = run_shielded(&spec, &plan(), "12.2.3");
    assert_eq!(run.status.code(), Some(3));
    assert_eq!(run.report.unwrap().totals.rewritten, 1);
}
