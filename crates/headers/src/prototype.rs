//! One `nppi…_Ctx` prototype parsed with tree-sitter's C grammar into its parameters: name, base
//! type, pointer depth, array length and constness, as a role is read from them.

use serde::Serialize;
use tree_sitter::Node;

use crate::HeaderError;
use crate::extract::{c_parser, function_name, text};

/// A function's name and parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prototype {
    pub symbol: String,
    pub params: Vec<Param>,
}

/// One parameter as C declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Param {
    pub name: String,
    /// The parameter as declared, on one line (`const Npp8u * pSrc`).
    pub c: String,
    /// The type named (`Npp8u`, `int`, `NppiSize`).
    #[serde(skip)]
    pub base: String,
    /// How many `*` stand between the type and the name.
    #[serde(skip)]
    pub pointers: u8,
    /// `[N]` after the name: `Some("N")` (`Some("")` for `[]`).
    #[serde(skip)]
    pub array: Option<String>,
    /// Whether the data reached is `const` (`const Npp8u * pSrc`).
    #[serde(skip)]
    pub is_const: bool,
}

impl Param {
    /// Whether the parameter is passed by value as a plain value of `base` (no pointer, no array).
    pub fn is_value(&self) -> bool {
        self.pointers == 0 && self.array.is_none()
    }
}

/// Parses one prototype (`NppStatus nppiX_Ctx(…);`).
pub fn parse(line: &str) -> Result<Prototype, HeaderError> {
    let bad = || HeaderError::Prototype(line.to_owned());
    let tree = c_parser().parse(line, None).ok_or_else(bad)?;
    let root = tree.root_node();
    let declaration = (0..root.named_child_count())
        .filter_map(|i| root.named_child(i))
        .find(|n| n.kind() == "declaration")
        .ok_or_else(bad)?;
    if declaration.has_error() {
        return Err(bad());
    }
    let src = line.as_bytes();
    let symbol = function_name(declaration, src).ok_or_else(bad)?;
    let mut declarator = declaration.child_by_field_name("declarator").ok_or_else(bad)?;
    while declarator.kind() == "pointer_declarator" {
        declarator = declarator.child_by_field_name("declarator").ok_or_else(bad)?;
    }
    let list = declarator.child_by_field_name("parameters").ok_or_else(bad)?;
    let mut params = Vec::new();
    let mut cursor = list.walk();
    for p in list.named_children(&mut cursor) {
        if p.kind() != "parameter_declaration" {
            continue;
        }
        params.push(param(p, src).ok_or_else(bad)?);
    }
    // `f(void)` declares no parameter.
    if params.len() == 1 && params[0].base == "void" && params[0].is_value() {
        params.clear();
    }
    Ok(Prototype { symbol, params })
}

fn param(node: Node<'_>, src: &[u8]) -> Option<Param> {
    let base = text(node.child_by_field_name("type")?, src).to_owned();
    let mut is_const = false;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.kind() == "type_qualifier" && text(child, src) == "const" {
            is_const = true;
        }
    }
    let mut pointers = 0;
    let mut array = None;
    let mut name = String::new();
    let mut declarator = node.child_by_field_name("declarator");
    while let Some(d) = declarator {
        match d.kind() {
            "pointer_declarator" | "abstract_pointer_declarator" => pointers += 1,
            "array_declarator" | "abstract_array_declarator" => {
                array = Some(d.child_by_field_name("size").map_or("", |s| text(s, src)).to_owned());
            }
            "identifier" => name = text(d, src).to_owned(),
            _ => return None,
        }
        declarator = d.child_by_field_name("declarator");
    }
    let c = text(node, src).split_whitespace().collect::<Vec<_>>().join(" ");
    Some(Param {
        name,
        c,
        base,
        pointers,
        array,
        is_const,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planar_sources_are_arrays_of_pointers() {
        let p = parse("NppStatus nppiNV12ToRGB_8u_P2C3R_Ctx(const Npp8u * const pSrc[2], int rSrcStep, Npp8u * pDst, int nDstStep, NppiSize oSizeROI, NppStreamContext nppStreamCtx);").unwrap();
        assert_eq!(p.symbol, "nppiNV12ToRGB_8u_P2C3R_Ctx");
        let src = &p.params[0];
        assert_eq!(
            (
                src.name.as_str(),
                src.base.as_str(),
                src.pointers,
                src.array.as_deref(),
                src.is_const
            ),
            ("pSrc", "Npp8u", 1, Some("2"), true)
        );
        assert_eq!(src.c, "const Npp8u * const pSrc[2]");
        assert!(p.params[1].is_value());
        assert_eq!(p.params.len(), 6);
    }

    #[test]
    fn a_line_that_is_not_a_prototype_is_refused() {
        let err = parse("NppStatus nppiX_Ctx(int a,, );").unwrap_err();
        assert!(err.to_string().contains("nppiX_Ctx"), "{err}");
    }
}
