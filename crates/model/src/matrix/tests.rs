//! Matrix files read and expanded: scenarios, positions in messages, rejected input.

use super::*;
use crate::{ContextFill, StreamKind};

fn parse(text: &str) -> Result<Matrix, ModelError> {
    Matrix::from_toml(text, Path::new("m.toml"))
}

const SMALL: &str = r#"
name = "t"
streams = ["blocking", "non_blocking"]
threading = ["single", "thread_per_call_own_stream"]
[[geometry]]
width = 31
height = 31
src_stride = 32
pad_roi = true
"#;

#[test]
fn expands_geometry_stream_and_threading() {
    let m = parse(SMALL).unwrap();
    // Two geometries (31 and its padded 32) × (single × 2 streams + own-stream × 1).
    assert_eq!(m.memory.len(), 6);
    assert_eq!(m.throughput.len(), 4);
    let own: Vec<_> = m.memory.iter().filter(|s| s.threading.owns_stream()).collect();
    assert!(own.iter().all(|s| s.stream == StreamKind::NonBlocking));
    assert_eq!(m.geometries().len(), 2);
    assert_eq!(m.memory[0].geometry.dst_stride, 128);
    assert_eq!(m.primitives, vec![Primitive::CONVERT_8U32F_C1R]);
}

#[test]
fn primitives_contexts_and_aligned_strides_expand() {
    let text = r#"
name = "t"
primitive = ["Copy_8u_C3R", "nppitc"]
streams = ["blocking"]
context = ["from_stream", "zeroed"]
threading = ["thread_per_call"]
[[geometry]]
width = 255
height = 8
stride_align = 128
stride_extra = 16
"#;
    let m = parse(text).unwrap();
    // The row named and the library's rows, in catalogue order.
    let mut expected: Vec<Primitive> = Primitive::all()
        .filter(|p| p.row().library == crate::catalog::Library::Nppitc)
        .collect();
    expected.push(Primitive::from_name("Copy_8u_C3R").unwrap());
    expected.sort();
    assert_eq!(m.primitives, expected);
    assert!(m.skipped.is_empty(), "{:?}", m.skipped);
    assert_eq!(m.memory.len(), m.primitives.len() * 2);
    let copy = m.memory.iter().find(|s| s.primitive.name() == "Copy_8u_C3R").unwrap();
    assert_eq!(copy.geometry.src_stride, 768 + 16);
    let zeroed = m.memory.iter().filter(|s| s.context == ContextFill::Zeroed).count();
    assert_eq!(zeroed, m.primitives.len(), "one of each primitive's two contexts");
}

#[test]
fn unknown_primitive_names_its_position_and_how_to_list() {
    let text = SMALL.replace("name = \"t\"", "name = \"t\"\nprimitive = \"Convert_8u33f_C1R\"");
    let err = parse(&text).unwrap_err().to_string();
    assert!(
        err.contains("m.toml:3:13") && err.contains("nppbench primitives"),
        "{err}"
    );
}

#[test]
fn a_geometry_without_a_stride_says_what_to_give() {
    let text = SMALL.replace("src_stride = 32\n", "");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("give src_stride (bytes) or stride_align"), "{err}");
}

#[test]
fn throughput_streams_narrow_what_is_timed() {
    let text = SMALL.replace(
        "threading = [",
        "throughput_streams = [\"non_blocking\"]\nthreading = [",
    );
    let m = parse(&text).unwrap();
    assert_eq!(
        m.throughput.len(),
        2,
        "31 and its padded 32, on the non-blocking stream only"
    );
    assert!(m.throughput.iter().all(|s| s.stream == StreamKind::NonBlocking));
    assert_eq!(m.memory.len(), 6, "memory keeps both stream kinds");
}

#[test]
fn overlapping_tables_run_each_scenario_once() {
    let text = format!("{SMALL}\n[[geometry]]\nwidth = 31\nheight = 31\nsrc_stride = 32\n");
    assert_eq!(parse(&text).unwrap().memory.len(), 6);
}

#[test]
fn syntax_errors_name_line_and_column() {
    let err = parse("name = \"x\"\nstreams = [\n").unwrap_err().to_string();
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn negative_width_names_its_position() {
    let text = SMALL.replace("width = 31", "width = -3");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("m.toml:6:9"), "{err}");
    assert!(err.contains("width -3 is out of range"), "{err}");
}

#[test]
fn unknown_stream_names_its_position() {
    let text = SMALL.replace("\"blocking\",", "\"blockin\",");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("m.toml:3:12"), "{err}");
    assert!(err.contains("legacy_default"), "{err}");
}

#[test]
fn unknown_keys_are_rejected() {
    let text = SMALL.replace("pad_roi = true", "pad_roi = true\nwdith = 3");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("wdith"), "{err}");
}

#[test]
fn short_stride_is_rejected() {
    let text = SMALL.replace("src_stride = 32", "src_stride = 30");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("src_stride 30 is smaller than a source row"), "{err}");
}

/// run.json records a matrix's primitives as `primitives`; a matrix file named them only
/// `primitive` and refused the other as an unknown field, so a matrix copied from a run did not
/// read back.
#[test]
fn the_primitives_key_of_a_run_json_matrix_is_not_an_unknown_field() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h200-atlas-npp-13.0.1/run.json.gz");
    let run = crate::RunFile::read(&path).unwrap();
    let written = serde_json::to_value(&run.matrix).unwrap();
    // What a matrix file has of what run.json writes; the scenarios are the file's expansion.
    let mut file = serde_json::Map::new();
    for key in ["name", "description", "primitives", "settings"] {
        file.insert(key.to_owned(), written[key].clone());
    }
    file.insert("streams".to_owned(), serde_json::json!(["blocking"]));
    file.insert("threading".to_owned(), serde_json::json!(["single"]));
    file.insert(
        "geometry".to_owned(),
        serde_json::json!([{"width": 64, "height": 8, "stride_align": 128}]),
    );
    let text = toml::to_string(&file).unwrap();
    let m = parse(&text).unwrap();
    assert_eq!(m.primitives, run.matrix.primitives);
    assert_eq!(m.settings, run.matrix.settings);
    assert_eq!((m.name, m.description), (run.matrix.name, run.matrix.description));
}

/// Mean_8u_C1R at 1×100 with `dst_stride = 1` crashed its probe (an 8-byte result in a 1-byte
/// destination): the reduction is measured without the stride, and the matrix says so.
#[test]
fn a_reductions_dst_stride_is_ignored_and_said_where_it_was_written() {
    let text = r#"
name = "t"
primitive = ["Mean_8u_C1R", "Convert_8u32f_C1R"]
streams = ["blocking"]
threading = ["single"]
[[geometry]]
width = 1
height = 100
src_stride = 4
dst_stride = 4
"#;
    let m = parse(text).unwrap();
    let mean = m.memory.iter().find(|s| s.primitive.name() == "Mean_8u_C1R").unwrap();
    assert_eq!((mean.geometry.src_stride, mean.geometry.dst_stride), (4, 8));
    let convert = m
        .memory
        .iter()
        .find(|s| s.primitive.name() == "Convert_8u32f_C1R")
        .unwrap();
    assert_eq!(convert.geometry.dst_stride, 4);
    assert_eq!(
        m.notes,
        vec![
            "m.toml:10:14: dst_stride 4 is ignored for Mean_8u_C1R: a reduction's destination is its values, 8 bytes apart, not rows"
        ]
    );
    assert!(m.skipped.is_empty(), "{:?}", m.skipped);
    // Without a dst_stride there is nothing to ignore.
    assert!(parse(&text.replace("dst_stride = 4\n", "")).unwrap().notes.is_empty());
}

#[test]
fn sets_one_stride_is_the_dst_stride_given() {
    let text = r#"
name = "t"
primitive = "Set_8u_C1R"
streams = ["blocking"]
threading = ["single"]
[[geometry]]
width = 31
height = 4
src_stride = 32
dst_stride = 64
"#;
    let m = parse(text).unwrap();
    let g = m.memory[0].geometry;
    assert_eq!((g.src_stride, g.dst_stride), (64, 64));
    assert!(
        m.notes[0].contains("src_stride 32 is ignored for Set_8u_C1R"),
        "{:?}",
        m.notes
    );
}

/// A matrix whose functions each refuse its one geometry said "give at least one stream kind and
/// threading model", which it had: it says why the geometry was refused.
#[test]
fn a_matrix_whose_every_geometry_is_refused_says_why() {
    let text = r#"
name = "t"
primitive = ["Resize_8u_C1R", "Copy_32f_C1R"]
streams = ["blocking"]
threading = ["single"]
[[geometry]]
width = 1
height = 4
src_stride = 2
"#;
    let err = parse(text).unwrap_err().to_string();
    assert!(
        err.contains("no function it names takes any of its geometries") && err.contains("m.toml:7:9"),
        "{err}"
    );
}

/// `primitive = "nppc"` (NPP's core library, which has no function measured) expanded to no
/// function, and the matrix said "give at least one stream kind and threading model".
#[test]
fn a_primitive_list_that_names_no_function_says_so() {
    for (list, said) in [("\"nppc\"", "a library of no function"), ("[]", "names no function")] {
        let text = SMALL.replace("name = \"t\"", &format!("name = \"t\"\nprimitive = {list}"));
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("m.toml:3:13") && err.contains(said), "{err}");
    }
}
