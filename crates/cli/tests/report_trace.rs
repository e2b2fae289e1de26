//! `nppbench report --from trace.json` as a user meets it: the trace page written with its
//! summary, CSV and trace.json; `--atlas` beside it; and the mistakes said clearly (a trace among
//! other runs, `--atlas` without a trace, a trace from a newer nppbench).
//!
//! The trace written here is generated, not a measurement: a few threads built by hand. A real
//! trace from the GPU machine will replace it once one is committed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nppbench_model::{
    CallSite, Capture, MemorySample, Overhead, StatusCount, TraceDevice, TraceEnd, TraceFile, TraceStreamKind,
    TraceThread, TracedStream,
};

fn nppbench(args: &[&str]) -> Output {
    let bin = std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned());
    Command::new(bin).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Generated, not a measurement: 20 new threads, each converting a 31x31 image on a blocking
/// stream and keeping 3 NPP streams, device memory growing 1.5 MiB per thread; ended by SIGTERM.
fn generated_trace() -> TraceFile {
    let threads = 20i64;
    let mut t = TraceFile {
        schema_version: nppbench_model::TRACE_SCHEMA_VERSION,
        tool_version: "0.1.0".into(),
        program: vec!["./worker".into()],
        pid: 77,
        started_at: "2026-11-26T10:00:00Z".into(),
        wall_s: 200.0,
        end: TraceEnd::Signal {
            signal: 15,
            name: "SIGTERM".into(),
        },
        capture: Capture {
            functions_interposed: 12,
            flush_interval_s: 1.0,
            sample_interval_s: 10.0,
            ..Capture::default()
        },
        npp_libraries: vec!["/usr/local/cuda/lib64/libnppidei.so.13".into()],
        npp_version: Some("13.0.1".into()),
        devices: vec![TraceDevice {
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            memory_total_bytes: 80 << 30,
        }],
        call_sites: vec![CallSite {
            function: "nppiConvert_8u32f_C1R_Ctx".into(),
            width: 31,
            height: 31,
            src_stride: Some(32),
            dst_stride: Some(128),
            declared_flags: 0,
            stream: TraceStreamKind::Created,
            real_flags: Some(0),
            device: 0,
            calls: threads as u64,
            threads: threads as u32,
            first_call_threads: threads as u32,
            statuses: vec![StatusCount {
                status: 0,
                calls: threads as u64,
            }],
            streams_created: 3 * threads as u64,
            streams_destroyed: 0,
            first_s: 0.0,
            last_s: 190.0,
            time_in_npp_ns: 20_000 * threads as u64,
            calls_pending_asked: 0,
            calls_with_work_pending: 0,
        }],
        threads: Vec::new(),
        streams: Vec::new(),
        memory: Vec::new(),
        overhead: Overhead {
            calls: threads as u64,
            recording_ns: 300 * threads as u64,
        },
    };
    for i in 0..threads {
        let at = 10.0 * i as f64;
        t.threads.push(TraceThread {
            tid: 100 + i,
            first_s: at,
            last_s: at,
            calls: 1,
            exited: Some(true),
        });
        for k in 0..3 {
            t.streams.push(TracedStream {
                handle: 0x5000 + (i as u64) * 4 + k,
                tid: 100 + i,
                created_s: at,
                destroyed_s: None,
                call_site: Some(0),
                attributed_function: None,
                attributed_library: None,
            });
        }
        t.memory.push(MemorySample {
            t_s: at + 5.0,
            device_bytes: Some((600 << 20) + (i as u64 + 1) * (3 << 19)),
            live_threads: 2,
            live_streams: 3 * (i as u64 + 1),
        });
    }
    t
}

fn write_trace(dir: &Path, name: &str, trace: &TraceFile) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(trace).unwrap()).unwrap();
    path
}

fn atlas() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/h100-npp-13.0.1/run.json.gz")
        .display()
        .to_string()
}

#[test]
fn report_renders_a_trace_with_its_atlas_into_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path(), "trace.json", &generated_trace());
    let out = dir.path().join("page");
    let o = nppbench(&[
        "report",
        "--from",
        trace.to_str().unwrap(),
        "--atlas",
        &atlas(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        out.join("index.html").display().to_string()
    );
    for name in ["index.html", "summary.md", "call_sites.csv", "trace.json"] {
        assert!(out.join(name).is_file(), "no {name}");
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    // 1.5 MiB per thread from the first sample (1 thread) to the last (20): 28.5 MiB.
    assert!(html.contains("Memory grew 28.5 MiB: 20 threads each kept 3 NPP streams."));
    assert!(html.contains("Partial trace: the program was ended by SIGTERM (signal 15)"));
    assert!(html.contains("leak (measured in the atlas)"));
    let csv = std::fs::read_to_string(out.join("call_sites.csv")).unwrap();
    assert!(
        csv.contains("nppiConvert_8u32f_C1R_Ctx,31,31,32,128,0,blocking,thread_per_call,20,20,60,60,28.50,leak,true"),
        "{csv}"
    );
}

#[test]
fn a_trace_under_another_name_or_in_its_folder_is_recognised() {
    let dir = tempfile::tempdir().unwrap();
    let renamed = write_trace(dir.path(), "server-trace.json", &generated_trace());
    let out = dir.path().join("by-content");
    let o = nppbench(&[
        "report",
        "--from",
        renamed.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("call_sites.csv").is_file());
    // `nppbench trace` writes DIR/trace.json: the folder renders where it is.
    let o = nppbench(&[
        "report",
        "--from",
        out.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn mistakes_with_a_trace_are_bad_input_that_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path(), "trace.json", &generated_trace());
    let out = dir.path().join("out");
    let (trace, out) = (trace.to_str().unwrap(), out.to_str().unwrap());
    let o = nppbench(&["report", "--from", trace, "--from", &atlas(), "--out", out]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a trace is rendered alone; give one trace.json in --from, and atlas runs with --atlas")
    );
    let o = nppbench(&["report", "--from", &atlas(), "--atlas", &atlas(), "--out", out]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--atlas goes with a trace.json in --from"));
    let mut newer = generated_trace();
    newer.schema_version = nppbench_model::TRACE_SCHEMA_VERSION + 1;
    let newer = write_trace(dir.path(), "newer.json", &newer);
    let o = nppbench(&["report", "--from", newer.to_str().unwrap(), "--out", out]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is newer than this nppbench reads"),
        "{}",
        stderr(&o)
    );
}

/// A call site of a function known from NPP's headers alone is predicted from the design built
/// in of the trace's NPP version (no `--atlas`): at a shape the design measured leaking, the page
/// says so and on what basis. The trace is generated (the 20 threads above) with its call site
/// moved to that function and shape; the design line is a real one, committed.
#[test]
fn a_designed_functions_call_site_is_predicted_from_the_built_in_design() {
    let html = traced_at_a_leaking_shape_of("npp-13.0.1-sm90", "13.0.1", |_| true);
    assert!(html.contains("leak (measured in its design)"), "{html}");
}

/// Issue #45: a trace of NPP 13.2.0.58 calling a function that 13.0.1's designs measured and
/// 13.2.0.58's did not is predicted from 13.0.1's design, and the page names that version.
#[test]
fn a_call_site_no_design_of_its_version_measured_is_predicted_from_another_of_its_major_release() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let index = std::fs::read_to_string(root.join("knowledge/designs/npp-13.2.0-sm90.index.tsv")).unwrap();
    let designed: std::collections::BTreeSet<&str> = index.lines().filter_map(|l| l.split('\t').next()).collect();
    let html = traced_at_a_leaking_shape_of("npp-13.0.1-sm90", "13.2.0.58", |symbol| !designed.contains(symbol));
    // The page escapes the apostrophe.
    assert!(
        html.contains("leak (measured in its design, of NPP 13.0.1: no design of the atlas&#x27;s NPP version called this function"),
        "{html}"
    );
}

/// The page of a generated trace of NPP `npp_version` whose call site is moved to a shape of the
/// built-in designs `designs` that kept streams on most new threads, of a function known from its
/// headers alone that passes `keep`; the call-site CSV's row for it checked.
fn traced_at_a_leaking_shape_of(designs: &str, npp_version: &str, keep: impl Fn(&str) -> bool) -> String {
    use nppbench_analysis::calls::design::ShapeLine;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bytes = std::fs::read(root.join(format!("knowledge/designs/{designs}.jsonl.gz"))).unwrap();
    let lines: Vec<ShapeLine> = nppbench_analysis::calls::read_lines_of(&bytes).unwrap();
    // A shape that kept streams on most new threads, on a created blocking stream whose context
    // says so: what the generated trace's threads do.
    let line = lines
        .iter()
        .find(|l| {
            l.class() == Some(nppbench_analysis::LeakClass::Leak)
                && nppbench_model::Primitive::from_name(&l.symbol).is_none()
                && keep(&l.symbol)
                && l.src_step_bytes.is_some()
                && l.dst_step_bytes.is_some()
                && l.shape.is_some_and(|s| {
                    s.context.to_string() == "from_stream"
                        && s.stream.to_string() == "blocking"
                        && s.threading.to_string() == "thread_per_call"
                })
        })
        .expect("a design line that leaks");
    let s = line.shape.unwrap();
    let mut trace = generated_trace();
    trace.npp_version = Some(npp_version.into());
    let site = &mut trace.call_sites[0];
    site.function = line.symbol.clone();
    (site.width, site.height) = (s.width as i32, s.height as i32);
    site.src_stride = line.src_step_bytes.map(|b| b as i32);
    site.dst_stride = line.dst_step_bytes.map(|b| b as i32);
    let dir = tempfile::tempdir().unwrap();
    let path = write_trace(dir.path(), "trace.json", &trace);
    let out = dir.path().join("page");
    let o = nppbench(&[
        "report",
        "--from",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("call_sites.csv")).unwrap();
    let row = format!(
        "{},{},{},{},{},0,blocking,thread_per_call,20,20,60,60,28.50,leak,true",
        line.symbol,
        s.width,
        s.height,
        line.src_step_bytes.unwrap(),
        line.dst_step_bytes.unwrap()
    );
    assert!(csv.contains(&row), "{row}\n{csv}");
    std::fs::read_to_string(out.join("index.html")).unwrap()
}
