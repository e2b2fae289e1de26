//! Knowledge: what `predict` and `trace` answer from, without the runs it came from. One compact,
//! schema-versioned file per NPP version and GPU architecture (`knowledge/npp-13.0.1-sm90.json.gz`):
//! the pooled cases the rules are fitted on (with the held-out ones and the scenarios that flip
//! between processes), each function's fitted rules, and their held-out scores, so that an
//! answer needs no fit. `cargo xtask knowledge --from` writes a file from atlas runs, `--check`
//! fits a file's rules again on its own cases; the CLI embeds the files.

use std::collections::BTreeMap;
use std::io::Read;

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};

use nppbench_model::{Primitive, RunFile};

use crate::RunAnalysis;
use crate::calls::design::ShapeLine;
use crate::calls::{CallLine, Outcome};
use crate::evidence::{Evidence, FunctionRules, groups, pool};
use crate::score::{Tally, held_out};
use crate::verdict::{Fix, fixes};

/// The format's name, first in every file, so that another JSON file is told apart.
pub const FORMAT: &str = "nppbench-knowledge";

/// The schema this nppbench writes and reads. A file of another schema is refused with a message
/// that names both and says what to do.
pub const SCHEMA_VERSION: u32 = 1;

/// The fitted rules' scores on the scenarios held out of the fit: right of all, per hazard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scores {
    /// The class (leak, bounded, flat).
    pub class: (usize, usize),
    pub race: (usize, usize),
    pub wrong: (usize, usize),
}

impl Scores {
    /// `rules`' scores on the cases of `evidence` held out of their fit.
    pub fn of(evidence: &Evidence, rules: &[FunctionRules]) -> Scores {
        let score = held_out(evidence, rules);
        let pair = |t: Tally| (t.right, t.total());
        Scores {
            class: pair(score.total),
            race: pair(score.race_total),
            wrong: pair(score.wrong_total),
        }
    }
}

/// The knowledge of one NPP version on one GPU architecture.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Knowledge {
    pub format: String,
    pub schema_version: u32,
    /// NPP's version, with its build where a library's name carried it (`13.0.1.2`).
    pub npp_version: String,
    /// The GPU architecture, `sm` and the compute capability's digits (`sm90`).
    pub gpu_arch: String,
    /// The GPU models measured (`NVIDIA H100 80GB HBM3`), once each.
    pub gpu_models: Vec<String>,
    /// The runs it was made from, as named when it was made, and each one's GPU.
    pub sources: Vec<Source>,
    /// The nppbench that made it (`0.1.0 (7f4a752bceab)`).
    pub made_by: String,
    pub scores: Scores,
    pub evidence: Evidence,
    pub rules: Vec<FunctionRules>,
    /// The fixes the runs measured beside each function's leaking scenarios (and what they
    /// cost), merged over the runs; functions with none left out.
    pub fixes: Vec<(Primitive, Vec<Fix>)>,
    /// The lines of a `call-catalogue` run of this version, where one was added (`cargo xtask
    /// knowledge --calls`; absent in files made before): what `predict` says of a function that
    /// no rule covers. Added to the schema without a new version: older files load without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<KnownCalls>,
    /// The design lines (`call-catalogue --design`) of the functions known from their headers
    /// alone that a trace called, by symbol (`nppiAbsDiffC_16u_C1R_Ctx`): filled by the CLI from
    /// the designs of the same version and architecture for the trace's call sites, so that
    /// `trace` predicts them as `predict` answers them. Never written nor read with the file.
    #[serde(skip)]
    pub designs: BTreeMap<String, Vec<ShapeLine>>,
    /// For a symbol of [`Knowledge::designs`] whose lines are not this version's: the NPP version
    /// whose design they are (another of the same major release, where no design of this one
    /// measured the function). Never written nor read with the file.
    #[serde(skip)]
    pub designs_from: BTreeMap<String, String>,
}

/// The calls of every function of a version from its roles (issue #45), each a line as
/// `call-catalogue` wrote it, but the functions it could not plan (their headers say why).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnownCalls {
    /// The file the lines were read from, as named when they were added.
    pub source: String,
    pub lines: Vec<CallLine>,
}

impl KnownCalls {
    /// The lines of `source`, those of functions not planned left out.
    pub fn of(source: &str, lines: Vec<CallLine>) -> KnownCalls {
        KnownCalls {
            source: source.to_owned(),
            lines: lines
                .into_iter()
                .filter(|l| !matches!(l.outcome(), Outcome::NotPlanned(_)))
                .collect(),
        }
    }

    /// The line of `symbol` (`nppiAdd_8u_C1RSfs_Ctx`), where it was called.
    pub fn line(&self, symbol: &str) -> Option<&CallLine> {
        self.lines.iter().find(|l| l.symbol == symbol)
    }
}

/// A run a knowledge file was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    pub name: String,
    pub gpu_uuid: String,
}

/// What made knowledge impossible to make or read; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum KnowledgeError {
    #[error("no runs given: give the atlas runs of one NPP version and GPU architecture")]
    NoRuns,
    #[error(
        "the runs are of several {what} ({first}, and {other} in {name}): knowledge is of one NPP version and GPU architecture"
    )]
    Mixed {
        what: &'static str,
        first: String,
        other: String,
        name: String,
    },
    #[error("{origin}: not nppbench knowledge ({why})")]
    Foreign { origin: String, why: String },
    #[error(
        "{origin}: knowledge schema {found} (made by {made_by}); this nppbench reads schema {SCHEMA_VERSION}: remake it from its runs with `cargo xtask knowledge --from RUN…`, or use the nppbench that made it"
    )]
    Schema {
        origin: String,
        found: u32,
        made_by: String,
    },
    #[error("{origin}: {why}")]
    Io { origin: String, why: String },
}

/// The first fields of a file, read before the rest to tell its format and schema.
#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    schema_version: Option<u32>,
    made_by: Option<String>,
}

/// `sm` and the compute capability's digits: "9.0" is `sm90`.
pub fn arch_of(compute_capability: &str) -> String {
    format!("sm{}", compute_capability.replace('.', ""))
}

/// Three parts of an NPP version (`13.0.1` of `13.0.1.2`).
pub fn short_version(v: &str) -> String {
    v.split('.').take(3).collect::<Vec<_>>().join(".")
}

impl Knowledge {
    /// The knowledge of `runs` (each with the name it is recorded under): their scenarios pooled
    /// and each function's rules fitted, as `predict --atlas` does with the same runs.
    pub fn from_runs(runs: &[(String, &RunFile)], made_by: &str) -> Result<Knowledge, KnowledgeError> {
        let Some((_, first)) = runs.first() else {
            return Err(KnowledgeError::NoRuns);
        };
        // Runs agree on the version's three parts; a build number, where a library's name gave
        // one, is kept.
        let mut version = first.environment.npp.full_version();
        let arch = arch_of(&first.environment.gpu.compute_capability);
        let mut gpu_models: Vec<String> = Vec::new();
        for (name, r) in runs {
            let (v, a) = (
                r.environment.npp.full_version(),
                arch_of(&r.environment.gpu.compute_capability),
            );
            let mixed = |what, first: &str, other: String| KnowledgeError::Mixed {
                what,
                first: first.to_owned(),
                other,
                name: name.clone(),
            };
            if short_version(&v) != short_version(&version) {
                return Err(mixed("NPP versions", &version, v));
            }
            if v.len() > version.len() {
                version = v;
            }
            if a != arch {
                return Err(mixed("GPU architectures", &arch, a));
            }
            if !gpu_models.contains(&r.environment.gpu.name) {
                gpu_models.push(r.environment.gpu.name.clone());
            }
        }
        let analyses: Vec<RunAnalysis<'_>> = runs.iter().map(|(_, r)| RunAnalysis::new(r)).collect();
        let members: Vec<&RunAnalysis<'_>> = analyses.iter().collect();
        let evidence = pool(&members);
        let rules = evidence.rules();
        let scores = Scores::of(&evidence, &rules);
        let fixes = rules
            .iter()
            .map(|f| (f.primitive, merged_fixes(&members, f.primitive)))
            .filter(|(_, list)| !list.is_empty())
            .collect();
        Ok(Knowledge {
            format: FORMAT.to_owned(),
            schema_version: SCHEMA_VERSION,
            npp_version: version,
            gpu_arch: arch,
            gpu_models,
            sources: runs
                .iter()
                .map(|(name, r)| Source {
                    name: name.clone(),
                    gpu_uuid: r.environment.gpu.uuid.clone(),
                })
                .collect(),
            made_by: made_by.to_owned(),
            scores,
            evidence,
            rules,
            fixes,
            calls: None,
            designs: BTreeMap::new(),
            designs_from: BTreeMap::new(),
        })
    }

    /// The knowledge of each NPP version and GPU model among `runs` (in first-seen order), as
    /// `trace` pools runs given with `--atlas`.
    pub fn of_runs(runs: &[RunFile]) -> Result<Vec<Knowledge>, KnowledgeError> {
        let analyses: Vec<RunAnalysis<'_>> = runs.iter().map(RunAnalysis::new).collect();
        groups(&analyses)
            .into_iter()
            .map(|(_, _, members)| {
                let named: Vec<(String, &RunFile)> =
                    members.iter().map(|&i| (format!("run {}", i + 1), &runs[i])).collect();
                Knowledge::from_runs(&named, "this nppbench")
            })
            .collect()
    }

    /// The same knowledge with every function's rules fitted again on its own cases, and scored
    /// again on those held out: what a committed file is checked against, so that a change to how
    /// rules are fitted shows without the runs the file was made from.
    pub fn refitted(&self) -> Knowledge {
        let rules = self.evidence.rules();
        let scores = Scores::of(&self.evidence, &rules);
        Knowledge {
            rules,
            scores,
            ..self.clone()
        }
    }

    /// Whether its rules or scores differ from those its cases give today ([`Self::refitted`]),
    /// compared as JSON text (a float read back may differ in its last bit from one computed).
    pub fn drifted(&self) -> bool {
        let again = self.refitted();
        let text = |k: &Knowledge| serde_json::to_string(&(&k.rules, &k.scores)).expect("knowledge serialises");
        text(self) != text(&again)
    }

    /// The fixes measured beside `p`'s leaking scenarios.
    pub fn fixes_of(&self, p: Primitive) -> &[Fix] {
        self.fixes
            .iter()
            .find(|(q, _)| *q == p)
            .map_or(&[], |(_, f)| f.as_slice())
    }

    /// Its file name's stem: `npp-13.0.1-sm90`.
    pub fn name(&self) -> String {
        format!("npp-{}-{}", short_version(&self.npp_version), self.gpu_arch)
    }

    /// Gzip-compressed JSON, as the file holds it.
    pub fn to_gz(&self) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::best());
        serde_json::to_writer(&mut enc, self).expect("knowledge serialises");
        enc.finish().expect("writing to memory")
    }

    /// Reads a file's bytes (gzip-compressed or not); `origin` names it in messages.
    pub fn from_bytes(bytes: &[u8], origin: &str) -> Result<Knowledge, KnowledgeError> {
        let text = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            GzDecoder::new(bytes)
                .read_to_end(&mut out)
                .map_err(|e| KnowledgeError::Io {
                    origin: origin.to_owned(),
                    why: format!("gzip-compressed, but it does not decompress ({e}): it may be truncated"),
                })?;
            out
        } else {
            bytes.to_vec()
        };
        let foreign = |why: String| KnowledgeError::Foreign {
            origin: origin.to_owned(),
            why,
        };
        let header: Header = serde_json::from_slice(&text).map_err(|e| foreign(format!("not JSON: {e}")))?;
        if header.format.as_deref() != Some(FORMAT) {
            return Err(foreign(format!("its format is {:?}, not {FORMAT:?}", header.format)));
        }
        match header.schema_version {
            Some(SCHEMA_VERSION) => {}
            found => {
                return Err(KnowledgeError::Schema {
                    origin: origin.to_owned(),
                    found: found.unwrap_or(0),
                    made_by: header.made_by.unwrap_or_else(|| "unknown".to_owned()),
                });
            }
        }
        serde_json::from_slice(&text).map_err(|e| foreign(format!("schema {SCHEMA_VERSION}, but {e}")))
    }

    /// Whether `bytes` begin a knowledge file (of any schema), not a run.
    pub fn is_knowledge(bytes: &[u8]) -> bool {
        let mut head = Vec::new();
        let read = if bytes.starts_with(&[0x1f, 0x8b]) {
            GzDecoder::new(bytes).take(256).read_to_end(&mut head).is_ok()
        } else {
            head.extend_from_slice(&bytes[..bytes.len().min(256)]);
            true
        };
        read && String::from_utf8_lossy(&head).contains(&format!("\"format\":\"{FORMAT}\""))
    }
}

/// The fixes each run measured beside `p`'s leaking scenarios, merged by title.
fn merged_fixes(runs: &[&RunAnalysis<'_>], p: Primitive) -> Vec<Fix> {
    let mut out: Vec<Fix> = Vec::new();
    for a in runs {
        let mut only = (*a).clone();
        only.memory.retain(|m| m.record.scenario.primitive == p);
        only.throughput.retain(|t| t.record.scenario.primitive == p);
        for f in fixes(&only) {
            match out.iter_mut().find(|o| o.title == f.title) {
                Some(o) => {
                    o.compared += f.compared;
                    o.fixed += f.fixed;
                    o.worst_growth_mib = o.worst_growth_mib.max(f.worst_growth_mib);
                    o.time_change_pct = widen(o.time_change_pct, f.time_change_pct);
                    o.latency_change_pct = widen(o.latency_change_pct, f.latency_change_pct);
                }
                None => out.push(f),
            }
        }
    }
    out
}

fn widen(a: Option<(f64, f64)>, b: Option<(f64, f64)>) -> Option<(f64, f64)> {
    match (a, b) {
        (Some((a0, a1)), Some((b0, b1))) => Some((a0.min(b0), a1.max(b1))),
        (x, None) | (None, x) => x,
    }
}

#[cfg(test)]
mod tests;
