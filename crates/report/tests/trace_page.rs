//! The trace page rendered from a generated trace.json, checked for what a reader checks: the
//! verdict with its number first, the growing call site named with its geometry, the partial and
//! missing-calls notices, the atlas's disagreement shown, the cost over time, the chart, the CSV
//! contract, and that the page needs nothing from outside itself.
//!
//! The traces here are generated, not measurements: built by hand so that every figure has a
//! known answer. A real trace from the GPU machine, committed under `reports/`, will replace
//! them. The atlas run is real (`reports/h100-npp-13.0.1/run.json.gz`, an H100 with NPP 13.0.1).

use std::path::Path;

use nppbench_model::{
    CallSite, Capture, MemorySample, Overhead, RunFile, StatusCount, TraceDevice, TraceEnd, TraceFile, TraceStreamKind,
    TraceThread, TracedStream,
};

const MIB: u64 = 1 << 20;

/// Generated, not a measurement: one call site.
fn site(geometry: (i32, i32, i32, i32), real_flags: u32, calls: u64, threads: u32, kept: u64) -> CallSite {
    let (width, height, src, dst) = geometry;
    CallSite {
        function: "nppiConvert_8u32f_C1R_Ctx".into(),
        width,
        height,
        src_stride: Some(src),
        dst_stride: Some(dst),
        declared_flags: real_flags,
        stream: TraceStreamKind::Created,
        real_flags: Some(real_flags),
        device: 0,
        calls,
        threads,
        first_call_threads: threads,
        statuses: vec![StatusCount { status: 0, calls }],
        streams_created: kept,
        streams_destroyed: 0,
        first_s: 0.0,
        last_s: 3600.0,
        time_in_npp_ns: calls * 20_000,
        calls_pending_asked: 0,
        calls_with_work_pending: 0,
    }
}

/// Generated, not a measurement: a server that makes a new thread per request for an hour (100
/// threads), each converting a 31x31 image on a blocking stream and keeping 3 NPP streams, device
/// memory 1000 MiB + 1.5 MiB per such thread; a pool of 4 threads on 1920x1080 on a non-blocking
/// stream keeping none; and 10 threads on 64x64, which the atlas's rule says does not leak,
/// keeping 3 streams each.
fn generated_trace() -> TraceFile {
    let mut streams = Vec::new();
    let mut threads = Vec::new();
    let mut memory = Vec::new();
    for i in 0..100i64 {
        let at = 36.0 * i as f64;
        for k in 0..3 {
            streams.push(stream(1000 + i, at, 0, k));
        }
        threads.push(TraceThread {
            tid: 1000 + i,
            first_s: at,
            last_s: at + 0.01,
            calls: 1,
            exited: Some(true),
        });
        memory.push(MemorySample {
            t_s: at + 18.0,
            device_bytes: Some(1000 * MIB + (i as u64 + 1) * 3 * MIB / 2),
            live_threads: 6,
            live_streams: 3 * (i as u64 + 1),
        });
    }
    for i in 0..10i64 {
        for k in 0..3 {
            streams.push(stream(5000 + i, i as f64, 2, k));
        }
    }
    TraceFile {
        schema_version: nppbench_model::TRACE_SCHEMA_VERSION,
        tool_version: "0.1.0".into(),
        program: vec!["./image-server".into(), "--port".into(), "8080".into()],
        pid: 4242,
        started_at: "2026-11-26T10:00:00Z".into(),
        wall_s: 3600.0,
        end: TraceEnd::Exited { code: Some(0) },
        capture: Capture {
            functions_interposed: 12,
            flush_interval_s: 1.0,
            sample_interval_s: 36.0,
            ..Capture::default()
        },
        npp_libraries: vec!["/usr/local/cuda-13.0/lib64/libnppidei.so.13".into()],
        npp_version: Some("13.0.1".into()),
        devices: vec![TraceDevice {
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            memory_total_bytes: 80 << 30,
        }],
        call_sites: vec![
            site((31, 31, 32, 128), 0, 100, 100, 300),
            site((1920, 1080, 1920, 7680), 1, 400, 4, 0),
            site((64, 64, 64, 256), 0, 10, 10, 30),
        ],
        threads,
        streams,
        memory,
        overhead: Overhead {
            calls: 510,
            recording_ns: 510 * 350,
        },
    }
}

fn stream(tid: i64, created_s: f64, call_site: usize, k: u64) -> TracedStream {
    TracedStream {
        handle: 0x7f00_0000 + tid as u64 * 16 + k,
        tid,
        created_s,
        destroyed_s: None,
        call_site: Some(call_site),
        attributed_function: None,
        attributed_library: None,
    }
}

fn atlas() -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-npp-13.0.1/run.json.gz");
    RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The page as a reader sees its text: tera escapes `/` and `'` in what it interpolates.
fn render(trace: &TraceFile, atlas: &[RunFile]) -> nppbench_report::RenderedTrace {
    let known = nppbench_analysis::knowledge::Knowledge::of_runs(atlas).unwrap();
    let mut r = nppbench_report::render_trace(trace, &known).unwrap();
    r.index_html = r.index_html.replace("&#x2F;", "/").replace("&#x27;", "'");
    r
}

#[path = "trace_page/real.rs"]
mod real;

#[path = "trace_page/race.rs"]
mod race;

#[path = "trace_page/lifecycle.rs"]
mod lifecycle;

#[path = "trace_page/unsampled.rs"]
mod unsampled;

fn position(html: &str, needle: &str) -> usize {
    html.find(needle).unwrap_or_else(|| panic!("no {needle:?} on the page"))
}

#[test]
fn the_page_leads_with_the_verdict_and_its_number() {
    let r = render(&generated_trace(), &[atlas()]);
    let html = &r.index_html;
    // Growth from the first sample (1001.5 MiB) to the last (1150 MiB): 148.5 MiB.
    let verdict = "Memory grew 148.5 MiB: 100 threads each kept 3 NPP streams";
    assert!(
        !html.contains(verdict),
        "10 more threads kept streams on the 64x64 site"
    );
    assert!(html.contains("Memory grew 148.5 MiB: 110 threads each kept 3 NPP streams."));
    assert!(html.contains("<span class=\"badge\">GROWS</span>"));
    // Verdict first, then the growing sites, the cost, the chart, every site, the details, the
    // overhead.
    let order = [
        "class=\"status fail\"",
        "class=\"headline\"",
        "id=\"growing\"",
        "id=\"cost\"",
        "<svg",
        "id=\"sites\"",
        "id=\"details\"",
        "id=\"overhead\"",
    ];
    for pair in order.windows(2) {
        assert!(
            position(html, pair[0]) < position(html, pair[1]),
            "{} after {}",
            pair[0],
            pair[1]
        );
    }
    assert!(
        r.summary_md
            .starts_with("## GROWS — nppbench trace: ./image-server --port 8080")
    );
    assert!(
        r.summary_md
            .contains("**Memory grew 148.5 MiB: 110 threads each kept 3 NPP streams.**")
    );
}

#[test]
fn the_growing_site_is_named_with_its_geometry_its_fix_and_predicts_answer() {
    let html = render(&generated_trace(), &[atlas()]).index_html;
    let growing = &html[position(&html, "id=\"growing\"")..position(&html, "id=\"cost\"")];
    assert!(growing.contains("<code>nppiConvert_8u32f_C1R_Ctx</code> on 31x31 s32/128"));
    assert!(growing.contains("created, blocking"));
    assert!(growing.contains("a new thread per call"));
    // The atlas measured this very scenario, and it leaks there too.
    assert!(growing.contains("leak (measured in the atlas); asked as Convert_8u32f_C1R 31x31 s32/128, blocking stream, context from_stream, thread_per_call"));
    assert!(growing.contains("Issue the calls on a non-blocking stream"));
    assert!(growing.contains("The atlas's rule:"));
    // The pool that kept nothing is not a growing site.
    assert!(!growing.contains("1920x1080"));
}

#[test]
fn a_disagreement_between_the_atlas_and_the_trace_is_shown() {
    let r = render(&generated_trace(), &[atlas()]);
    let html = &r.index_html;
    assert!(html.contains("The atlas and the trace disagree on 1 call site(s)"));
    let site = &html[position(html, "on 64x64 s64/256")..];
    let site = &site[..position(site, "</section>")];
    assert!(site.contains(
        "the atlas predicts flat for this scenario, and the trace's calls kept 30 stream(s) on a new thread per call"
    ));
    assert!(html.contains("class=\"site disagree\""));
    assert!(
        r.summary_md
            .contains("The atlas and the trace disagree: the atlas predicts flat")
    );
}

#[test]
fn the_cost_over_time_is_given_at_the_rate_seen() {
    let html = render(&generated_trace(), &[]).index_html;
    let cost = &html[position(&html, "id=\"cost\"")..position(&html, "id=\"sites\"")];
    // 110 threads in an hour; 1.5 MiB each by least squares (the 64x64 threads kept their
    // streams before the first sample, so the fit's steps are the 100 others'): 165 MiB per hour.
    assert!(cost.contains("110 per hour"), "{cost}");
    assert!(
        cost.contains("Growth per hour</th><td class=\"num\">165.0 MiB"),
        "{cost}"
    );
    assert!(cost.contains("Growth per day</th><td class=\"num\">3.9 GiB"), "{cost}");
    // (80 GiB − 1150 MiB) / 165 MiB per hour: 489.5 hours.
    assert!(
        cost.contains("runs out of memory in</th><td class=\"num\">20.4 days"),
        "{cost}"
    );
    // Without an atlas, the page says how to get its answers.
    assert!(html.contains("pass --atlas RUN"));
}

#[test]
fn a_partial_trace_says_so_at_the_top() {
    let mut t = generated_trace();
    t.end = TraceEnd::Signal {
        signal: 9,
        name: "SIGKILL".into(),
    };
    let html = render(&t, &[]).index_html;
    let notice = position(&html, "Partial trace: the program was ended by SIGKILL (signal 9)");
    assert!(notice < position(&html, "class=\"headline\""));
    t.end = TraceEnd::Running;
    let html = render(&t, &[]).index_html;
    assert!(html.contains("Partial trace: the program was still running, was killed or crashed"));
}

#[test]
fn a_program_whose_calls_could_not_be_seen_says_why() {
    let mut t = generated_trace();
    t.call_sites.clear();
    t.streams.clear();
    t.capture.calls_missing = Some("NPP is linked statically into the program".into());
    let r = render(&t, &[]);
    assert!(r.index_html.contains("<span class=\"badge\">NOT SEEN</span>"));
    assert!(
        r.index_html
            .contains("No NPP call was seen: NPP is linked statically into the program.")
    );
    assert!(
        r.index_html
            .contains("NPP calls could not be seen: NPP is linked statically into the program.")
    );
}

#[test]
fn call_sites_csv_has_its_columns_and_a_row_per_group() {
    let csv = render(&generated_trace(), &[atlas()]).call_sites_csv;
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "function,width,height,src_stride,dst_stride,declared_flags,stream,threading,calls,threads,streams_created,streams_kept,mib_attributed,predicted_class,agrees,calls_pending_asked,calls_with_work_pending,atlas_races"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 3);
    // 148.5 MiB over 330 kept streams: 300 of them on the 31x31 site.
    assert_eq!(
        rows[0],
        "nppiConvert_8u32f_C1R_Ctx,31,31,32,128,0,blocking,thread_per_call,100,100,300,300,135.00,leak,true,0,0,"
    );
    assert!(rows.contains(
        &"nppiConvert_8u32f_C1R_Ctx,64,64,64,256,0,blocking,thread_per_call,10,10,30,30,13.50,flat,false,0,0,"
    ));
    assert!(rows.iter().any(|r| r.contains(",1920,1080,")
        && r.contains(",non_blocking,pool:4,")
        && r.ends_with(",0.00,flat,true,0,0,")));
}

#[test]
fn the_chart_is_drawn_inline_and_nothing_is_fetched() {
    let html = render(&generated_trace(), &[]).index_html;
    let chart = &html[position(&html, "<figure id=\"timeline\">")..];
    assert!(chart.contains("<svg"));
    assert!(chart.contains("device memory, MiB"));
    assert!(chart.contains("threads that had kept NPP streams"));
    for needle in ["<script src", "<link", "@import", "src=\"http"] {
        assert!(!html.contains(needle), "the page fetches {needle}");
    }
}

#[test]
fn rendering_into_a_folder_writes_the_page_summary_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let index = nppbench_report::render_trace_to_dir(&generated_trace(), &[], dir.path()).unwrap();
    assert_eq!(index, dir.path().join("index.html"));
    for name in ["index.html", "summary.md", "call_sites.csv"] {
        assert!(dir.path().join(name).is_file(), "no {name}");
    }
    // The CSV the page names is a link (it was plain text), beside the trace.json link.
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(html.contains("<a href=\"call_sites.csv\">call_sites.csv</a>"));
    assert!(!html.contains("· call_sites.csv</p>") && !html.contains("): call_sites.csv."));
}

#[test]
fn device_wide_memory_is_named_as_every_process_on_the_device() {
    // Generated: the trace as a container leaves it, NVML's used memory of device 0.
    let mut t = generated_trace();
    t.capture.memory_device_wide = Some(vec![0]);
    let r = render(&t, &[]);
    let verdict = "Device memory (every process on the device) grew 148.5 MiB: 110 threads each kept 3 NPP streams.";
    assert!(r.index_html.contains(verdict));
    assert!(r.summary_md.contains(&format!("**{verdict}**")));
    let notice = position(
        &r.index_html,
        "Device memory is device 0's as a whole, every process on it",
    );
    assert!(notice < position(&r.index_html, "class=\"headline\""));
    assert!(r.index_html.contains("in a container NVML lists the host's pids"));
    let chart = &r.index_html[position(&r.index_html, "<figure id=\"timeline\">")..];
    assert!(chart.contains("device memory, every process on device 0"));
    // The process's own memory keeps its plain words.
    let own = render(&generated_trace(), &[]).index_html;
    assert!(!own.contains("every process on"));
}

#[test]
fn recording_on_a_threads_first_call_is_given_apart() {
    // Generated: 110 of the 510 calls were their thread's first, at 2.4 µs; the rest 200 ns.
    let mut t = generated_trace();
    t.capture.first_call_overhead = Overhead {
        calls: 110,
        recording_ns: 110 * 2400,
    };
    t.overhead.recording_ns = 110 * 2400 + 400 * 200;
    let r = render(&t, &[]);
    let overhead = "(2400 ns on each of 110 first calls of a thread, which register it unless a stream it created did; 200 ns on later calls)";
    assert!(
        r.index_html.contains(overhead),
        "{}",
        &r.index_html[position(&r.index_html, "id=\"overhead\"")..]
    );
    assert!(r.summary_md.contains(overhead));
    assert!(
        !r.summary_md.contains("CUPTI's own cost"),
        "a trace whose streams CUPTI did not count says nothing of CUPTI's cost"
    );
}

#[test]
fn the_npp_frames_a_stack_named_are_listed() {
    // Generated: 40 streams created inside a function the catalogue lacks.
    let mut t = generated_trace();
    let stack = "libnppc.so.13: +0x1a2b30 ← libnppidei.so.13: nppiConvert_8u32f_AC4R_Ctx+0x4f";
    t.capture.npp_stacks.insert(stack.into(), 40);
    let html = render(&t, &[]).index_html;
    let details = &html[position(&html, "id=\"details\"")..position(&html, "id=\"overhead\"")];
    assert!(
        details.contains(&format!("40 streams, innermost first: {stack}")),
        "{details}"
    );
}
