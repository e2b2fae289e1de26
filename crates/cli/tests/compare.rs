//! `nppbench compare` as a CI system meets it, on the committed real runs: runs that do not
//! compare (exit 4 unless --allow-partial), the `failed` and `any-leak` gates, compare.json, and
//! what `--help` says of each.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test; `NPPBENCH_BIN` overrides it where the tests run away from their build.
fn nppbench(args: &[&str]) -> Output {
    let bin = std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned());
    Command::new(bin).args(args).output().unwrap()
}

fn reports(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports")
        .join(path)
        .display()
        .to_string()
}

const QUICK_H100: &str = "h100-quick-npp-13.0.1/run.json.gz";
const ATLAS_H200: &str = "h200-atlas-npp-13.0.1/run.json.gz";
/// A quick run with leaks and no failed scenario.
const QUICK: &str = "calibration/quick-npp-13.0.1-1.json.gz";
/// An atlas run with 58 failed scenarios.
const ATLAS_H100: &str = "h100-atlas-npp-13.0.1/run-1-npp-13.0.1.json.gz";

/// `compare BASE CAND --out DIR EXTRA…`: the output, summary.md, and compare.json parsed.
fn compare(base: &str, cand: &str, extra: &[&str]) -> (Output, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let out: PathBuf = dir.path().join("cmp");
    let (b, c) = (reports(base), reports(cand));
    let mut args = vec!["compare", b.as_str(), c.as_str(), "--out", out.to_str().unwrap()];
    args.extend(extra);
    let o = nppbench(&args);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap_or_default();
    let json = std::fs::read_to_string(out.join("compare.json"))
        .map_or(serde_json::Value::Null, |t| serde_json::from_str(&t).unwrap());
    (o, summary, json)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Once PASS with exit 0, judging 2 scenarios: now PARTIAL first, exit 4, the scenarios of one
/// run only listed with counts; judged on what pairs with --allow-partial.
#[test]
fn a_quick_run_against_an_atlas_run_is_partial_and_exits_4() {
    let (o, summary, json) = compare(QUICK_H100, ATLAS_H200, &["--fail-on", "regression,leak"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("--allow-partial"), "{}", stderr(&o));
    assert!(summary.starts_with("## PARTIAL — "), "the headline first: {summary}");
    let headline = summary.lines().find(|l| l.starts_with("- ")).unwrap();
    assert!(
        headline.starts_with("- PARTIAL: ")
            && headline.contains("does not compare with the base: 4 of 58 (7%) base scenarios have a counterpart")
            && headline.contains("the candidate's matrix is atlas, the base's quick")
            && headline.contains("No verdict"),
        "{headline}"
    );
    assert!(!summary.contains("PASS"), "no verdict: {summary}");
    assert!(
        summary.contains("\nOnly in the base (54): `mem/Convert_8u32f_C1R/"),
        "{summary}"
    );
    assert!(summary.contains(" and 34 more."), "at most 20 listed: {summary}");
    assert!(summary.contains("\nOnly in the candidate (1884): "), "{summary}");
    assert_eq!(json["status"], "partial");
    let c = &json["comparisons"][0];
    assert_eq!(c["compares"], false);
    assert_eq!(c["judged"], false);
    assert_eq!(
        c["mismatches"],
        serde_json::json!(["too_few_paired", "functions", "matrix_name"])
    );
    assert_eq!(
        c["only_in_base"].as_array().unwrap().len(),
        54,
        "compare.json lists every one"
    );

    // Judged on what pairs, and said so.
    let (o, summary, json) = compare(QUICK_H100, ATLAS_H200, &["--allow-partial"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(summary.starts_with("## PARTIAL · "), "{summary}");
    assert!(summary.contains("Judged below on the 4 scenarios that pair, as --allow-partial asks."));
    assert_ne!(json["status"], "partial");
    assert_eq!(json["comparisons"][0]["judged"], true);
    // The atlas run's failed scenarios trip `failed` once judged.
    let (o, summary, _) = compare(QUICK_H100, ATLAS_H200, &["--allow-partial", "--fail-on", "failed"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(summary.starts_with("## PARTIAL · FAIL — "), "{summary}");
}

#[test]
fn a_run_against_itself_is_not_partial() {
    for run in [QUICK, ATLAS_H200] {
        let (o, summary, json) = compare(run, run, &[]);
        assert_eq!(o.status.code(), Some(0), "{run}: {}", stderr(&o));
        assert!(!summary.contains("PARTIAL"), "{run}: {summary}");
        let n = json["comparisons"][0]["coverage"]["base_scenarios"].as_u64().unwrap();
        assert!(summary.contains(&format!("Scenarios: {n} of {n} (100%)")), "{summary}");
        assert_eq!(json["comparisons"][0]["compares"], true);
        assert_eq!(json["comparisons"][0]["coverage"]["share"], 1.0);
    }
}

#[test]
fn fail_on_failed_trips_on_a_candidate_with_failed_scenarios_only() {
    let (o, summary, json) = compare(ATLAS_H100, ATLAS_H100, &["--fail-on", "failed"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(summary.starts_with("## FAIL"), "{summary}");
    // 58 scenarios failed on record; 37 of them are judged outputs (wrong pixels, faults and
    // misses of nppbench's own reference), a class of their own: 21 failures are left.
    assert!(summary.contains("21 items trip --fail-on failed"), "{summary}");
    assert!(summary.contains("| **failed** | and 1 more |"), "{summary}");
    let failed = json["comparisons"][0]["failures"]["candidate"].as_array().unwrap();
    assert_eq!(failed.len(), 21);
    assert!(failed.iter().all(|f| f["kind"] != "mismatch"), "{failed:?}");
    assert!(!json["comparisons"][0]["candidate_wrong"].as_array().unwrap().is_empty());
    assert!(
        failed
            .iter()
            .all(|f| f["id"].is_string() && f["kind"].is_string() && f["reason"].is_string())
    );
    assert_eq!(json["tripped"], serde_json::json!(["failed"]));
    // Nothing changed: the change gates stay quiet on the same run.
    let (o, ..) = compare(ATLAS_H100, ATLAS_H100, &["--fail-on", "regression,leak,streams"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A run without failed scenarios.
    let (o, _, json) = compare(QUICK, QUICK, &["--fail-on", "failed"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json["status"], "pass");
}

/// Same against same: nothing new leaks, so `leak` passes; the run leaks, so `any-leak` trips.
#[test]
fn fail_on_any_leak_trips_on_a_leaking_candidate_against_itself() {
    let (o, _, json) = compare(QUICK, QUICK, &["--fail-on", "leak"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json["tripped"], serde_json::json!([]));
    let (o, summary, json) = compare(QUICK, QUICK, &["--fail-on", "leak,any-leak"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(summary.contains("| **any-leak** | mem/Convert_8u32f_C1R/"), "{summary}");
    assert_eq!(json["tripped"], serde_json::json!(["any-leak"]));
    let leaking = json["comparisons"][0]["candidate_leaking"].as_array().unwrap();
    assert_eq!(leaking.len(), json["comparisons"][0]["counts"]["cand_leaking"]);
    assert!(!leaking.is_empty());
    let gated = json["comparisons"][0]["memory"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["gate"] == "any-leak")
        .count();
    assert_eq!(gated, leaking.len(), "each leaking row names the gate it trips");
}

/// compare.json holds every scenario's verdict and figures as numbers, and what was asked.
#[test]
fn compare_json_holds_every_verdict_as_numbers() {
    let (o, _, json) = compare(
        QUICK,
        "calibration/delay-100-cycles-npp-13.0.1-1.json.gz",
        &["--fail-on", "regression"],
    );
    assert_eq!(o.status.code(), Some(3), "the delay is found: {}", stderr(&o));
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["status"], "fail");
    assert_eq!(json["gates"], serde_json::json!(["regression"]));
    assert_eq!(json["thresholds"]["min_coverage"], 0.9);
    assert!(json["base"]["label"].is_string() && json["base"]["matrix"] == "quick");
    let c = &json["comparisons"][0];
    assert_eq!(c["coverage"]["paired"], 58);
    assert_eq!(c["failures"]["candidate"], serde_json::json!([]));
    let throughput = c["throughput"].as_array().unwrap();
    assert_eq!(throughput.len(), 20);
    for t in throughput {
        assert!(t["id"].as_str().unwrap().starts_with("tp/"));
        assert!(
            ["faster", "slower", "same", "unsettled"].contains(&t["verdict"].as_str().unwrap()),
            "{t}"
        );
        assert_eq!(t["metric"], "kernel_records");
        for key in ["base", "candidate", "change_pct", "p_value"] {
            assert!(t["time"][key].is_f64(), "{key}: {t}");
        }
        let ci = t["time"]["change_ci_pct"].as_array().unwrap();
        assert!(ci.len() == 2 && ci.iter().all(serde_json::Value::is_f64));
        assert_eq!(
            (t["base_passes"].as_u64(), t["candidate_passes"].as_u64()),
            (Some(3), Some(3))
        );
        let slower = t["verdict"] == "slower";
        assert_eq!(
            t["gate"] == "regression",
            slower,
            "a slower scenario trips regression: {t}"
        );
    }
    let memory = c["memory"].as_array().unwrap();
    assert_eq!(memory.len(), 38);
    assert!(
        memory
            .iter()
            .all(|m| m["candidate_class"].is_string() && m["new_leak"].is_boolean())
    );
    assert!(c["counts"]["slower"].as_u64().unwrap() > 0);
}

#[test]
fn compare_help_gives_each_gate_and_exit_status() {
    let o = nppbench(&["compare", "--help"]);
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    for said in [
        "any-leak",
        "failed",
        "new or not",
        "--allow-partial",
        "\n  3  a candidate trips a --fail-on gate",
        "\n  4  a candidate does not compare with the base",
        "compare.json",
    ] {
        assert!(help.contains(said), "{said}: {help}");
    }
}

/// docs/compare.md names every field compare.json holds, at every level.
#[test]
fn every_field_of_compare_json_is_documented() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/compare.md")).unwrap();
    let (_, _, json) = compare(
        QUICK,
        "calibration/delay-100-cycles-npp-13.0.1-1.json.gz",
        &["--fail-on", "failed"],
    );
    let c = &json["comparisons"][0];
    let objects = [
        &json,
        &json["thresholds"],
        &json["base"],
        c,
        &c["coverage"],
        &c["failures"],
        &c["counts"],
        &c["throughput"][0],
        &c["throughput"][0]["time"],
        &c["memory"][0],
    ];
    let mut keys = 0;
    for object in objects {
        for key in object.as_object().unwrap().keys() {
            assert!(
                doc.contains(&format!("`{key}`")),
                "docs/compare.md does not name `{key}`"
            );
            keys += 1;
        }
    }
    assert!(keys > 60, "{keys}");
}

/// One run given said "… hold(s) only …": now what was given, in words that fit one.
#[test]
fn one_run_given_is_said_to_be_one() {
    let dir = tempfile::tempdir().unwrap();
    let run = reports(QUICK);
    let o = nppbench(&["compare", &run, "--out", dir.path().to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{run} is one: give another run")), "{err}");
    assert!(!err.contains("(s)"), "{err}");
}

/// Two runs alike in all but their start were named `2026-11-27 01:31 UTC · run 1` and `… run 2`:
/// now by the files they came from.
#[test]
fn runs_are_named_by_their_files_not_by_their_start() {
    let (o, summary, _) = compare(
        "calibration/GPU-1f4889c3/quick/quick-1.json.gz",
        "calibration/GPU-1f4889c3/quick/quick-2.json.gz",
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(summary.contains("### quick-2 against quick-1"), "{summary}");
    assert!(!summary.contains(" UTC"), "{summary}");
}

/// The page showed `--repeat 3` with its backticks and counted "leak(s)", "item(s)": code is
/// `<code>`, and every count has its own noun.
#[test]
fn the_page_shows_code_as_code_and_counts_with_their_nouns() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let run = reports(ATLAS_H100);
    let o = nppbench(&[
        "compare",
        &run,
        &run,
        "--out",
        out.to_str().unwrap(),
        "--fail-on",
        "failed",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let html = std::fs::read_to_string(out.join("compare.html")).unwrap();
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(html.contains("<code>--repeat 3</code>"), "no --repeat in code");
    let body = &html[html.find("<body>").unwrap()..];
    assert!(!body.contains('`'), "a backtick on the page");
    for text in [body, summary.as_str()] {
        assert!(
            !text.contains("(s)"),
            "{}",
            &text[text.find("(s)").unwrap().saturating_sub(80)..][..120]
        );
    }
    assert!(summary.contains("21 items trip --fail-on failed"), "{summary}");
}
