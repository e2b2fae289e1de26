//! Property tests of the two readers that take user input: the TOML matrix and run.json. Any
//! input gives a value or an error, never a panic; a truncated run.json is always an error.

use std::path::Path;

use nppbench_model::{Matrix, Preset, RunFile};
use proptest::prelude::*;

fn committed_run() -> String {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-quick-npp-13.0.1/run.json.gz");
    nppbench_model::read_text(&reports).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_text_is_a_matrix_or_an_error(text in "\\PC{0,400}") {
        let _ = Matrix::from_toml(&text, Path::new("fuzz.toml"));
    }

    #[test]
    fn a_preset_with_one_byte_changed_never_panics(pos in 0usize..2000, byte in any::<u8>()) {
        let mut bytes = Preset::Quick.toml().as_bytes().to_vec();
        let pos = pos % bytes.len();
        bytes[pos] = byte;
        if let Ok(text) = String::from_utf8(bytes)
            && let Ok(m) = Matrix::from_toml(&text, Path::new("fuzz.toml")) {
                // Whatever parses is valid: every geometry holds its rows.
                for (p, g) in m.buffers() {
                    prop_assert!(g.validate(p).is_ok());
                }
            }
    }

    #[test]
    fn numbers_in_geometry_tables_are_checked(w in any::<i64>(), h in any::<i64>(), s in any::<i64>()) {
        let text = format!("name = \"p\"\nstreams = [\"blocking\"]\nthreading = [\"single\"]\n[[geometry]]\nwidth = {w}\nheight = {h}\nsrc_stride = {s}\n");
        let ok = (1..=i64::from(i32::MAX)).contains(&w) && (1..=i64::from(i32::MAX)).contains(&h) && (w..=i64::from(i32::MAX)).contains(&s);
        let parsed = Matrix::from_toml(&text, Path::new("fuzz.toml"));
        // dst_stride defaults to 4 × src_stride, which must also fit NPP's int.
        let dst_fits = s.checked_mul(4).is_some_and(|d| d <= i64::from(i32::MAX));
        prop_assert_eq!(parsed.is_ok(), ok && dst_fits, "{:?}", parsed.err());
    }

    #[test]
    fn a_truncated_run_json_is_an_error(cut in 0usize..100_000) {
        let text = committed_run();
        let cut = cut % text.len();
        let err = RunFile::parse(&text[..cut], Path::new("run.json"));
        prop_assert!(err.is_err());
    }

    #[test]
    fn any_json_is_a_run_or_an_error(text in "[\\[\\]{}\":,0-9a-z_ ]{0,200}") {
        let _ = RunFile::parse(&text, Path::new("run.json"));
    }
}

#[test]
fn the_committed_run_parses() {
    RunFile::parse(&committed_run(), Path::new("run.json")).unwrap();
}

#[test]
fn a_run_of_schema_version_1_is_migrated() {
    let run = RunFile::parse(&committed_run(), Path::new("run.json")).unwrap();
    assert_eq!(run.schema_version, nppbench_model::SCHEMA_VERSION);
    assert_eq!(
        run.matrix.primitives,
        vec![nppbench_model::Primitive::CONVERT_8U32F_C1R]
    );
    // Ids derived from every axis, as this version writes them.
    let leak = run
        .memory
        .iter()
        .find(|m| m.scenario.id == "mem/Convert_8u32f_C1R/31x31-s32-d128/blocking/from_stream/thread_per_call")
        .expect("the public report's leaking case, under its new id");
    assert_eq!(leak.scenario.id, leak.scenario.derived_id());
    assert!(run.matrix.memory.iter().all(|s| s.id == s.derived_id()));
    assert!(run.throughput.iter().all(|t| t.pass == 1 && t.gpu.is_none()));
}

#[test]
fn the_version_as_fetched_comes_from_the_library_paths() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    for (dir, expected) in [
        ("h100-npp-12.2.3.2", "12.2.3.2"),
        ("h100-npp-13.2.0.93", "13.2.0.93"),
        ("h100-npp-13.0.1", "13.0.1.2"),
    ] {
        let run = RunFile::read(&reports.join(dir).join("run.json.gz")).unwrap();
        assert_eq!(run.environment.npp.full_version(), expected, "{dir}");
        assert!(
            run.short_label()
                .starts_with(&format!("NPP {expected} · H100 80GB HBM3 · driver 580")),
            "{}",
            run.short_label()
        );
    }
    // Libraries in a folder that names no version: the three numbers NPP reports.
    let run = RunFile::read(&reports.join("h200-atlas-npp-12.2.3/run.json.gz")).unwrap();
    assert_eq!(run.environment.npp.full_version(), "12.2.3");
}
