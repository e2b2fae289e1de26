//! Reading a run.json: telling a truncated file, a foreign file and another schema version
//! apart, and migrating schema version 1.

use std::path::Path;

use super::{READABLE_SCHEMA_VERSIONS, RunFile, SCHEMA_VERSION};
use crate::ModelError;

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
    /// version apart.
    pub fn read(path: &Path) -> Result<RunFile, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: path.to_owned(),
            source,
        })?;
        RunFile::parse(&text, path)
    }

    /// Parses the text of a run.json; `path` names it in messages.
    pub fn parse(text: &str, path: &Path) -> Result<RunFile, ModelError> {
        let mut value: serde_json::Value = serde_json::from_str(text).map_err(|e| ModelError::RunJsonSyntax {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
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
                expected: READABLE_SCHEMA_VERSIONS
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(" and "),
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
