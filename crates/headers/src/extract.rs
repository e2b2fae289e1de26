//! NPP's headers read with tree-sitter's C grammar: every `nppi…_Ctx` prototype, as one line of
//! C with its comments dropped, and the type names `nppdefs.h` defines (enums, structs, scalars).

use tree_sitter::{Node, Parser};

use crate::HeaderError;

/// What one header declares that the catalogue needs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Declarations {
    /// Each `nppi…_Ctx` prototype, and each buffer-size function's with or without `_Ctx`:
    /// (symbol, one line of C ending in `;`).
    pub prototypes: Vec<(String, String)>,
    /// Each type a `typedef` names: (kind, name).
    pub types: Vec<(TypeKind, String)>,
    /// Each member of `NppStatus` given a number: (value, name).
    pub statuses: Vec<(i32, String)>,
}

/// What a typedef'd name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TypeKind {
    Enum,
    Struct,
    Scalar,
}

impl TypeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TypeKind::Enum => "enum",
            TypeKind::Struct => "struct",
            TypeKind::Scalar => "scalar",
        }
    }

    pub fn parse(s: &str) -> Option<TypeKind> {
        match s {
            "enum" => Some(TypeKind::Enum),
            "struct" => Some(TypeKind::Struct),
            "scalar" => Some(TypeKind::Scalar),
            _ => None,
        }
    }
}

/// Whether `symbol` tells the size of another function's scratch buffer
/// (`nppiMeanGetBufferHostSize_8u_C1R`): kept with or without `_Ctx`, as some have only the plain
/// form.
pub fn is_sizer(symbol: &str) -> bool {
    symbol.contains("BufferSize") || symbol.contains("BufferHostSize")
}

/// A parser of C, tree-sitter's grammar.
pub(crate) fn c_parser() -> Parser {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_c::LANGUAGE.into())
        .expect("tree-sitter-c is built for the tree-sitter it is linked with");
    parser
}

/// The declarations of one header's text. `file` names it in errors.
pub fn declarations(file: &str, text: &str) -> Result<Declarations, HeaderError> {
    let tree = c_parser()
        .parse(text, None)
        .ok_or_else(|| HeaderError::Parse(file.to_owned()))?;
    let mut found = Declarations::default();
    visit(tree.root_node(), text.as_bytes(), &mut found);
    Ok(found)
}

fn visit(node: Node<'_>, src: &[u8], found: &mut Declarations) {
    match node.kind() {
        "declaration" => {
            if let Some(symbol) = function_name(node, src)
                && symbol.starts_with("nppi")
                && (symbol.ends_with("_Ctx") || is_sizer(&symbol))
            {
                found.prototypes.push((symbol, one_line(node, src)));
            }
            return;
        }
        "type_definition" => {
            typedef(node, src, found);
            return;
        }
        _ => {}
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        visit(child, src, found);
    }
}

/// The name a declaration declares as a function, if it declares one.
pub(crate) fn function_name(node: Node<'_>, src: &[u8]) -> Option<String> {
    let mut declarator = node.child_by_field_name("declarator")?;
    // `NppStatus *f(…)` would wrap the function declarator in a pointer declarator.
    while declarator.kind() == "pointer_declarator" {
        declarator = declarator.child_by_field_name("declarator")?;
    }
    if declarator.kind() != "function_declarator" {
        return None;
    }
    let name = declarator.child_by_field_name("declarator")?;
    (name.kind() == "identifier").then(|| text(name, src).to_owned())
}

fn typedef(node: Node<'_>, src: &[u8], found: &mut Declarations) {
    let Some(ty) = node.child_by_field_name("type") else {
        return;
    };
    let kind = match ty.kind() {
        "enum_specifier" => TypeKind::Enum,
        "struct_specifier" | "union_specifier" => TypeKind::Struct,
        "primitive_type" | "sized_type_specifier" | "type_identifier" => TypeKind::Scalar,
        _ => return,
    };
    let mut cursor = node.walk();
    for declarator in node.children_by_field_name("declarator", &mut cursor) {
        if declarator.kind() == "type_identifier" {
            let name = text(declarator, src);
            if name == "NppStatus" && kind == TypeKind::Enum {
                found.statuses.extend(enumerators(ty, src));
            }
            found.types.push((kind, name.to_owned()));
        }
    }
}

/// An enum's members given a number literal (`NPP_STEP_ERROR = -16`): (value, name). A member
/// given another's name (`NPP_SUCCESS = NPP_NO_ERROR`) or none is left out.
fn enumerators(enum_specifier: Node<'_>, src: &[u8]) -> Vec<(i32, String)> {
    let Some(body) = enum_specifier.child_by_field_name("body") else {
        return Vec::new();
    };
    let mut cursor = body.walk();
    body.children(&mut cursor)
        .filter(|c| c.kind() == "enumerator")
        .filter_map(|e| {
            let name = text(e.child_by_field_name("name")?, src).to_owned();
            let value = text(e.child_by_field_name("value")?, src).replace(' ', "");
            Some((value.parse().ok()?, name))
        })
        .collect()
}

pub(crate) fn text<'a>(node: Node<'_>, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or_default()
}

/// A declaration's text on one line: its comments dropped, its white space one space, and none
/// inside parentheses' edges or before a comma.
fn one_line(node: Node<'_>, src: &[u8]) -> String {
    let mut pieces = Vec::new();
    tokens(node, src, &mut pieces);
    let mut out = String::new();
    for piece in pieces {
        let glued = matches!(piece, "," | ")" | ";" | "(" | "[" | "]")
            || out.ends_with('(')
            || out.ends_with('[')
            || out.is_empty();
        if !glued {
            out.push(' ');
        }
        out.push_str(piece);
    }
    out
}

fn tokens<'a>(node: Node<'_>, src: &'a [u8], out: &mut Vec<&'a str>) {
    if node.kind() == "comment" {
        return;
    }
    if node.child_count() == 0 {
        out.push(text(node, src));
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        tokens(child, src, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prototypes_lose_comments_and_line_breaks() {
        let header = r#"
#ifdef __cplusplus
extern "C" {
#endif
/** Doc. */
NppStatus
nppiMean_8u_C1MR_Ctx(const Npp8u * pSrc, int nSrcStep, /* mask */ const Npp8u * pMask,
                     NppiSize oSizeROI, Npp8u * pDeviceBuffer, Npp64f * pMean, NppStreamContext nppStreamCtx);
NppStatus nppiMean_8u_C1MR(const Npp8u * pSrc, int nSrcStep);
NppStatus nppiMorphGetBufferSize_8u_C1R(NppiSize oSizeROI, int * hpBufferSize);
NppStatus nppsSum_32f_Ctx(const Npp32f * pSrc, NppStreamContext nppStreamCtx);
typedef enum { NPP_BORDER_NONE } NppiBorderType;
typedef struct { int width; int height; } NppiSize;
typedef unsigned char Npp8u;
#ifdef __cplusplus
}
#endif
"#;
        let found = declarations("test.h", header).unwrap();
        assert_eq!(
            found.prototypes,
            vec![(
                "nppiMean_8u_C1MR_Ctx".to_owned(),
                "NppStatus nppiMean_8u_C1MR_Ctx(const Npp8u * pSrc, int nSrcStep, const Npp8u * pMask, NppiSize oSizeROI, Npp8u * pDeviceBuffer, Npp64f * pMean, NppStreamContext nppStreamCtx);".to_owned()
            ), (
                "nppiMorphGetBufferSize_8u_C1R".to_owned(),
                "NppStatus nppiMorphGetBufferSize_8u_C1R(NppiSize oSizeROI, int * hpBufferSize);".to_owned()
            )]
        );
        assert_eq!(
            found.types,
            vec![
                (TypeKind::Enum, "NppiBorderType".to_owned()),
                (TypeKind::Struct, "NppiSize".to_owned()),
                (TypeKind::Scalar, "Npp8u".to_owned()),
            ]
        );
    }

    /// `NppStatus`'s members with a number, as the header gives them (made up for the test: a
    /// member named after another, or with no number, is left out).
    #[test]
    fn the_status_enum_gives_each_code_its_name() {
        let header = "typedef enum { NPP_STEP_ERROR = -16, NPP_NO_ERROR = 0, NPP_SUCCESS = NPP_NO_ERROR, \
                      NPP_WARNING = 1, NPP_LATER } NppStatus; typedef enum { A = 3 } Other;";
        let found = declarations("nppdefs.h", header).unwrap();
        assert_eq!(
            found.statuses,
            vec![
                (-16, "NPP_STEP_ERROR".to_owned()),
                (0, "NPP_NO_ERROR".to_owned()),
                (1, "NPP_WARNING".to_owned())
            ]
        );
    }
}
