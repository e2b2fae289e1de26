//! Reading a run.json: telling a truncated file, a foreign file and another schema version
//! apart, and migrating schema version 1.

use std::io::Read;
use std::path::Path;

use super::{READABLE_SCHEMA_VERSIONS, RunFile, SCHEMA_VERSION};
use crate::ModelError;

/// The first bytes of every gzip file (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether the file at `path` is gzip-compressed, as [`RunFile::read`] tells (its first two
/// bytes); false for a file that cannot be read.
pub fn is_gzip(path: &Path) -> bool {
    let mut magic = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == GZIP_MAGIC
}

/// `bytes` as they were, or decompressed where they are gzip-compressed (by their first two
/// bytes): committed runs are read either way (`run.json.gz`).
pub fn gunzip(bytes: Vec<u8>) -> std::io::Result<Vec<u8>> {
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(bytes);
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes.as_slice()).read_to_end(&mut out)?;
    Ok(out)
}

/// The text of a JSON file, gzip-compressed or not: what [`RunFile::read`] parses, for a caller
/// that edits a run's JSON itself.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let bytes = gunzip(std::fs::read(path)?)?;
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Schema version 1 → 2, on the JSON: the matrix named one primitive (`primitive`), version 2
/// lists them (`primitives`). Every field version 2 added has a default.
fn migrate_v1(value: &mut serde_json::Value) {
    if let Some(m) = value.get_mut("matrix").and_then(|m| m.as_object_mut()) {
        let one = m
            .remove("primitive")
            .unwrap_or_else(|| serde_json::json!("convert8u32f_c1"));
        m.insert("primitives".to_owned(), serde_json::Value::Array(vec![one]));
    }
    if let Some(v) = value.get_mut("schema_version") {
        *v = serde_json::json!(SCHEMA_VERSION);
    }
}

impl RunFile {
    /// Reads a run.json, telling a truncated file, a foreign JSON file and another schema
    /// version apart. A gzip-compressed run (`run.json.gz`: what `gzip` makes of a run.json, as
    /// runs too large to commit whole are committed) is read as the run.json it holds.
    pub fn read(path: &Path) -> Result<RunFile, ModelError> {
        let bytes = std::fs::read(path).map_err(|source| ModelError::Io {
            path: path.to_owned(),
            source,
        })?;
        let not_a_run = |what: &str| ModelError::NotARun {
            path: path.to_owned(),
            what: what.to_owned(),
        };
        let bytes = gunzip(bytes).map_err(|e| {
            not_a_run(&format!(
                "gzip-compressed, but it does not decompress ({e}): it may be truncated"
            ))
        })?;
        if bytes.starts_with(b"SQLite format 3\0") {
            return Err(not_a_run(
                "a history database: render it with `nppbench history report --db`",
            ));
        }
        let text = String::from_utf8(bytes).map_err(|_| not_a_run("not a text file"))?;
        RunFile::parse(&text, path)
    }

    /// Parses the text of a run.json; `path` names it in messages.
    pub fn parse(text: &str, path: &Path) -> Result<RunFile, ModelError> {
        let not_a_run = |what: &str| ModelError::NotARun {
            path: path.to_owned(),
            what: what.to_owned(),
        };
        if !text.trim_start().starts_with('{') {
            let csv = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
            return Err(not_a_run(if csv {
                "a CSV table (scenarios.csv, call_sites.csv): give the run.json or trace.json it was written from"
            } else {
                "not valid JSON (it does not begin with `{`): give a run.json, or a folder holding runs"
            }));
        }
        let mut value: serde_json::Value = serde_json::from_str(text).map_err(|e| ModelError::RunJsonSyntax {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        if value.get("tool").is_none() && value.get("program").is_some() && value.get("capture").is_some() {
            return Err(not_a_run(
                "a trace (`nppbench trace`): render it with `nppbench report --from`; predict and compare take runs",
            ));
        }
        let foreign = |message: &str| ModelError::ForeignRunJson {
            path: path.to_owned(),
            message: message.to_owned(),
        };
        let tool = value
            .get("tool")
            .and_then(|t| t.get("name"))
            .and_then(|n| n.as_str())
            .ok_or_else(|| foreign("it has no tool.name field"))?;
        if tool != "nppbench" {
            return Err(foreign(&format!("tool.name is {tool:?}, not \"nppbench\"")));
        }
        let found = value
            .get("schema_version")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| foreign("it has no schema_version field"))?;
        if !READABLE_SCHEMA_VERSIONS.iter().any(|v| u64::from(*v) == found) {
            let writer = value
                .get("tool")
                .and_then(|t| t.get("version"))
                .and_then(|v| v.as_str())
                .map_or_else(|| "an unknown nppbench".to_owned(), |v| format!("nppbench {v}"));
            return Err(ModelError::SchemaVersion {
                path: path.to_owned(),
                found,
                expected: match READABLE_SCHEMA_VERSIONS.map(|v| v.to_string()).split_last() {
                    Some((last, [])) => last.clone(),
                    Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                    None => String::new(),
                },
                writer,
            });
        }
        if found == 1 {
            migrate_v1(&mut value);
        }
        let mut run: RunFile = serde_json::from_value(value).map_err(|e| foreign(&e.to_string()))?;
        if found == 1 {
            run.rederive_ids();
        }
        Ok(run)
    }

    /// Scenario ids as this version derives them from the axes (runs of schema version 1 had
    /// shorter ids, without the primitive and context).
    fn rederive_ids(&mut self) {
        for s in &mut self.matrix.memory {
            s.id = s.derived_id();
        }
        for s in &mut self.matrix.throughput {
            s.id = s.derived_id();
        }
        for r in &mut self.memory {
            r.scenario.id = r.scenario.derived_id();
        }
        for r in &mut self.throughput {
            r.scenario.id = r.scenario.derived_id();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What reading `bytes` as a run says, from a file named `name`.
    fn said(name: &str, bytes: &[u8]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        RunFile::read(&path).unwrap_err().to_string()
    }

    /// Files of other kinds say what they are and where they go, not "may be truncated" or
    /// "stream did not contain valid UTF-8" or "no tool.name field".
    #[test]
    fn a_file_of_another_kind_is_named_for_what_it_is() {
        let sqlite = said("history.db", b"SQLite format 3\0\x10\x00\x01\x01\xff\xfe");
        assert!(
            sqlite.contains("a history database") && sqlite.contains("history report --db"),
            "{sqlite}"
        );
        let csv = said(
            "call_sites.csv",
            b"function,width,height\nnppiConvert_8u32f_C1R_Ctx,31,31\n",
        );
        assert!(
            csv.contains("a CSV table") && csv.contains("run.json or trace.json"),
            "{csv}"
        );
        let trace = said(
            "trace.json",
            br#"{"schema_version": 1, "program": ["./a"], "capture": {}}"#,
        );
        assert!(trace.contains("a trace") && trace.contains("report --from"), "{trace}");
        let binary = said("run.bin", &[0xff, 0xfe, 0x00, 0x81]);
        assert!(binary.contains("not a text file"), "{binary}");
        let truncated = said("run.json", br#"{"schema_version": 2, "tool": {"#);
        assert!(truncated.contains("may be truncated"), "{truncated}");
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    /// A run too large to commit whole is committed gzip-compressed: it reads as the run.json it
    /// holds, whatever its name, and one cut short says so.
    #[test]
    fn a_gzip_compressed_run_reads_as_the_run_it_holds() {
        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-quick-npp-13.0.1/run.json.gz");
        let plain = read_text(&committed).unwrap().into_bytes();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json.gz");
        let packed = gzip(&plain);
        std::fs::write(&path, &packed).unwrap();
        let (a, b) = (RunFile::read(&committed).unwrap(), RunFile::read(&path).unwrap());
        assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::to_value(&b).unwrap());
        let cut = said("run.json.gz", &packed[..packed.len() / 2]);
        assert!(
            cut.contains("gzip-compressed") && cut.contains("may be truncated"),
            "{cut}"
        );
        // What the archive holds is judged as a plain file would be.
        let history = said("history.db.gz", &gzip(b"SQLite format 3\0\x10"));
        assert!(history.contains("a history database"), "{history}");
    }
}
