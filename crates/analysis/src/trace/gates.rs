//! `nppbench trace --fail-on`: what a trace trips, judged from its findings, as compute-sanitizer
//! gates on its `--error-exitcode`.
//!
//! - **leak**: new threads keep NPP's streams ([`TraceStatus::Grows`]): memory grows for as long
//!   as the program makes new threads.
//! - **race**: a call site was called while its stream still had work queued (the interposer asks
//!   `cuStreamQuery` before each call that can race: a context declaring a blocking stream, a
//!   stream other than the legacy default), in a configuration the atlas does not call ordered.
//!   With `--atlas`, the sites the atlas says race; without it, or where the atlas cannot answer,
//!   every site with work pending, since its calls could race.
//! - **wrong**: a call site whose configuration the atlas says computes wrong pixels with every
//!   call synchronised (measured, or by the function's wrong rule). Without an atlas it cannot
//!   trip: the trace sees the call, not its pixels.

use super::{SiteGroup, TraceFindings, TraceStatus};

/// A gate of `trace --fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceGate {
    Leak,
    Race,
    Wrong,
}

impl TraceGate {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceGate::Leak => "leak",
            TraceGate::Race => "race",
            TraceGate::Wrong => "wrong",
        }
    }
}

/// A gate that tripped, and what tripped it, in words: the gate, how many call sites, the worst.
#[derive(Debug, Clone, PartialEq)]
pub struct Tripped {
    pub gate: TraceGate,
    pub what: String,
}

/// The call sites that trip the race gate: called with work pending where the atlas does not say
/// the configuration is ordered; the most such calls first.
pub fn racing_sites(f: &TraceFindings) -> Vec<&SiteGroup> {
    let mut sites: Vec<&SiteGroup> = f
        .groups
        .iter()
        .filter(|g| g.called_with_work_pending() != Some(false))
        .collect();
    sites.sort_by_key(|g| std::cmp::Reverse(g.calls_with_work_pending));
    sites
}

/// The gates of `gates` that `f` trips.
pub fn tripped(f: &TraceFindings, gates: &[TraceGate]) -> Vec<Tripped> {
    let mut out = Vec::new();
    for &gate in gates {
        match gate {
            TraceGate::Leak if f.status == TraceStatus::Grows => {
                let leaking: Vec<&SiteGroup> = f
                    .groups
                    .iter()
                    .filter(|g| g.observed == Some(nppbench_stats::LeakClass::Leak))
                    .collect();
                let first = leaking.first().map_or_else(String::new, |g| {
                    format!(", the first {} ({} streams kept)", g.short_name(), g.streams_kept)
                });
                out.push(Tripped {
                    gate,
                    what: format!(
                        "new threads keep NPP's streams at {} call site(s){first}",
                        leaking.len()
                    ),
                });
            }
            TraceGate::Race => {
                let sites = racing_sites(f);
                if let Some(worst) = sites.first() {
                    let atlas = match worst.atlas_races() {
                        Some(true) => "the atlas says this configuration races",
                        _ => "no atlas answer for this configuration: give --atlas to know whether NPP splits it",
                    };
                    out.push(Tripped {
                        gate,
                        what: format!(
                            "{} call site(s) called with work pending on their stream, the most {}: {} of {} calls asked, {} in all ({atlas})",
                            sites.len(),
                            worst.short_name(),
                            worst.calls_with_work_pending,
                            worst.calls_pending_asked,
                            worst.calls
                        ),
                    });
                }
            }
            TraceGate::Wrong => {
                let sites: Vec<&SiteGroup> = f.groups.iter().filter(|g| g.atlas_wrong() == Some(true)).collect();
                if let Some(first) = sites.first() {
                    out.push(Tripped {
                        gate,
                        what: format!(
                            "{} call site(s) in a configuration the atlas says computes wrong pixels, the first {} ({} calls)",
                            sites.len(),
                            first.short_name(),
                            first.calls
                        ),
                    });
                }
            }
            TraceGate::Leak => {}
        }
    }
    out
}
