//! CUPTI's kernel records of a batch of calls, grouped per call: the kernels of each call
//! summed, with the median of each kernel and the aggregate of single kernels.

use nppbench_gpu::{KernelRecord, KernelRecorder, Stream};
use nppbench_model::{CallTiming, FailureKind, KernelRecords, KernelStat};
use nppbench_stats::{median, median_interval};

use crate::error::ProbeError;

/// Calls in the batch whose kernels CUPTI records, warm.
pub(super) const RECORDED_CALLS: u32 = 200;

/// Groups kernel records by launch order: `per_call` kernels a call, each call's durations
/// summed. `None` when the records do not repeat that pattern.
fn per_call_times(records: &[KernelRecord], per_call: usize, calls: usize) -> Option<Vec<f64>> {
    if per_call == 0 || records.len() != per_call * calls {
        return None;
    }
    let names: Vec<&str> = records[..per_call].iter().map(|r| r.name.as_str()).collect();
    records
        .chunks(per_call)
        .map(|call| {
            call.iter()
                .zip(&names)
                .all(|(r, n)| r.name == *n)
                .then(|| call.iter().map(|r| r.duration_ns() as f64).sum())
        })
        .collect()
}

/// Summarises per-call times and the kernels of a call.
fn call_timing(times: &mut [f64], records: &[KernelRecord], per_call: usize) -> CallTiming {
    times.sort_by(f64::total_cmp);
    let median_ns = median(times).unwrap_or(f64::NAN);
    let (lower_ns, upper_ns) = median_interval(times, 0.95).unwrap_or((median_ns, median_ns));
    let kernels = (0..per_call)
        .map(|k| {
            let durations: Vec<f64> = records
                .iter()
                .skip(k)
                .step_by(per_call)
                .map(|r| r.duration_ns() as f64)
                .collect();
            KernelStat {
                name: records[k].name.clone(),
                median_ns: median(&durations).unwrap_or(f64::NAN),
            }
        })
        .collect();
    CallTiming {
        calls: times.len() as u32,
        kernels_per_call: per_call as u32,
        median_ns,
        lower_ns,
        upper_ns,
        min_ns: times.first().copied().unwrap_or(f64::NAN),
        max_ns: times.last().copied().unwrap_or(f64::NAN),
        kernels,
    }
}

/// The kernels of one call: how many, so that a batch's records can be grouped by call.
fn kernels_per_call(
    recorder: &KernelRecorder,
    stream: &Stream,
    mut one: impl FnMut() -> Result<(), ProbeError>,
) -> Result<usize, ProbeError> {
    recorder.take(stream)?;
    one()?;
    Ok(recorder.take(stream)?.len())
}

/// Times `calls` calls with CUPTI, each preceded by `before` (an L2 flush for a cold figure):
/// the kernels of each call summed. The aggregate of single kernels comes too, for the figures
/// runs recorded before per-call grouping.
pub(super) fn record_calls(
    stream: &Stream,
    calls: u32,
    mut before: impl FnMut() -> Result<(), ProbeError>,
    mut launch: impl FnMut() -> Result<(), ProbeError>,
) -> Result<(CallTiming, KernelRecords), ProbeError> {
    let recorder = KernelRecorder::start()?;
    let per_call = kernels_per_call(&recorder, stream, &mut launch)?;
    for _ in 0..calls {
        before()?;
        launch()?;
    }
    let records = recorder.take(stream)?;
    if records.is_empty() {
        return Err(ProbeError::new(FailureKind::Gpu, "CUPTI delivered no kernel records"));
    }
    let mut single: Vec<f64> = records.iter().map(|r| r.duration_ns() as f64).collect();
    single.sort_by(f64::total_cmp);
    let aggregate = KernelRecords {
        launches: calls,
        kernels: records.len() as u32,
        median_ns: median(&single).unwrap_or(f64::NAN),
        min_ns: single[0],
        max_ns: single[single.len() - 1],
        per_call_ns: single.iter().sum::<f64>() / f64::from(calls),
    };
    let mut times = per_call_times(&records, per_call, calls as usize).ok_or_else(|| {
        ProbeError::new(
            FailureKind::Other,
            format!(
                "{} kernel records for {calls} calls of {per_call} kernels each: the calls do not repeat one pattern",
                records.len()
            ),
        )
    })?;
    Ok((call_timing(&mut times, &records, per_call), aggregate))
}
