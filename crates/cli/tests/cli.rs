//! The `nppbench` binary as a user meets it: bad input, a machine without a GPU, and (where
//! there is one) a whole run of a tiny matrix.

use std::path::Path;
use std::process::{Command, Output};

use nppbench_model::RunFile;

/// The binary under test; `NPPBENCH_BIN` overrides it where the tests run away from their
/// build (the GPU machine).
fn command(args: &[&str]) -> Command {
    let bin = std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned());
    let mut c = Command::new(bin);
    c.args(args);
    c
}

fn nppbench(args: &[&str]) -> Output {
    command(args).output().unwrap()
}

#[path = "cli/catalogue_page.rs"]
mod catalogue_page;
mod common;
#[path = "cli/history_add.rs"]
mod history_add;
#[path = "cli/unavailable.rs"]
mod unavailable;

#[path = "cli/shards.rs"]
mod shards;

#[path = "cli/compressed.rs"]
mod compressed;

#[path = "cli/closed_pipe.rs"]
mod closed_pipe;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const TINY: &str = r#"
name = "tiny"
streams = ["blocking", "non_blocking"]
threading = ["thread_per_call", "pool:2"]
[settings]
calls = 4
warm_up_ms = 10
measurement_ms = 30
samples = 10
resamples = 1000
[[geometry]]
width = 31
height = 31
src_stride = 32
"#;

#[test]
fn unknown_preset_is_bad_input() {
    let o = nppbench(&["run", "--preset", "quik", "--out", "/tmp/x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown; use quick, full or atlas"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn probe_connections_out_of_cudas_range_is_bad_input() {
    for bad in ["0", "33", "many"] {
        let o = nppbench(&["run", "--probe-connections", bad, "--out", "/tmp/x"]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "invalid value '{bad}' for '--probe-connections <N|inherit>': give a number of connections from 1 to 32"
            )),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn malformed_matrix_is_bad_input_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.toml");
    std::fs::write(&m, TINY.replace("width = 31", "width = ")).unwrap();
    let o = nppbench(&[
        "run",
        "--matrix",
        m.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("line 12, column 9"), "{err}");
}

#[test]
fn unknown_threading_name_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.toml");
    std::fs::write(&m, TINY.replace("pool:2", "pool")).unwrap();
    let o = nppbench(&[
        "run",
        "--matrix",
        m.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("pool:N"), "{}", stderr(&o));
}

#[test]
fn missing_npp_folder_is_bad_input() {
    let o = nppbench(&["run", "--npp", "/no/such/npp", "--out", "/tmp/x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--npp /no/such/npp: no such folder"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn run_json_readers_reject_truncated_foreign_and_future_files() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "truncated.json",
            "{\"schema_version\": 1, \"tool\": {",
            "may be truncated",
        ),
        (
            "foreign.json",
            "{\"name\": \"criterion\"}",
            "is not an nppbench run.json",
        ),
        (
            "future.json",
            "{\"schema_version\": 99, \"tool\": {\"name\": \"nppbench\", \"version\": \"9.0.0\"}}",
            "schema version 99 (by nppbench 9.0.0); this nppbench reads versions 1, 2, 3 and 4",
        ),
    ];
    for (name, text, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let o = nppbench(&[
            "report",
            "--from",
            path.to_str().unwrap(),
            "--out",
            dir.path().to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(stderr(&o).contains(expected), "{name}: {}", stderr(&o));
    }
}

#[test]
fn a_tiny_matrix_runs_end_to_end_into_a_valid_run_json() {
    if !nppbench_engine::gpu_available("a_tiny_matrix_runs_end_to_end_into_a_valid_run_json") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("tiny.toml");
    std::fs::write(&m, TINY).unwrap();
    let out = dir.path().join("out");
    let o = nppbench(&["run", "--matrix", m.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = RunFile::read(&out.join("run.json")).unwrap();
    assert_eq!(run.memory.len(), 4);
    assert_eq!(run.throughput.len(), 2);
    assert!(
        run.memory.iter().all(|r| r.outcome == nppbench_model::Outcome::Ok),
        "{:?}",
        run.memory
    );
    assert!(run.throughput.iter().all(|r| r.result.is_some()));
    assert!(
        !Path::new(&out.join(".nppbench-work")).exists(),
        "work folder left behind after a clean run"
    );
}

fn reports() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports")
}

#[test]
fn compare_exit_status_gates_ci() {
    let base = reports().join("h200-full-npp-13.0.1/run.json.gz");
    let dir = tempfile::tempdir().unwrap();
    // Altered copy of a real run: every 4K convert's kernel time per call made 30% longer in
    // every pass.
    let mut run: serde_json::Value = serde_json::from_str(&nppbench_model::read_text(&base).unwrap()).unwrap();
    for t in run["throughput"].as_array_mut().unwrap() {
        if t["scenario"]["geometry"]["width"] == 3840 && !t["result"]["per_call"].is_null() {
            let x = &mut t["result"]["per_call"]["median_ns"];
            *x = serde_json::json!(x.as_f64().unwrap() * 1.3);
        }
    }
    let slower = dir.path().join("slower.json");
    std::fs::write(&slower, run.to_string()).unwrap();
    let out = dir.path().join("cmp");
    let (b, s, o) = (base.to_str().unwrap(), slower.to_str().unwrap(), out.to_str().unwrap());
    let gated = nppbench(&["compare", b, s, "--out", o, "--fail-on", "regression,leak"]);
    assert_eq!(gated.status.code(), Some(3), "{}", stderr(&gated));
    assert!(out.join("compare.html").exists() && out.join("summary.md").exists());
    let summary = String::from_utf8_lossy(&gated.stdout);
    assert!(summary.starts_with("## FAIL"), "the verdict first: {summary}");
    // The message names the gate that tripped (regression), not every gate asked for (leak did
    // not trip), with how many scenarios and the worst.
    let message = stderr(&gated);
    let message = message.trim_end();
    assert!(
        message.starts_with("error: the comparison fails: regression: "),
        "{message}"
    );
    assert!(
        message.contains(" scenarios, the worst tp/") && message.contains("(+30.0%)"),
        "{message}"
    );
    assert!(!message.contains("leak"), "{message}");
    assert!(
        message.ends_with(&format!("; see {}", out.join("compare.html").display())),
        "{message}"
    );
    let ungated = nppbench(&["compare", b, s, "--out", o]);
    assert_eq!(
        ungated.status.code(),
        Some(0),
        "without --fail-on the verdict is printed and the exit is 0"
    );
    let typo = nppbench(&["compare", b, s, "--out", o, "--fail-on", "regresion"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(stderr(&typo).contains("regression, leak, streams"), "{}", stderr(&typo));
}

#[test]
fn compare_takes_a_report_of_several_runs_or_says_what_a_folder_holds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    // A report folder of several runs (run-N-npp-V.json), as `run --npp A --npp B` writes one:
    // each run in it, in order.
    let several = dir.path().join("h100-versions");
    std::fs::create_dir_all(&several).unwrap();
    for (i, (from, v)) in [
        ("h100-npp-12.2.3.2", "12.2.3"),
        ("h100-npp-13.0.1", "13.0.1"),
        ("h100-npp-13.2.0.93", "13.2.0"),
    ]
    .iter()
    .enumerate()
    {
        let to = several.join(format!("run-{}-npp-{v}.json.gz", i + 1));
        std::fs::copy(reports().join(from).join("run.json.gz"), to).unwrap();
    }
    let o = nppbench(&["compare", several.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(
        summary.contains("2 runs against h100-versions/run-1-npp-12.2.3 · NPP 12.2.3"),
        "{summary}"
    );
    // A folder with no run in it: the message names what it does hold.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "x").unwrap();
    let o = nppbench(&[
        "compare",
        empty.to_str().unwrap(),
        several.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("holds no run.json") && e.contains("notes.txt"), "{e}");
    // One run alone cannot be compared.
    let one = reports().join("h100-npp-13.0.1");
    let o = nppbench(&["compare", one.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn out_pointing_at_a_file_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let run = reports().join("h100-npp-13.0.1/run.json.gz");
    for args in [
        vec![
            "report",
            "--from",
            run.to_str().unwrap(),
            "--out",
            file.to_str().unwrap(),
        ],
        vec![
            "compare",
            run.to_str().unwrap(),
            run.to_str().unwrap(),
            "--out",
            file.to_str().unwrap(),
        ],
        vec!["run", "--preset", "quick", "--out", file.to_str().unwrap()],
    ] {
        let o = nppbench(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.matches("is a file").count(), 1, "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
}

#[test]
fn report_does_not_overwrite_another_runs_folder_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let (a, b) = (
        reports().join("h100-npp-13.0.1/run.json.gz"),
        reports().join("h100-npp-12.2.3.2/run.json.gz"),
    );
    let report = |from: &Path, force: bool| {
        let mut args = vec![
            "report",
            "--from",
            from.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        if force {
            args.push("--force");
        }
        nppbench(&args)
    };
    assert!(report(&a, false).status.success());
    // The same run again: re-rendered in place.
    assert!(report(&a, false).status.success());
    let o = report(&b, false);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("holds the report of another run") && stderr(&o).contains("--force"));
    let o = report(&b, true);
    assert!(o.status.success(), "{}", stderr(&o));
    let now = RunFile::read(&out.join("run.json.gz")).unwrap();
    assert_eq!(now.environment.npp.version, "12.2.3");
}

#[test]
fn npp_with_a_missing_folder_is_bad_input() {
    let o = nppbench(&["npp", "--npp", "/no/such/npp"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--npp /no/such/npp: no such folder"));
}

#[test]
fn bad_jobs_and_devices_are_bad_input() {
    let o = nppbench(&["run", "--jobs", "0", "--out", "/tmp/x"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--jobs"), "{}", stderr(&o));
    for spec in ["0,x", "1,1", ""] {
        let o = nppbench(&["run", "--devices", spec, "--out", "/tmp/x"]);
        assert_eq!(o.status.code(), Some(2), "--devices {spec:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--devices"), "{}", stderr(&o));
    }
}

#[test]
fn a_gpu_that_does_not_exist_is_bad_input() {
    if !nppbench_engine::gpu_available("a_gpu_that_does_not_exist_is_bad_input") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("tiny.toml");
    std::fs::write(&m, TINY).unwrap();
    let out = dir.path().join("out");
    let o = nppbench(&[
        "run",
        "--matrix",
        m.to_str().unwrap(),
        "--devices",
        "0,97",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("there is no GPU 97"), "{}", stderr(&o));
    let o = nppbench(&[
        "run",
        "--matrix",
        m.to_str().unwrap(),
        "--jobs",
        "100000",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("at most"), "{}", stderr(&o));
}

#[test]
fn every_gpu_of_the_host_is_measured_and_named() {
    if !nppbench_engine::gpu_available("every_gpu_of_the_host_is_measured_and_named") {
        return;
    }
    let count = nppbench_engine::gpu_count();
    if count < 2 {
        nppbench_model::say_skipped(
            "every_gpu_of_the_host_is_measured_and_named",
            &format!("needs two GPUs (this machine has {count})"),
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("tiny.toml");
    std::fs::write(&m, TINY).unwrap();
    let out = dir.path().join("out");
    let o = nppbench(&[
        "run",
        "--matrix",
        m.to_str().unwrap(),
        "--devices",
        "all",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = RunFile::read(&out.join("run.json")).unwrap();
    assert_eq!(run.environment.gpus.len(), count);
    let uuids: std::collections::BTreeSet<_> = run.environment.gpus.iter().map(|g| g.gpu.uuid.clone()).collect();
    assert_eq!(uuids.len(), count, "each GPU named by its own UUID");
    // Every throughput scenario on every GPU; memory scenarios spread over them.
    assert_eq!(run.throughput.len(), run.matrix.throughput.len() * count);
    for u in &uuids {
        assert!(run.throughput.iter().any(|t| t.gpu.as_ref() == Some(u)), "{u}");
    }
    let mem_gpus: std::collections::BTreeSet<_> = run.memory.iter().filter_map(|m| m.gpu.clone()).collect();
    assert!(mem_gpus.len() >= 2, "{mem_gpus:?}");
    assert!(run.memory.iter().all(|m| m.outcome == nppbench_model::Outcome::Ok));
}
