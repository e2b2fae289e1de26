//! The database: schema and migrations, idempotent adds, refused files leaving it untouched.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::*;
use crate::generated;
use crate::ingest::add_paths;
use nppbench_analysis::compare::ByLayout;

fn committed(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports").join(path)
}

#[test]
fn a_new_database_has_the_latest_schema() {
    let (_dir, db) = generated::db();
    assert_eq!(db.schema_version().unwrap(), latest_version());
    assert_eq!(db.counts().unwrap(), (0, 0));
    // Versions are consecutive from 1: each step is applied exactly once.
    for (i, m) in MIGRATIONS.iter().enumerate() {
        assert_eq!(m.version as usize, i + 1, "{}", m.what);
    }
}

#[test]
fn a_v1_database_is_migrated_and_keeps_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    {
        // A database as the first schema left it, with one run and one result.
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0].sql).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO runs (id, run_key, started_at, finished_at, host, gpu_model, gpu_uuids, gpu_models,
                driver_version, cuda_driver_api_version, npp_version, tool_version, tool_commit, matrix_name,
                run_schema_version, interrupted)
             VALUES (1, 'v1-run', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 'gen', 'GPU (generated)',
                'GPU-gen', 'GPU (generated)', '580.1', 13000, '12.2.3', '0.1.0', 'abc', 'quick', 1, 0)",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO scenarios (id, kind, scenario_id, primitive, geometry, stream, context)
             VALUES (1, 'throughput', 'tp/x', 'Convert_8u32f_C1R', '31x31-s32-d128', 'blocking', 'from_stream')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO results (run_id, scenario, gpu_uuid, gpu_model, status, passes, kernel_ns, kernel_ns_min,
                kernel_ns_max, timing)
             VALUES (1, 1, 'GPU-gen', 'GPU (generated)', 'ok', 1, 1664.0, 1664.0, 1664.0, 'cupti')",
            [],
        )
        .unwrap();
    }
    let mut db = Db::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), latest_version());
    assert_eq!(db.counts().unwrap(), (1, 1));
    let runs = db.runs().unwrap();
    assert_eq!(runs[0].run.key, "v1-run");
    assert!(runs[0].run.test_hooks.is_empty());
    let mut results = Vec::new();
    db.for_each_result(|r| results.push(r)).unwrap();
    assert_eq!(results[0].row.throughput.as_ref().unwrap().kernel_ns, 1664.0);
    // A result from before version 3 has no per-pass figures: it is not judged against another.
    assert_eq!(results[0].row.throughput.as_ref().unwrap().per_pass, None);
    // The columns version 2 added are there and take new runs.
    let run = generated::run(2, "gen", "GPU-gen", "13.0.1", "580.1");
    let mut row = generated::memory("single", "GPU-gen", nppbench_analysis::LeakClass::Flat);
    row.memory.as_mut().unwrap().hidden_streams_per_thread = Some(0.25);
    db.add(&run, &[row]).unwrap();
    let mut hidden = Vec::new();
    db.for_each_result(|r| hidden.extend(r.row.memory.and_then(|m| m.hidden_streams_per_thread)))
        .unwrap();
    assert_eq!(hidden, [0.25]);
    // Opening it again applies nothing twice.
    drop(db);
    assert_eq!(Db::open(&path).unwrap().counts().unwrap(), (2, 2));
}

#[test]
fn adding_the_same_run_twice_changes_nothing() {
    let (_dir, mut db) = generated::db();
    let run = generated::run(1, "a", "GPU-a", "13.0.1", "580.1");
    let rows = [
        generated::throughput("blocking", "GPU-a", 1000.0),
        generated::throughput("non_blocking", "GPU-a", 1100.0),
    ];
    assert_eq!(db.add(&run, &rows).unwrap(), Added::New { results: 2 });
    assert_eq!(db.add(&run, &rows).unwrap(), Added::AlreadyPresent);
    assert_eq!(db.counts().unwrap(), (1, 2));
}

#[test]
fn a_committed_run_and_its_copy_are_one_run() {
    let (_dir, mut db) = generated::db();
    let dir = tempfile::tempdir().unwrap();
    let original = committed("h100-quick-npp-13.0.1/run.json.gz");
    let copy = dir.path().join("run-copy.json");
    std::fs::copy(&original, &copy).unwrap();
    let added = add_paths(&mut db, &[original, copy], false).unwrap();
    assert!(matches!(added[0].added, Added::New { results } if results > 0));
    assert_eq!(added[1].added, Added::AlreadyPresent);
    assert_eq!(db.counts().unwrap().0, 1);
}

#[test]
fn a_foreign_file_leaves_the_database_untouched() {
    let (_dir, mut db) = generated::db();
    db.add(
        &generated::run(1, "a", "GPU-a", "13.0.1", "580.1"),
        &[generated::throughput("blocking", "GPU-a", 1000.0)],
    )
    .unwrap();
    let before = db.counts().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let good = committed("h100-quick-npp-13.0.1/run.json.gz");
    let real = nppbench_model::read_text(&good).unwrap();
    let cases = [
        ("not-json.json", "this is not JSON".to_owned(), "not valid JSON"),
        (
            "foreign.json",
            r#"{"name": "something else"}"#.to_owned(),
            "not an nppbench run.json",
        ),
        ("truncated.json", real[..real.len() / 2].to_owned(), "may be truncated"),
        (
            "future.json",
            real.replacen("\"schema_version\": 1", "\"schema_version\": 99", 1),
            "schema version 99",
        ),
    ];
    for (name, text, says) in cases {
        let bad = dir.path().join(name);
        std::fs::write(&bad, text).unwrap();
        // The good run first: it must not be added either.
        let err = add_paths(&mut db, &[good.clone(), bad.clone()], false).unwrap_err();
        let message = err.to_string();
        assert!(err.is_bad_input(), "{message}");
        assert!(message.contains(&bad.display().to_string()), "{message}");
        assert!(message.contains(says), "{name}: {message}");
        assert_eq!(db.counts().unwrap(), before, "{name} changed the database");
    }
}

#[test]
fn a_run_with_test_hooks_needs_allow_test_hooks() {
    let (_dir, mut db) = generated::db();
    let hooked = committed("calibration/delay-100-cycles-npp-13.0.1-1.json.gz");
    let err = add_paths(&mut db, std::slice::from_ref(&hooked), false).unwrap_err();
    assert!(err.to_string().contains("--allow-test-hooks"), "{err}");
    assert!(err.to_string().contains("NPPBENCH_DELAY_CYCLES=100"), "{err}");
    assert_eq!(db.counts().unwrap(), (0, 0));
    add_paths(&mut db, &[hooked], true).unwrap();
    let runs = db.runs().unwrap();
    assert_eq!(runs[0].run.test_hooks, ["NPPBENCH_DELAY_CYCLES=100"]);
}

#[test]
fn a_file_that_is_not_a_history_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    // Not SQLite at all.
    let text = dir.path().join("notes.db");
    std::fs::write(&text, "some notes, not a database, long enough to have a header......").unwrap();
    let before = std::fs::read(&text).unwrap();
    let err = Db::open(&text).unwrap_err();
    assert!(matches!(err, HistoryError::NotAHistory { .. }), "{err}");
    assert!(err.to_string().contains("notes.db"), "{err}");
    assert_eq!(std::fs::read(&text).unwrap(), before);
    // Another application's SQLite database.
    let other = dir.path().join("other.db");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x INTEGER)")
        .unwrap();
    let err = Db::open(&other).unwrap_err();
    assert!(err.to_string().contains("something else"), "{err}");
    // A history from a newer nppbench.
    let newer = dir.path().join("newer.db");
    {
        let conn = Connection::open(&newer).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let err = Db::open(&newer).unwrap_err();
    assert!(matches!(err, HistoryError::TooNew { found: 99, .. }), "{err}");
}

#[test]
fn a_missing_folder_or_history_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let err = Db::open(&dir.path().join("no/such/history.db")).unwrap_err();
    assert!(
        matches!(err, HistoryError::NoFolder { .. }) && err.is_bad_input(),
        "{err}"
    );
    let err = Db::open_existing(&dir.path().join("history.db")).unwrap_err();
    assert!(err.to_string().contains("nppbench history add"), "{err}");
    assert!(!dir.path().join("history.db").exists());
}

#[test]
fn export_joins_every_result_with_its_run() {
    let (_dir, mut db) = generated::db();
    for i in 0..3 {
        db.add(
            &generated::run(i, "a", "GPU-a", "13.0.1", "580.1"),
            &[
                generated::throughput("blocking", "GPU-a", 1000.0 + i as f64),
                generated::memory("single", "GPU-a", nppbench_analysis::LeakClass::Flat),
            ],
        )
        .unwrap();
    }
    let mut out = Vec::new();
    assert_eq!(crate::export::write_csv(&db, &mut out).unwrap(), 6);
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), crate::export::COLUMNS.join(","));
    let tp = lines.find(|l| l.contains("tp/blocking")).unwrap();
    assert!(
        tp.contains("13.0.1") && tp.contains("580.1") && tp.contains(",1000,"),
        "{tp}"
    );
    // Its per-pass figures last: pixels, …, whether the busy time was known, host latency, then
    // each layout's figures (none: the generated passes do not know their layouts apart).
    assert!(tp.contains(",961,") && tp.ends_with(",1,13 13 13,,"), "{tp}");
    assert_eq!(text.lines().count(), 7);
}

#[test]
fn per_pass_figures_read_back_exactly() {
    let (_dir, mut db) = generated::db();
    // Generated pass values with digits no decimal rounding keeps.
    let row = generated::throughput_passes("blocking", "GPU-a", &[1000.0 / 3.0, 1e-7 + 334.0, 333.25]);
    // Each layout's figures too (schema 4), one layout seen in no pass: an empty list, not none.
    let mut layouts = generated::throughput_passes("per_thread_default", "GPU-a", &[6304.0, 6848.0, 6305.5]);
    layouts
        .throughput
        .as_mut()
        .unwrap()
        .per_pass
        .as_mut()
        .unwrap()
        .by_layout = Some(ByLayout {
        at_once_ns: vec![6272.0, 1000.0 / 3.0],
        in_turn_ns: vec![],
    });
    db.add(
        &generated::run(1, "a", "GPU-a", "13.0.1", "580.1"),
        &[row.clone(), layouts.clone()],
    )
    .unwrap();
    let mut back = Vec::new();
    db.for_each_result(|r| back.push(r.row)).unwrap();
    back.sort_by(|a, b| a.stream.cmp(&b.stream));
    assert_eq!(back, [row, layouts]);
    assert_eq!(values_text(&[1.5, 2.0, 1e-7]), "1.5 2 0.0000001");
    assert_eq!(parse_values("1.5 2 0.0000001"), Some(vec![1.5, 2.0, 1e-7]));
    assert_eq!(parse_values(""), Some(vec![]));
    assert_eq!(parse_values("1.5 x"), None);
}

#[test]
fn adding_a_run_again_fills_the_per_pass_figures_an_older_history_lacks() {
    let (_dir, mut db) = generated::db();
    let run = generated::run(1, "a", "GPU-a", "13.0.1", "580.1");
    let row = generated::throughput("blocking", "GPU-a", 1000.0);
    let mut old = row.clone();
    old.throughput.as_mut().unwrap().per_pass = None;
    db.add(&run, &[old]).unwrap();
    let passes = |db: &Db| {
        let mut p = Vec::new();
        db.for_each_result(|r| p.push(r.row.throughput.unwrap().per_pass))
            .unwrap();
        p
    };
    assert_eq!(passes(&db), [None]);
    assert_eq!(db.add(&run, std::slice::from_ref(&row)).unwrap(), Added::AlreadyPresent);
    assert_eq!(passes(&db), [row.throughput.unwrap().per_pass]);
    assert_eq!(db.counts().unwrap(), (1, 1));
}
