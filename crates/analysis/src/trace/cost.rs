//! What the growth costs over time: at the rate new threads kept NPP streams over the trace, the
//! memory per such thread, per hour and per day, and when the device runs out, judged against
//! the device most calls went to (or, with device-wide samples, the devices summed).

use std::collections::BTreeMap;

use nppbench_model::{TraceDevice, TraceFile};

use super::{Keeping, MIB, MemoryGrowth, MemoryScope};
use crate::thresholds::MIN_TRACE_S_FOR_A_RATE;

/// What the growth costs: the memory per thread that kept NPP streams and the device's headroom
/// in such threads; over time too, where the trace lasted long enough to show a rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Threads that kept NPP streams, and the seconds they were seen over (from the first NPP
    /// call to the last flush).
    pub keeping_threads: usize,
    pub observed_s: f64,
    /// MiB per such thread: the fit's slope where there is one, else growth / threads.
    pub mib_per_thread: f64,
    pub from_fit: bool,
    /// The device's memory less the process's at the last sample, MiB (with device-wide samples:
    /// the summed devices' memory less what every process used).
    pub headroom_mib: Option<f64>,
    /// How many more such threads fill the device (headroom / MiB per thread): no rate assumed.
    pub threads_until_full: Option<f64>,
    /// The rate and what follows from it; `None` for a burst: a trace that saw NPP for under
    /// [`MIN_TRACE_S_FOR_A_RATE`] seconds.
    pub rate: Option<Rate>,
}

/// The growth over time, at the rate new threads kept NPP streams in the trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Threads that kept NPP streams, per hour of the trace from the first NPP call.
    pub keeping_threads_per_hour: f64,
    pub mib_per_hour: f64,
    pub mib_per_day: f64,
    /// When the process alone would fill the device, hours from the last sample.
    pub hours_until_full: Option<f64>,
}

/// The device most calls went to (by `nCudaDeviceId`), else the first listed.
pub(super) fn judged_device(trace: &TraceFile) -> Option<TraceDevice> {
    let mut calls: BTreeMap<i32, u64> = BTreeMap::new();
    for c in &trace.call_sites {
        *calls.entry(c.device).or_insert(0) += c.calls;
    }
    let busiest = calls.iter().max_by_key(|(_, n)| **n).map(|(d, _)| *d);
    busiest
        .and_then(|d| trace.devices.iter().find(|dev| i64::from(dev.ordinal) == i64::from(d)))
        .or_else(|| trace.devices.first())
        .cloned()
}

/// The memory the samples are judged against, MiB: the judged device's, or, with device-wide
/// samples, the summed devices'.
pub(super) fn capacity_mib(trace: &TraceFile, scope: &MemoryScope, device: Option<&TraceDevice>) -> Option<f64> {
    let mib = |d: &TraceDevice| d.memory_total_bytes as f64 / MIB;
    match scope {
        MemoryScope::Devices(summed) if !summed.is_empty() => {
            let found: Vec<&TraceDevice> = trace.devices.iter().filter(|d| summed.contains(&d.ordinal)).collect();
            (found.len() == summed.len()).then(|| found.into_iter().map(mib).sum())
        }
        _ => device.map(mib),
    }
}

pub(super) fn cost(
    trace: &TraceFile,
    first_call_s: Option<f64>,
    keeping: &Keeping,
    memory: Option<MemoryGrowth>,
    capacity_mib: Option<f64>,
) -> Option<Cost> {
    let m = memory?;
    let observed_s = trace.wall_s - first_call_s.unwrap_or(0.0);
    if observed_s <= 0.0 || keeping.threads == 0 {
        return None;
    }
    let (mib_per_thread, from_fit) = match m.per_keeping_thread {
        Some(f) => (f.slope, true),
        None => (m.growth_mib / keeping.threads as f64, false),
    };
    let headroom_mib = capacity_mib.map(|c| c - m.last_mib);
    let rate = (observed_s >= MIN_TRACE_S_FOR_A_RATE).then(|| {
        let keeping_threads_per_hour = keeping.threads as f64 / (observed_s / 3600.0);
        let mib_per_hour = mib_per_thread * keeping_threads_per_hour;
        Rate {
            keeping_threads_per_hour,
            mib_per_hour,
            mib_per_day: mib_per_hour * 24.0,
            hours_until_full: headroom_mib
                .filter(|_| mib_per_hour > 0.0)
                .map(|h| h.max(0.0) / mib_per_hour),
        }
    });
    Some(Cost {
        keeping_threads: keeping.threads,
        observed_s,
        mib_per_thread,
        from_fit,
        headroom_mib,
        threads_until_full: headroom_mib
            .filter(|_| mib_per_thread > 0.0)
            .map(|h| h.max(0.0) / mib_per_thread),
        rate,
    })
}
