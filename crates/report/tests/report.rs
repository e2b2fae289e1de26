//! The report rendered from the committed run.json files (real runs on an H100 and an H200), checked for
//! what a reader would check: the verdict, the classes of the known cases, the sections, the
//! charts, the CSV contract, and that the page needs nothing from outside itself.

use std::path::{Path, PathBuf};

use nppbench_model::{RunFile, StreamKind, Threading};
use nppbench_report::analysis::RunAnalysis;
use nppbench_report::stats::LeakClass;

fn committed_runs() -> Vec<PathBuf> {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let runs = RunFile::find_in(&reports);
    assert!(!runs.is_empty(), "no committed run.json under {}", reports.display());
    runs
}

fn load(path: &Path) -> RunFile {
    RunFile::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_committed_run_renders_with_every_section() {
    for path in committed_runs() {
        let run = load(&path);
        let atlas = RunAnalysis::new(&run).primitives().len() > 1;
        let r = nppbench_report::render(std::slice::from_ref(&run)).unwrap();
        let html = &r.index_html;
        let sections: &[&str] = if atlas {
            &[
                "Every function",
                "Each function",
                "Where the time went",
                "Environment",
                "Reproduce",
                "run.json",
            ]
        } else {
            &[
                "Memory scenarios",
                "Throughput scenarios",
                "Where the time went",
                "Environment",
                "Reproduce",
                "run.json",
            ]
        };
        for section in sections {
            assert!(html.contains(section), "{}: no {section}", path.display());
        }
        assert!(html.contains(&run.environment.npp.version));
        assert!(html.contains(&run.environment.gpu.name));
        // Verdict first: the status, then the headline, before any chart or table.
        let status = html.find("class=\"status ").unwrap();
        let verdict = html.find("class=\"headline\"").unwrap();
        assert!(status < verdict);
        assert!(verdict < html.find("<svg").unwrap() && verdict < html.find("<table").unwrap());
        // Every memory and throughput scenario has a table row.
        let rows = html.matches("<tr").count();
        assert!(rows >= run.memory.len() + run.throughput.len(), "{rows} rows");
        assert!(
            html.matches("<svg").count() >= if atlas { 1 } else { 4 },
            "charts missing in {}",
            path.display()
        );
        assert_eq!(r.atlas_csv.is_some(), atlas);
    }
}

#[test]
fn the_page_makes_no_request_outside_itself() {
    let runs = committed_runs();
    let atlas = runs.iter().find(|p| p.display().to_string().contains("atlas")).unwrap();
    for path in [&runs[0], atlas] {
        let html = nppbench_report::render(&[load(path)]).unwrap().index_html;
        // Inline scripts (the atlas filter) are fine, and so are links a reader may follow (NVIDIA's
        // documentation); nothing may be fetched.
        for needle in [
            "<script src",
            "<link",
            "@import",
            "url(",
            "src=\"http",
            "src=\"//",
            "fetch(",
            "<img",
            "<iframe",
        ] {
            assert!(!html.contains(needle), "{}: the page contains {needle}", path.display());
        }
    }
}

#[test]
fn the_atlas_page_lists_every_catalogued_function_with_its_rule() {
    let runs = committed_runs();
    let path = runs
        .iter()
        .find(|p| p.display().to_string().contains("atlas-npp-13"))
        .unwrap();
    let run = load(path);
    let r = nppbench_report::render(std::slice::from_ref(&run)).unwrap();
    let csv = r.atlas_csv.unwrap();
    // One row per function of the matrix, measured or not.
    assert_eq!(csv.lines().count() - 1, run.matrix.primitives.len());
    assert!(run.matrix.primitives.len() >= 40);
    for p in &run.matrix.primitives {
        let name = p.to_string();
        assert!(
            r.index_html.contains(&format!("id=\"fn-{name}\"")),
            "no section for {name}"
        );
        let row = csv.lines().find(|l| l.contains(&format!(",{name},"))).unwrap();
        assert!(
            row.contains("Leaks if and only if")
                || row.contains("Never leaked")
                || row.contains("not measured")
                || row.contains("No rule"),
            "{row}"
        );
    }
    // The filter works on the page without fetching anything.
    assert!(r.index_html.contains("type=\"search\""));
}

#[test]
fn known_cases_are_classed_as_measured() {
    // The public report's case: 31×31, stride 32, a new thread per call.
    for path in committed_runs() {
        let run = load(&path);
        let a = RunAnalysis::new(&run);
        let find = |stream: StreamKind, threading: Threading| {
            a.memory.iter().find(|m| {
                let s = &m.record.scenario;
                (s.geometry.width, s.geometry.height, s.geometry.src_stride) == (31, 31, 32)
                    && s.geometry.padded_from.is_none()
                    && s.stream == stream
                    && s.threading == threading
            })
        };
        let Some(leak) = find(StreamKind::Blocking, Threading::ThreadPerCall) else {
            continue;
        };
        assert_eq!(leak.class, Some(LeakClass::Leak), "{}", path.display());
        let slope = leak.per_thread.unwrap();
        assert!(slope.slope > 0.5 && slope.slope_ci.0 > 0.0, "{slope:?}");
        assert!(leak.hidden_per_thread.unwrap().slope >= 1.0);
        let verdict = nppbench_report::findings::verdict(&a);
        assert!(
            verdict
                .stream_hoarders
                .iter()
                .any(|h| h.starts_with("31x31 s32/128, thread_per_call: ") && h.contains("blocking")),
            "{:?}",
            verdict.stream_hoarders
        );
        assert!(
            verdict.stream_hoarders.iter().all(|h| !h.contains("non_blocking")),
            "{:?}",
            verdict.stream_hoarders
        );
        let fixed = find(StreamKind::NonBlocking, Threading::ThreadPerCall).unwrap();
        assert_eq!(fixed.class, Some(LeakClass::Flat), "{}", path.display());
        if let Some(pool) = find(StreamKind::Blocking, Threading::Pool(4)) {
            assert_ne!(pool.class, Some(LeakClass::Leak));
        }
    }
}

#[test]
fn csv_has_the_stable_columns_and_a_row_per_scenario() {
    let run = load(&committed_runs()[0]);
    let csv = nppbench_report::render(std::slice::from_ref(&run))
        .unwrap()
        .scenarios_csv;
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let stable = [
        "npp_version",
        "width",
        "height",
        "src_stride",
        "stream",
        "threading",
        "threads_spawned",
        "calls",
        "leak_mib_per_thread",
        "leak_class",
        "kernel_gbps",
        "hidden_streams_per_thread",
        "streams_never_destroyed",
        "copy_ceiling_gbps",
        "pct_of_copy_ceiling",
        "reference_kernel_gbps",
    ];
    let positions: Vec<usize> = stable
        .iter()
        .map(|c| {
            header
                .iter()
                .position(|h| h == c)
                .unwrap_or_else(|| panic!("no column {c}"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "stable columns keep their order"
    );
    assert_eq!(csv.lines().count() - 1, run.memory.len() + run.throughput.len());
}

#[test]
fn several_runs_open_with_what_changed_and_keep_a_page_each() {
    let runs: Vec<RunFile> = ["h200-quick-npp-12.2.3/run.json", "h200-full-npp-13.0.1/run.json"]
        .iter()
        .map(|p| load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports").join(p)))
        .collect();
    let r = nppbench_report::render(&runs).unwrap();
    let html = &r.index_html;
    // The verdict first: the status, then what changed, then the charts, then the unchanged
    // (folded), then each run.
    let order = [
        "class=\"status ",
        "What changed",
        "The runs side by side",
        "<details",
        "Each run in full",
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|n| html.find(n).unwrap_or_else(|| panic!("no {n}")))
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
    assert!(html.contains("Kernel throughput per version") && html.contains("Leak slope per version"));
    for run in &runs {
        assert!(html.contains(&format!("NPP {}", run.environment.npp.full_version())));
    }
    assert_eq!(r.run_pages.len(), 2);
    for (name, page) in &r.run_pages {
        assert!(html.contains(&format!("href=\"{name}\"")));
        assert!(page.contains("href=\"index.html\"") && page.contains("Memory scenarios"));
    }
    assert!(r.summary_md.starts_with("## CHANGED") || r.summary_md.starts_with("## NO CHANGE"));
}

#[test]
fn summary_md_of_the_first_committed_run() {
    let run = load(&committed_runs()[0]);
    let md = nppbench_report::render(&[run]).unwrap().summary_md;
    let head: String = md.lines().take(6).collect::<Vec<_>>().join("\n");
    expect_test::expect_file!["snapshots/summary_head.md"].assert_eq(&head);
}

#[test]
fn rendering_nothing_is_an_error() {
    assert!(nppbench_report::render(&[]).is_err());
}

#[test]
fn failures_are_counted_by_kind_on_the_page_and_in_compare() {
    let base = load(&committed_runs()[0]);
    // Altered copy of a real run: one memory scenario failed out of memory, one throughput
    // scenario timed out.
    let mut cand = base.clone();
    cand.memory[0].outcome = nppbench_model::Outcome::failed(
        nppbench_model::FailureKind::OutOfMemory,
        "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)",
    );
    cand.memory[0].result = None;
    cand.throughput[0].outcome = nppbench_model::Outcome::failed(
        nppbench_model::FailureKind::Timeout,
        "timed out after 3 s and was killed",
    );
    cand.throughput[0].result = None;
    let html = nppbench_report::render(std::slice::from_ref(&cand)).unwrap().index_html;
    assert!(
        html.contains("2 scenario(s) failed (1 out of memory, 1 timeout)"),
        "no count by kind"
    );
    assert!(
        html.contains("<td>out of memory</td><td class=\"wrap\">cuMemAlloc"),
        "the failure list names the kind"
    );
    let c = nppbench_report::compare::compare(&base, &cand, Default::default());
    assert!(c.base_failures.is_empty());
    assert_eq!(c.cand_failures.get(&nppbench_model::FailureKind::OutOfMemory), Some(&1));
    let page = nppbench_report::render_compare(&[base, cand], Default::default(), &[]).unwrap();
    assert!(
        page.compare_html
            .contains("Failed scenarios: base none; candidate 2 (1 out of memory, 1 timeout)."),
        "compare counts failures by kind"
    );
}

#[test]
fn only_sharing_that_touches_judged_figures_stops_the_gates() {
    let runs = committed_runs();
    let path = runs
        .iter()
        .find(|p| p.display().to_string().contains("atlas-npp-13"))
        .unwrap();
    let run = load(path);
    // The real run saw one process, beside one memory scenario measured per process (NVML).
    let a = RunAnalysis::new(&run);
    assert_eq!(a.shared_with().len(), 1);
    assert!(a.sharing_that_touches_gates().is_empty());
    let html = nppbench_report::render(std::slice::from_ref(&run)).unwrap().index_html;
    assert!(
        html.contains("Another process was on the GPU beside 1 of") && html.contains("`compare` gates on this run")
    );
    // Altered copy: the same process beside a throughput record.
    let mut altered = run.clone();
    let seen = a.shared_with()[0].clone();
    let t = altered.throughput.iter_mut().find(|t| t.result.is_some()).unwrap();
    t.result.as_mut().unwrap().other_processes.push(seen);
    let b = RunAnalysis::new(&altered);
    assert_eq!(b.sharing_that_touches_gates().len(), 1);
    let html = nppbench_report::render(std::slice::from_ref(&altered))
        .unwrap()
        .index_html;
    assert!(
        html.contains("The GPU was shared with other processes")
            && html.contains("does not gate on this run unless given --allow-shared-gpu")
    );
}

/// Concurrency changes nothing (issue #10): the full preset run with `--jobs 1` and with the
/// default (8 at once) on the same H200 gives the same leak classes, and leak slopes within 2%.
#[test]
fn memory_scenarios_run_at_once_judge_as_one_at_a_time() {
    let read = |name: &str| {
        load(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../reports/concurrency")
                .join(name),
        )
    };
    let (one, many) = (read("full-jobs-1.json"), read("full-jobs-default.json"));
    assert_eq!(one.jobs.as_ref().unwrap().jobs, 1);
    assert!(many.jobs.as_ref().unwrap().jobs > 1);
    let worst = judge_alike(&one, &many);
    eprintln!("leak slopes differ by at most {:.2}%", worst * 100.0);
}

/// Two runs' memory scenarios judge alike: the same classes and NPP streams left undestroyed,
/// leak slopes within 2%. Returns the largest slope difference.
fn judge_alike(a: &RunFile, b: &RunFile) -> f64 {
    let (a, b) = (RunAnalysis::new(a), RunAnalysis::new(b));
    assert_eq!(a.memory.len(), b.memory.len());
    let mut worst: f64 = 0.0;
    for m in &a.memory {
        let n = b
            .memory
            .iter()
            .find(|x| x.record.scenario.id == m.record.scenario.id)
            .unwrap();
        assert_eq!(m.class, n.class, "{}", m.record.scenario.id);
        assert_eq!(
            m.streams_never_destroyed, n.streams_never_destroyed,
            "{}",
            m.record.scenario.id
        );
        if m.class == Some(LeakClass::Leak) {
            let (x, y) = (m.per_thread.unwrap().slope, n.per_thread.unwrap().slope);
            worst = worst.max((y / x - 1.0).abs());
        }
    }
    assert!(worst <= 0.02, "slopes differ by up to {:.1}%", worst * 100.0);
    worst
}

/// One connection per memory probe (the default, `--probe-connections 1`) judges as the driver's
/// default does: the full preset with each, one after the other on the same H200; and the
/// timing runs made with one connection judge as the `--jobs 1` run made with the default.
#[test]
fn one_connection_per_probe_judges_as_the_drivers_default() {
    let read = |name: &str| load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports").join(name));
    let (one, inherit) = (
        read("concurrency/full-connections-1.json"),
        read("concurrency/full-connections-inherit.json"),
    );
    let connections = |r: &RunFile| r.jobs.as_ref().unwrap().connections.clone().unwrap();
    assert_eq!(connections(&one).value, Some(1));
    assert!(connections(&one).set_by_nppbench);
    assert_eq!(connections(&inherit).value, None);
    judge_alike(&inherit, &one);
    let jobs_1 = read("concurrency/full-jobs-1.json");
    for i in 1..=3 {
        let timed = read(&format!("performance/full-npp-13.0.1-{i}.json"));
        assert_eq!(connections(&timed).value, Some(1));
        judge_alike(&jobs_1, &timed);
    }
}

/// AddC_8u_C3RSfs leaks in some processes and not in others, the same scenario, with one
/// connection and with the driver's default alike, and at the same buffer alignment: its class
/// is a property of the process, not of the settings (docs/performance.md).
#[test]
fn addc_c3s_leak_comes_and_goes_between_processes_under_either_setting() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/concurrency/addc-c3");
    for setting in ["1", "inherit"] {
        let files: Vec<RunFile> = (1..=3)
            .map(|i| load(&dir.join(format!("connections-{setting}-{i}.json"))))
            .collect();
        let analyses: Vec<RunAnalysis> = files.iter().map(RunAnalysis::new).collect();
        let varying = analyses[0]
            .memory
            .iter()
            .filter(|m| {
                analyses[1..].iter().any(|a| {
                    let n = a
                        .memory
                        .iter()
                        .find(|x| x.record.scenario.id == m.record.scenario.id)
                        .unwrap();
                    n.class != m.class
                })
            })
            .count();
        assert!(
            varying > 0,
            "connections {setting}: no scenario changed class between processes"
        );
        // The buffers sat at the same offsets within their 2 MiB pages in every process.
        for m in &analyses[0].memory {
            let Some(r) = m.record.result.as_ref() else { continue };
            let low =
                |r: &nppbench_model::MemoryResult| r.buffer_addresses.iter().map(|a| a % (2 << 20)).collect::<Vec<_>>();
            for a in &analyses[1..] {
                let n = a
                    .memory
                    .iter()
                    .find(|x| x.record.scenario.id == m.record.scenario.id)
                    .unwrap();
                if let Some(nr) = n.record.result.as_ref() {
                    assert_eq!(low(r), low(nr), "{}", m.record.scenario.id);
                }
            }
        }
    }
}

/// README and docs/report.md list scenarios.csv's columns in the order the file has them.
#[test]
fn the_documented_csv_columns_are_the_files_in_order() {
    let run = load(&committed_runs()[0]);
    let csv = nppbench_report::render(std::slice::from_ref(&run))
        .unwrap()
        .scenarios_csv;
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for doc in ["README.md", "docs/report.md"] {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(doc)).unwrap();
        let start = text
            .find("`npp_version, kind,")
            .unwrap_or_else(|| panic!("{doc} lists no columns"));
        let list = &text[start + 1..];
        let list = &list[..list.find('`').unwrap()];
        let documented: Vec<&str> = list.split(',').map(str::trim).collect();
        assert_eq!(documented, header, "{doc}");
    }
}
