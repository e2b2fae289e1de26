//! NPP's image functions as the headers of each catalogued version declare them, built into the
//! binary (`build.rs`: `catalogue/npp-VERSION/prototypes.tsv.gz`) or read from a catalogue folder;
//! the page of every function (`nppbench report --catalogue`); and the call lines of
//! `nppbench call-catalogue`, read.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context;
use nppbench_analysis::calls::CallLine;
use nppbench_analysis::catalogue::{Catalogue, Entry, judge_designed};
use nppbench_headers::files::Prototypes;

use crate::exit::bad_input;
use crate::knowledge::short;

include!(concat!(env!("OUT_DIR"), "/catalogues.rs"));

/// The versions whose headers are built in, for messages: "12.2.3.2, 13.0.1.2, 13.2.0.58".
pub(crate) fn built_in_versions() -> String {
    CATALOGUES
        .iter()
        .map(|(name, _)| name.trim_start_matches("npp-"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The built-in headers of NPP `version` (`13.0`, `13.0.1`, `13.0.1.2`), where one is built in.
pub(crate) fn built_in(version: &str) -> Option<Prototypes> {
    let (name, bytes) = CATALOGUES.iter().find(|(name, _)| {
        let v = name.trim_start_matches("npp-");
        v == version || v.starts_with(&format!("{version}.")) || short(v) == short(version)
    })?;
    Some(read_built_in(name, bytes))
}

/// Every version's built-in headers, in version order.
pub(crate) fn built_in_all() -> Vec<Prototypes> {
    CATALOGUES
        .iter()
        .map(|(name, bytes)| read_built_in(name, bytes))
        .collect()
}

/// Gzip-compressed text, decompressed.
fn gunzip(bytes: &[u8]) -> std::io::Result<String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut text)?;
    Ok(text)
}

/// They are the binary's own files: one that does not read is nppbench's fault.
fn read_built_in(name: &str, bytes: &[u8]) -> Prototypes {
    let text = gunzip(bytes).unwrap_or_else(|e| panic!("the built-in headers {name} do not decompress: {e}"));
    let version = name.trim_start_matches("npp-");
    Prototypes::from_text(version, &text).unwrap_or_else(|e| panic!("the built-in headers {name}: {e}"))
}

/// `--catalogue`: a catalogue folder (`catalogue/npp-13.0.1.2`), or the version of headers built
/// in (`13.0`).
pub(crate) fn resolve(given: &Path) -> anyhow::Result<Prototypes> {
    if given.is_dir() {
        return Prototypes::read(given).map_err(|e| bad_input(format!("--catalogue {}: {e}", given.display())));
    }
    let text = given.to_string_lossy();
    built_in(&text).ok_or_else(|| {
        bad_input(format!(
            "--catalogue {text}: neither a catalogue folder (catalogue/npp-VERSION, made by `cargo xtask catalogue`) nor the version of headers built into nppbench ({})",
            built_in_versions()
        ))
    })
}

/// A function the headers of `prototypes` declare: `nppiResize_8u_C3R_Ctx`, `Resize_8u_C3R` or
/// `nppiResize_8u_C3R` name the same; its symbol and library.
pub(crate) fn declared<'a>(prototypes: &'a Prototypes, name: &str) -> Option<(&'a str, Option<&'a str>)> {
    let symbol = format!("nppi{}_Ctx", nppbench_headers::name::bare(name));
    prototypes
        .functions
        .iter()
        .find(|(s, _, _)| *s == symbol)
        .map(|(s, library, _)| (s.as_str(), library.as_deref()))
}

/// Every function's catalogue entry.
pub(crate) fn entries(prototypes: &Prototypes) -> anyhow::Result<Vec<Entry>> {
    let rows = nppbench_headers::generate::rows(prototypes)
        .with_context(|| format!("reading the prototypes of NPP {}", prototypes.version))?;
    Ok(rows
        .iter()
        .map(|r| Entry::new(&r.symbol, r.library.as_deref(), &r.reasons))
        .collect())
}

/// A file of `nppbench call-catalogue` lines (`.gz` too); not one is bad input, naming the line.
pub(crate) fn read_call_lines(file: &Path) -> anyhow::Result<Vec<CallLine>> {
    let bytes = std::fs::read(file).map_err(|e| bad_input(format!("{}: {e}", file.display())))?;
    nppbench_analysis::calls::read_lines(&bytes).map_err(|e| bad_input(format!("{}: {e}", file.display())))
}

/// The design lines the page of every function measures functions known from their headers
/// alone by.
pub(crate) enum Designs {
    /// The binary's own of the catalogue's version, where it has some.
    BuiltIn,
    File(PathBuf),
    None,
}

/// Every function of the headers `catalogue` names, judged with the call lines of `calls`, the
/// knowledge of the same version (`atlas`, else built in) and the design lines `designs`.
pub(crate) fn judged(
    catalogue: &Path,
    calls: &[PathBuf],
    atlas: &[PathBuf],
    designs: Designs,
) -> anyhow::Result<Catalogue> {
    let prototypes = resolve(catalogue)?;
    let mut lines = Vec::new();
    for f in calls {
        lines.extend(read_call_lines(f)?);
    }
    let knowledge = crate::knowledge::of_catalogue(atlas, &prototypes.version)?;
    let built_in = matches!(designs, Designs::BuiltIn);
    let designs = match designs {
        Designs::None => Vec::new(),
        Designs::BuiltIn => crate::knowledge::built_in_designs(&prototypes.version)?,
        Designs::File(f) => {
            let bytes = std::fs::read(&f).map_err(|e| bad_input(format!("--designs {}: {e}", f.display())))?;
            nppbench_analysis::calls::read_lines_of(&bytes)
                .map_err(|e| bad_input(format!("--designs {}: {e}", f.display())))?
        }
    };
    let mut judged = judge_designed(
        &prototypes.version,
        &entries(&prototypes)?,
        &lines,
        knowledge.as_ref(),
        &designs,
    );
    // With the designs built in, a function no design of this version called shows what another
    // version of its major release measured, as `predict` answers it (docs/catalogue.md).
    if built_in {
        let own: std::collections::BTreeSet<&str> = designs.iter().map(|l| l.symbol.as_str()).collect();
        for other in crate::knowledge::other_versions_designed(&prototypes.version) {
            let mut lines = crate::knowledge::built_in_designs(other)?;
            lines.retain(|l| !own.contains(l.symbol.as_str()));
            judged = judged.with_other_version(other, &lines);
        }
    }
    Ok(judged)
}

/// `nppbench report --catalogue`: the page of every function into `out`.
pub(crate) fn page(
    catalogue: &Path,
    calls: &[PathBuf],
    atlas: &[PathBuf],
    designs: Designs,
    out: &Path,
) -> anyhow::Result<PathBuf> {
    let judged = judged(catalogue, calls, atlas, designs)?;
    nppbench_report::render_catalogue_to_dir(&judged, !calls.is_empty(), out)
        .with_context(|| format!("rendering the page of every function into {}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_headers_are_found_by_version_and_declare_functions_beyond_the_measured() {
        let p = built_in("13.0").expect("13.0.1.2's headers are built in");
        assert_eq!(p.version, "13.0.1.2");
        assert_eq!(
            declared(&p, "Resize_8u_C3R"),
            Some(("nppiResize_8u_C3R_Ctx", Some("nppig")))
        );
        assert_eq!(
            declared(&p, "nppiResize_8u_C3R_Ctx").map(|d| d.0),
            Some("nppiResize_8u_C3R_Ctx")
        );
        assert!(declared(&p, "Resize_8u_C9R").is_none());
        assert!(built_in("11.8").is_none());
        assert!(built_in_versions().contains("12.2.3.2"), "{}", built_in_versions());
    }
}
