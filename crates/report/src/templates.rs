//! The templates every page is rendered from (embedded, so the binary renders anywhere) and the
//! one function that renders them with tera.

use crate::error::ReportError;

pub(crate) const PAGE: &str = include_str!("../../../templates/report.html.tera");
pub(crate) const SUMMARY: &str = include_str!("../../../templates/summary.md.tera");
pub(crate) const STYLE: &str = include_str!("../../../templates/report.css");
pub(crate) const COMPARE_PAGE: &str = include_str!("../../../templates/compare.html.tera");
pub(crate) const COMPARE_SUMMARY: &str = include_str!("../../../templates/compare.md.tera");
pub(crate) const TRACE_PAGE: &str = include_str!("../../../templates/trace.html.tera");
pub(crate) const TRACE_SUMMARY: &str = include_str!("../../../templates/trace.md.tera");
/// Macros both the report and the compare page use (a comparison's tables).
pub(crate) const MACROS: &str = include_str!("../../../templates/macros.html.tera");

/// Renders `templates` (name, text; the `.html` ones autoescaped) with `model` and the style
/// sheet, in order.
pub(crate) fn render_templates<const N: usize>(
    templates: [(&'static str, &'static str); N],
    model: &impl serde::Serialize,
) -> Result<[String; N], ReportError> {
    let mut tera = tera::Tera::default();
    tera.autoescape_on(vec![".html"]);
    // All at once: a template may import another's macros.
    tera.add_raw_templates(templates)
        .map_err(|source| ReportError::Template {
            template: templates[0].0,
            source,
        })?;
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
