//! Each group of call sites asked of the atlas, as `nppbench predict` asks: the site as a memory
//! scenario (function, geometry, stream kind, context filling, threading), the class the atlas
//! runs give it (measured, or by the function's rule), whether that agrees with what the trace
//! observed, and the function's rule and measured fixes.
//!
//! The site as a scenario:
//! - **Stream kind**: a created stream whose real flags have bit 1 set is `non_blocking`, else
//!   `blocking` (unknown flags: no prediction); the NULL handle and `cudaStreamLegacy` are
//!   `legacy_default`; `cudaStreamPerThread` is `per_thread_default`.
//! - **Context filling**: the trace sees only `nStreamFlags` of the context. Where the declared
//!   non-blocking bit equals the stream's, it is `from_stream` (what NVIDIA documents). Where it
//!   declares non-blocking on a blocking stream, `declared_non_blocking`. Where it declares 0 on
//!   a non-blocking stream, `declared_blocking`: the filling that differs from `from_stream` in
//!   that field alone. A `zeroed` context declares 0 too, but also zeroes fields the trace does
//!   not record, so the trace cannot tell it apart and asks for the nearer one.
//! - **Threading**: a thread per call, a pool of the group's threads, or a single thread.
//!
//! A function known from NPP's headers alone is asked of its design instead, where the knowledge
//! carries its lines ([`Knowledge::designs`]): its shapes are the evidence and the rules fitted
//! on them answer, as `nppbench predict` answers it; no fix is measured there. Lines of another
//! version's design ([`Knowledge::designs_from`]) answer the same way, the prediction naming it.

use std::collections::{BTreeMap, BTreeSet};

use nppbench_model::{ContextFill, Geometry, Primitive, StreamKind, Threading, TraceFile};
use nppbench_stats::LeakClass;

use super::groups::{Advice, Prediction, SiteGroup, SiteStream, ThreadingPattern, Unpredicted};
use crate::calls::design::Designed;
use crate::evidence::{Evidence, FunctionRules};
use crate::knowledge::Knowledge;
use crate::predict::{answer, answer_race, answer_wrong, query};
use crate::verdict::Fix;

/// The knowledge the predictions come from: one NPP version and GPU architecture, its runs pooled.
#[derive(Debug, Clone, PartialEq)]
pub struct AtlasBasis {
    pub npp_version: String,
    pub gpu: String,
    pub runs: usize,
    /// Memory scenarios pooled, and how many were held out of the rules' fit.
    pub scenarios: usize,
    pub held_out: usize,
    /// Whether the atlas's NPP version is the trace's (`None`: the trace did not learn its NPP
    /// version). Where several versions are given, the trace's is used if there.
    pub version_matches: Option<bool>,
    /// The other NPP versions and GPUs given and not used: `13.0.1.2 on NVIDIA H200`.
    pub not_used: Vec<String>,
}

/// Whether two NPP versions name the same release (`13.0.1` and `13.0.1.2`).
fn same_version(a: &str, b: &str) -> bool {
    a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
}

/// Fills each group's prediction and advice from `atlas` (the knowledge of each NPP version and
/// GPU given: that of the trace's NPP version is used where there, else the first); the basis, or
/// `None` without atlas.
pub(super) fn predict_groups(trace: &TraceFile, atlas: &[Knowledge], groups_: &mut [SiteGroup]) -> Option<AtlasBasis> {
    for g in groups_.iter_mut() {
        g.prediction = Err(Unpredicted::NoAtlas);
        if g.geometry.is_none() {
            g.prediction = Err(Unpredicted::GeometryNotRecorded);
        }
    }
    if atlas.is_empty() {
        return None;
    }
    let chosen = trace
        .npp_version
        .as_deref()
        .and_then(|v| atlas.iter().position(|k| same_version(&k.npp_version, v)))
        .unwrap_or(0);
    let k = &atlas[chosen];
    // Each function known from its headers alone whose design the knowledge carries, fitted once.
    let designed_functions: BTreeSet<&String> = groups_
        .iter()
        .filter(|g| g.primitive.is_none_or(Primitive::is_generated))
        .filter_map(|g| k.designs.get_key_value(&g.function).map(|(name, _)| name))
        .collect();
    let designed: DesignedFunctions<'_> = designed_functions
        .into_iter()
        .map(|name| (name.as_str(), Designed::of(name, &k.designs[name])))
        .collect();
    for g in groups_.iter_mut() {
        let (p, evidence, rules, fixes) = match asked_of(g, k, &designed) {
            Ok(found) => found,
            Err(why) => {
                if g.geometry.is_some() {
                    g.prediction = Err(why);
                }
                continue;
            }
        };
        g.primitive = Some(p);
        let advice = Advice {
            rules: rules.iter().find(|f| f.primitive == p).cloned(),
            fixes: fixes.to_vec(),
        };
        g.advice = (advice.rules.is_some() || !advice.fixes.is_empty()).then_some(advice);
        if g.geometry.is_some() {
            g.prediction = predict(g, p, evidence, rules).map(|pred| Prediction {
                from_version: k.designs_from.get(&g.function).cloned(),
                ..pred
            });
        }
    }
    let evidence = &k.evidence;
    let gpus = |k: &Knowledge| k.gpu_models.join(" and ");
    Some(AtlasBasis {
        npp_version: k.npp_version.clone(),
        gpu: gpus(k),
        runs: k.sources.len(),
        scenarios: evidence.cases.len(),
        held_out: evidence.cases.iter().filter(|c| c.held_out).count(),
        version_matches: trace.npp_version.as_deref().map(|v| same_version(&k.npp_version, v)),
        not_used: atlas
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != chosen)
            .map(|(_, o)| format!("{} on {}", o.npp_version, gpus(o)))
            .collect(),
    })
}

/// Each designed function a trace called, by symbol: its design, `None` where it measured
/// nothing, or why its lines could not be used.
type DesignedFunctions<'a> = BTreeMap<&'a str, Result<Option<Designed>, String>>;

/// A function with the evidence, rules and measured fixes it is asked of.
type Asked<'a> = (Primitive, &'a Evidence, &'a [FunctionRules], &'a [Fix]);

/// What `g` is asked of: its catalogued function, with the atlas's evidence, rules and measured
/// fixes; or a function known from its headers alone, with its design's (fixes are not measured
/// there); or why neither (a function neither catalogued nor designed).
fn asked_of<'a>(
    g: &SiteGroup,
    k: &'a Knowledge,
    designed: &'a DesignedFunctions<'_>,
) -> Result<Asked<'a>, Unpredicted> {
    if let Some(p) = g.primitive.filter(|p| !p.is_generated()) {
        return Ok((p, &k.evidence, &k.rules, k.fixes_of(p)));
    }
    match designed.get(g.function.as_str()) {
        Some(Ok(Some(d))) => Ok((d.primitive, &d.evidence, &d.rules, &[])),
        Some(Err(why)) => Err(Unpredicted::Design(why.clone())),
        Some(Ok(None)) | None => Err(Unpredicted::NotCatalogued),
    }
}

/// The group as the memory scenario `nppbench predict` would be asked about.
pub(super) fn scenario(
    g: &SiteGroup,
    p: Primitive,
) -> Result<(Geometry, StreamKind, ContextFill, Threading), Unpredicted> {
    let site = g.geometry.ok_or(Unpredicted::GeometryNotRecorded)?;
    let stream = g.stream.ok_or(Unpredicted::GeometryNotRecorded)?;
    let non_blocking = stream.non_blocking().ok_or(Unpredicted::StreamFlagsUnknown)?;
    let kind = match stream {
        SiteStream::LegacyDefault | SiteStream::LegacyHandle => StreamKind::LegacyDefault,
        SiteStream::PerThreadDefault => StreamKind::PerThreadDefault,
        SiteStream::Created { .. } if non_blocking => StreamKind::NonBlocking,
        SiteStream::Created { .. } => StreamKind::Blocking,
    };
    let declared = g.declared_flags.unwrap_or(0) & 1 == 1;
    let context = match (declared, non_blocking) {
        (d, s) if d == s => ContextFill::FromStream,
        (true, false) => ContextFill::DeclaredNonBlocking,
        _ => ContextFill::DeclaredBlocking,
    };
    let threading = match g.threading {
        ThreadingPattern::Single => Threading::Single,
        ThreadingPattern::Pool(n) => Threading::Pool(n),
        ThreadingPattern::ThreadPerCall => Threading::ThreadPerCall,
    };
    let bad = |what: &str| Unpredicted::Geometry(format!("{what} is negative"));
    let width = u32::try_from(site.width).map_err(|_| bad("the width"))?;
    let height = u32::try_from(site.height).map_err(|_| bad("the height"))?;
    let dst = site
        .dst_stride
        .map(u32::try_from)
        .transpose()
        .map_err(|_| bad("the destination step"))?;
    let src = site
        .src_stride
        .map(u32::try_from)
        .transpose()
        .map_err(|_| bad("the source step"))?;
    let Some(src) = src.or(dst) else {
        return Err(Unpredicted::Geometry("no line step was recorded".into()));
    };
    if p.is_generated() {
        return Ok((
            generated_geometry(p, width, height, src, dst)?,
            kind,
            context,
            threading,
        ));
    }
    let mut geometry = Geometry::new(p, width, height, src);
    if let Some(d) = dst {
        geometry.dst_stride = d;
    }
    geometry.validate(p).map_err(|e| Unpredicted::Geometry(e.to_string()))?;
    Ok((geometry, kind, context, threading))
}

/// The geometry of a call of a function known from its headers alone: the steps recorded (the
/// destination's, where none was, keeping the source's padding in pixels, as `predict` does);
/// an empty ROI is refused too.
fn generated_geometry(
    p: Primitive,
    width: u32,
    height: u32,
    src: u32,
    dst: Option<u32>,
) -> Result<Geometry, Unpredicted> {
    if width == 0 || height == 0 {
        return Err(Unpredicted::Geometry(format!("the ROI is {width}x{height}")));
    }
    crate::calls::design::generated_geometry(p, (width, height), src, dst).map_err(Unpredicted::Geometry)
}

fn predict(
    g: &SiteGroup,
    p: Primitive,
    evidence: &Evidence,
    rules: &[FunctionRules],
) -> Result<Prediction, Unpredicted> {
    let (geometry, stream, context, threading) = scenario(g, p)?;
    let q = query(p, geometry, stream, context, threading);
    let answer = answer(evidence, rules, &q);
    let race = answer_race(evidence, rules, &q);
    let wrong = answer_wrong(evidence, rules, &q);
    let agrees = match (answer.class, g.observed) {
        (Some(predicted), Some(observed)) => Some((predicted == LeakClass::Leak) == (observed == LeakClass::Leak)),
        _ => None,
    };
    Ok(Prediction {
        primitive: p,
        geometry,
        stream,
        context,
        threading,
        answer,
        race,
        wrong,
        agrees,
        from_version: None,
    })
}
