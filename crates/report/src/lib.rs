//! Reports from run.json: statistics, charts and pages. This crate never touches the GPU.
//!
//! Data flows one way: [`RunFile`] records → [`analysis`] (fits, classes, GB/s) →
//! [`findings`] (verdict, fixes) → [`view`] models with every number formatted → tera
//! templates (`templates/`, embedded) → `index.html`, `summary.md`; and `scenarios.csv`.

#![forbid(unsafe_code)]

pub mod analysis;
mod charts;
pub mod compare;
pub mod compare_view;
mod csv_rows;
pub mod findings;
pub use nppbench_stats as stats;
pub mod thresholds;
pub mod view;

use std::path::{Path, PathBuf};

use nppbench_model::RunFile;

use crate::analysis::RunAnalysis;

const PAGE: &str = include_str!("../../../templates/report.html.tera");
const SUMMARY: &str = include_str!("../../../templates/summary.md.tera");
const STYLE: &str = include_str!("../../../templates/report.css");
const COMPARE_PAGE: &str = include_str!("../../../templates/compare.html.tera");
const COMPARE_SUMMARY: &str = include_str!("../../../templates/compare.md.tera");

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("nothing to render: give at least one run.json")]
    NoRuns,
    #[error("drawing a chart: {0}")]
    Chart(String),
    #[error("rendering {template}: {source}")]
    Template {
        template: &'static str,
        #[source]
        source: tera::Error,
    },
    #[error("writing scenarios.csv: {0}")]
    Csv(#[from] csv::Error),
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The three rendered files.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub index_html: String,
    pub summary_md: String,
    pub scenarios_csv: String,
}

/// The view model of the page, for tests and for other front ends.
pub fn page(runs: &[RunFile]) -> Result<view::Page, ReportError> {
    let analyses: Vec<RunAnalysis<'_>> = runs.iter().map(RunAnalysis::new).collect();
    page_of(&analyses)
}

fn page_of(analyses: &[RunAnalysis<'_>]) -> Result<view::Page, ReportError> {
    let first = analyses.first().ok_or(ReportError::NoRuns)?.run;
    let views = analyses
        .iter()
        .enumerate()
        .map(|(i, a)| view::run_view(a, i, analyses.len()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(ReportError::Chart)?;
    let versions: Vec<&str> = analyses.iter().map(|a| a.npp_version()).collect();
    Ok(view::Page {
        title: format!(
            "nppbench: NPP {} on {}",
            versions.join(" vs "),
            first.environment.gpu.name
        ),
        generated_by: format!("nppbench {} ({})", first.tool.version, first.tool.git_commit),
        comparison: view::comparison(analyses),
        runs: views,
    })
}

/// Renders `templates` (name, text; the `.html` ones autoescaped) with `model` and the style
/// sheet, in order.
fn render_templates<const N: usize>(
    templates: [(&'static str, &'static str); N],
    model: &impl serde::Serialize,
) -> Result<[String; N], ReportError> {
    let mut tera = tera::Tera::default();
    tera.autoescape_on(vec![".html"]);
    for (name, text) in templates {
        tera.add_raw_template(name, text)
            .map_err(|source| ReportError::Template { template: name, source })?;
    }
    let mut ctx = tera::Context::from_serialize(model).map_err(|source| ReportError::Template {
        template: templates[0].0,
        source,
    })?;
    ctx.insert("style", STYLE);
    let mut out = templates.map(|(name, _)| (name, String::new()));
    for (name, text) in &mut out {
        *text = tera
            .render(name, &ctx)
            .map_err(|source| ReportError::Template { template: name, source })?;
    }
    Ok(out.map(|(_, text)| text))
}

/// Renders the page, the Markdown summary and the CSV of `runs` (several runs: side by side).
pub fn render(runs: &[RunFile]) -> Result<Rendered, ReportError> {
    let analyses: Vec<RunAnalysis<'_>> = runs.iter().map(RunAnalysis::new).collect();
    let page = page_of(&analyses)?;
    let [index_html, summary_md] = render_templates([("report.html", PAGE), ("summary.md", SUMMARY)], &page)?;
    let mut csv = csv::Writer::from_writer(Vec::new());
    for a in &analyses {
        for row in csv_rows::rows(a) {
            csv.serialize(row)?;
        }
    }
    let scenarios_csv = String::from_utf8(csv.into_inner().map_err(|e| ReportError::Csv(e.into_error().into()))?)
        .expect("csv writes UTF-8");
    Ok(Rendered {
        index_html,
        summary_md,
        scenarios_csv,
    })
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
    let (base, candidates) = runs.split_first().ok_or(ReportError::NoRuns)?;
    if candidates.is_empty() {
        return Err(ReportError::NoRuns);
    }
    let comparisons: Vec<compare::Comparison> = candidates
        .iter()
        .map(|c| compare::compare(base, c, thresholds))
        .collect();
    let page = compare_view::page(runs, &comparisons, thresholds, gates);
    let [compare_html, summary_md] =
        render_templates([("compare.html", COMPARE_PAGE), ("compare.md", COMPARE_SUMMARY)], &page)?;
    Ok(RenderedCompare {
        compare_html,
        summary_md,
        failed: page.failed,
    })
}

/// Renders into `out` (`index.html`, `summary.md`, `scenarios.csv`) and returns the page's path.
/// The caller places the run.json files beside it, named by [`view::run_json_name`].
pub fn render_to_dir(runs: &[RunFile], out: &Path) -> Result<PathBuf, ReportError> {
    let r = render(runs)?;
    std::fs::create_dir_all(out).map_err(|source| ReportError::Io {
        path: out.to_owned(),
        source,
    })?;
    for (name, text) in [
        ("index.html", &r.index_html),
        ("summary.md", &r.summary_md),
        ("scenarios.csv", &r.scenarios_csv),
    ] {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|source| ReportError::Io {
            path: path.clone(),
            source,
        })?;
    }
    Ok(out.join("index.html"))
}
