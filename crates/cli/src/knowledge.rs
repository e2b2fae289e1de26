//! Where `predict` and `trace` get their knowledge: the atlas runs or knowledge files given with
//! `--atlas`, or else the knowledge built into the binary (`build.rs`: `knowledge/*.json.gz`) of
//! the NPP version asked for (`--npp-version`) or found (`--npp DIR`, else the default search).
//! Either way the same evidence and rules, and words saying which were used.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use nppbench_analysis::RunAnalysis;
use nppbench_analysis::calls::design::ShapeLine;
use nppbench_analysis::evidence::{Evidence, FunctionRules, pool};
use nppbench_analysis::knowledge::{Knowledge, KnownCalls};
use nppbench_model::{Primitive, TraceFile};

use crate::exit::bad_input;
use crate::runs::{one_npp_version, read_runs};

include!(concat!(env!("OUT_DIR"), "/knowledge.rs"));
include!(concat!(env!("OUT_DIR"), "/designs.rs"));
include!(concat!(env!("OUT_DIR"), "/design_indexes.rs"));

/// The evidence and rules an answer rests on, and where they came from.
pub(crate) struct Known {
    /// NPP's version (`13.0.1.2`).
    pub(crate) version: String,
    pub(crate) evidence: Evidence,
    pub(crate) rules: Vec<FunctionRules>,
    /// "8 run(s)", or "the built-in knowledge npp-13.0.1-sm90 (8 runs on NVIDIA H100 …)".
    pub(crate) from: String,
    /// The calls of every function of the version, where the knowledge holds them.
    pub(crate) calls: Option<KnownCalls>,
    /// The design lines of the functions known from their headers alone: built in with the
    /// knowledge of the same name, or a file given (`predict --designs`).
    pub(crate) designs: Option<Designs>,
}

/// A file of design lines: its name (`built in (npp-13.0.1-sm90)`, or the file's), its bytes, and
/// the index saying which member holds each function, where it has one (the built-in files).
pub(crate) struct Designs {
    pub(crate) name: String,
    pub(crate) bytes: std::borrow::Cow<'static, [u8]>,
    pub(crate) index: Option<&'static str>,
}

impl Known {
    /// The design lines of `symbol` (`nppiResize_8u_C3R_Ctx`), none where no design of this
    /// knowledge measured it.
    pub(crate) fn design_lines(&self, symbol: &str) -> anyhow::Result<Vec<ShapeLine>> {
        match &self.designs {
            Some(designs) => designs.lines(symbol),
            None => Ok(Vec::new()),
        }
    }
}

impl Designs {
    /// The lines of `symbol`, none where this file holds none: read through the index where the
    /// file has one (a built-in file that does not read is nppbench's fault), else from the whole
    /// file (one given: bad input).
    fn lines(&self, symbol: &str) -> anyhow::Result<Vec<ShapeLine>> {
        let Designs { name, bytes, index } = self;
        match index {
            Some(index) => nppbench_analysis::calls::design::lines_indexed(bytes, index, symbol)
                .map_err(|e| anyhow::anyhow!("the designs {name}: {e}")),
            None => nppbench_analysis::calls::design::lines_of(bytes, symbol)
                .map_err(|e| bad_input(format!("the designs {name}: {e}"))),
        }
    }
}

pub(crate) use nppbench_analysis::knowledge::short_version as short;

/// Whether `version` is `asked`, or begins with its parts (`13.0` asks for `13.0.1.2`).
fn matches(version: &str, asked: &str) -> bool {
    version == asked || version.starts_with(&format!("{asked}."))
}

/// The built-in knowledge files whose names (`npp-13.0.1-sm90`) pass `keep` (given the version
/// in the name, `13.0.1`), each read: only those, since reading one takes tens of milliseconds.
/// They are the binary's own files: one that does not load is nppbench's fault.
fn built_in_where(keep: impl Fn(&str) -> bool) -> Vec<Knowledge> {
    BUILT_IN
        .iter()
        .filter(|(name, _)| keep(name_version(name)))
        .map(|(name, bytes)| {
            Knowledge::from_bytes(bytes, &format!("built-in knowledge {name}"))
                .unwrap_or_else(|e| panic!("the built-in knowledge does not load: {e}"))
        })
        .collect()
}

/// The version a knowledge file's name carries: `13.0.1` of `npp-13.0.1-sm90`.
fn name_version(name: &str) -> &str {
    name.trim_start_matches("npp-").split('-').next().unwrap_or_default()
}

/// The versions built in, for messages: "12.2.3, 13.0.1, 13.2.0".
pub(crate) fn built_in_versions() -> String {
    let mut v: Vec<&str> = BUILT_IN.iter().map(|(name, _)| name_version(name)).collect();
    v.dedup();
    v.join(", ")
}

/// The designs built in beside the built-in knowledge `name` (`npp-13.0.1-sm90`), with their
/// index, where there are some.
fn built_in_designs_of(name: &str) -> Option<Designs> {
    let (n, bytes) = BUILT_IN_DESIGNS.iter().find(|(n, _)| *n == name)?;
    let index = BUILT_IN_DESIGN_INDEXES
        .iter()
        .find(|(i, _)| i == n)
        .map(|(_, text)| std::str::from_utf8(text).expect("an index built in is text"));
    Some(Designs {
        name: format!("built in ({n})"),
        bytes: std::borrow::Cow::Borrowed(*bytes),
        index,
    })
}

/// The design lines of `symbol` built in of NPP `version` (`13.0.1.2`: its three parts), read
/// through the designs' index; none where no design of that version measured it.
pub(crate) fn built_in_design_lines(version: &str, symbol: &str) -> anyhow::Result<Vec<ShapeLine>> {
    match built_in_design_of_version(version).and_then(|(name, _)| built_in_designs_of(name)) {
        Some(designs) => designs.lines(symbol),
        None => Ok(Vec::new()),
    }
}

/// The built-in designs file of NPP `version` (`13.0.1.2`: its three parts), by name, if any.
fn built_in_design_of_version(version: &str) -> Option<&'static (&'static str, &'static [u8])> {
    BUILT_IN_DESIGNS
        .iter()
        .find(|(name, _)| name_version(name) == short(version))
}

/// The lines of `symbol` of the latest built-in design of another version of `version`'s major
/// release that holds any (`13.0.1` for `13.2.0.58`), with that version; `None` where none does.
/// `predict` and `trace` ask it only where no design of `version` holds a line of `symbol`: one
/// whose calls NPP refused throughout says more of that version than another's measurement.
pub(crate) fn other_version_lines(version: &str, symbol: &str) -> anyhow::Result<Option<(String, Vec<ShapeLine>)>> {
    for other in other_versions_designed(version) {
        let lines = built_in_design_lines(other, symbol)?;
        if !lines.is_empty() {
            return Ok(Some((other.to_owned(), lines)));
        }
    }
    Ok(None)
}

/// The other versions of `version`'s major release with designs built in (`13.0.1` for
/// `13.2.0.58`), the latest first.
pub(crate) fn other_versions_designed(version: &str) -> Vec<&'static str> {
    let major = |v: &str| v.split('.').next().unwrap_or_default().to_owned();
    let parts = |v: &str| v.split('.').filter_map(|p| p.parse().ok()).collect::<Vec<u32>>();
    let mut others: Vec<&'static str> = BUILT_IN_DESIGNS
        .iter()
        .map(|(name, _)| name_version(name))
        .filter(|v| *v != short(version) && major(v) == major(version))
        .collect();
    others.sort_by_key(|v| std::cmp::Reverse(parts(v)));
    others
}

/// Every design line built in of NPP `version` (`13.0.1.2`: its three parts), none where none is.
pub(crate) fn built_in_designs(version: &str) -> anyhow::Result<Vec<ShapeLine>> {
    let Some((name, bytes)) = built_in_design_of_version(version) else {
        return Ok(Vec::new());
    };
    nppbench_analysis::calls::read_lines_of(bytes)
        .map_err(|e| anyhow::anyhow!("the built-in designs {name} do not load: {e}"))
}

/// The built-in knowledge of NPP `version` (`13.0`, `13.0.1.2`).
pub(crate) fn of_version(version: &str) -> anyhow::Result<Known> {
    let found = built_in_where(|v| matches(v, version) || matches(version, v));
    let Some(k) = found.into_iter().next() else {
        return Err(bad_input(format!(
            "no knowledge of NPP {version} is built into nppbench (it knows {}): measure an atlas with `nppbench run --preset atlas` on that version and give it with --atlas",
            built_in_versions()
        )));
    };
    let designs = built_in_designs_of(&k.name());
    Ok(Known {
        designs,
        ..known(k, "built-in knowledge")
    })
}

fn known(k: Knowledge, what: &str) -> Known {
    let from = format!(
        "the {what} {} ({} run(s) on {}, made by {})",
        k.name(),
        k.sources.len(),
        k.gpu_models.join(" and "),
        k.made_by
    );
    Known {
        version: k.npp_version,
        evidence: k.evidence,
        rules: k.rules,
        from,
        calls: k.calls,
        designs: None,
    }
}

/// The knowledge for an answer: `atlas` (runs, folders of runs, or one knowledge file) where
/// given, refused if not of `version`; else the built-in knowledge of `version`, or of the NPP in
/// `npp` (a folder), or of the NPP the default search finds.
pub(crate) fn resolve(atlas: &[PathBuf], version: Option<&str>, npp: Option<&Path>) -> anyhow::Result<Known> {
    if !atlas.is_empty() {
        return from_atlas(atlas, version);
    }
    if let Some(v) = version {
        return of_version(v);
    }
    match nppbench_engine::load_npp(npp) {
        Ok(lib) => {
            let v = lib.version().to_string();
            of_version(&v)
        }
        Err(e) if npp.is_some() => Err(bad_input(format!("--npp: {e}"))),
        Err(_) => Err(bad_input(format!(
            "say which NPP to answer for: --npp-version VERSION (nppbench knows {}), --npp DIR (a folder of NPP's libraries), or --atlas RUN (runs of your own); no NPP was found where nppbench looks",
            built_in_versions()
        ))),
    }
}

/// The knowledge a trace's page and gates use: `atlas` (runs of any NPP versions, or knowledge
/// files) where given, else the built-in knowledge of the NPP version the traced program loaded,
/// none where there is none of it. Each carries the design lines of the functions known from
/// their headers alone that the trace's call sites called, from the designs built in of its
/// version and architecture, where there are some.
pub(crate) fn for_trace(atlas: &[PathBuf], trace: &TraceFile) -> anyhow::Result<Vec<Knowledge>> {
    let known = if atlas.is_empty() {
        let Some(v) = trace.npp_version.as_deref() else {
            return Ok(Vec::new());
        };
        built_in_where(|name| name == short(v)).into_iter().take(1).collect()
    } else {
        given(atlas)?
    };
    // The symbols no catalogue row describes (one a design registered earlier included).
    let symbols: BTreeSet<&str> = trace
        .call_sites
        .iter()
        .map(|s| s.function.as_str())
        .filter(|f| Primitive::from_name(f).is_none_or(Primitive::is_generated))
        .collect();
    let built_in = atlas.is_empty();
    known
        .into_iter()
        .map(|mut k| {
            if let Some(designs) = built_in_designs_of(&k.name()) {
                for symbol in &symbols {
                    let lines = designs.lines(symbol)?;
                    if !lines.is_empty() {
                        k.designs.insert((*symbol).to_owned(), lines);
                    }
                }
            }
            // From the knowledge built in alone, as `predict` answers: a function no design of
            // this version measured, from a design of another version of its major release.
            if built_in {
                for symbol in &symbols {
                    if k.designs.contains_key(*symbol) {
                        continue;
                    }
                    if let Some((version, lines)) = other_version_lines(&k.npp_version, symbol)? {
                        k.designs.insert((*symbol).to_owned(), lines);
                        k.designs_from.insert((*symbol).to_owned(), version);
                    }
                }
            }
            Ok(k)
        })
        .collect()
}

/// The knowledge `shield` compiles its plan from: `atlas` (runs of any NPP versions, or knowledge
/// files) where given, else every built-in knowledge (the interposer picks the NPP loaded).
pub(crate) fn for_shield(atlas: &[PathBuf]) -> anyhow::Result<Vec<Knowledge>> {
    if atlas.is_empty() {
        return Ok(built_in_where(|_| true));
    }
    given(atlas)
}

/// The knowledge the page of every function of NPP `version` shows: of `atlas` (runs or a
/// knowledge file) where given, which must hold that version's; else the built-in, none where
/// none is built in.
pub(crate) fn of_catalogue(atlas: &[PathBuf], version: &str) -> anyhow::Result<Option<Knowledge>> {
    if atlas.is_empty() {
        return Ok(built_in_where(|v| v == short(version)).into_iter().next());
    }
    let all = given(atlas)?;
    let found: Vec<String> = all.iter().map(|k| k.npp_version.clone()).collect();
    all.into_iter()
        .find(|k| short(&k.npp_version) == short(version))
        .map(Some)
        .ok_or_else(|| {
            bad_input(format!(
                "--atlas: knowledge of NPP {}, not of the catalogue's NPP {version}: give that version's runs or knowledge",
                found.join(", ")
            ))
        })
}

/// Whether `path` is a knowledge file, from its first bytes (a run of tens of megabytes is not
/// read whole to tell).
fn is_knowledge_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    path.is_file()
        && std::fs::File::open(path).is_ok_and(|f| f.take(4096).read_to_end(&mut head).is_ok())
        && Knowledge::is_knowledge(&head)
}

/// A knowledge file, read; a bad one is bad input.
fn read_knowledge(path: &Path) -> anyhow::Result<Knowledge> {
    let bytes = std::fs::read(path).map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
    Knowledge::from_bytes(&bytes, &path.display().to_string()).map_err(bad_input)
}

/// Runs of any NPP versions and knowledge files, as knowledge (one per version and GPU model).
fn given(atlas: &[PathBuf]) -> anyhow::Result<Vec<Knowledge>> {
    let mut out = Vec::new();
    let mut runs = Vec::new();
    for p in atlas {
        if is_knowledge_file(p) {
            out.push(read_knowledge(p)?);
        } else {
            runs.extend(read_runs(std::slice::from_ref(p))?.into_iter().map(|(_, r)| r));
        }
    }
    out.extend(Knowledge::of_runs(&runs).map_err(bad_input)?);
    Ok(out)
}

/// `--atlas`: one knowledge file, or runs of one NPP version.
fn from_atlas(atlas: &[PathBuf], version: Option<&str>) -> anyhow::Result<Known> {
    if let Some(path) = atlas.iter().find(|p| is_knowledge_file(p)) {
        if atlas.len() > 1 {
            return Err(bad_input(format!(
                "--atlas {}: a knowledge file is answered from alone; give it without runs, or give runs alone",
                path.display()
            )));
        }
        let k = read_knowledge(path)?;
        if let Some(asked) = version
            && !matches(&k.npp_version, asked)
        {
            return Err(bad_input(format!(
                "--npp-version {asked}: {} is knowledge of NPP {}",
                path.display(),
                k.npp_version
            )));
        }
        return Ok(known(k, "knowledge file"));
    }
    let loaded = read_runs(atlas)?;
    let version = one_npp_version(&loaded, version)?;
    let analyses: Vec<RunAnalysis<'_>> = loaded.iter().map(|(_, r)| RunAnalysis::new(r)).collect();
    let evidence = pool(&analyses.iter().collect::<Vec<_>>());
    let rules = evidence.rules();
    Ok(Known {
        version,
        evidence,
        rules,
        from: format!("{} run(s)", loaded.len()),
        calls: None,
        designs: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in file loads with this nppbench's schema, one per version, and `13.0` finds
    /// 13.0.1.
    #[test]
    fn the_built_in_knowledge_loads_and_is_found_by_version() {
        let all = built_in_where(|_| true);
        assert!(all.len() >= 3, "{}", built_in_versions());
        for (k, (name, _)) in all.iter().zip(BUILT_IN) {
            assert_eq!(&k.name(), name, "a file's name says its version and architecture");
        }
        let k = of_version("13.0").unwrap();
        assert!(k.version.starts_with("13.0.1"), "{}", k.version);
        assert!(k.from.contains("built-in knowledge npp-13.0.1-sm90"), "{}", k.from);
        let err = of_version("11.8").err().unwrap().to_string();
        assert!(
            err.contains("no knowledge of NPP 11.8") && err.contains("12.2.3, 13.0.1, 13.2.0"),
            "{err}"
        );
    }
}
