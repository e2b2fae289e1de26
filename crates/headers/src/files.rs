//! A catalogue folder, `catalogue/npp-VERSION/`: `prototypes.tsv.gz` (what the headers declare,
//! the generator's input), `functions.jsonl.gz` (one generated row per function) and
//! `summary.json` (the counts, readable in a diff). Gzip keeps the clone small; its header carries
//! no time, so the same text gives the same bytes.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use crate::HeaderError;
use crate::extract::TypeKind;

pub const PROTOTYPES: &str = "prototypes.tsv.gz";
pub const FUNCTIONS: &str = "functions.jsonl.gz";
pub const SUMMARY: &str = "summary.json";

/// What the headers of one NPP version declare, with the library exporting each function.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Prototypes {
    /// The NPP version (`12.2.3.2`).
    pub version: String,
    /// (kind, name) of each type the headers' typedefs name, sorted.
    pub types: Vec<(TypeKind, String)>,
    /// (code, name) of each `NppStatus` member with a number, sorted: NPP 13 numbered its
    /// errors anew, and each version's names come from its own headers.
    pub statuses: Vec<(i32, String)>,
    /// (symbol, library or `None` where no library exports it, prototype), sorted by symbol.
    pub functions: Vec<(String, Option<String>, String)>,
}

impl Prototypes {
    /// The file's text: a comment line, then `type\tKIND\tNAME`, `status\tCODE\tNAME` and
    /// `fn\tLIBRARY\tPROTOTYPE` lines (`-` for a function no library exports).
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "# nppbench-headers prototypes of NPP {}: typedef'd types, then each nppi…_Ctx function with the library exporting it\n",
            self.version
        );
        for (kind, name) in &self.types {
            out.push_str(&format!("type\t{}\t{name}\n", kind.as_str()));
        }
        for (code, name) in &self.statuses {
            out.push_str(&format!("status\t{code}\t{name}\n"));
        }
        for (_, library, line) in &self.functions {
            out.push_str(&format!("fn\t{}\t{line}\n", library.as_deref().unwrap_or("-")));
        }
        out
    }

    pub fn from_text(version: &str, text: &str) -> Result<Prototypes, HeaderError> {
        let mut found = Prototypes {
            version: version.to_owned(),
            ..Prototypes::default()
        };
        for (i, line) in text.lines().enumerate() {
            let bad = || HeaderError::Line(i + 1, line.to_owned());
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let mut fields = line.splitn(3, '\t');
            match (fields.next(), fields.next(), fields.next()) {
                (Some("type"), Some(kind), Some(name)) => {
                    found
                        .types
                        .push((TypeKind::parse(kind).ok_or_else(bad)?, name.to_owned()));
                }
                (Some("status"), Some(code), Some(name)) => {
                    found.statuses.push((code.parse().map_err(|_| bad())?, name.to_owned()));
                }
                (Some("fn"), Some(library), Some(prototype)) => {
                    let symbol = prototype
                        .split('(')
                        .next()
                        .and_then(|head| head.split_whitespace().last())
                        .ok_or_else(bad)?;
                    let library = (library != "-").then(|| library.to_owned());
                    found.functions.push((symbol.to_owned(), library, prototype.to_owned()));
                }
                _ => return Err(bad()),
            }
        }
        Ok(found)
    }

    /// Reads `DIR/prototypes.tsv.gz`; the version is the folder's name less `npp-`.
    pub fn read(dir: &Path) -> Result<Prototypes, HeaderError> {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let version = name.strip_prefix("npp-").unwrap_or(name);
        Prototypes::from_text(version, &read_gz(&dir.join(PROTOTYPES))?)
    }
}

/// Every `npp-VERSION` folder under `root`, sorted.
pub fn catalogue_dirs(root: &Path) -> Result<Vec<PathBuf>, HeaderError> {
    let io = |e| HeaderError::Io(root.to_owned(), e);
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(root).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir()
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("npp-"))
        {
            dirs.push(path);
        }
    }
    dirs.sort();
    Ok(dirs)
}

pub fn read_gz(path: &Path) -> Result<String, HeaderError> {
    let io = |e| HeaderError::Io(path.to_owned(), e);
    let file = std::fs::File::open(path).map_err(io)?;
    let mut text = String::new();
    GzDecoder::new(file).read_to_string(&mut text).map_err(io)?;
    Ok(text)
}

pub fn write_gz(path: &Path, text: &str) -> Result<(), HeaderError> {
    let io = |e| HeaderError::Io(path.to_owned(), e);
    let file = std::fs::File::create(path).map_err(io)?;
    let mut gz = GzEncoder::new(file, Compression::best());
    gz.write_all(text.as_bytes()).map_err(io)?;
    gz.finish().map_err(io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prototypes_text_round_trips() {
        let p = Prototypes {
            version: "12.2.3.2".into(),
            types: vec![(TypeKind::Enum, "NppiBorderType".into())],
            statuses: vec![(-16, "NPP_STEP_ERROR".into()), (0, "NPP_NO_ERROR".into())],
            functions: vec![
                (
                    "nppiA_Ctx".into(),
                    Some("nppial".into()),
                    "NppStatus nppiA_Ctx(int a);".into(),
                ),
                ("nppiB_Ctx".into(), None, "NppStatus nppiB_Ctx(void);".into()),
            ],
        };
        assert_eq!(Prototypes::from_text("12.2.3.2", &p.to_text()).unwrap(), p);
    }

    #[test]
    fn gzip_round_trips_and_is_the_same_bytes_twice() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.gz"), dir.path().join("b.gz"));
        write_gz(&a, "text\n").unwrap();
        write_gz(&b, "text\n").unwrap();
        assert_eq!(read_gz(&a).unwrap(), "text\n");
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }
}
