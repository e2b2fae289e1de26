//! Reports from run.json: charts and pages. This crate never touches the GPU and computes no
//! figure: every figure, rule, verdict and comparison comes from `nppbench_analysis`.
//!
//! Data flows one way: [`RunFile`] records → `nppbench_analysis` (figures, rules, verdicts,
//! comparisons) → [`view`] models with every number formatted → tera templates (`templates/`,
//! embedded) → `index.html`, `summary.md`; and `scenarios.csv`, `atlas.csv`. A trace.json
//! (`nppbench trace`) goes the same way through `nppbench_analysis::trace` to its own page
//! ([`render_trace_to_dir`]).

#![forbid(unsafe_code)]

mod charts;
pub mod compare_view;
mod csv_rows;
mod error;
pub mod history_view;
mod templates;
pub mod view;

/// The judging layer, re-exported for front ends that render and judge (the CLI's gates).
pub use nppbench_analysis::{self as analysis, compare};

use std::path::{Path, PathBuf};

use nppbench_analysis::RunAnalysis;
use nppbench_analysis::knowledge::Knowledge;
use nppbench_model::{RunFile, ShieldReport, TraceFile};

pub use crate::error::ReportError;
use crate::templates::{
    CATALOGUE_PAGE, MACROS, PAGE, SHIELD_PAGE, SUMMARY, TRACE_PAGE, TRACE_SUMMARY, render_templates,
};

/// The rendered files.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// One run: its page. Several: the upgrade-first page, with a page for each run.
    pub index_html: String,
    pub summary_md: String,
    pub scenarios_csv: String,
    /// One row per function, where a run measured several.
    pub atlas_csv: Option<String>,
    /// Several runs: each run's own page (file name, HTML), named by [`view::run_page_name`].
    pub run_pages: Vec<(String, String)>,
}

/// The view model of the first page, for tests and for other front ends.
pub fn page(runs: &[RunFile]) -> Result<view::Page, ReportError> {
    let analyses: Vec<RunAnalysis<'_>> = runs.iter().map(RunAnalysis::new).collect();
    let evidence = view::Evidence::of(&analyses);
    let views = run_views(&analyses, &evidence)?;
    page_of(runs, &analyses, &evidence, views)
}

fn run_views(analyses: &[RunAnalysis<'_>], evidence: &view::Evidence) -> Result<Vec<view::RunView>, ReportError> {
    analyses
        .iter()
        .enumerate()
        .map(|(i, a)| view::run_view(a, i, analyses.len(), evidence.of_run(i)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(ReportError::Chart)
}

fn page_of(
    runs: &[RunFile],
    analyses: &[RunAnalysis<'_>],
    evidence: &view::Evidence,
    views: Vec<view::RunView>,
) -> Result<view::Page, ReportError> {
    let first = runs.first().ok_or(ReportError::NoRuns)?;
    let mut gpus: Vec<&str> = runs.iter().map(|r| r.environment.gpu.name.as_str()).collect();
    gpus.dedup();
    if runs.len() > 1 && evidence.one_group() {
        // One atlas: the first run with the pooled rules, every run listed; a comparison of
        // runs of one version is `compare`'s work.
        let pooled = view::PooledView {
            runs: runs
                .iter()
                .enumerate()
                .map(|(i, r)| view::PooledRun {
                    label: format!("run {}", i + 1),
                    what: format!("{}: {} memory scenarios", r.matrix.name, r.memory.len()),
                    page: view::run_page_name(i),
                    run_json: view::run_json_name(i, r, runs.len()),
                })
                .collect(),
        };
        return Ok(view::Page {
            title: format!(
                "nppbench: NPP {} on {}, one atlas of {} runs",
                first.environment.npp.full_version(),
                gpus.join(", "),
                runs.len()
            ),
            generated_by: view::rendered_by(),
            upgrade: None,
            runs: views.into_iter().take(1).collect(),
            back: None,
            pooled: Some(pooled),
        });
    }
    // Each version once, in the order given: `12.2.3 vs 13.0.1.2`, however many runs of each.
    let mut versions: Vec<String> = Vec::new();
    for v in runs.iter().map(|r| r.environment.npp.full_version()) {
        if !versions.contains(&v) {
            versions.push(v);
        }
    }
    Ok(view::Page {
        title: format!("nppbench: NPP {} on {}", versions.join(" vs "), gpus.join(", ")),
        generated_by: view::rendered_by(),
        upgrade: if runs.len() > 1 {
            Some(view::upgrade(analyses, runs, evidence).map_err(ReportError::Chart)?)
        } else {
            None
        },
        runs: views,
        back: None,
        pooled: None,
    })
}

/// Renders the pages, the Markdown summary and the CSVs of `runs` (several runs: the
/// upgrade-first page and a page for each run).
pub fn render(runs: &[RunFile]) -> Result<Rendered, ReportError> {
    render_linking(runs, &[])
}

/// [`render`], where run `i`'s run.json sits beside the pages gzip-compressed when
/// `compressed[i]` (a run read from a `.json.gz`, kept so): the pages link `run….json.gz`.
pub fn render_linking(runs: &[RunFile], compressed: &[bool]) -> Result<Rendered, ReportError> {
    let analyses: Vec<RunAnalysis<'_>> = runs.iter().map(RunAnalysis::new).collect();
    let evidence = view::Evidence::of(&analyses);
    let mut views = run_views(&analyses, &evidence)?;
    let gz = |i: usize| compressed.get(i).copied().unwrap_or(false);
    for (i, v) in views.iter_mut().enumerate() {
        view::link_compressed(&mut v.run_json, gz(i));
    }
    // Several runs keep their views for a page each; one run's go to the first page alone.
    let first_page_views = if runs.len() > 1 {
        views.clone()
    } else {
        std::mem::take(&mut views)
    };
    let mut page = page_of(runs, &analyses, &evidence, first_page_views)?;
    for (i, r) in page.pooled.iter_mut().flat_map(|p| p.runs.iter_mut()).enumerate() {
        view::link_compressed(&mut r.run_json, gz(i));
    }
    for (i, v) in page.upgrade.iter_mut().flat_map(|u| u.versions.iter_mut()).enumerate() {
        view::link_compressed(&mut v.run_json, gz(i));
    }
    let [index_html, summary_md] = render_templates(
        [("report.html", PAGE), ("summary.md", SUMMARY), ("macros.html", MACROS)],
        &page,
    )
    .map(|[html, md, _]| [html, md])?;
    let mut run_pages = Vec::new();
    if runs.len() > 1 {
        let title = page.title.clone();
        for (i, run_view) in views.into_iter().enumerate() {
            let one = view::Page {
                title: format!("{} — {}", run_view.label, title),
                generated_by: page.generated_by.clone(),
                runs: vec![run_view],
                upgrade: None,
                back: Some("index.html".into()),
                pooled: None,
            };
            let [html, _] = render_templates([("report.html", PAGE), ("macros.html", MACROS)], &one)?;
            run_pages.push((view::run_page_name(i), html));
        }
    }
    let mut csv = csv::Writer::from_writer(Vec::new());
    for a in &analyses {
        for row in csv_rows::rows(a) {
            csv.serialize(row)?;
        }
    }
    let scenarios_csv = csv_text(csv)?;
    // One atlas: its rows once (the pooled rules), from the first run's page.
    let atlas_csv = if page.runs.iter().any(|r| !r.atlas.is_empty()) {
        let mut csv = csv::Writer::from_writer(Vec::new());
        for r in &page.runs {
            for row in csv_rows::atlas_rows(r) {
                csv.serialize(row)?;
            }
        }
        Some(csv_text(csv)?)
    } else {
        None
    };
    Ok(Rendered {
        index_html,
        summary_md,
        scenarios_csv,
        atlas_csv,
        run_pages,
    })
}

fn csv_text(csv: csv::Writer<Vec<u8>>) -> Result<String, ReportError> {
    Ok(
        String::from_utf8(csv.into_inner().map_err(|e| ReportError::Csv(e.into_error().into()))?)
            .expect("csv writes UTF-8"),
    )
}

/// A rendered comparison, and whether it trips any of the gates asked for.
#[derive(Debug, Clone)]
pub struct RenderedCompare {
    pub compare_html: String,
    pub summary_md: String,
    pub failed: bool,
}

/// Compares every run after the first against the first and renders `compare.html` and
/// `summary.md`.
pub fn render_compare(
    runs: &[RunFile],
    thresholds: compare::Thresholds,
    gates: &[compare::Gate],
) -> Result<RenderedCompare, ReportError> {
    let r = compare_view::render(runs, &[], thresholds, gates, true)?;
    Ok(RenderedCompare {
        compare_html: r.compare_html,
        summary_md: r.summary_md,
        failed: r.status == compare_view::Status::Fail,
    })
}

/// Renders into `out` (`index.html`, `summary.md`, `scenarios.csv`; `atlas.csv` for a run of
/// several functions; `run-N.html` for each of several runs) and returns the first page's path.
/// The caller places the run.json files beside it, named by [`view::run_json_name`], with `.gz`
/// after the name of each run `compressed` marks (see [`render_linking`]).
pub fn render_to_dir(runs: &[RunFile], compressed: &[bool], out: &Path) -> Result<PathBuf, ReportError> {
    let r = render_linking(runs, compressed)?;
    let mut files: Vec<(String, &String)> = vec![
        ("index.html".into(), &r.index_html),
        ("summary.md".into(), &r.summary_md),
        ("scenarios.csv".into(), &r.scenarios_csv),
    ];
    if let Some(atlas) = &r.atlas_csv {
        files.push(("atlas.csv".into(), atlas));
    }
    for (name, html) in &r.run_pages {
        files.push((name.clone(), html));
    }
    write_files(out, files)
}

/// Writes each named text into `out` (created if need be); returns the path of its index.html.
fn write_files(out: &Path, files: Vec<(String, &String)>) -> Result<PathBuf, ReportError> {
    std::fs::create_dir_all(out).map_err(|source| ReportError::Io {
        path: out.to_owned(),
        source,
    })?;
    for (name, text) in files {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|source| ReportError::Io {
            path: path.clone(),
            source,
        })?;
    }
    Ok(out.join("index.html"))
}

/// A rendered trace: its page, summary.md and call_sites.csv.
#[derive(Debug, Clone)]
pub struct RenderedTrace {
    pub index_html: String,
    pub summary_md: String,
    pub call_sites_csv: String,
}

/// The view model of a trace's page, with the rules, fixes and predictions of `atlas` (knowledge
/// of the traced program's NPP version; none: the page says how to get them).
pub fn trace_page(trace: &TraceFile, atlas: &[Knowledge]) -> Result<view::trace::TracePage, ReportError> {
    let findings = nppbench_analysis::trace::findings(trace, atlas);
    view::trace::trace_page(trace, &findings).map_err(ReportError::Chart)
}

/// Renders a trace's page, summary.md and call_sites.csv.
pub fn render_trace(trace: &TraceFile, atlas: &[Knowledge]) -> Result<RenderedTrace, ReportError> {
    let findings = nppbench_analysis::trace::findings(trace, atlas);
    let page = view::trace::trace_page(trace, &findings).map_err(ReportError::Chart)?;
    let [index_html, summary_md, _] = render_templates(
        [
            ("trace.html", TRACE_PAGE),
            ("trace.md", TRACE_SUMMARY),
            ("macros.html", MACROS),
        ],
        &page,
    )?;
    let mut csv = csv::Writer::from_writer(Vec::new());
    for row in view::trace::call_site_rows(&findings) {
        csv.serialize(row)?;
    }
    Ok(RenderedTrace {
        index_html,
        summary_md,
        call_sites_csv: csv_text(csv)?,
    })
}

/// Renders a trace into `out` (`index.html`, `summary.md`, `call_sites.csv`) and returns the
/// page's path. The caller places the trace.json beside it, which the page links to.
pub fn render_trace_to_dir(trace: &TraceFile, atlas: &[Knowledge], out: &Path) -> Result<PathBuf, ReportError> {
    let r = render_trace(trace, atlas)?;
    write_files(
        out,
        vec![
            ("index.html".into(), &r.index_html),
            ("summary.md".into(), &r.summary_md),
            ("call_sites.csv".into(), &r.call_sites_csv),
        ],
    )
}

/// Renders a shield.json's page into `out` (`index.html`) and returns its path. The caller
/// places shield.json beside it, which the page links to.
pub fn render_shield_to_dir(report: &ShieldReport, out: &Path) -> Result<PathBuf, ReportError> {
    let page = view::shield::shield_page(report);
    let [index_html] = render_templates([("shield.html", SHIELD_PAGE)], &page)?;
    write_files(out, vec![("index.html".into(), &index_html)])
}

/// The page of every function a version's headers declare, and functions.csv.
#[derive(Debug, Clone)]
pub struct RenderedCatalogue {
    pub index_html: String,
    pub functions_csv: String,
}

/// Renders the page of every function of `catalogue` (judged by
/// `nppbench_analysis::catalogue::judge`); `calls_given` says whether call lines were given.
pub fn render_catalogue(
    catalogue: &nppbench_analysis::catalogue::Catalogue,
    calls_given: bool,
) -> Result<RenderedCatalogue, ReportError> {
    let page = view::catalogue::catalogue_page(catalogue, calls_given).map_err(ReportError::Chart)?;
    let [index_html] = render_templates([("catalogue.html", CATALOGUE_PAGE)], &page)?;
    let mut csv = csv::Writer::from_writer(Vec::new());
    for row in &page.functions {
        csv.serialize(row)?;
    }
    Ok(RenderedCatalogue {
        index_html,
        functions_csv: csv_text(csv)?,
    })
}

/// Renders the page of every function into `out` (`index.html`, `functions.csv`) and returns the
/// page's path.
pub fn render_catalogue_to_dir(
    catalogue: &nppbench_analysis::catalogue::Catalogue,
    calls_given: bool,
    out: &Path,
) -> Result<PathBuf, ReportError> {
    let r = render_catalogue(catalogue, calls_given)?;
    write_files(
        out,
        vec![
            ("index.html".into(), &r.index_html),
            ("functions.csv".into(), &r.functions_csv),
        ],
    )
}
