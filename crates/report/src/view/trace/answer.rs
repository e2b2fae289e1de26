//! The atlas's answer for each group of call sites, in words: what the answers come from, the
//! class asked and its basis (measured in the atlas or in a designed function's design, by the
//! function's rule), or why there is none, and where the trace disagrees.

use nppbench_analysis::LeakClass;
use nppbench_analysis::predict::Basis;
use nppbench_analysis::trace::{SiteGroup, TraceFindings, Unpredicted};

use super::words::threading_words;

pub(super) fn atlas_basis(f: &TraceFindings) -> String {
    match &f.atlas {
        Some(b) => format!(
            "The atlas's answers come from {} run(s) of NPP {} on {}: {} memory scenarios pooled ({} held out of the rules' fit), asked as `nppbench predict` asks.",
            b.runs, b.npp_version, b.gpu, b.scenarios, b.held_out
        ),
        None => "No atlas run was given: pass --atlas RUN (a run.json of the program's NPP version) to see each function's rule, its measured fixes and predict's answer beside what the trace saw.".into(),
    }
}

/// The atlas's answer for a group, in words.
pub(super) fn prediction_text(g: &SiteGroup) -> String {
    let p = match &g.prediction {
        Ok(p) => p,
        Err(Unpredicted::NoAtlas) => return "no atlas given".into(),
        Err(Unpredicted::NotCatalogued) => return "not in nppbench's catalogue: no prediction".into(),
        Err(Unpredicted::GeometryNotRecorded) => {
            return "geometry not recorded (streams created outside a catalogued call): no prediction".into();
        }
        Err(Unpredicted::StreamFlagsUnknown) => {
            return "the driver could not say the stream's flags: no prediction".into();
        }
        Err(Unpredicted::Geometry(why)) => return format!("not a geometry the function takes ({why}): no prediction"),
        Err(Unpredicted::Design(why)) => return format!("its design's lines could not be used ({why}): no prediction"),
    };
    let asked = format!(
        "{} {}, {} stream, context {}, {}",
        p.primitive,
        p.geometry.label(),
        p.stream,
        p.context,
        p.threading
    );
    let class = p.answer.class.map_or("unknown", LeakClass::as_str);
    let basis = match &p.answer.basis {
        Basis::Measured(classes) if classes.len() > 1 => format!(
            "measured in several processes, not stable: {}",
            classes.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", then ")
        ),
        Basis::Measured(_) if p.primitive.is_generated() => "measured in its design".into(),
        Basis::Measured(_) => "measured in the atlas".into(),
        Basis::Rule => "by the function's rule".into(),
        Basis::None => "the atlas measured no scenario of this function".into(),
    };
    let basis = match &p.from_version {
        Some(v) => format!(
            "{basis}, of NPP {v}: no design of the atlas's NPP version called this function, and the design of another version of its major release answered"
        ),
        None => basis,
    };
    format!("{class} ({basis}); asked as {asked}")
}

/// The disagreement between the atlas and the trace, in words; `None` where they agree or
/// either has no class.
pub(super) fn agreement(g: &SiteGroup) -> Option<String> {
    let p = g.prediction.as_ref().ok()?;
    if p.agrees != Some(false) {
        return None;
    }
    let predicted = p.answer.class.map_or("unknown", LeakClass::as_str);
    let seen = if g.streams_kept > 0 {
        format!("kept {} stream(s) on {}", g.streams_kept, threading_words(g))
    } else {
        "kept no stream".to_owned()
    };
    Some(format!(
        "The atlas and the trace disagree: the atlas predicts {predicted} for this scenario, and the trace's calls {seen}. Either the program does something the scenario does not describe, or the atlas has not measured what decides it here: trace it again, or measure this scenario with `nppbench run`."
    ))
}
