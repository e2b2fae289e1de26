//! `nppbench predict` on the committed H100 atlases (the bisected atlas of each NPP version):
//! the seed report's cases against what other committed runs measured, the basis of each answer,
//! the CSV contract, an unstable function, and bad input with exit 2. No GPU needed.

use std::path::Path;

use nppbench_model::RunFile;

mod common;

use common::{atlas, nppbench, predict_csv, reports};

#[test]
fn the_csv_has_the_documented_columns() {
    let rows = predict_csv(&[
        "--atlas",
        &atlas("13.0.1"),
        "--primitive",
        "Convert_8u32f_C1R",
        "--width",
        "31",
        "--height",
        "31",
        "--src-stride",
        "32",
        "--dst-stride",
        "128",
    ]);
    assert_eq!(
        rows[0].iter().collect::<Vec<_>>(),
        [
            "primitive",
            "width",
            "height",
            "src_stride",
            "dst_stride",
            "stream",
            "context",
            "threading",
            "predicted_class",
            "basis",
            "confidence",
            "confidence_reason",
            "deciding",
            "fixes",
            "rule",
            "race_class",
            "race_basis",
            "race_rule",
            "wrong_class",
            "wrong_basis",
            "wrong_rule",
            "wrong_fixes"
        ]
    );
    // The race beside the leak: the seed's geometry races on a blocking stream (#29).
    assert_eq!((&rows[1][15], &rows[1][16]), ("races", "rule"), "{:?}", &rows[1]);
    assert!(rows[1][17].starts_with("Races if and only if"), "{:?}", &rows[1]);
    assert_eq!(&rows[1][8], "leak");
    assert_eq!(&rows[1][9], "rule");
    assert!(rows[1][14].starts_with("Leaks if and only if"), "{:?}", &rows[1]);
    // A leak names the configurations the same evidence says end it, each judged on the race
    // too: a pool ends the leak and leaves the race; declaring the stream non-blocking ends both.
    assert!(
        rows[1][13].contains("declared_non_blocking): flat, ordered"),
        "{:?}",
        &rows[1]
    );
    assert!(rows[1][13].contains("(pool:4): bounded, still races"), "{:?}", &rows[1]);
}

#[test]
fn an_answer_says_how_it_knows_and_what_decides_it() {
    let ask = |width: &str, height: &str, stride: &str, threading: &str| {
        predict_csv(&[
            "--atlas",
            &atlas("13.0.1"),
            "--primitive",
            "Convert_8u32f_C1R",
            "--width",
            width,
            "--height",
            height,
            "--src-stride",
            stride,
            "--threading",
            threading,
        ])
        .remove(1)
    };
    // Far past every width measured: the rule's answer, marked extrapolated with the reason.
    let far = ask("100000", "16", "100352", "thread_per_call");
    assert_eq!(&far[10], "extrapolated", "{far:?}");
    assert!(
        far[11].contains("width 100000 px is above the largest measured"),
        "{far:?}"
    );
    // Flat because one condition of the leak rule fails: that condition is named.
    let aligned = ask("1024", "16", "1024", "thread_per_call");
    assert_eq!(&aligned[8], "flat", "{aligned:?}");
    assert!(
        aligned[12].starts_with("flat: a source row in bytes is a multiple of"),
        "{aligned:?}"
    );
    // Bounded says what bounded means.
    let pool = ask("1000", "16", "1024", "pool:4");
    assert_eq!(&pool[8], "bounded", "{pool:?}");
    assert!(
        pool[12].contains("each of the pool's threads makes its first call"),
        "{pool:?}"
    );
    // A measured scenario is exact.
    let measured = ask("255", "64", "256", "thread_per_call");
    assert_eq!((&measured[9], &measured[10]), ("measured", "exact"), "{measured:?}");
}

/// The seed report's geometry (31×31, source stride 32, destination 128) as other committed runs
/// measured it, on every stream kind and threading model they tried, against the atlas's answer:
/// the atlas never measured 31×31, so every answer comes from a rule. With a new thread per call
/// every answer is right; a pool's or a single thread's (bounded or flat: the atlas's bounded
/// rules are approximate, some pools growing with the runtime's own per-thread streams) is right
/// or says it is approximate, never "rule" when wrong.
#[test]
fn the_seed_reports_cases_are_predicted_as_other_runs_measured_them() {
    let dir = tempfile::tempdir().unwrap();
    let matrix = dir.path().join("seed.toml");
    std::fs::write(
        &matrix,
        r#"name = "seed"
primitive = "Convert_8u32f_C1R"
streams = ["legacy_default", "per_thread_default", "blocking", "non_blocking"]
threading = ["thread_per_call", "single", "pool:2", "pool:4", "pool:16"]
[[geometry]]
width = 31
height = 31
src_stride = 32
[[geometry]]
width = 31
height = 31
src_stride = 32
streams = ["non_blocking"]
threading = ["thread_per_call_own_stream"]
"#,
    )
    .unwrap();
    for (version, run) in [
        ("13.0.1", "h200-full-npp-13.0.1/run.json.gz"),
        ("12.2.3", "h200-quick-npp-12.2.3/run.json.gz"),
    ] {
        let rows = predict_csv(&["--atlas", &atlas(version), "--matrix", &matrix.display().to_string()]);
        let measured = RunFile::read(&reports().join(run)).unwrap();
        let a = nppbench_analysis::RunAnalysis::new(&measured);
        let mut checked = 0;
        for m in &a.memory {
            let s = &m.record.scenario;
            let g = &s.geometry;
            if (g.width, g.height, g.src_stride, g.dst_stride) != (31, 31, 32, 128) || g.padded_from.is_some() {
                continue;
            }
            let row = rows
                .iter()
                .find(|r| {
                    (&r[5], &r[6], &r[7]) == (&s.stream.to_string(), &s.context.to_string(), &s.threading.to_string())
                })
                .unwrap_or_else(|| panic!("no answer for {}", s.id));
            assert_eq!(&row[9], "rule", "{}", s.id);
            let right = row[8] == *m.class.expect("measured").as_str();
            if s.threading.thread_bound().is_none() {
                assert!(right, "{} in {run}: {row:?}", s.id);
            } else {
                assert!(right || &row[10] == "approximate", "{} in {run}: {row:?}", s.id);
            }
            checked += 1;
        }
        assert!(checked >= 13, "{run}: {checked} seed cases");
    }
}

#[test]
fn a_measured_scenario_is_answered_from_its_measurement() {
    let run = RunFile::read(&reports().join("h100-atlas-npp-13.0.1/run-1-npp-13.0.1.json.gz")).unwrap();
    let s = run
        .memory
        .iter()
        .find(|m| m.scenario.primitive.name() == "Copy_8u_C1R" && m.outcome.status().as_str() == "ok")
        .unwrap()
        .scenario
        .clone();
    let (w, h, src, dst) = (
        s.geometry.width.to_string(),
        s.geometry.height.to_string(),
        s.geometry.src_stride.to_string(),
        s.geometry.dst_stride.to_string(),
    );
    let (stream, context, threading) = (s.stream.to_string(), s.context.to_string(), s.threading.to_string());
    let rows = predict_csv(&[
        "--atlas",
        &atlas("13.0.1"),
        "--primitive",
        "Copy_8u_C1R",
        "--width",
        &w,
        "--height",
        &h,
        "--src-stride",
        &src,
        "--dst-stride",
        &dst,
        "--stream",
        &stream,
        "--context",
        &context,
        "--threading",
        &threading,
    ]);
    assert_eq!(&rows[1][9], "measured");
}

#[test]
fn a_function_whose_class_flips_between_processes_is_unknown_where_it_flipped() {
    // AddC_8u_C3RSfs 240×64, stride 768: measured in six processes, leaking in some.
    let dir = reports().join("concurrency/addc-c3");
    let mut args = vec![
        "--primitive",
        "AddC_8u_C3RSfs",
        "--width",
        "240",
        "--height",
        "64",
        "--src-stride",
        "768",
    ];
    let runs: Vec<String> = (1..=3)
        .flat_map(|i| {
            [
                format!("connections-1-{i}.json.gz"),
                format!("connections-inherit-{i}.json.gz"),
            ]
        })
        .map(|f| dir.join(f).display().to_string())
        .collect();
    for r in &runs {
        args.extend(["--atlas", r.as_str()]);
    }
    let rows = predict_csv(&args);
    assert_eq!(&rows[1][8], "unknown");
    assert_eq!(&rows[1][9], "measured");
    assert!(rows[1][14].contains("not stable"), "{:?}", &rows[1]);
    assert_eq!(&rows[1][10], "none");
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let (a12, a13) = (atlas("12.2.3"), atlas("13.0.1"));
    let one = ["--width", "5", "--height", "5", "--src-stride", "8"];
    let cases: [(Vec<&str>, &str); 4] = [
        (
            vec!["--atlas", &a13, "--primitive", "Nope"],
            "unknown NPP primitive \"Nope\"",
        ),
        (
            vec![
                "--atlas",
                &a13,
                "--primitive",
                "Copy_8u_C1R",
                "--width",
                "50",
                "--height",
                "5",
                "--src-stride",
                "8",
            ],
            "cannot take this geometry",
        ),
        (
            vec!["--atlas", &a13, "--atlas", &a12, "--primitive", "Copy_8u_C1R"],
            "several NPP versions",
        ),
        (
            vec!["--atlas", &a13, "--npp-version", "12.2", "--primitive", "Copy_8u_C1R"],
            "--npp-version 12.2",
        ),
    ];
    for (mut args, says) in cases {
        if !args.contains(&"--width") {
            args.extend(one);
        }
        let mut all = vec!["predict"];
        all.extend(args);
        let o = nppbench(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(says), "{all:?}: {err}");
    }
}

/// The question is checked before the atlas is read, and a near miss gets a suggestion: a
/// mistyped stream or context is clap's usage error even with an atlas that does not exist, and a
/// mistyped function names the nearest one.
#[test]
fn a_mistyped_question_is_answered_before_the_atlas_is_read_with_a_suggestion() {
    let missing = reports().join("no-such-atlas").display().to_string();
    let one = ["--width", "31", "--height", "31", "--src-stride", "32"];
    for (flag, typo, says) in [
        ("--stream", "blockin", "stream kind \"blockin\""),
        ("--context", "from-stream", "from-stream"),
        ("--threading", "pool:x", "pool:x"),
    ] {
        let mut args = vec![
            "predict",
            "--atlas",
            &missing,
            "--primitive",
            "Convert_8u32f_C1R",
            flag,
            typo,
        ];
        args.extend(one);
        let o = nppbench(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says) && !err.contains("no-such-atlas"), "{args:?}: {err}");
    }
    let mut args = vec!["predict", "--atlas", &missing, "--primitive", "Convert_8u32f_C1"];
    args.extend(one);
    let o = nppbench(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("did you mean Convert_8u32f_C1R?"), "{err}");
    assert!(!err.contains("no-such-atlas"), "the atlas is not read first: {err}");
}

#[test]
fn the_next_round_proposes_unmeasured_scenarios_where_rules_are_weak() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("next.toml");
    let o = nppbench(&[
        "design",
        "--atlas",
        &atlas("13.0.1"),
        "--out",
        &out.display().to_string(),
        "--per-function",
        "5",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let next = nppbench_model::Matrix::from_file(&out).unwrap();
    assert!(next.throughput.is_empty());
    let runs: Vec<RunFile> = ["run-1-npp-13.0.1.json.gz", "run-2-npp-13.0.1.json.gz"]
        .iter()
        .map(|f| RunFile::read(&Path::new(&atlas("13.0.1")).join(f)).unwrap())
        .collect();
    let measured: std::collections::BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.memory.iter().map(|m| m.scenario.id.as_str()))
        .collect();
    assert!(
        next.memory.iter().all(|s| !measured.contains(s.id.as_str())),
        "a measured scenario proposed again"
    );
    let mut per: std::collections::BTreeMap<&str, usize> = Default::default();
    for s in &next.memory {
        *per.entry(s.primitive.name()).or_default() += 1;
    }
    assert!(per.values().all(|n| *n <= 5), "{per:?}");
    // The function that flips between processes gets a next round; the one whose rule is earned
    // gets none.
    assert!(per.contains_key("AddC_8u_C3RSfs"), "{per:?}");
    assert!(!per.contains_key("Convert_8u32f_C1R"), "{per:?}");
}
