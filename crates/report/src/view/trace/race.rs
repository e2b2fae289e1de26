//! The trace page's race: the call sites called while their stream still had work queued, in a
//! configuration that may race (`nppbench_analysis::trace::gates::racing_sites`), each with what
//! the atlas says of its configuration, and the verdict's sentence on them.

use serde::Serialize;

use nppbench_analysis::trace::gates::racing_sites;
use nppbench_analysis::trace::{SiteGroup, TraceFindings};

use super::words::{geometry_label, stream_words};

/// A call site called with work pending on its stream.
#[derive(Debug, Clone, Serialize)]
pub struct RaceSiteView {
    /// The site's anchor in the table of every call site.
    pub anchor: String,
    pub function: String,
    pub geometry: String,
    pub stream: String,
    pub pending: String,
    /// What the atlas says of the configuration, in words.
    pub atlas: String,
    /// Whether the atlas says it races (else it cannot say).
    pub races: bool,
}

/// The sites of `f` called with work pending where the atlas does not call them ordered, the
/// most such calls first; `anchor` gives a group's anchor by its index in `f.groups`.
pub(super) fn race_sites(f: &TraceFindings) -> Vec<RaceSiteView> {
    racing_sites(f)
        .into_iter()
        .map(|g| {
            let i = f.groups.iter().position(|x| std::ptr::eq(x, g)).unwrap_or(0);
            view(i, g)
        })
        .collect()
}

fn view(i: usize, g: &SiteGroup) -> RaceSiteView {
    let races = g.atlas_races() == Some(true);
    let prediction = g.prediction.as_ref().ok();
    let atlas = match prediction.map(|p| (&p.race, p.race.races, p.from_version.as_deref())) {
        Some((r, Some(true), Some(v))) => format!("races ({} in NPP {v}'s design)", r.basis.as_str()),
        Some((r, Some(true), None)) => format!("races ({} in the atlas)", r.basis.as_str()),
        Some((_, Some(false), _)) => "ordered".to_owned(),
        _ => "no answer from the atlas: a call declared blocking on a stream other than the legacy default can race, where NPP splits it".to_owned(),
    };
    RaceSiteView {
        anchor: format!("site-{}", i + 1),
        function: g.function.clone(),
        geometry: geometry_label(g),
        stream: stream_words(g),
        // The interposer asks within a budget (crates/trace/src/recorder/pending.rs): the count
        // is of the calls asked.
        pending: format!(
            "{} of {} calls asked ({} in all)",
            g.calls_with_work_pending, g.calls_pending_asked, g.calls
        ),
        atlas,
        races,
    }
}

/// The verdict's sentence on the race, where a site was called with work pending.
pub(super) fn race_sentence(sites: &[RaceSiteView]) -> Option<String> {
    let first = sites.first()?;
    let sure = sites.iter().filter(|s| s.races).count();
    Some(format!(
        "{} call site(s) were called while their stream still had work queued{}: where NPP splits a call, its own stream does not wait for that work, and the last columns can hold the previous contents of the source (stale pixels). The most: {} on {}, {}. Declaring cudaStreamNonBlocking in the context's nStreamFlags ends this race and the leak.",
        sites.len(),
        if sure > 0 {
            format!(", {sure} of them in configurations the atlas says race")
        } else {
            String::new()
        },
        first.function,
        first.geometry,
        first.pending
    ))
}
