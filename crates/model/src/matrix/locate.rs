//! Where in a matrix file a value was written: byte spans turned into `path:line:column`, and
//! values parsed with that position in their messages.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use super::spec::{OneOrMany, items};
use crate::{ModelError, Primitive};

/// Turns a byte span of the source into `path:line:column`.
pub(super) struct Locator<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

impl Locator<'_> {
    pub(super) fn at(&self, span: Range<usize>) -> String {
        let before = &self.text[..span.start.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        format!("{}:{line}:{column}", self.path.display())
    }

    pub(super) fn int<T: TryFrom<i64>>(
        &self,
        name: &str,
        v: &Spanned<i64>,
        min: i64,
        max: i64,
    ) -> Result<T, ModelError> {
        let value = *v.get_ref();
        if value < min || value > max {
            return Err(ModelError::invalid(
                self.at(v.span()),
                format!("{name} {value} is out of range; it must be between {min} and {max}"),
            ));
        }
        T::try_from(value)
            .map_err(|_| ModelError::invalid(self.at(v.span()), format!("{name} {value} is out of range")))
    }

    pub(super) fn parse<T: std::str::FromStr<Err = ModelError>>(&self, v: &Spanned<String>) -> Result<T, ModelError> {
        v.get_ref().parse().map_err(|e: ModelError| match e {
            ModelError::Invalid { context, message } => {
                ModelError::invalid(format!("{}: {context}", self.at(v.span())), message)
            }
            other => other,
        })
    }

    pub(super) fn list<T: std::str::FromStr<Err = ModelError>>(
        &self,
        v: &[Spanned<String>],
    ) -> Result<Vec<T>, ModelError> {
        v.iter().map(|s| self.parse(s)).collect()
    }

    /// Primitives from names: a row, a library (its rows) or `all`.
    pub(super) fn primitives(&self, spec: &OneOrMany) -> Result<Vec<Primitive>, ModelError> {
        let mut out = Vec::new();
        for name in items(spec) {
            let found: Vec<Primitive> = if name == "all" {
                Primitive::all().collect()
            } else if let Some(lib) = crate::catalog::Library::ALL.iter().find(|l| l.name() == name) {
                let rows: Vec<Primitive> = Primitive::all().filter(|p| p.row().library == *lib).collect();
                if rows.is_empty() {
                    return Err(ModelError::invalid(
                        self.at(spec.span()),
                        format!(
                            "primitive {name:?} is a library of no function nppbench measures; name a function or another library (`nppbench primitives` lists them)"
                        ),
                    ));
                }
                rows
            } else {
                vec![Primitive::from_name(name).ok_or_else(|| {
                    ModelError::invalid(self.at(spec.span()), crate::catalog::unknown_primitive(name))
                })?]
            };
            for p in found {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        if out.is_empty() {
            return Err(ModelError::invalid(
                self.at(spec.span()),
                "primitive names no function; name at least one (`nppbench primitives` lists them)",
            ));
        }
        Ok(out)
    }
}
