//! `nppbench predict` on what is new in it: the stride changes that end wrong pixels (issue #44),
//! and answers from the knowledge built into the binary, with no atlas (issue #46). No GPU needed.

mod common;

use common::{predict_csv, reports};

/// A wrong-pixel answer lists the stride changes the same evidence says compute right, with their
/// cost (NPP 13.0.1's run of docs/atlas/wrong.toml on an H200): Copy_8u_C1R at a source stride 6
/// bytes past a multiple of 16, whose rows then start 9 to 11 bytes past a boundary.
#[test]
fn a_wrong_answer_lists_the_stride_changes_that_compute_right() {
    let run = reports().join("wrong-pixels/h200-GPU-fd1537c9/wrong-npp-13.0.1.json.gz");
    let geometry = ["--width", "512", "--height", "256", "--dst-stride", "896"];
    let answer = |primitive: &str, stride: &str| {
        let mut args = vec![
            "--atlas",
            run.to_str().unwrap(),
            "--primitive",
            primitive,
            "--src-stride",
            stride,
        ];
        args.extend_from_slice(&geometry);
        let rows = predict_csv(&args);
        let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
        (
            rows[1][col("wrong_class")].to_owned(),
            rows[1][col("wrong_fixes")].to_owned(),
        )
    };
    let (class, fixes) = answer("Copy_8u_C1R", "518");
    assert_eq!(class, "wrong");
    assert!(
        fixes.contains(
            "pad the source stride to a multiple of 16 bytes (518 → 528): right (rule); costs 2560 more bytes"
        ),
        "{fixes}"
    );
    assert!(
        fixes.contains("(518 → 1024): right (rule); costs a device-to-device copy of 131072 bytes"),
        "{fixes}"
    );
    // A right answer has none; a function never wrong is right at the same strides.
    assert_eq!(answer("Copy_8u_C1R", "528"), ("right".to_owned(), String::new()));
    assert_eq!(answer("Transpose_8u_C1R", "518").0, "right");
}

/// Issue #46: a copy of the binary alone in an empty folder, with no repository and no atlas,
/// answers the seed report's case from the knowledge built into it (leak, and races), naming the
/// knowledge it used; a version it has no knowledge of is refused with the versions it knows.
/// Issue #45: a function the built-in headers declare and no knowledge measured is answered
/// unknown, naming the headers and the library; a name no header declares is bad input.
#[test]
fn a_copied_binary_answers_from_its_built_in_knowledge() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("nppbench");
    let built = std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned());
    std::fs::copy(built, &bin).unwrap();
    // No design lines (an empty file instead of the built-in designs): a function known from its
    // headers alone is answered from its calls, or unknown.
    let no_designs = dir.path().join("no-designs.jsonl");
    std::fs::write(&no_designs, "").unwrap();
    let command = |primitive: &str, version: &str| {
        let mut c = std::process::Command::new(&bin);
        c.args(["predict", "--primitive", primitive, "--width", "31", "--height", "31"])
            .args(["--src-stride", "32", "--dst-stride", "128", "--npp-version", version])
            .arg("--designs")
            .arg(&no_designs)
            .current_dir(dir.path())
            .env_remove("NPPBENCH_NPP_DIR");
        c
    };
    // The copy was open for writing a moment ago: a process another test thread forks in that
    // moment keeps it open until it execs, and executing the copy then fails with ETXTBSY.
    let ask_of = |primitive: &str, version: &str| {
        for _ in 0..100 {
            match command(primitive, version).output() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other.unwrap(),
            }
        }
        panic!("{}: still busy", bin.display())
    };
    let ask = |version: &str| ask_of("Convert_8u32f_C1R", version);
    let o = ask("13.0");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.starts_with("NPP 13.0.1.2, from the built-in knowledge npp-13.0.1-sm90"),
        "{text}"
    );
    assert!(text.contains(": pixels right (rule); leak (rule"), "{text}");
    assert!(text.contains("races (rule)"), "{text}");
    let o = ask("11.8");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no knowledge of NPP 11.8") && err.contains("it knows 12.2.3, 13.0.1, 13.2.0"),
        "{err}"
    );
    let o = ask_of("nppiResize_8u_C3R_Ctx", "13.0");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.contains("Resize_8u_C3R 31x31 src 32 dst 128 blocking from_stream thread_per_call: pixels not measured (none); unknown (none, none: nppiResize_8u_C3R_Ctx is one of the 5516 image functions NPP 13.0.1.2's headers declare (exported by nppig)"),
        "{text}"
    );
    assert!(text.contains("measured 61 functions and not this one"), "{text}");
    assert!(text.contains("; not measured (none)"), "the race: {text}");
    let o = ask_of("Resize_8u_C9R", "13.0");
    assert_eq!(o.status.code(), Some(2), "no header declares it");
    // What the built-in knowledge's calls found (reports/catalogue-calls/h100-1918): a lead of
    // 13.0.1's alone, the context killed at the destination step; its call on 12.2.3 did not.
    let said = |version: &str| String::from_utf8_lossy(&ask_of("Threshold_GT_8u_C3R", version).stdout).into_owned();
    let (new, old) = (said("13.0"), said("12.2"));
    let dead = "left the CUDA context dead at an unaligned destination step";
    assert!(
        new.contains(
            "its call from its roles at 1918×32 (reports/catalogue-calls/h100-1918/calls-npp-13.0.1.2.jsonl.gz)"
        ),
        "{new}"
    );
    assert!(
        new.contains(dead) && new.contains("leads, which only measuring"),
        "{new}"
    );
    assert!(
        old.contains("calls-npp-12.2.3.2.jsonl.gz") && !old.contains(dead),
        "{old}"
    );
}

/// The knowledge built into the binary answers a stranger's draw (`reports/judge/`, which no
/// knowledge was made from) as well as the atlas runs do: at least 98% of the classes and of the
/// races right, for each version it has of the draws.
#[test]
fn the_built_in_knowledge_is_right_on_a_strangers_draw() {
    for version in ["13.0.1", "12.2.3"] {
        let judge = reports().join(format!("judge/npp-{version}/run.json.gz"));
        let rows = predict_csv(&["--npp-version", version, "--against", judge.to_str().unwrap()]);
        let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
        let n = rows.len() - 1;
        let right = |a: &str, b: &str| rows[1..].iter().filter(|r| r[col(a)] == r[col(b)]).count();
        let (class, race) = (
            right("predicted_class", "measured_class"),
            right("race_class", "measured_race"),
        );
        assert!(n > 600, "{version}: {n}");
        assert!(class * 100 >= n * 98, "{version}: {class} of {n} classes right");
        assert!(race * 100 >= n * 98, "{version}: {race} of {n} races right");
    }
}

/// `--atlas` takes a knowledge file (a committed one here) and says it answered from it; a file
/// of another knowledge schema is refused (exit 2) with what to do.
#[test]
fn a_knowledge_file_answers_through_atlas_and_another_schema_is_refused() {
    let file = reports().join("../knowledge/npp-13.2.0-sm90.json.gz");
    let args = [
        "--primitive",
        "Copy_8u_C1R",
        "--width",
        "512",
        "--height",
        "256",
        "--src-stride",
        "518",
    ];
    let mut ask = vec!["predict", "--atlas", file.to_str().unwrap()];
    ask.extend_from_slice(&args);
    ask.extend_from_slice(&["--dst-stride", "896"]);
    let o = common::nppbench(&ask);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.starts_with("NPP 13.2.0.58, from the knowledge file npp-13.2.0-sm90"),
        "{text}"
    );
    assert!(text.contains("pixels wrong (rule)"), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.json");
    std::fs::write(
        &old,
        r#"{"format":"nppbench-knowledge","schema_version":7,"made_by":"nppbench 0.0.9"}"#,
    )
    .unwrap();
    let mut ask = vec!["predict", "--atlas", old.to_str().unwrap()];
    ask.extend_from_slice(&args);
    let o = common::nppbench(&ask);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("knowledge schema 7 (made by nppbench 0.0.9)") && err.contains("cargo xtask knowledge"),
        "{err}"
    );
}

/// Issue #45: a function known from its headers alone whose design lines are given is answered
/// from its shapes, as a row's function is: measured where a shape is the scenario asked, else
/// by its rules. Made-up design lines (no GPU made them) of GammaInv_8u_C3IR: streams kept on
/// every new thread where the row is not a multiple of 16 pixels.
#[test]
fn a_function_a_design_measured_is_answered_from_its_rules() {
    use nppbench_analysis::calls::design::{self, Pixels};
    let symbol = "nppiGammaInv_8u_C3IR_Ctx";
    let px = Pixels {
        src_bytes_per_pixel: 3,
        src_sample_bytes: 1,
        dst_bytes_per_pixel: 0,
        dst_sample_bytes: 0,
    };
    let text: String = design::design(symbol, &px)
        .into_iter()
        .map(|s| {
            let new_threads = s.threading.to_string() == "thread_per_call";
            common::made_up_design_line(symbol, px, s, !s.width.is_multiple_of(16) && new_threads)
        })
        .map(|l| serde_json::to_string(&l).unwrap() + "\n")
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("design.jsonl");
    std::fs::write(&file, text).unwrap();
    let answer = |width: &str, stride: &str| {
        let rows = predict_csv(&[
            "--npp-version",
            "13.0",
            "--designs",
            file.to_str().unwrap(),
            "--primitive",
            "GammaInv_8u_C3IR",
            "--width",
            width,
            "--height",
            "20",
            "--src-stride",
            stride,
        ]);
        let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
        (
            rows[1][col("predicted_class")].to_owned(),
            rows[1][col("basis")].to_owned(),
            rows[1][col("wrong_class")].to_owned(),
        )
    };
    assert_eq!(answer("31", "1024"), ("leak".into(), "rule".into(), "right".into()));
    assert_eq!(answer("48", "1024"), ("flat".into(), "rule".into(), "right".into()));
}

/// Issue #45: the designs built in, of every NPP version that has them, answer a function they
/// measured at one of its shapes with what that shape measured (basis `measured`).
#[test]
fn the_built_in_designs_answer_a_measured_shape_with_its_measurement() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut versions = Vec::new();
    for entry in std::fs::read_dir(root.join("knowledge/designs")).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".jsonl.gz"))
        else {
            continue;
        };
        // `npp-12.2.3-sm90`: the version asked by.
        let version = name.trim_start_matches("npp-").split('-').next().unwrap().to_owned();
        answers_a_leaking_shape(&path, &version);
        versions.push(version);
    }
    versions.sort();
    assert_eq!(versions, ["12.2.3", "13.0.1", "13.2.0"]);
}

/// A leak-prone shape of `file`'s designs that kept streams on most new threads, of a function
/// known from its headers alone, asked of NPP `version`.
fn answers_a_leaking_shape(file: &std::path::Path, version: &str) {
    use nppbench_analysis::calls::design::ShapeLine;
    let bytes = std::fs::read(file).unwrap();
    let lines: Vec<ShapeLine> = nppbench_analysis::calls::read_lines_of(&bytes).unwrap();
    let line = lines
        .iter()
        .find(|l| {
            l.class() == Some(nppbench_analysis::LeakClass::Leak)
                && l.dst_step_bytes.is_some()
                && l.shape
                    .is_some_and(|s| s.context.to_string() == "from_stream" && s.stream.to_string() == "blocking")
        })
        .expect("a design line that leaks");
    let s = line.shape.unwrap();
    let (src, dst) = (line.src_step_bytes.unwrap(), line.dst_step_bytes.unwrap());
    let name = line.symbol.trim_start_matches("nppi").trim_end_matches("_Ctx");
    let rows = predict_csv(&[
        "--npp-version",
        version,
        "--primitive",
        name,
        "--width",
        &s.width.to_string(),
        "--height",
        &s.height.to_string(),
        "--src-stride",
        &src.to_string(),
        "--dst-stride",
        &dst.to_string(),
    ]);
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    assert_eq!(
        (&rows[1][col("predicted_class")][..], &rows[1][col("basis")][..]),
        ("leak", "measured"),
        "{version} {name} {s:?}"
    );
}

/// The symbols of the built-in designs of `name` (`npp-13.2.0-sm90`), from their index.
fn designed_in(name: &str) -> std::collections::BTreeSet<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let index = std::fs::read_to_string(root.join(format!("knowledge/designs/{name}.index.tsv"))).unwrap();
    index
        .lines()
        .filter_map(|l| l.split('\t').next())
        .map(str::to_owned)
        .collect()
}

/// Whether the built-in headers of `folder` (`npp-13.2.0.58`) declare `symbol`.
fn declared_by(folder: &str, symbol: &str) -> bool {
    use std::io::Read;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = std::fs::File::open(root.join(format!("catalogue/{folder}/functions.jsonl.gz"))).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(file).read_to_string(&mut text).unwrap();
    text.contains(&format!("{{\"symbol\":\"{symbol}\""))
}

/// Issue #45: a function 13.2.0.58's headers declare and its designs have not measured, that
/// 13.0.1's designs measured, is answered for 13.2 from 13.0.1's design, every basis
/// `other_version`, and for 13.0.1 from its own; a function only NPP 13's designs measured is
/// unknown for 12.2.3 (no answer crosses a major release).
#[test]
fn a_function_no_design_of_its_version_measured_is_answered_from_another_of_its_major_release() {
    let (v12, v130, v132) = (
        designed_in("npp-12.2.3-sm90"),
        designed_in("npp-13.0.1-sm90"),
        designed_in("npp-13.2.0-sm90"),
    );
    let answer = |symbol: &str, version: &str| {
        let rows = predict_csv(&[
            "--npp-version",
            version,
            "--primitive",
            symbol,
            // A row of 63 pixels fits the 1,024-byte step at any pixel size up to 16 bytes (the
            // function is whichever the designs give first).
            "--width",
            "63",
            "--height",
            "32",
            "--src-stride",
            "1024",
        ]);
        let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
        let cell = |name: &str| rows[1][col(name)].to_owned();
        (
            [cell("basis"), cell("race_basis"), cell("wrong_basis")],
            cell("confidence"),
            cell("confidence_reason"),
            cell("predicted_class"),
        )
    };
    let symbol = v130
        .iter()
        .find(|s| !v132.contains(*s) && declared_by("npp-13.2.0.58", s))
        .expect("a function 13.0.1's designs measured, 13.2's did not, and 13.2's headers declare");
    let (bases, confidence, reason, class) = answer(symbol, "13.2");
    assert_eq!(bases, ["other_version", "other_version", "other_version"], "{reason}");
    assert_eq!(confidence, "approximate");
    assert!(
        reason.starts_with(&format!(
            "no design of NPP 13.2.0.58 called {symbol}; NPP 13.0.1's design answered"
        )),
        "{reason}"
    );
    assert_ne!(class, "unknown");
    let (bases, _, reason, _) = answer(symbol, "13.0");
    assert!(
        bases.iter().all(|b| b == "measured" || b == "rule"),
        "{bases:?} {reason}"
    );
    let symbol = v130
        .iter()
        .find(|s| !v12.contains(*s) && declared_by("npp-12.2.3.2", s))
        .expect("a function 13.0.1's designs measured, 12.2.3's did not, and 12.2.3's headers declare");
    let (bases, _, reason, class) = answer(symbol, "12.2");
    assert_eq!(bases, ["none", "none", "none"], "{reason}");
    assert_eq!(class, "unknown");
}
