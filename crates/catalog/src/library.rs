//! The NPP libraries nppbench opens: those the catalogued rows need, and every image library a
//! function can be called from by its roles.

use std::fmt;

/// The NPP libraries nppbench loads (each needs only `libnppc` and the CUDA driver).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Library {
    /// Core: versions, streams, device properties.
    Nppc,
    /// Arithmetic and logical operations.
    Nppial,
    /// Colour conversion.
    Nppicc,
    /// Data exchange and initialisation (convert, copy, set, transpose, swap channels).
    Nppidei,
    /// Filtering.
    Nppif,
    /// Geometry transforms (resize, mirror).
    Nppig,
    /// Statistics.
    Nppist,
    /// Threshold and compare.
    Nppitc,
    /// Morphology (no catalogued row: only the functions called from their roles, issue #45).
    Nppim,
}

impl Library {
    /// The libraries the catalogued rows need: what a run loads and reports missing.
    pub const ALL: [Library; 8] = [
        Library::Nppc,
        Library::Nppial,
        Library::Nppicc,
        Library::Nppidei,
        Library::Nppif,
        Library::Nppig,
        Library::Nppist,
        Library::Nppitc,
    ];

    /// Every image library a function can be called from: the rows' ([`Library::ALL`]) and
    /// the others.
    pub const EVERY: [Library; 9] = {
        let mut every = [Library::Nppim; 9];
        let mut i = 0;
        while i < Library::ALL.len() {
            every[i] = Library::ALL[i];
            i += 1;
        }
        every
    };

    /// `nppial`: the library's name, as in `libnppial.so.13`.
    pub fn name(self) -> &'static str {
        match self {
            Library::Nppc => "nppc",
            Library::Nppial => "nppial",
            Library::Nppicc => "nppicc",
            Library::Nppidei => "nppidei",
            Library::Nppif => "nppif",
            Library::Nppig => "nppig",
            Library::Nppist => "nppist",
            Library::Nppitc => "nppitc",
            Library::Nppim => "nppim",
        }
    }
}

impl fmt::Display for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
