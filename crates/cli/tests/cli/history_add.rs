//! `nppbench history add DIR`: every run file the folder holds, whatever its name, and each file
//! it did not add named with why.

use super::{nppbench, reports, stderr};

/// `history add DIR` silently left out the run files named like `quick-N.json`.
#[test]
fn history_add_of_a_folder_takes_quick_n_json_and_names_what_it_did_not_add() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    std::fs::copy(
        reports().join("h100-quick-npp-13.0.1/run.json.gz"),
        runs.join("quick-1.json"),
    )
    .unwrap();
    std::fs::write(runs.join("trace.json"), r#"{"name": "something else"}"#).unwrap();
    let db = dir.path().join("history.db");
    let o = nppbench(&["history", "add", runs.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!("added {}", runs.join("quick-1.json").display())),
        "{out}"
    );
    assert!(
        out.contains(&format!("not added {}: ", runs.join("trace.json").display())),
        "{out}"
    );
    assert!(out.contains("1 runs"), "{out}");
}
