//! `nppbench report --catalogue`: the page of every function NPP 13.0.1's headers declare, from
//! the committed catalogue folder and the committed first run of its calls, with the built-in
//! knowledge; and what it says of bad input.

use super::{nppbench, reports, stderr};

fn catalogue() -> std::path::PathBuf {
    reports().join("../catalogue/npp-13.0.1.2")
}

fn calls() -> std::path::PathBuf {
    reports().join("catalogue-calls/h200-GPU-cce5198b/calls-13.0.1.jsonl.gz")
}

#[test]
fn the_page_lists_every_declared_function_once_with_the_measured_and_the_leads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page");
    let o = nppbench(&[
        "report",
        "--catalogue",
        catalogue().to_str().unwrap(),
        "--calls",
        calls().to_str().unwrap(),
        "--no-designs",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("functions.csv")).unwrap();
    let symbols: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    let unique: std::collections::BTreeSet<&str> = symbols.iter().copied().collect();
    assert_eq!(symbols.len(), 5516, "every function NPP 13.0.1's headers declare");
    assert_eq!(unique.len(), symbols.len(), "each once");
    let state = |s: &str| csv.lines().filter(|l| l.contains(&format!(",{s},"))).count();
    assert_eq!(state("measured"), 61, "the functions the built-in knowledge measured");
    assert!(state("lead") > 400, "the context deaths of the first run are leads");
    assert!(csv.contains("nppiConvert_8u32f_C1R_Ctx,nppidei,Convert,measured,true,\"leaks, races"));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("the knowledge npp-13.0.1-sm90") && html.contains("2306 call lines"));
}

/// Made-up lines that record their card and build: the page says which, and says so first where
/// a build is not the headers' version.
#[test]
fn the_page_names_the_cards_and_builds_of_the_calls_and_another_build() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.jsonl");
    std::fs::write(
        &calls,
        "{\"symbol\":\"nppiNot_8u_C1R_Ctx\",\"status\":0,\"gpu_uuid\":\"GPU-a\",\"npp_version\":\"13.2.0.58\"}\n",
    )
    .unwrap();
    let out = dir.path().join("page");
    let o = nppbench(&[
        "report",
        "--catalogue",
        "13.0",
        "--calls",
        calls.to_str().unwrap(),
        "--no-designs",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("1 call line (1 on GPU-a with NPP 13.2.0.58)"), "{html}");
    assert!(html.contains("Some call lines were made with NPP 13.2.0.58, not with NPP 13.0.1.2"));
}

/// Made-up design lines (no GPU wrote them) of one function outside the 61: with them the page
/// counts it measured, with its hazard; a file that is not lines is refused.
#[test]
fn a_function_a_design_measured_is_on_the_page_as_measured() {
    use nppbench_analysis::calls::design::{self, Pixels};
    let px = Pixels {
        src_bytes_per_pixel: 1,
        src_sample_bytes: 1,
        dst_bytes_per_pixel: 1,
        dst_sample_bytes: 1,
    };
    let text: String = design::design("nppiNot_8u_C1R_Ctx", &px)
        .into_iter()
        .map(|s| crate::common::made_up_design_line("nppiNot_8u_C1R_Ctx", px, s, !s.width.is_multiple_of(16)))
        .map(|l| serde_json::to_string(&l).unwrap() + "\n")
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let designs = dir.path().join("design.jsonl");
    std::fs::write(&designs, text).unwrap();
    let out = dir.path().join("page");
    let page = |designs: &std::path::Path| {
        nppbench(&[
            "report",
            "--catalogue",
            "13.0",
            "--designs",
            designs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let o = page(&designs);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("functions.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.contains(",measured,")).count(),
        62,
        "the 61 and Not_8u_C1R"
    );
    assert!(
        csv.contains("nppiNot_8u_C1R_Ctx,nppial,Not,measured,true,leaks"),
        "{csv}"
    );
    std::fs::write(&designs, "not json\n").unwrap();
    let o = page(&designs);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--designs"), "{}", stderr(&o));
}

#[test]
fn a_version_of_built_in_headers_renders_without_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page");
    let o = nppbench(&["report", "--catalogue", "12.2", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("every image function of NPP 12.2.3.2") && html.contains("5511 image functions"));
}

/// Issue #45: on the page of NPP 13.2.0.58 (its headers and designs built in), a function that
/// 13.0.1's designs measured and no design of 13.2.0.58 called shows 13.0.1's hazards and stays unmeasured;
/// the page of 12.2.3 shows none of NPP 13's (no answer crosses a major release).
#[test]
fn a_function_another_version_measured_shows_its_hazards_on_the_page() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let index = |name: &str| std::fs::read_to_string(root.join(format!("knowledge/designs/{name}.index.tsv"))).unwrap();
    let (i130, i132) = (index("npp-13.0.1-sm90"), index("npp-13.2.0-sm90"));
    let designed = |index: &str| -> std::collections::BTreeSet<String> {
        index
            .lines()
            .filter_map(|l| l.split('\t').next())
            .map(str::to_owned)
            .collect()
    };
    let (d130, d132) = (designed(&i130), designed(&i132));
    let dir = tempfile::tempdir().unwrap();
    let rendered = |version: &str| {
        let out = dir.path().join(version);
        let o = nppbench(&["report", "--catalogue", version, "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::read_to_string(out.join("functions.csv")).unwrap()
    };
    let csv = rendered("13.2");
    let shown: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains("NPP 13.0.1's design: "))
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert!(!shown.is_empty());
    for symbol in &shown {
        assert!(d130.contains(*symbol) && !d132.contains(*symbol), "{symbol}");
    }
    let row = csv.lines().find(|l| l.starts_with(&format!("{},", shown[0]))).unwrap();
    assert!(row.contains(",not called,"), "{row}");
    assert!(!rendered("12.2").contains("NPP 13"));
}

/// `nppbench ARGS` exits 2 (bad input), its message saying `says`.
fn refused(args: &[&str], says: &str) {
    let o = nppbench(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
}

#[test]
fn bad_catalogues_calls_and_knowledge_are_refused_saying_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page");
    let out = out.to_str().unwrap();
    refused(
        &["report", "--catalogue", "11.8", "--out", out],
        "nor the version of headers built into nppbench (12.2.3.2, 13.0.1.2, 13.2.0.58)",
    );
    let bad = dir.path().join("calls.jsonl");
    std::fs::write(&bad, "{\"symbol\":\"a\",\"status\":0}\nnot json\n").unwrap();
    let bad = bad.to_str().unwrap();
    refused(
        &["report", "--catalogue", "13.0", "--calls", bad, "--out", out],
        "calls.jsonl: line 2: not a call-catalogue line",
    );
    let other = reports().join("../knowledge/npp-12.2.3-sm90.json.gz");
    refused(
        &[
            "report",
            "--catalogue",
            "13.0",
            "--atlas",
            other.to_str().unwrap(),
            "--out",
            out,
        ],
        "not of the catalogue's NPP 13.0.1.2",
    );
    // --calls goes with --catalogue.
    refused(
        &["report", "--calls", bad, "--from", "x", "--out", out],
        "--calls goes with --catalogue",
    );
}
