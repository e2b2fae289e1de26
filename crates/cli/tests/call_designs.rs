//! `nppbench call-catalogue --design` and `--stranger`: on a GPU, a function's design measured
//! shape by shape, its rules following what the atlas measured; without one, design lines
//! summarized and scored on a stranger's draw.

mod common;

use std::path::Path;
use std::process::Command;

fn catalogue() -> std::path::PathBuf {
    common::repo().join("catalogue/npp-13.0.1.2")
}

/// `--design` on a GPU: Convert_8u32f_C1R, which the atlas measured leaking and racing at a
/// 1918-pixel row on a blocking stream whose context declares it and never where the context
/// declares a non-blocking stream, gets a line a shape of its design and its throughput point at
/// 1080p, and its fitted rules say the same; its design's lines summarize, and score a stranger's
/// draw.
#[test]
fn a_design_measures_each_shape_and_its_rules_follow_the_atlas() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("design.jsonl");
    let run = |extra: &[&str], out: &Path| {
        Command::new(common::bin())
            .arg("call-catalogue")
            .arg("--catalogue")
            .arg(catalogue())
            .arg("--out")
            .arg(out)
            .args(["--only", "nppiConvert_8u32f_C1R_Ctx"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["--design"], &out);
    if !nppbench_engine::gpu_available("a_design_measures_each_shape_and_its_rules_follow_the_atlas") {
        assert!(!o.status.success());
        return;
    }
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&out).unwrap();
    let lines: Vec<nppbench_analysis::calls::design::ShapeLine> =
        nppbench_analysis::calls::read_lines_of(&bytes).unwrap();
    assert!(lines.len() >= 40, "{}", lines.len());
    // Its throughput point at 1080p: a line of its own.
    let point = lines.iter().find_map(|l| l.throughput).expect("a throughput point");
    assert_eq!((point.width, point.height), (1920, 1080));
    assert_eq!(point.bytes_per_call, 1920 * 1080 * 5, "{point:?}");
    assert!(point.gbps().is_some_and(|g| g > 1.0), "{point:?}");
    let at = |stream: &str, context: &str| {
        lines
            .iter()
            .find(|l| {
                l.shape.is_some_and(|s| {
                    (s.width, s.height, s.src_step, s.dst_step) == (1918, 32, None, None)
                        && s.stream.to_string() == stream
                        && s.context.to_string() == context
                        && s.threading.to_string() == "thread_per_call"
                })
            })
            .unwrap_or_else(|| panic!("no shape 1918x32 {stream} {context}"))
    };
    let prone = at("blocking", "from_stream");
    assert_eq!(prone.class(), Some(nppbench_analysis::LeakClass::Leak), "{prone:?}");
    assert_eq!(prone.races(), Some(true), "{prone:?}");
    let declared = at("blocking", "declared_non_blocking");
    assert_eq!(
        declared.class(),
        Some(nppbench_analysis::LeakClass::Flat),
        "{declared:?}"
    );
    assert_eq!(declared.races(), Some(false), "{declared:?}");
    let stranger = dir.path().join("stranger.jsonl");
    let o = run(&["--stranger", "20"], &stranger);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(common::bin())
        .arg("call-catalogue")
        .arg("--summarize")
        .arg(&out)
        .arg("--score")
        .arg(&stranger)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && text.contains("predicted by the rules fitted on"),
        "{text}"
    );
    println!("{text}");
}

/// `--design` on a GPU of Copy_16s_C1R, C3R and C4R in one batch: C4R's calls at unaligned
/// source steps left the context dead on NPP 13.0.1, and each such call ends its child, which
/// has called the batch's unaligned shapes before it (C1R's and C3R's among them) in the same
/// turn alone and not yet asked their questions; the children after it start at the batch's
/// first function not done, leave out the shapes written and call the others again. So every
/// shape of each design gets exactly one line, those that lived with all three questions asked,
/// each function one throughput point, and the unaligned shapes say how long they held the GPU
/// alone.
#[test]
fn a_context_killed_among_a_batchs_unaligned_shapes_costs_only_its_shape() {
    use nppbench_analysis::calls::design;
    let symbols = ["nppiCopy_16s_C1R_Ctx", "nppiCopy_16s_C3R_Ctx", "nppiCopy_16s_C4R_Ctx"];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("design.jsonl");
    let names = dir.path().join("names.txt");
    std::fs::write(&names, symbols.join("\n")).unwrap();
    let o = Command::new(common::bin())
        .arg("call-catalogue")
        .arg("--catalogue")
        .arg(catalogue())
        .arg("--out")
        .arg(&out)
        .arg("--functions")
        .arg(&names)
        .args(["--design", "--alone-batch", "3"])
        .output()
        .unwrap();
    if !nppbench_engine::gpu_available("a_context_killed_among_a_batchs_unaligned_shapes_costs_only_its_shape") {
        assert!(!o.status.success());
        return;
    }
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<design::ShapeLine> = nppbench_analysis::calls::read_lines_of(&std::fs::read(&out).unwrap()).unwrap();
    let mut dead = 0;
    for symbol in symbols {
        let of: Vec<&design::ShapeLine> = lines.iter().filter(|l| l.symbol == symbol).collect();
        let shaped: Vec<&design::ShapeLine> = of.iter().copied().filter(|l| l.shape.is_some()).collect();
        assert!(!shaped.is_empty(), "no shape of {symbol}: {lines:#?}");
        let px = shaped[0].pixels.unwrap();
        let planned = design::design(symbol, &px);
        let mut got: Vec<String> = shaped.iter().map(|l| l.shape.unwrap().id(&px)).collect();
        let mut want: Vec<String> = planned.iter().map(|s| s.id(&px)).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "a line a shape of {symbol}'s design");
        assert_eq!(
            of.iter()
                .filter(|l| l.throughput.is_some() || l.throughput_error.is_some())
                .count(),
            1,
            "{symbol}'s throughput point"
        );
        dead += shaped
            .iter()
            .filter(|l| l.error.as_deref().is_some_and(|e| e.starts_with("sticky")))
            .count();
        for l in &shaped {
            let shape = l.shape.unwrap();
            // An unaligned call a child lived through alone is made again by the next in a
            // shared turn (`--shapes-alive`).
            let lived = l.lived_alone_before == Some(true);
            assert!(!lived || !shape.aligned(&px), "{l:?}");
            assert_eq!(l.alone_ms.is_some(), !shape.aligned(&px) && !lived, "{l:?}");
            assert!(l.wait_ms.is_some(), "{l:?}");
            if l.error.is_none() && l.status.is_some_and(|s| s >= 0) {
                assert!(
                    l.leak_calls.is_some() && l.race_rounds.is_some() && l.differing_bytes.is_some(),
                    "{l:?}"
                );
            }
        }
    }
    assert!(dead >= 1, "no unaligned call of Copy_16s_C4R left the context dead");
    println!("{} lines, {dead} left the context dead", lines.len());
}

/// Made-up design lines (no GPU made them: a function that leaks where its row is not a multiple
/// of 16 pixels): `--summarize` counts them and scores the held-out shapes, `--score` a
/// stranger's; `--score` with a file of catalogue lines is refused.
#[test]
fn design_lines_are_summarized_and_score_a_strangers_draw() {
    use nppbench_analysis::calls::design::{self, Pixels, ShapeLine};
    let px = Pixels {
        src_bytes_per_pixel: 1,
        src_sample_bytes: 1,
        dst_bytes_per_pixel: 4,
        dst_sample_bytes: 4,
    };
    let made_up = |s: design::Shape| -> ShapeLine {
        common::made_up_design_line("nppiMadeUp_8u32f_C1R_Ctx", px, s, !s.width.is_multiple_of(16))
    };
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, shapes: Vec<design::Shape>| {
        let path = dir.path().join(name);
        let text: String = shapes
            .into_iter()
            .map(|s| serde_json::to_string(&made_up(s)).unwrap() + "\n")
            .collect();
        std::fs::write(&path, text).unwrap();
        path
    };
    let fitted = write("design.jsonl", design::design("nppiMadeUp_8u32f_C1R_Ctx", &px));
    let theirs = write(
        "stranger.jsonl",
        design::stranger("nppiMadeUp_8u32f_C1R_Ctx", &px, 50, 3),
    );
    let summarize = |extra: &[&Path]| {
        Command::new(common::bin())
            .arg("call-catalogue")
            .arg("--summarize")
            .args(extra)
            .output()
            .unwrap()
    };
    let o = summarize(&[&fitted, Path::new("--score"), &theirs]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("1 functions, "), "{text}");
    assert!(
        text.contains("stranger.jsonl predicted by the rules fitted on"),
        "{text}"
    );
    assert!(text.contains("leak 50/50 (100.0%)"), "{text}");
    let calls = dir.path().join("calls.jsonl");
    std::fs::write(&calls, "{\"symbol\":\"nppiAdd_8u_C1RSfs_Ctx\",\"status\":0}\n").unwrap();
    let o = summarize(&[&calls, Path::new("--score"), &theirs]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds no design lines"));
}
