//! The templates every page is rendered from (embedded, so the binary renders anywhere) and the
//! one function that renders them with tera.

use crate::error::ReportError;

pub(crate) const PAGE: &str = include_str!("../../../templates/report.html.tera");
pub(crate) const SUMMARY: &str = include_str!("../../../templates/summary.md.tera");
pub(crate) const STYLE: &str = include_str!("../../../templates/report.css");
pub(crate) const COMPARE_PAGE: &str = include_str!("../../../templates/compare.html.tera");
pub(crate) const COMPARE_SUMMARY: &str = include_str!("../../../templates/compare.md.tera");
pub(crate) const TRACE_PAGE: &str = include_str!("../../../templates/trace.html.tera");
pub(crate) const CATALOGUE_PAGE: &str = include_str!("../../../templates/catalogue.html.tera");
pub(crate) const SHIELD_PAGE: &str = include_str!("../../../templates/shield.html.tera");
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
    tera.register_filter("code", code);
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

/// The `code` filter: a sentence's text escaped for HTML, each span between backticks (the words
/// a summary.md writes as code: `` `--repeat 3` ``) as `<code>`. Used as `{{ s | code | safe }}`.
fn code(value: &tera::Value, _: &std::collections::HashMap<String, tera::Value>) -> tera::Result<tera::Value> {
    let text = tera::from_value::<String>(value.clone())?;
    let spans: Vec<&str> = text.split('`').collect();
    // An odd backtick is text, not the start of a span that never ends.
    let pairs = spans.len() % 2 == 1;
    let mut out = String::with_capacity(text.len() + 16);
    for (i, span) in spans.iter().enumerate() {
        let inside = i % 2 == 1 && (pairs || i + 1 < spans.len());
        match (inside, i % 2 == 1) {
            (true, _) => out.push_str(&format!("<code>{}</code>", tera::escape_html(span))),
            (false, true) => out.push_str(&format!("`{}", tera::escape_html(span))),
            (false, false) => out.push_str(&tera::escape_html(span)),
        }
    }
    Ok(tera::Value::String(out))
}

#[cfg(test)]
mod tests {
    #[test]
    fn code_spans_become_code_and_the_rest_is_escaped() {
        let run = |s: &str| {
            super::code(&tera::Value::String(s.into()), &Default::default())
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(run("use `--repeat 3` <now>"), "use <code>--repeat 3</code> &lt;now&gt;");
        assert_eq!(run("a ` alone"), "a ` alone");
    }
}
