//! NPP's image functions read from NPP's own headers: each `nppi…_Ctx` prototype's parameters
//! and their roles, the pixel formats its name gives, and whether nppbench can synthesise a call.

#![forbid(unsafe_code)]

pub mod extract;
pub mod name;
pub mod prototype;
pub mod roles;
pub mod sizer;
pub mod synth;

/// What went wrong reading a header or a prototype.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    #[error("{0}: tree-sitter could not parse it")]
    Parse(String),
    #[error("not a prototype nppbench can read: {0}")]
    Prototype(String),
    #[error("line {0}: not `type\tKIND\tNAME` nor `fn\tLIBRARY\tPROTOTYPE`: {1}")]
    Line(usize, String),
    #[error("{path}: {error}", path = .0.display(), error = .1)]
    Io(std::path::PathBuf, std::io::Error),
}
pub mod exports;
pub mod files;
pub mod generate;
