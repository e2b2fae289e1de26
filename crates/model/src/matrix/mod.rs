//! Matrices of scenarios: a matrix file read from TOML ([`MatrixSpec`]) and its expansion into
//! concrete, validated scenarios ([`Matrix`]), as run.json records it.

mod expand;
mod locate;
mod sample;
pub use sample::draws;
mod spec;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use spec::MatrixSpec;

use crate::{Geometry, MemoryScenario, ModelError, Primitive, Settings, ThroughputScenario};

/// A matrix expanded into concrete, validated scenarios.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    pub name: String,
    pub description: String,
    /// Every primitive the matrix measures, in catalogue order.
    pub primitives: Vec<Primitive>,
    pub settings: Settings,
    pub memory: Vec<MemoryScenario>,
    pub throughput: Vec<ThroughputScenario>,
    /// Geometries a matrix of several primitives gives that some primitive cannot take (a stride
    /// that is not whole pixels, say): not measured, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// What the matrix gives that a function does not have and is measured without (a
    /// reduction's `dst_stride`: its destination is its values, 8 bytes apart), each said where
    /// it was written; `nppbench run` prints them before it starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The part of the matrix this run measured (`nppbench run --shard K/N`); none for all of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::Shard>,
}

impl Matrix {
    /// Reads a matrix file.
    pub fn from_file(path: &Path) -> Result<Matrix, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: path.to_owned(),
            source,
        })?;
        Matrix::from_toml(&text, path)
    }

    /// Parses and expands a matrix written in TOML; `path` names it in messages.
    pub fn from_toml(text: &str, path: &Path) -> Result<Matrix, ModelError> {
        let spec: MatrixSpec = toml::from_str(text).map_err(|e| ModelError::MatrixSyntax {
            path: PathBuf::from(path),
            message: e.to_string().trim_end().to_owned(),
        })?;
        let mut matrix = expand::expand(spec, &locate::Locator { path, text })?;
        matrix.dedup(path)?;
        Ok(matrix)
    }

    /// Geometry tables may overlap (a sweep of widths and a sweep of streams share the case at
    /// their crossing): a scenario listed twice runs once. Only a matrix that lists nothing new
    /// in a table is an error, since that is a mistake.
    fn dedup(&mut self, path: &Path) -> Result<(), ModelError> {
        let mut seen = BTreeSet::new();
        self.memory.retain(|s| seen.insert(s.id.clone()));
        self.throughput.retain(|s| seen.insert(s.id.clone()));
        if self.memory.is_empty() && self.throughput.is_empty() {
            let message = match self.skipped.first() {
                // Every function skipped every geometry: say why the first was.
                Some(first) => format!(
                    "the matrix has no scenario: no function it names takes any of its geometries (the first refused: {first})"
                ),
                None => "the matrix has no scenario: give at least one stream kind and threading model".to_owned(),
            };
            return Err(ModelError::invalid(path.display().to_string(), message));
        }
        Ok(())
    }

    /// Every distinct geometry of the matrix, in first-seen order.
    pub fn geometries(&self) -> Vec<Geometry> {
        let mut out: Vec<Geometry> = Vec::new();
        let all = self
            .memory
            .iter()
            .map(|s| s.geometry)
            .chain(self.throughput.iter().map(|s| s.geometry));
        for g in all {
            if !out.contains(&g) {
                out.push(g);
            }
        }
        out
    }

    /// Every distinct (primitive, geometry) pair: what the device's free memory must hold.
    pub fn buffers(&self) -> Vec<(Primitive, Geometry)> {
        let mut out: Vec<(Primitive, Geometry)> = Vec::new();
        let all = self
            .memory
            .iter()
            .map(|s| (s.primitive, s.geometry))
            .chain(self.throughput.iter().map(|s| (s.primitive, s.geometry)));
        for pg in all {
            if !out.contains(&pg) {
                out.push(pg);
            }
        }
        out
    }
}

impl Matrix {
    /// Keeps only the scenarios of `shard`, and records it; the primitives left are those that
    /// still have a scenario.
    pub fn keep_shard(&mut self, shard: crate::Shard) {
        self.memory.retain(|s| shard.holds(&s.id));
        self.throughput.retain(|s| shard.holds(&s.id));
        let used: std::collections::BTreeSet<_> = self
            .memory
            .iter()
            .map(|s| s.primitive)
            .chain(self.throughput.iter().map(|s| s.primitive))
            .collect();
        self.primitives.retain(|p| used.contains(p));
        self.shard = Some(shard);
    }
}
