//! One memory scenario judged: growth per new thread and per call, its leak class, the streams
//! NPP created and never destroyed, and the host latency of a call.

use nppbench_model::{MemoryRecord, Outcome};
use nppbench_stats::{Fit, LeakClass, classify_read, least_squares, median, settle};

use crate::OutputClass;

const MIB: f64 = 1024.0 * 1024.0;

/// Which memory probe a series was taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// This process, from NVML.
    Process,
    /// Device-wide used memory (`cuMemGetInfo`), where NVML gave no per-process figure.
    Device,
}

/// One memory scenario, judged.
#[derive(Debug, Clone)]
pub struct MemoryAnalysis<'a> {
    pub record: &'a MemoryRecord,
    pub probe: Probe,
    /// Growth over the first reading, MiB, one value per call read after (a probe reads where
    /// the settle rule judges, `nppbench_stats::settle::reads_at`; runs before it, after every
    /// call).
    pub growth_mib: Vec<f64>,
    /// The call after which each of `growth_mib` was read (1-based).
    pub growth_calls: Vec<u32>,
    pub threads_spawned: u32,
    pub calls: u32,
    /// MiB per new thread: memory against threads spawned.
    pub per_thread: Option<Fit>,
    /// MiB per call: memory against calls.
    pub per_call: Option<Fit>,
    /// `None` when the scenario failed before any sample.
    pub class: Option<LeakClass>,
    /// Streams NPP (not nppbench) created, cumulative, one value per call.
    pub hidden_streams: Option<Vec<f64>>,
    /// Hidden streams against threads spawned.
    pub hidden_per_thread: Option<Fit>,
    pub streams_never_destroyed: Option<u32>,
    /// Median host latency of a call (launch + synchronise), warm-up call excluded, µs.
    pub latency_us: Option<f64>,
    /// Whether NPP's work waited for the caller's stream (the ordering rounds).
    pub race: RaceClass,
    /// Whether its synchronised calls computed the right pixels (the wrong-pixel hazard).
    pub output: OutputClass,
}

/// Whether a scenario's calls can leave wrong pixels when the caller's stream writes the source
/// late: judged from its ordering rounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RaceClass {
    /// Some round's output was wrong: NPP's work did not wait for the caller's stream.
    Races,
    /// Every round was right.
    Ordered,
    /// No rounds were made, and why.
    NotMeasured(String),
}

impl RaceClass {
    pub fn as_str(&self) -> &'static str {
        match self {
            RaceClass::Races => "races",
            RaceClass::Ordered => "ordered",
            RaceClass::NotMeasured(_) => "not measured",
        }
    }

    /// Whether it races, where that was measured.
    pub fn races(&self) -> Option<bool> {
        match self {
            RaceClass::Races => Some(true),
            RaceClass::Ordered => Some(false),
            RaceClass::NotMeasured(_) => None,
        }
    }

    pub fn of(record: &MemoryRecord) -> RaceClass {
        let Some(result) = &record.result else {
            return RaceClass::NotMeasured("the scenario gave no result".into());
        };
        match &result.ordering {
            None => RaceClass::NotMeasured("measured before nppbench made ordering rounds".into()),
            Some(o) if o.wrong_rounds > 0 => RaceClass::Races,
            Some(o) if o.rounds > 0 && o.not_measured.is_none() => RaceClass::Ordered,
            // All of NPP's work on the caller's stream, which orders it: no round was needed.
            Some(o) if o.ordered_by_one_stream() => RaceClass::Ordered,
            Some(o) => RaceClass::NotMeasured(o.not_measured.clone().unwrap_or_else(|| "no round was made".into())),
        }
    }
}

impl MemoryAnalysis<'_> {
    /// The scenario's ordering rounds, where it has any.
    pub fn rounds(&self) -> Option<&nppbench_model::OrderingRounds> {
        self.record.result.as_ref()?.ordering.as_ref()
    }

    pub fn total_growth_mib(&self) -> f64 {
        self.growth_mib.last().copied().unwrap_or(0.0)
    }

    pub fn hidden_streams_total(&self) -> Option<f64> {
        self.hidden_streams.as_ref().and_then(|h| h.last().copied())
    }
}

/// One memory scenario judged (as every page, CSV and history row judges it).
pub fn analyse_memory(record: &MemoryRecord) -> MemoryAnalysis<'_> {
    let empty = MemoryAnalysis {
        record,
        probe: Probe::Device,
        growth_mib: Vec::new(),
        growth_calls: Vec::new(),
        threads_spawned: 0,
        calls: 0,
        per_thread: None,
        per_call: None,
        class: None,
        hidden_streams: None,
        hidden_per_thread: None,
        streams_never_destroyed: None,
        latency_us: None,
        race: RaceClass::of(record),
        output: OutputClass::of(record),
    };
    let Some(result) = &record.result else {
        return empty;
    };
    let s = &result.samples;
    if s.is_empty() {
        return empty;
    }
    // The samples read after (a probe that reads gives one figure or both; one that did not
    // read gives neither). This process's figure where every reading has it; else the device's
    // where every reading has that (a probe reads it wherever the process's figure is missing).
    // A series with neither whole has no figure to judge.
    let read: Vec<usize> = (0..s.len())
        .filter(|&i| s.process_used_bytes[i].is_some() || s.device_used_bytes[i].is_some())
        .collect();
    let whole = |figures: &[Option<u64>]| -> Option<Vec<u64>> { read.iter().map(|&i| figures[i]).collect() };
    let (probe, bytes) = match (whole(&s.process_used_bytes), whole(&s.device_used_bytes)) {
        (Some(p), _) if !p.is_empty() => (Probe::Process, p),
        (_, Some(d)) if !d.is_empty() => (Probe::Device, d),
        _ => return empty,
    };
    let first = bytes[0] as f64;
    let growth_mib: Vec<f64> = bytes.iter().map(|b| (*b as f64 - first) / MIB).collect();
    let growth_calls: Vec<u32> = read.iter().map(|&i| s.call[i]).collect();
    let threads: Vec<f64> = read.iter().map(|&i| f64::from(s.threads_spawned[i])).collect();
    let calls: Vec<f64> = growth_calls.iter().map(|&c| f64::from(c)).collect();
    let made = s.call.last().copied().unwrap_or(0);
    let created = result.streams.as_ref().map(|st| st.created.as_slice());
    // A quiet series cannot look like a leak: a pool that stayed quiet once each of its threads
    // had called is flat (`settle::quiet_series`, which a probe stops on).
    let quiet = |n: u32| made > n && settle::quiet_series(&growth_mib, created);
    let class = match (&record.outcome, record.scenario.threading.thread_bound()) {
        (Outcome::StoppedAtBudget { .. }, _) => LeakClass::Leak,
        // A pool still filling looks like a leak: told only once every thread has called twice.
        (_, Some(n)) if n > 1 && made <= 2 * n && !quiet(n) => LeakClass::Undecided,
        _ => classify_read(&growth_calls, &growth_mib, made),
    };
    let all_threads: Vec<f64> = s.threads_spawned.iter().map(|&t| f64::from(t)).collect();
    let hidden_streams: Option<Vec<f64>> = result.streams.as_ref().map(|st| {
        st.created
            .iter()
            .zip(&st.created_by_nppbench)
            .map(|(c, own)| f64::from(c.saturating_sub(*own)))
            .collect()
    });
    MemoryAnalysis {
        record,
        probe,
        per_thread: least_squares(&threads, &growth_mib),
        per_call: least_squares(&calls, &growth_mib),
        hidden_per_thread: hidden_streams.as_ref().and_then(|h| least_squares(&all_threads, h)),
        hidden_streams,
        streams_never_destroyed: result.streams.as_ref().map(|st| st.never_destroyed),
        threads_spawned: s.threads_spawned.last().copied().unwrap_or(0),
        calls: s.call.last().copied().unwrap_or(0),
        latency_us: median(&s.latency_us[1.min(s.latency_us.len())..]),
        class: Some(class),
        growth_mib,
        growth_calls,
        race: RaceClass::of(record),
        output: OutputClass::of(record),
    }
}
