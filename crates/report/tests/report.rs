//! The report rendered from the committed run.json files (real runs on an H100), checked for
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
        let r = nppbench_report::render(std::slice::from_ref(&run)).unwrap();
        let html = &r.index_html;
        for section in [
            "Environment",
            "Memory scenarios",
            "Throughput scenarios",
            "Reproduce",
            "run.json",
        ] {
            assert!(html.contains(section), "{}: no {section}", path.display());
        }
        assert!(html.contains(&run.environment.npp.version));
        assert!(html.contains(&run.environment.gpu.name));
        // Verdict first: the headline comes before any chart or table.
        let verdict = html.find("class=\"headline\"").unwrap();
        assert!(verdict < html.find("<svg").unwrap() && verdict < html.find("<table").unwrap());
        // Every memory and throughput scenario has a table row.
        let rows = html.matches("<tr").count();
        assert!(rows >= run.memory.len() + run.throughput.len(), "{rows} rows");
        assert!(
            html.matches("<svg").count() >= 4,
            "charts missing in {}",
            path.display()
        );
    }
}

#[test]
fn the_page_makes_no_request_outside_itself() {
    let run = load(&committed_runs()[0]);
    let html = nppbench_report::render(&[run]).unwrap().index_html;
    for needle in [
        "<script",
        "<link",
        "@import",
        "url(",
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "href=\"//",
    ] {
        assert!(!html.contains(needle), "the page contains {needle}");
    }
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
fn several_runs_render_side_by_side() {
    let runs: Vec<RunFile> = committed_runs().iter().map(|p| load(p)).collect();
    if runs.len() < 2 {
        return;
    }
    let r = nppbench_report::render(&runs).unwrap();
    assert!(r.index_html.contains("Versions side by side"));
    for run in &runs {
        assert!(r.index_html.contains(&format!("NPP {}", run.environment.npp.version)));
    }
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
        html.contains("(out of memory): cuMemAlloc"),
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
