//! `nppbench call-catalogue`: on a GPU, a function called from its roles gets its line (its
//! status, whether its outputs vary, what the leak and race oracles and the unaligned step gave),
//! shared among children with `--jobs` and merged in the catalogue's order; without one, every
//! child's failure is said and the command fails, leaving no share's file behind.

use nppbench_analysis::calls::Unaligned;
use std::path::Path;
use std::process::Command;

fn catalogue() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../catalogue/npp-13.0.1.2")
}

fn call(out: &Path, only: &str, jobs: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nppbench"))
        .arg("call-catalogue")
        .arg("--catalogue")
        .arg(catalogue())
        .arg("--out")
        .arg(out)
        .args(["--only", only, "--jobs", jobs])
        .output()
        .unwrap()
}

#[test]
fn functions_called_from_their_roles_get_one_line_each_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("calls.jsonl");
    // Add_8u_C1RSfs, AddC_8u_C1RSfs and their in-place forms: four functions over two children.
    let o = call(&out, "Add_8u_C1", "2");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name() != "calls.jsonl")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    if !nppbench_engine::gpu_available("functions_called_from_their_roles_get_one_line_each_in_order") {
        // Without a GPU: the command fails, saying why.
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("before its first function"), "{err}");
        return;
    }
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let indices: Vec<u64> = lines.iter().map(|l| l["index"].as_u64().unwrap()).collect();
    assert_eq!(
        indices,
        (0..lines.len() as u64).collect::<Vec<_>>(),
        "in the catalogue's order"
    );
    let add = lines.iter().find(|l| l["symbol"] == "nppiAdd_8u_C1RSfs_Ctx").unwrap();
    assert_eq!(add["status"], 0, "{add}");
    assert_eq!(add["outputs_vary"], true, "{add}");
    // Each line names its card and NPP's build: a run resumed on another machine tells them apart.
    assert!(add["gpu_uuid"].as_str().is_some_and(|u| u.starts_with("GPU-")), "{add}");
    let npp = nppbench_engine::load_npp(None).unwrap().version().to_string();
    assert_eq!(add["npp_version"], npp.as_str(), "{add}");
}

/// The leak and race oracles on the GPU agree with what the atlas measured of two functions of
/// NPP 13.0.1 at a 1918-sample row on a blocking stream: Convert_8u32f_C1R keeps NPP's streams on
/// every new thread and races; Transpose_8u_C1R does neither (its rules: never).
#[test]
fn the_oracles_point_at_the_leak_and_race_the_atlas_measured_and_at_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let line = |only: &str| {
        let out = dir.path().join(format!("{only}.jsonl"));
        let o = call(&out, only, "1");
        (o, out)
    };
    let (o, out) = line("nppiConvert_8u32f_C1R_Ctx");
    if !nppbench_engine::gpu_available("the_oracles_point_at_the_leak_and_race_the_atlas_measured_and_at_nothing_else")
    {
        assert!(!o.status.success());
        return;
    }
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |out: &Path| -> nppbench_analysis::calls::CallLine {
        serde_json::from_str(std::fs::read_to_string(out).unwrap().lines().next().unwrap()).unwrap()
    };
    let convert = read(&out);
    assert_eq!(convert.leak_threads, Some(8), "{convert:?}");
    assert!(convert.leak_threads_keeping_streams >= Some(4), "{convert:?}");
    assert!(convert.race_rounds_differing > Some(0), "{convert:?}");
    assert_eq!(convert.leads().len(), 2, "{convert:?}");
    let (o, out) = line("nppiTranspose_8u_C1R_Ctx");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let transpose = read(&out);
    assert_eq!(transpose.leak_threads_keeping_streams, Some(0), "{transpose:?}");
    assert_eq!(transpose.race_rounds_differing, Some(0), "{transpose:?}");
    assert!(transpose.leads().is_empty(), "{transpose:?}");
}

/// The wrong-pixel oracle at the default ROI (the oracles' 1918×32) sees what the atlas measured
/// of Add_8u_C1RSfs: NPP 13 computes other pixels where some source row starts 9 to 10 bytes
/// past a 16-byte boundary and a row has at least 128 bytes (the unaligned step, 6 bytes longer,
/// starts row 7 at 10), and NPP 12 computes the same; and of AddC_8u_C3RSfs at the destination
/// step, where NPP 13 faults; Transpose_8u_C1R's pixels never change.
#[test]
fn the_wrong_pixel_oracle_sees_npp_13s_wrong_pixels_at_its_default_roi() {
    if !nppbench_engine::gpu_available("the_wrong_pixel_oracle_sees_npp_13s_wrong_pixels_at_its_default_roi") {
        return;
    }
    let major = nppbench_engine::load_npp(None).unwrap().version().major;
    let dir = tempfile::tempdir().unwrap();
    let line = |only: &str| -> nppbench_analysis::calls::CallLine {
        let out = dir.path().join(format!("{only}.jsonl"));
        let o = call(&out, only, "1");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_str(std::fs::read_to_string(&out).unwrap().lines().next().unwrap()).unwrap()
    };
    let add = line("nppiAdd_8u_C1RSfs_Ctx");
    assert_eq!(add.unaligned_status, Some(0), "{add:?}");
    let wrong = add.unaligned_differing_bytes.unwrap();
    assert_eq!(wrong > 0, major >= 13, "NPP {major}: {wrong} bytes differ, {add:?}");
    // AddC_8u_C3RSfs follows the destination's stride (a multiple of 4 bytes, not of 8): the
    // source step leaves it alone; at the destination step NPP 13 faults (a misaligned address,
    // as in the atlas's runs: reports/wrong-pixels), NPP 12 computes the same pixels.
    let addc = line("nppiAddC_8u_C3RSfs_Ctx");
    assert_eq!(addc.unaligned_differing_bytes, Some(0), "{addc:?}");
    let at_destination = addc.destination_step();
    if major >= 13 {
        assert!(
            matches!(&at_destination, Unaligned::Faulted(e) if e.contains("MISALIGNED_ADDRESS")),
            "NPP {major}: {at_destination:?}, {addc:?}"
        );
    } else {
        assert_eq!(at_destination, Unaligned::Same, "NPP {major}: {addc:?}");
    }
    let transpose = line("nppiTranspose_8u_C1R_Ctx");
    assert_eq!(transpose.unaligned_differing_bytes, Some(0), "{transpose:?}");
    assert_eq!(transpose.unaligned_dst_differing_bytes, Some(0), "{transpose:?}");
}

#[test]
fn no_jobs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let o = call(&dir.path().join("calls.jsonl"), "Add_8u_C1", "0");
    assert_eq!(o.status.code(), Some(2));
}

/// A list of functions to call with a name no header declares, or no list at all, is refused
/// before any GPU is looked for, naming what was wrong.
#[test]
fn a_list_of_functions_with_an_unknown_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("again.txt");
    std::fs::write(&list, "Add_8u_C1RSfs Ad_8u_C1RSfs\n").unwrap();
    let run = |list: &Path| {
        Command::new(env!("CARGO_BIN_EXE_nppbench"))
            .args(["call-catalogue", "--catalogue"])
            .arg(catalogue())
            .arg("--out")
            .arg(dir.path().join("calls.jsonl"))
            .arg("--functions")
            .arg(list)
            .output()
            .unwrap()
    };
    let o = run(&list);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("does not declare: Ad_8u_C1RSfs"), "{err}");
    let o = run(&dir.path().join("none.txt"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such file"));
}

/// `--summarize` counts a file's outcomes (a committed run with the oracles, gzip-compressed),
/// every line once, the most first; then, apart, the functions that ran and that the oracles did
/// not judge, and the oracles' leads.
#[test]
fn a_file_of_lines_is_summarized_the_most_first() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/catalogue-calls/h100-oracles/2-GPU-4005c4d3/calls-1of2.jsonl.gz");
    let o = Command::new(env!("CARGO_BIN_EXE_nppbench"))
        .args(["call-catalogue", "--summarize"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut lines = text.lines();
    let number = |l: &str| l.split_whitespace().next().and_then(|n| n.parse::<usize>().ok());
    let total = number(lines.next().unwrap()).unwrap();
    // The outcomes, up to the first section's heading.
    let counts: Vec<usize> = lines.by_ref().map_while(number).collect();
    assert_eq!(counts.iter().sum::<usize>(), total);
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{text}");
    assert!(text.contains("ran; killed the context at the unaligned step"), "{text}");
    assert!(
        text.contains("ran, not judged by the leak or race oracle:\n") && text.contains("refused at their geometry"),
        "{text}"
    );
    assert!(text.contains("leads from the leak and race oracles:\n"), "{text}");
    let bad = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(bad.path(), "{\"symbol\":\"x\"}\nnot json\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_nppbench"))
        .args(["call-catalogue", "--summarize"])
        .arg(bad.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 2: not a call-catalogue line"));
}

/// What `call-catalogue --summarize A --against B` prints (it must succeed).
fn against(a: &Path, b: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_nppbench"))
        .args(["call-catalogue", "--summarize"])
        .arg(a)
        .arg("--against")
        .arg(b)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The functions `--against`'s line that starts with `prefix` names (`fault, this only: `).
fn named(text: &str, prefix: &str) -> Vec<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(|names| names.split(' ').map(str::to_owned).collect())
        .unwrap_or_default()
}

/// `--summarize A --against B` of NPP 13.0.1's and 12.2.3.2's lines of one card and build
/// (`reports/catalogue-calls/h100-roi/2-GPU-e4f53849`, the functions with `_8u_C1` in their
/// names): each oracle's counts, then by name the functions it flagged in one file only, as many
/// as counted; Add_8u_C1RSfs computes other pixels at the unaligned step on 13.0.1 alone.
#[test]
fn two_files_are_compared_oracle_by_oracle_naming_what_one_flagged_alone() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/catalogue-calls/h100-roi/2-GPU-e4f53849");
    let text = against(
        &dir.join("calls-13.0.1.2_8u_C1.jsonl.gz"),
        &dir.join("calls-12.2.3.2_8u_C1.jsonl.gz"),
    );
    let this_only = |oracle: &str| -> usize {
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{oracle} ")))
            .unwrap();
        let words: Vec<&str> = row.split_whitespace().collect();
        words[words.iter().position(|w| *w == "both").unwrap() + 1]
            .parse()
            .unwrap()
    };
    let wrong = named(&text, "wrong, this only: ");
    assert_eq!(wrong.len(), this_only("wrong"), "{text}");
    assert!(wrong.iter().any(|n| n == "Add_8u_C1RSfs"), "{text}");
    assert!(
        wrong.iter().all(|n| !n.starts_with("nppi") && !n.ends_with("_Ctx")),
        "{text}"
    );
}

/// `--against` of both whole catalogues at 1918×32 (`reports/catalogue-calls/h100-1918`): the
/// faults are a fourth oracle, naming AddC_8u_C3RSfs (killed at the destination step on 13.0.1
/// alone) and And_8u_AC4R (at the source step on 12.2.3.2 alone).
#[test]
fn faults_are_compared_as_a_fourth_oracle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/catalogue-calls/h100-1918");
    let text = against(
        &dir.join("calls-npp-13.0.1.2.jsonl.gz"),
        &dir.join("calls-npp-12.2.3.2.jsonl.gz"),
    );
    assert!(text.lines().any(|l| l.trim_start().starts_with("fault ")), "{text}");
    assert!(
        named(&text, "fault, this only: ").contains(&"AddC_8u_C3RSfs".to_owned()),
        "{text}"
    );
    assert!(
        named(&text, "fault, other only: ").contains(&"And_8u_AC4R".to_owned()),
        "{text}"
    );
}

/// Lines made up for the test: two files whose calls were made at other ROIs, or on other cards,
/// are compared with a note saying so first; files at one ROI or card, or of lines that do not
/// record it, without.
#[test]
fn files_of_other_rois_are_compared_with_a_note_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, roi: &str| {
        let path = dir.path().join(name);
        let line = format!(
            r#"{{"symbol":"nppiAdd_8u_C1RSfs_Ctx","status":0,"unaligned_status":0,"unaligned_differing_bytes":0{roi}}}"#
        );
        std::fs::write(&path, format!("{line}\n")).unwrap();
        path
    };
    let wide = file("wide.jsonl", r#","width":1918,"height":32"#);
    let narrow = file("narrow.jsonl", r#","width":64,"height":32"#);
    let unrecorded = file("old.jsonl", "");
    let text = against(&wide, &narrow);
    assert!(
        text.contains("note: the calls were made at other ROIs: this file 1918x32, the other 64x32"),
        "{text}"
    );
    assert!(!against(&wide, &wide).contains("note:"));
    assert!(!against(&wide, &unrecorded).contains("note:"));
    // Lines of other cards, likewise.
    let card = |name: &str, uuid: &str| file(name, &format!(r#","width":1918,"height":32,"gpu_uuid":"{uuid}""#));
    let (a, b) = (card("a.jsonl", "GPU-a"), card("b.jsonl", "GPU-b"));
    let text = against(&a, &b);
    assert!(
        text.contains("note: the calls were made on other cards: this file GPU-a, the other GPU-b"),
        "{text}"
    );
    assert!(!text.contains("other ROIs"), "{text}");
    assert!(!against(&a, &card("a2.jsonl", "GPU-a")).contains("note:"));
    assert!(!against(&a, &wide).contains("note:"), "a file that records no card");
}

/// `--resume` leaves out the functions --out has a line of: with every one there, nothing is
/// called (no GPU needed) and the file is left as it was; with one missing, a child starts for it
/// (and, without a GPU, fails saying why).
#[test]
fn a_resumed_run_calls_only_the_functions_without_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("calls.jsonl");
    let rows = std::io::read_to_string(flate2::read::GzDecoder::new(
        std::fs::File::open(catalogue().join("functions.jsonl.gz")).unwrap(),
    ))
    .unwrap();
    let lines: Vec<String> = rows
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["symbol"].as_str().map(str::to_owned))
        .filter(|s| s.contains("Add_8u_C1"))
        .map(|s| format!(r#"{{"symbol":"{s}","status":0}}"#))
        .collect();
    assert!(lines.len() >= 2, "{lines:?}");
    std::fs::write(&out, lines.join("\n") + "\n").unwrap();
    let resumed = || {
        Command::new(env!("CARGO_BIN_EXE_nppbench"))
            .arg("call-catalogue")
            .arg("--catalogue")
            .arg(catalogue())
            .arg("--out")
            .arg(&out)
            .args(["--only", "Add_8u_C1", "--resume"])
            .output()
            .unwrap()
    };
    let o = resumed();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), lines.join("\n") + "\n");
    if nppbench_engine::gpu_available("a_resumed_run_calls_only_the_functions_without_a_line") {
        return;
    }
    std::fs::write(&out, lines[1..].join("\n") + "\n").unwrap();
    assert!(
        !resumed().status.success(),
        "a child started for the function without a line"
    );
}
