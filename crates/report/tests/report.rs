//! The report rendered from the committed run.json files (real runs on an H100 and an H200), checked for
//! what a reader would check: the verdict, the classes of the known cases, the sections, the
//! charts, the CSV contract, and that the page needs nothing from outside itself.

use std::path::{Path, PathBuf};

use nppbench_analysis::RunAnalysis;
use nppbench_model::RunFile;

fn committed_runs() -> Vec<PathBuf> {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let runs = RunFile::find_in(&reports);
    assert!(!runs.is_empty(), "no committed run.json under {}", reports.display());
    runs
}

#[path = "report/catalogue.rs"]
mod catalogue;
#[path = "report/history_page.rs"]
mod history_page;
#[path = "report/pages.rs"]
mod pages;
#[path = "report/race_rounds.rs"]
mod race_rounds;
#[path = "report/several_runs.rs"]
mod several_runs;
#[path = "report/wrong_pixels.rs"]
mod wrong_pixels;

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
        // Every memory and throughput scenario has a table row (a throughput scenario one, however
        // many passes timed it).
        let rows = html.matches("<tr").count();
        let throughput: std::collections::BTreeSet<&str> =
            run.throughput.iter().map(|t| t.scenario.id.as_str()).collect();
        assert!(rows >= run.memory.len() + throughput.len(), "{rows} rows");
        assert!(
            html.matches("<svg").count() >= if atlas { 1 } else { 4 },
            "charts missing in {}",
            path.display()
        );
        assert_eq!(r.atlas_csv.is_some(), atlas);
    }
}

/// Every HTML id on `html` once (a chart once took its section heading's id, so a link to the
/// section could land on the chart; the committed run pages used `run-1-throughput` twice).
fn assert_ids_unique(html: &str, page: &str) {
    let mut seen = std::collections::BTreeSet::new();
    for id in html.split(" id=\"").skip(1).filter_map(|rest| rest.split('"').next()) {
        assert!(seen.insert(id), "{page}: id {id:?} twice");
    }
}

/// Every page of a rendering: the first page and each run's own.
fn assert_every_page_ids_unique(r: &nppbench_report::Rendered, what: &str) {
    assert_ids_unique(&r.index_html, &format!("{what}: index.html"));
    for (name, html) in &r.run_pages {
        assert_ids_unique(html, &format!("{what}: {name}"));
    }
}

#[test]
fn every_committed_run_page_uses_each_id_once() {
    for path in committed_runs() {
        let run = load(&path);
        let r = nppbench_report::render(std::slice::from_ref(&run)).unwrap();
        assert_every_page_ids_unique(&r, &path.display().to_string());
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
    // The H100 atlas with held-out scenarios: two runs of NPP 13.0.1, pooled.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-atlas-npp-13.0.1");
    let runs: Vec<RunFile> = ["run-1-npp-13.0.1.json.gz", "run-2-npp-13.0.1.json.gz"]
        .iter()
        .map(|f| load(&dir.join(f)))
        .collect();
    let r = nppbench_report::render(&runs).unwrap();
    assert_every_page_ids_unique(&r, "the H100 atlas of NPP 13.0.1");
    let csv = r.atlas_csv.unwrap();
    let primitives = &runs[0].matrix.primitives;
    assert!(primitives.len() >= 40);
    // One atlas (#28 item 4): one row per function of the matrix, measured or not, with the rule
    // the two runs give together; its first page is that atlas, not a comparison of its runs.
    assert_eq!(csv.lines().count() - 1, primitives.len());
    assert!(!r.index_html.contains("CHANGED") && !r.index_html.contains("PARTIAL"));
    assert!(r.index_html.contains("One atlas pooled from 2 runs"));
    assert_eq!(r.index_html.matches("id=\"fn-Convert_8u32f_C1R\"").count(), 1);
    assert_eq!(
        r.summary_md.matches("| Convert_8u32f_C1R |").count(),
        1,
        "one rule per function"
    );
    assert_eq!(r.run_pages.len(), 2, "each run keeps its page");
    let forms = [
        "Leaks if and only if",
        "Never leaks:",
        "Fits all",
        "Best rule found",
        "No rule of up to",
        "Not stable between processes",
    ];
    let mut earned = 0;
    for p in primitives {
        let name = p.to_string();
        assert!(
            r.run_pages[0].1.contains(&format!("id=\"fn-{name}\"")),
            "no section for {name}"
        );
        let row = csv.lines().find(|l| l.contains(&format!(",{name},"))).unwrap();
        assert!(forms.iter().any(|f| row.contains(f)), "{row}");
        assert!(row.contains("held-out scenarios"), "{row}");
        earned += usize::from(row.contains("Leaks if and only if") || row.contains("Never leaks:"));
    }
    assert!(
        earned * 4 >= primitives.len() * 3,
        "{earned} of {} rules earned",
        primitives.len()
    );
    let convert = csv.lines().find(|l| l.contains(",Convert_8u32f_C1R,")).unwrap();
    assert!(convert.contains("Leaks if and only if"), "{convert}");
    // AddC_8u_C3RSfs changes class between processes: never "if and only if".
    let addc = csv.lines().find(|l| l.contains(",AddC_8u_C3RSfs,")).unwrap();
    assert!(addc.contains("Not stable between processes"), "{addc}");
    // The filter works on the page without fetching anything.
    assert!(r.run_pages[0].1.contains("type=\"search\""));
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
    let runs: Vec<RunFile> = ["h200-quick-npp-12.2.3/run.json.gz", "h200-full-npp-13.0.1/run.json.gz"]
        .iter()
        .map(|p| load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports").join(p)))
        .collect();
    let r = nppbench_report::render(&runs).unwrap();
    assert_every_page_ids_unique(&r, "two H200 runs");
    let html = &r.index_html;
    // The verdict first: the status, then what changed, then the charts, then the unchanged
    // (folded), then each run.
    let order = [
        "class=\"status ",
        "What changed",
        "The runs side by side",
        "throughput scenarios unchanged",
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
    // Fixed committed runs: exactly one status (it used to accept either).
    assert_eq!(
        r.summary_md.lines().next(),
        Some("## CHANGED — nppbench: NPP 12.2.3 vs 13.0.1.2 on NVIDIA H200")
    );
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
    assert_ids_unique(&page.compare_html, "compare.html");
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
        .find(|p| p.display().to_string().contains("h200-atlas-npp-13"))
        .unwrap();
    let run = load(path);
    // The real run (the H200 atlas of NPP 13.0.1) saw one process, beside one memory scenario measured per process (NVML).
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

#[test]
fn runs_from_another_machine_are_labelled_on_the_compare_page() {
    // Altered copy: as if it ran on another GPU with another driver.
    let base = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h200-full-npp-13.0.1/run.json.gz"));
    let mut cand = base.clone();
    cand.environment.gpu.name = "NVIDIA H100 80GB HBM3".into();
    cand.environment.gpu.uuid = "GPU-00000000-0000-0000-0000-000000000000".into();
    cand.environment.driver_version = Some("590.1".into());
    let page =
        nppbench_report::render_compare(&[base, cand], nppbench_report::compare::Thresholds::default(), &[]).unwrap();
    assert!(
        page.compare_html
            .contains("Different environments: GPU: NVIDIA H200 → NVIDIA H100 80GB HBM3; driver: 580.159.04 → 590.1")
    );
    assert!(page.compare_html.contains("Different GPU models"));
    assert!(page.compare_html.contains("(group B)"));
    assert!(!page.failed);
}

/// Issue #31: a scenario whose calls ran their kernels at once in some passes and in turn in
/// others is judged with the layout held fixed, and the page shows every pass of each side per
/// layout, so that a reader sees the modes. Two quick runs of one H100 (GPU-4b201cc6): over all
/// calls the base's passes of the 1918x1080 per-thread convert read 6.46 to 6.82 µs and the
/// candidate's 6.30 to 6.32 (the earlier rule: unsettled, -6.6%), because the base drew the
/// in-turn layout more often; each layout's own passes agree.
#[test]
fn a_scenario_that_drew_its_layouts_differently_is_the_same_and_its_passes_are_shown() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/calibration/GPU-4b201cc6/quick");
    let (base, cand) = (load(&dir.join("quick-1.json.gz")), load(&dir.join("quick-2.json.gz")));
    let c = nppbench_report::compare::compare(&base, &cand, Default::default());
    let id = "tp/Convert_8u32f_C1R/1918x1080-s1920-d7680/per_thread_default/from_stream";
    let x = c.throughput.iter().find(|t| t.id == id).unwrap();
    assert_eq!(x.verdict, nppbench_report::compare::Change::Same, "{:?}", x.kernel);
    assert_eq!(x.by_layout.len(), 2);
    let page = nppbench_report::render_compare(&[base, cand], Default::default(), &[]).unwrap();
    assert!(
        page.compare_html.contains(
            "kernels at once: base 6.35 6.53 · candidate 6.27 6.30 6.30; kernels in turn: base 6.82 6.85 6.88 · candidate 6.85"
        ),
        "each side's passes, per layout"
    );
    assert!(
        page.compare_html
            .contains("Host latency (launch-bound; shown, not judged)")
    );
}
