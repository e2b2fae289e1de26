//! Knowledge made from a committed run (a stranger's draw of the wrong-pixel study, NPP 13.0.1 on
//! an H200: `reports/wrong-pixels/`), written and read back; other schemas and files refused.

use std::path::Path;

use nppbench_model::RunFile;

use super::*;
use crate::predict::{answer, answer_race, answer_wrong, query};

fn run(name: &str) -> RunFile {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/wrong-pixels/h200-GPU-fd1537c9")
        .join(name);
    RunFile::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn made() -> Knowledge {
    let r = run("judge-wrong-npp-13.0.1.json.gz");
    Knowledge::from_runs(&[("judge-wrong-npp-13.0.1.json.gz".to_owned(), &r)], "test").unwrap()
}

#[test]
fn knowledge_read_back_answers_as_the_runs_do() {
    let k = made();
    assert_eq!((k.name().as_str(), k.format.as_str()), ("npp-13.0.1-sm90", FORMAT));
    assert_eq!(k.sources[0].gpu_uuid, "GPU-fd1537c9-af08-a3ad-a74b-2b2999fed087");
    let bytes = k.to_gz();
    assert!(Knowledge::is_knowledge(&bytes));
    let back = Knowledge::from_bytes(&bytes, "k.json.gz").unwrap();
    assert_eq!(back.rules, k.rules);
    assert_eq!(back.evidence.cases.len(), k.evidence.cases.len());
    assert_eq!(back.scores, k.scores);
    assert!(
        back.scores.wrong.1 > 0,
        "the held-out outputs are scored: {:?}",
        back.scores
    );
    // Every case answered alike from the knowledge read back and from the runs' own evidence.
    for c in k.evidence.cases.iter().chain(&k.evidence.outputs).take(300) {
        let q = query(c.primitive, c.geometry, c.stream, c.context, c.threading);
        let (a, b) = ((&k.evidence, &k.rules[..]), (&back.evidence, &back.rules[..]));
        assert_eq!(answer(a.0, a.1, &q).class, answer(b.0, b.1, &q).class, "{}", c.id);
        assert_eq!(answer_race(a.0, a.1, &q).races, answer_race(b.0, b.1, &q).races);
        assert_eq!(answer_wrong(a.0, a.1, &q).wrong, answer_wrong(b.0, b.1, &q).wrong);
    }
}

#[test]
fn another_schema_a_run_and_a_truncated_file_are_refused_with_what_to_do() {
    let k = made();
    let mut json: serde_json::Value = serde_json::to_value(&k).unwrap();
    json["schema_version"] = 99.into();
    let err = Knowledge::from_bytes(json.to_string().as_bytes(), "old.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("knowledge schema 99 (made by test)"), "{err}");
    assert!(
        err.contains("reads schema 1") && err.contains("cargo xtask knowledge"),
        "{err}"
    );
    let run_bytes = serde_json::to_vec(&run("judge-wrong-npp-13.0.1.json.gz")).unwrap();
    assert!(!Knowledge::is_knowledge(&run_bytes));
    let err = Knowledge::from_bytes(&run_bytes, "run.json").unwrap_err().to_string();
    assert!(err.starts_with("run.json: not nppbench knowledge"), "{err}");
    let gz = k.to_gz();
    let err = Knowledge::from_bytes(&gz[..gz.len() / 2], "cut.json.gz")
        .unwrap_err()
        .to_string();
    assert!(err.contains("may be truncated"), "{err}");
}

#[test]
fn runs_of_two_versions_make_no_knowledge() {
    let (a, b) = (
        run("judge-wrong-npp-13.0.1.json.gz"),
        run("judge-wrong-npp-12.2.3.json.gz"),
    );
    let err = Knowledge::from_runs(&[("a".to_owned(), &a), ("b".to_owned(), &b)], "test")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("several NPP versions (13.0.1.2, and 12.2.3") && err.contains(" in b)"),
        "{err}"
    );
    assert!(matches!(Knowledge::from_runs(&[], "test"), Err(KnowledgeError::NoRuns)));
}

/// A file's rules are fitted again on its own cases, as `cargo xtask knowledge --check` does: the
/// knowledge made from runs has not drifted; one with a function's rules dropped has, and its
/// refit gives back the rules the runs gave.
#[test]
fn knowledge_refitted_on_its_own_cases_gives_its_rules_back() {
    let k = made();
    assert!(!k.drifted());
    let mut cut = Knowledge::from_bytes(&k.to_gz(), "k.json.gz").unwrap();
    assert!(!cut.drifted(), "read back, it fits the same");
    let dropped = cut.rules.remove(0).primitive;
    assert!(cut.drifted(), "{} had rules", dropped.name());
    let again = cut.refitted();
    assert_eq!(again.rules, k.rules);
    assert_eq!(again.scores, k.scores);
    assert!(!again.drifted());
}

/// Lines made up for the test: a file with a call-catalogue run's lines reads them back (those
/// not planned left out), and one made before the field existed (no `calls`) reads with none.
#[test]
fn calls_are_kept_and_a_file_without_them_still_loads() {
    let lines: Vec<crate::calls::CallLine> = [
        r#"{"symbol":"nppiA_8u_C1R_Ctx","status":0,"unaligned_status":0,"unaligned_differing_bytes":6}"#,
        r#"{"symbol":"nppiB_8u_C1R_Ctx","not_planned":"no image"}"#,
    ]
    .iter()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let mut k = made();
    assert_eq!(k.calls, None);
    let older = Knowledge::from_bytes(&k.to_gz(), "older").unwrap();
    assert_eq!(older.calls, None);
    k.calls = Some(KnownCalls::of("calls.jsonl", lines.clone()));
    let back = Knowledge::from_bytes(&k.to_gz(), "k.json.gz").unwrap();
    let calls = back.calls.unwrap();
    assert_eq!(calls.source, "calls.jsonl");
    assert_eq!(calls.lines, lines[..1]);
    assert_eq!(calls.line("nppiA_8u_C1R_Ctx"), Some(&lines[0]));
    assert_eq!(calls.line("nppiB_8u_C1R_Ctx"), None);
}
