//! The verdict and the recommendations, derived from the measured data alone: what the leaking
//! configurations share, and each fix with its measured effect.

use std::collections::BTreeMap;

use nppbench_model::{ContextFill, FailureKind, StreamKind, Threading};

use crate::OutputClass;
use crate::memory::RaceClass;
use crate::thresholds::{LAUNCH_BOUND_PIXELS, STREAMS_PER_THREAD};
use crate::{MemoryAnalysis, RunAnalysis};
use nppbench_stats::LeakClass;

mod race;

/// What the leaking configurations have in common, as facts about the data.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub leaking: usize,
    /// Memory scenarios with a result.
    pub measured: usize,
    pub failed: usize,
    /// The failed scenarios by kind of fault.
    pub failed_by_kind: BTreeMap<FailureKind, usize>,
    /// Stream kinds and threading models measured that never leaked.
    pub never: Vec<String>,
    /// Growth per new thread among the leaking, MiB: (smallest, largest) fitted slope.
    pub per_thread_range: Option<(f64, f64)>,
    /// Hidden streams per new thread among the leaking, (smallest, largest).
    pub hidden_range: Option<(f64, f64)>,
    /// Kernels NPP launches per call on the leaking configurations' geometries, and on the
    /// others: (smallest, largest) of each, from CUPTI's records.
    pub kernels_per_call_leaking: Option<(f64, f64)>,
    pub kernels_per_call_other: Option<(f64, f64)>,
    /// The scenarios whose NPP creates streams for every new thread and destroys none, by
    /// geometry and threading model: `31x31 s32/128, thread_per_call: legacy_default, blocking`.
    pub stream_hoarders: Vec<String>,
    /// The race: scenarios whose ordering rounds were made, those that raced, and of those the
    /// ones that do not leak (a fix of the leak that leaves the race).
    pub race_measured: usize,
    /// Of those measured, the ones ordered with no round made: all of NPP's work in the first call
    /// on the caller's stream (`--race-rounds where-split`).
    pub race_by_one_stream: usize,
    pub races: usize,
    /// Racing scenarios whose first call CUPTI saw all on the caller's stream (rounds made with
    /// `--race-rounds always`): each one a race that `where-split` would have filed ordered, so
    /// its premise is wrong wherever this is not 0.
    pub races_on_one_stream: usize,
    pub races_without_leak: usize,
    /// Stream kinds and context fillings measured that never raced.
    pub race_never: Vec<String>,
    /// What a user of a racing configuration sees, on the largest image that raced.
    pub race_example: Option<RaceExample>,
    /// The wrong-pixel hazard: what the synchronised calls computed.
    pub output: OutputVerdict,
}

/// The outputs of a run's memory scenarios, judged: how many were checked, wrong, faulted, or
/// missed nppbench's own reference; the functions that computed wrong pixels; one example.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutputVerdict {
    /// Scenarios whose output was judged right or wrong (a fault counts as wrong).
    pub judged: usize,
    pub wrong: usize,
    pub faults: usize,
    pub reference_misses: usize,
    /// The functions with a wrong or faulting scenario, in catalogue order.
    pub functions: Vec<nppbench_model::Primitive>,
    /// The wrong scenario with the largest first error: its label and its first wrong sample.
    pub example: Option<(String, nppbench_model::WrongSample)>,
}

/// A racing scenario's wrong columns: what its output looks like.
#[derive(Debug, Clone, PartialEq)]
pub struct RaceExample {
    /// `Convert_8u32f_C1R 1918x1080 s1920/7680 · blocking · from_stream`.
    pub label: String,
    pub width: u32,
    /// The first and last wrong column, and rows.
    pub columns: [u32; 2],
    pub rows: [u32; 2],
    pub wrong_rounds: u32,
    pub rounds: u32,
}

/// A fix, measured against the leaking configurations it applies to.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fix {
    /// One of nppbench's fix titles (a knowledge file keeps it as text).
    pub title: std::borrow::Cow<'static, str>,
    /// How many leaking configurations had this fix measured beside them.
    pub compared: usize,
    /// How many of those the fix made flat or bounded.
    pub fixed: usize,
    /// The largest memory growth any fixed variant still showed, MiB.
    pub worst_growth_mib: f64,
    /// The change in time per call (CUDA events) with the fix, `(with − without) / without`
    /// percent, + slower: at a megapixel and more (smaller images are launch-bound) and where the
    /// fix changes the stream or the ROI.
    pub time_change_pct: Option<(f64, f64)>,
    /// The change in median host latency per call with the fix, percent, + slower.
    pub latency_change_pct: Option<(f64, f64)>,
    /// The race: of the leaking configurations compared whose fixed variants had their race
    /// measured, how many, and in how many none of those variants raced.
    pub race_compared: usize,
    pub race_fixed: usize,
}

impl Fix {
    /// Whether the fix ended the leak, and the race where it was measured, everywhere it was
    /// measured beside a leak.
    pub fn ends_both(&self) -> bool {
        self.fixed == self.compared && self.race_compared > 0 && self.race_fixed == self.race_compared
    }
}

/// Whether a scenario is of a group (a stream kind, a threading family, a context filling).
type Group = Box<dyn Fn(&MemoryAnalysis<'_>) -> bool>;

fn stream_is(k: StreamKind) -> Group {
    Box::new(move |m| m.record.scenario.stream == k)
}

/// The names of the groups that have scenarios among `ms`, none of them `bad` (what never leaked,
/// or never raced, here).
fn never_in(
    ms: &[&MemoryAnalysis<'_>],
    bad: impl Fn(&MemoryAnalysis<'_>) -> bool,
    groups: impl IntoIterator<Item = (String, Group)>,
) -> Vec<String> {
    groups
        .into_iter()
        .filter(|(_, of)| {
            let mut members = ms.iter().filter(|m| of(m)).peekable();
            members.peek().is_some() && members.all(|m| !bad(m))
        })
        .map(|(name, _)| name)
        .collect()
}

fn range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
    })
}

pub fn verdict(a: &RunAnalysis<'_>) -> Verdict {
    let measured: Vec<&MemoryAnalysis<'_>> = a.memory.iter().filter(|m| m.class.is_some()).collect();
    let leaking: Vec<&MemoryAnalysis<'_>> = a.leaking().collect();
    let leaks = |m: &MemoryAnalysis<'_>| m.class == Some(LeakClass::Leak);
    let mut never = never_in(
        &measured,
        leaks,
        StreamKind::ALL.map(|k| (format!("the {k} stream"), stream_is(k))),
    );
    never.extend(never_in(
        &measured,
        leaks,
        ["single", "pool", "thread_per_call_own_stream"].map(|family| {
            let group: Group = Box::new(move |m| m.record.scenario.threading.family() == family);
            (format!("the {family} threading model"), group)
        }),
    ));
    let leak_geometries: Vec<_> = leaking.iter().map(|m| m.record.scenario.geometry).collect();
    let kernels = |leak: bool| {
        range(
            a.throughput
                .iter()
                .filter(|t| leak_geometries.contains(&t.record.scenario.geometry) == leak)
                .filter_map(|t| t.kernels_per_call),
        )
    };
    let mut stream_hoarders: Vec<(String, Vec<&str>)> = Vec::new();
    for m in &measured {
        let s = &m.record.scenario;
        let hoards = s.threading.thread_bound().is_none()
            && m.streams_never_destroyed.unwrap_or(0) > 0
            && m.hidden_per_thread.is_some_and(|f| f.slope >= STREAMS_PER_THREAD);
        if !hoards {
            continue;
        }
        let key = format!("{}, {}", s.geometry.label(), s.threading);
        match stream_hoarders.iter_mut().find(|(k, _)| *k == key) {
            Some((_, streams)) => streams.push(s.stream.as_str()),
            None => stream_hoarders.push((key, vec![s.stream.as_str()])),
        }
    }
    let ordered: Vec<&MemoryAnalysis<'_>> = measured.iter().copied().filter(|m| m.race.races().is_some()).collect();
    let racing: Vec<&MemoryAnalysis<'_>> = ordered.iter().copied().filter(|m| m.race == RaceClass::Races).collect();
    Verdict {
        output: output_verdict(a),
        race_example: race::example(&racing),
        race_measured: ordered.len(),
        race_by_one_stream: ordered
            .iter()
            .filter(|m| m.rounds().is_some_and(|o| o.ordered_by_one_stream()))
            .count(),
        races: racing.len(),
        races_on_one_stream: racing
            .iter()
            .filter(|m| m.rounds().and_then(|o| o.first_call).is_some_and(|c| c.all_on_caller()))
            .count(),
        races_without_leak: racing.iter().filter(|m| m.class != Some(LeakClass::Leak)).count(),
        race_never: race::never_raced(&ordered),
        stream_hoarders: stream_hoarders
            .into_iter()
            .map(|(k, v)| format!("{k}: {}", v.join(", ")))
            .collect(),
        kernels_per_call_leaking: if leaking.is_empty() { None } else { kernels(true) },
        kernels_per_call_other: kernels(false),
        leaking: leaking.len(),
        measured: measured.len(),
        failed: a
            .memory
            .iter()
            .filter(|m| m.record.outcome.is_failed() && !m.output.judged())
            .count()
            + a.throughput.iter().filter(|t| t.record.outcome.is_failed()).count(),
        failed_by_kind: a.failures_by_kind(),
        never,
        per_thread_range: range(leaking.iter().filter_map(|m| m.per_thread.map(|f| f.slope))),
        hidden_range: range(leaking.iter().filter_map(|m| m.hidden_per_thread.map(|f| f.slope))),
    }
}

/// The wrong-pixel part of the verdict.
fn output_verdict(a: &RunAnalysis<'_>) -> OutputVerdict {
    let mut v = OutputVerdict::default();
    let mut worst: Option<(f64, String, nppbench_model::WrongSample)> = None;
    for m in &a.memory {
        let s = &m.record.scenario;
        match &m.output {
            OutputClass::Right => v.judged += 1,
            OutputClass::Wrong(f) => {
                v.judged += 1;
                v.wrong += 1;
                v.functions.push(s.primitive);
                if let (Some(first), Some(err)) = (f.first, f.first_error())
                    && worst.as_ref().is_none_or(|(e, ..)| err > *e)
                {
                    let label = format!("{} {} · {} · {}", s.primitive, s.geometry.label(), s.stream, s.context);
                    worst = Some((err, label, first));
                }
            }
            OutputClass::Faults(_) => {
                v.judged += 1;
                v.faults += 1;
                v.functions.push(s.primitive);
            }
            OutputClass::ReferenceMiss(_) => v.reference_misses += 1,
            OutputClass::NotMeasured(_) => {}
        }
    }
    v.functions.sort();
    v.functions.dedup();
    v.example = worst.map(|(_, label, first)| (label, first));
    v
}

/// A change in time, `(with − without) / without`, percent: + is slower.
fn change_pct(with: f64, without: f64) -> f64 {
    (with / without - 1.0) * 100.0
}

/// Each fix measured beside the leaking configurations: what the same geometry did with it.
/// Those that end both hazards first, the cheapest (host latency) first among them; then the
/// rest in nppbench's order.
pub fn fixes(a: &RunAnalysis<'_>) -> Vec<Fix> {
    let mut out: Vec<Fix> = candidates()
        .into_iter()
        .map(|(title, pick)| measure_fix(a, title, &*pick))
        .filter(|fix| fix.compared > 0)
        .collect();
    let cost = |f: &Fix| f.latency_change_pct.map_or(f64::INFINITY, |(_, hi)| hi);
    out.sort_by(|x, y| {
        y.ends_both()
            .cmp(&x.ends_both())
            .then(if x.ends_both() && y.ends_both() {
                cost(x).total_cmp(&cost(y))
            } else {
                std::cmp::Ordering::Equal
            })
    });
    out
}

type Pick = dyn Fn(&MemoryAnalysis<'_>, &MemoryAnalysis<'_>) -> bool;

/// A fix of the context's filling: the same call on the same stream and threading, its context
/// filled `to` where the leaking one was filled otherwise.
fn context_becomes(to: ContextFill) -> Box<Pick> {
    Box::new(move |l, m| {
        let (ls, ms) = (&l.record.scenario, &m.record.scenario);
        ls.context != to
            && ms.context == to
            && ms.primitive == ls.primitive
            && ms.geometry == ls.geometry
            && ms.stream == ls.stream
            && ms.threading == ls.threading
    })
}

/// The fixes nppbench knows, each with how it picks, for a leaking scenario, the scenarios that
/// differ from it by that fix alone.
fn candidates() -> [(&'static str, Box<Pick>); 6] {
    // A fix is measured on the same function with the context filled the same way, on the same
    // geometry: only the one thing the fix changes differs.
    let same_call = |l: &MemoryAnalysis<'_>, m: &MemoryAnalysis<'_>| {
        let (ls, ms) = (&l.record.scenario, &m.record.scenario);
        ls.primitive == ms.primitive && ls.context == ms.context && ls.geometry == ms.geometry
    };
    [
        (
            "Issue the calls on a non-blocking stream (CU_STREAM_NON_BLOCKING / cudaStreamNonBlocking)",
            Box::new(move |l, m| {
                same_call(l, m)
                    && m.record.scenario.stream == StreamKind::NonBlocking
                    && m.record.scenario.threading == l.record.scenario.threading
            }),
        ),
        (
            "Call NPP from a fixed pool of threads",
            Box::new(move |l, m| {
                same_call(l, m)
                    && m.record.scenario.stream == l.record.scenario.stream
                    && matches!(m.record.scenario.threading, Threading::Pool(_))
            }),
        ),
        (
            "Give each new thread its own non-blocking stream",
            Box::new(move |l, m| same_call(l, m) && m.record.scenario.threading == Threading::ThreadPerCallOwnStream),
        ),
        (
            "Fill nStreamFlags from the stream (cudaStreamGetFlags), as NVIDIA documents",
            context_becomes(ContextFill::FromStream),
        ),
        (
            "Declare cudaStreamNonBlocking in the context's nStreamFlags, whatever the stream",
            context_becomes(ContextFill::DeclaredNonBlocking),
        ),
        (
            "Round the ROI width up to a multiple of 16 inside the same stride (padded ROI)",
            Box::new(|l, m| {
                let (lg, mg) = (&l.record.scenario.geometry, &m.record.scenario.geometry);
                mg.padded_from == Some(lg.width)
                    && mg.height == lg.height
                    && mg.src_stride == lg.src_stride
                    && m.record.scenario.primitive == l.record.scenario.primitive
                    && m.record.scenario.context == l.record.scenario.context
                    && m.record.scenario.stream == l.record.scenario.stream
                    && m.record.scenario.threading == l.record.scenario.threading
            }),
        ),
    ]
}

/// Whether the scenario's context declares a non-blocking stream: from the stream's own flags, or
/// declared whatever the stream.
fn declares_non_blocking(s: &nppbench_model::MemoryScenario) -> bool {
    s.context == ContextFill::DeclaredNonBlocking
        || (s.context == ContextFill::FromStream && s.stream == StreamKind::NonBlocking)
}

/// One fix against every leaking scenario it was measured beside.
fn measure_fix(a: &RunAnalysis<'_>, title: &'static str, pick: &Pick) -> Fix {
    let mut fix = Fix {
        title: title.into(),
        compared: 0,
        fixed: 0,
        worst_growth_mib: 0.0,
        time_change_pct: None,
        latency_change_pct: None,
        race_compared: 0,
        race_fixed: 0,
    };
    let mut ratios = Vec::new();
    let mut latency = Vec::new();
    for l in a.leaking() {
        let variants: Vec<&MemoryAnalysis<'_>> = a.memory.iter().filter(|m| m.class.is_some() && pick(l, m)).collect();
        if variants.is_empty() {
            continue;
        }
        fix.compared += 1;
        if variants.iter().all(|m| m.class != Some(LeakClass::Leak)) {
            fix.fixed += 1;
        }
        let raced: Vec<bool> = variants.iter().filter_map(|m| m.race.races()).collect();
        if !raced.is_empty() {
            fix.race_compared += 1;
            if raced.iter().all(|races| !races) {
                fix.race_fixed += 1;
            }
        }
        for m in &variants {
            fix.worst_growth_mib = fix.worst_growth_mib.max(m.total_growth_mib());
            let (ms, ls) = (&m.record.scenario, &l.record.scenario);
            // What changes the work NPP queues: another stream or geometry, or the flags the
            // context declares (declared non-blocking, NPP runs the last columns on the caller's
            // stream instead of its own, after the body rather than beside it).
            let changes_kernel = ms.stream != ls.stream
                || ms.geometry != ls.geometry
                || declares_non_blocking(ms) != declares_non_blocking(ls);
            if changes_kernel
                && ls.geometry.pixels() >= LAUNCH_BOUND_PIXELS
                && let (Some(with), Some(without)) = (
                    a.throughput_for(m).and_then(|t| t.median_us),
                    a.throughput_for(l).and_then(|t| t.median_us),
                )
            {
                ratios.push(change_pct(with, without));
            }
            if let (Some(with), Some(without)) = (m.latency_us, l.latency_us) {
                latency.push(change_pct(with, without));
            }
        }
    }
    fix.time_change_pct = range(ratios.into_iter());
    fix.latency_change_pct = range(latency.into_iter());
    fix
}
