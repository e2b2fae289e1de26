//! `nppbench shield` as a user meets it, no GPU: the shielded caller is this test binary run
//! again as a child, calling every catalogued symbol of the stand-in NPP (which answers the NPP
//! version the test names and logs what reached it). The calls the report says were rewritten
//! reached NPP declaring a non-blocking stream, no other call did, the program's status comes
//! back, and every refusal exits 2 saying what to do.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nppbench_model::{ShieldAction, ShieldPlan, ShieldReport, TraceFile};
use nppbench_npp_sys::NppiSize;
use nppbench_trace_standin::caller::{self, Plan};

/// Set in the child: the caller runs and exits with this status.
const CHILD: &str = "NPPBENCH_CLI_SHIELD_CHILD";

/// The caller, when run as the child: two threads, ROI widths 31 and 64, every symbol twice.
#[test]
fn caller_child() {
    let Ok(code) = std::env::var(CHILD) else { return };
    let n = caller::symbols().len();
    let plan = Plan {
        threads: 2,
        calls_per_thread: 2 * n,
        rois: vec![NppiSize { width: 31, height: 8 }, NppiSize { width: 64, height: 8 }],
        stream: 2,
        ..Plan::default()
    };
    caller::run(&plan).expect("the caller runs");
    std::process::exit(code.parse().unwrap());
}

fn interposer() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap();
    [
        dir.join(TraceFile::LIB_FILE_NAME),
        dir.join("..").join(TraceFile::LIB_FILE_NAME),
    ]
    .into_iter()
    .find(|p| p.exists())
    .expect("cargo builds libnppbench_trace.so for the tests")
}

/// One atlas run of NPP 12.2.3 (small: the bisection's second round).
fn atlas() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/h100-atlas-bisected-npp-12.2.3/run-2-npp-12.2.3.json.gz")
        .display()
        .to_string()
}

fn shield(args: &[&str], npp_version: &str, child_code: Option<i32>) -> Output {
    let bin = std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned());
    let mut cmd = Command::new(bin);
    cmd.env(TraceFile::LIB_VAR, interposer())
        .env(nppbench_trace_standin::NPP_VERSION, npp_version)
        .arg("shield")
        .args(args);
    if let Some(code) = child_code {
        cmd.env(CHILD, code.to_string())
            .arg("--")
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "caller_child", "--nocapture", "--test-threads", "1"]);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_calls_the_report_says_were_rewritten_are_the_ones_npp_saw_declare_non_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("standin.log");
    let report_dir = dir.path().join("report");
    let o = {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_nppbench"));
        cmd.env(TraceFile::LIB_VAR, interposer())
            .env(nppbench_trace_standin::NPP_VERSION, "12.2.3")
            .env(nppbench_trace_standin::LOG, &log)
            .env(CHILD, "7")
            .args(["shield", "--atlas", &atlas(), "--report"])
            .arg(&report_dir)
            .arg("--")
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "caller_child", "--nocapture", "--test-threads", "1"]);
        cmd.output().unwrap()
    };
    assert_eq!(o.status.code(), Some(7), "the program's status: {}", text(&o.stderr));
    let r: ShieldReport =
        serde_json::from_slice(&std::fs::read(report_dir.join(ShieldPlan::REPORT_FILE_NAME)).unwrap()).unwrap();
    let n = caller::symbols().len() as u64;
    assert_eq!(r.totals.calls, 4 * n);
    assert_eq!(r.knowledge_version.as_deref(), Some("12.2.3"));
    assert!(r.totals.rewritten > 0, "{:?}", r.totals);
    assert!(
        r.totals.unknown_function > 0,
        "the atlas run does not rule on every catalogued function"
    );
    // What NPP saw: a context declaring non-blocking on exactly the calls counted as rewritten,
    // of the functions and widths the report names.
    let seen = std::fs::read_to_string(&log).unwrap();
    let declared: Vec<&str> = seen.lines().filter(|l| l.contains(",flags:1,")).collect();
    assert_eq!(declared.len() as u64, r.totals.rewritten);
    for s in r
        .sites
        .iter()
        .filter(|s| matches!(s.action, ShieldAction::Rewritten { .. }))
    {
        let calls = declared
            .iter()
            .filter(|l| l.starts_with(&format!("fn={} ", s.function)) && l.contains(&format!("={}x8 ", s.width)))
            .count() as u64;
        assert_eq!(calls, s.calls, "{s:?}");
    }
    assert!(
        text(&o.stdout).contains("rewritten (") && text(&o.stdout).contains("declared non-blocking"),
        "{}",
        text(&o.stdout)
    );
    let page = std::fs::read_to_string(report_dir.join("index.html")).unwrap();
    assert!(page.contains("SHIELDED") && page.contains("shield.json"));
    assert!(report_dir.join("plan.json").is_file());
}

#[test]
fn an_npp_version_the_atlas_never_measured_is_refused_at_exit() {
    let o = shield(&["--atlas", &atlas()], "11.4.0", Some(0));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("no knowledge for the NPP version loaded (11.4.0)"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_program_that_loads_no_npp_is_said_and_its_own_failure_wins() {
    let o = shield(&["--atlas", &atlas(), "--", "sh", "-c", "exit 0"], "12.2.3", None);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("loaded no NPP library"), "{}", text(&o.stderr));
    let o = shield(&["--atlas", &atlas(), "--", "sh", "-c", "exit 5"], "12.2.3", None);
    assert_eq!(o.status.code(), Some(5));
}

#[test]
fn bad_input_is_refused_with_what_to_do() {
    let o = shield(
        &["--hazards", "leak,bogus", "--atlas", &atlas(), "--", "true"],
        "12.2.3",
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("bogus"), "{}", text(&o.stderr));
    // Without --atlas, the knowledge built into nppbench decides (the NPP loaded picks its own).
    let o = shield(&[], "13.0.1", Some(0));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("with the atlas of NPP 13.0.1.2"),
        "{}",
        text(&o.stdout)
    );
}
