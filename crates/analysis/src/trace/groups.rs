//! Call sites grouped as the atlas describes a scenario: function, geometry, declared flags,
//! stream kind and threading pattern; and the streams NPP created outside any catalogued call,
//! grouped by the NPP function their stack names, with the geometry not recorded. Each group
//! carries what the atlas says of it (filled by [`super::atlas`]).

use std::collections::BTreeSet;

use nppbench_model::{CallSite, ContextFill, Geometry, Primitive, StreamKind, Threading, TraceFile, TraceStreamKind};
use nppbench_stats::LeakClass;

use crate::evidence::FunctionRules;
use crate::predict::{Answer, RaceAnswer, WrongAnswer};
use crate::verdict::Fix;

/// A call site's ROI and line steps, as recorded (`None`: the function takes no such step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteGeometry {
    pub width: i32,
    pub height: i32,
    pub src_stride: Option<i32>,
    pub dst_stride: Option<i32>,
}

/// The stream calls were made on, with what the driver said of a created stream's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteStream {
    /// The NULL handle.
    LegacyDefault,
    /// `cudaStreamPerThread`.
    PerThreadDefault,
    /// `cudaStreamLegacy`, the legacy default stream by its explicit handle.
    LegacyHandle,
    /// A stream the program created: non-blocking where its real flags have bit 1 set, blocking
    /// where they do not, unknown where the driver could not say.
    Created { non_blocking: Option<bool> },
}

impl SiteStream {
    fn of(site: &CallSite) -> SiteStream {
        match site.stream {
            TraceStreamKind::LegacyDefault => SiteStream::LegacyDefault,
            TraceStreamKind::PerThreadDefault => SiteStream::PerThreadDefault,
            TraceStreamKind::LegacyHandle => SiteStream::LegacyHandle,
            TraceStreamKind::Created => SiteStream::Created {
                non_blocking: site.real_flags.map(|f| f & 1 == 1),
            },
        }
    }

    /// Whether calls on it synchronise as a non-blocking stream (`None`: unknown flags).
    pub fn non_blocking(self) -> Option<bool> {
        match self {
            SiteStream::Created { non_blocking } => non_blocking,
            _ => Some(false),
        }
    }
}

/// How the threads of a group made its calls (see the module's definitions in [`super`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadingPattern {
    Single,
    /// More than two calls per thread: a pool of this many threads.
    Pool(u32),
    /// About one call per thread: new threads keep coming.
    ThreadPerCall,
}

impl ThreadingPattern {
    /// The pattern of `calls` made by `threads` distinct threads.
    pub fn of(calls: u64, threads: u64) -> ThreadingPattern {
        if threads <= 1 {
            ThreadingPattern::Single
        } else if calls > 2 * threads {
            ThreadingPattern::Pool(u32::try_from(threads).unwrap_or(u32::MAX))
        } else {
            ThreadingPattern::ThreadPerCall
        }
    }
}

/// Call sites alike in everything the atlas describes a scenario by, or the streams NPP created
/// outside a catalogued call for one function (`geometry`, `declared_flags` and `stream` `None`:
/// not recorded).
#[derive(Debug, Clone)]
pub struct SiteGroup {
    /// The NPP symbol (`nppiConvert_8u32f_C1R_Ctx`), or the function the creating stack names.
    pub function: String,
    /// The catalogue's function, where the symbol is catalogued, or the function a design
    /// measured (a [generated](Primitive::generated) primitive), once asked of its design.
    pub primitive: Option<Primitive>,
    pub geometry: Option<SiteGeometry>,
    pub declared_flags: Option<u32>,
    pub stream: Option<SiteStream>,
    pub threading: ThreadingPattern,
    pub calls: u64,
    /// Distinct threads, summed over the group's call sites (sites that differ only in device or
    /// in the driver's flags may count a thread twice).
    pub threads: u64,
    pub first_call_threads: u64,
    /// Calls whose status was not `NPP_SUCCESS`.
    pub failed_calls: u64,
    pub streams_created: u64,
    pub streams_destroyed: u64,
    /// Created and not destroyed by the last flush.
    pub streams_kept: u64,
    pub mib_attributed: f64,
    pub time_in_npp_ns: u64,
    /// Calls that could race whose stream the interposer asked about before NPP's call
    /// (`cuStreamQuery`), and of those the calls whose stream still had work queued: work that
    /// NPP's own stream does not wait for, where NPP splits the call.
    pub calls_pending_asked: u64,
    pub calls_with_work_pending: u64,
    /// Leak where a thread per call kept streams, bounded where one thread or a pool did, flat
    /// where none was kept; `None` where streams could not be counted.
    pub observed: Option<LeakClass>,
    /// The atlas's answer for this exact scenario, or why there is none.
    pub prediction: Result<Prediction, Unpredicted>,
    /// The function's rule and measured fixes from the atlas, where it measured the function.
    pub advice: Option<Advice>,
}

impl SiteGroup {
    /// Whether its calls were made outside any catalogued call (attributed by stack).
    pub fn attributed_by_stack(&self) -> bool {
        self.geometry.is_none()
    }

    /// A short name: `nppiConvert_8u32f_C1R_Ctx 1918x1080`.
    pub fn short_name(&self) -> String {
        match &self.geometry {
            Some(g) => format!("{} {}x{}", self.function, g.width, g.height),
            None => self.function.clone(),
        }
    }

    pub(super) fn observed_class(&self) -> LeakClass {
        match (self.streams_kept, self.threading) {
            (0, _) => LeakClass::Flat,
            (_, ThreadingPattern::ThreadPerCall) => LeakClass::Leak,
            _ => LeakClass::Bounded,
        }
    }

    fn empty(function: String) -> SiteGroup {
        SiteGroup {
            primitive: Primitive::from_name(&function),
            function,
            geometry: None,
            declared_flags: None,
            stream: None,
            threading: ThreadingPattern::Single,
            calls: 0,
            threads: 0,
            first_call_threads: 0,
            failed_calls: 0,
            streams_created: 0,
            streams_destroyed: 0,
            streams_kept: 0,
            mib_attributed: 0.0,
            time_in_npp_ns: 0,
            calls_pending_asked: 0,
            calls_with_work_pending: 0,
            observed: None,
            prediction: Err(Unpredicted::NoAtlas),
            advice: None,
        }
    }
}

/// Every call site in a group of its alikes, then a group per NPP function that stacks named for
/// streams created outside catalogued calls. Figures other than counts are filled by the caller.
pub(super) fn groups(trace: &TraceFile) -> Vec<SiteGroup> {
    let mut out: Vec<SiteGroup> = Vec::new();
    for site in &trace.call_sites {
        let geometry = SiteGeometry {
            width: site.width,
            height: site.height,
            src_stride: site.src_stride,
            dst_stride: site.dst_stride,
        };
        let threading = ThreadingPattern::of(site.calls, u64::from(site.threads));
        let stream = SiteStream::of(site);
        let same = |g: &&mut SiteGroup| {
            g.function == site.function
                && g.geometry == Some(geometry)
                && g.declared_flags == Some(site.declared_flags)
                && g.stream == Some(stream)
                && g.threading == threading
        };
        let g = match out.iter_mut().find(same) {
            Some(g) => g,
            None => {
                let mut g = SiteGroup::empty(site.function.clone());
                g.geometry = Some(geometry);
                g.declared_flags = Some(site.declared_flags);
                g.stream = Some(stream);
                g.threading = threading;
                out.push(g);
                out.last_mut().expect("just pushed")
            }
        };
        g.calls += site.calls;
        g.threads += u64::from(site.threads);
        g.first_call_threads += u64::from(site.first_call_threads);
        g.failed_calls += site
            .statuses
            .iter()
            .filter(|s| s.status != 0)
            .map(|s| s.calls)
            .sum::<u64>();
        g.streams_created += site.streams_created;
        g.streams_destroyed += site.streams_destroyed;
        g.streams_kept += site.streams_created.saturating_sub(site.streams_destroyed);
        g.time_in_npp_ns += site.time_in_npp_ns;
        g.calls_pending_asked += site.calls_pending_asked;
        g.calls_with_work_pending += site.calls_with_work_pending;
    }
    out.extend(by_stack(trace));
    out
}

/// Streams created outside catalogued calls, by the NPP function their stack names; the pattern
/// from the calls their creating threads made.
fn by_stack(trace: &TraceFile) -> Vec<SiteGroup> {
    let mut out: Vec<(SiteGroup, BTreeSet<i64>)> = Vec::new();
    for s in trace.streams.iter().filter(|s| s.call_site.is_none()) {
        let Some(function) = &s.attributed_function else {
            continue;
        };
        let i = match out.iter().position(|(g, _)| &g.function == function) {
            Some(i) => i,
            None => {
                out.push((SiteGroup::empty(function.clone()), BTreeSet::new()));
                out.len() - 1
            }
        };
        let (g, tids) = &mut out[i];
        tids.insert(s.tid);
        g.streams_created += 1;
        if s.destroyed_s.is_some() {
            g.streams_destroyed += 1;
        } else {
            g.streams_kept += 1;
        }
    }
    out.into_iter()
        .map(|(mut g, tids)| {
            let calls: u64 = trace
                .threads
                .iter()
                .filter(|t| tids.contains(&t.tid))
                .map(|t| t.calls)
                .sum();
            g.threads = tids.len() as u64;
            g.threading = ThreadingPattern::of(calls, g.threads);
            g.prediction = Err(Unpredicted::GeometryNotRecorded);
            g
        })
        .collect()
}

/// A group asked of the atlas.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub primitive: Primitive,
    pub geometry: Geometry,
    pub stream: StreamKind,
    pub context: ContextFill,
    pub threading: Threading,
    pub answer: Answer,
    /// Whether the atlas says this scenario races (its output can be wrong when the caller's
    /// stream writes the source late), and on what basis.
    pub race: RaceAnswer,
    /// Whether the atlas says this scenario computes wrong pixels with every call synchronised,
    /// and on what basis.
    pub wrong: WrongAnswer,
    /// Whether the atlas's "leaks or not" is what the trace observed; `None` where either side
    /// has no class.
    pub agrees: Option<bool>,
    /// The NPP version whose design answered, where it is not the knowledge's own version
    /// ([`crate::knowledge::Knowledge::designs_from`]).
    pub from_version: Option<String>,
}

impl SiteGroup {
    /// Whether the atlas says this group's configuration races; `None` where it gives no race
    /// answer (no atlas, a function or geometry it cannot answer for).
    pub fn atlas_races(&self) -> Option<bool> {
        self.prediction.as_ref().ok()?.race.races
    }

    /// Whether the atlas says this group's configuration computes wrong pixels; `None` where it
    /// gives no answer.
    pub fn atlas_wrong(&self) -> Option<bool> {
        self.prediction.as_ref().ok()?.wrong.wrong
    }

    /// Whether the group was called with work pending on its stream in a configuration that may
    /// race: `Some(true)` where the atlas says it races, `None` where the atlas cannot say (its
    /// calls could race: the interposer asks only those), `Some(false)` where no call had work
    /// pending or the atlas says the configuration is ordered.
    pub fn called_with_work_pending(&self) -> Option<bool> {
        if self.calls_with_work_pending == 0 {
            return Some(false);
        }
        self.atlas_races()
    }
}

/// Why a group has no prediction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unpredicted {
    /// No atlas run was given.
    NoAtlas,
    /// The function is not in the catalogue.
    NotCatalogued,
    /// Streams created outside a catalogued call: the geometry was not recorded.
    GeometryNotRecorded,
    /// The driver could not say the stream's flags.
    StreamFlagsUnknown,
    /// The geometry is not one the catalogue's function takes (negative sizes, strides too short).
    Geometry(String),
    /// The function's design lines could not be made its evidence (why).
    Design(String),
}

/// The function's rule and the fixes the atlas measured beside its leaking scenarios.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub rules: Option<FunctionRules>,
    /// Merged over the atlas runs: counts summed, ranges widened.
    pub fixes: Vec<Fix>,
}
