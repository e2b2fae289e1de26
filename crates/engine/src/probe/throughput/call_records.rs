//! CUPTI's kernel records of a batch of calls, grouped per call: the kernels of each call
//! summed, with the median of each kernel and the aggregate of single kernels.

use nppbench_gpu::{KernelRecord, KernelRecorder, Stream};
use nppbench_model::{CallLayout, CallTiming, FailureKind, KernelRecords, KernelStat};
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
            let starts: Vec<f64> = records
                .chunks(per_call)
                .map(|call| call[k].start.saturating_sub(first_start(call)) as f64)
                .collect();
            KernelStat {
                name: records[k].name.clone(),
                median_ns: median(&durations).unwrap_or(f64::NAN),
                stream: Some(records[k].stream),
                start_median_ns: (per_call > 1).then(|| sorted_median(starts)),
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
        layout: (per_call > 1).then(|| layout(records, per_call)),
    }
}

fn first_start(call: &[KernelRecord]) -> u64 {
    call.iter().map(|r| r.start).min().unwrap_or(0)
}

fn last_end(call: &[KernelRecord]) -> u64 {
    call.iter().map(|r| r.end).max().unwrap_or(0)
}

fn sorted_median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    median(&v).unwrap_or(f64::NAN)
}

/// The time at least one of `call`'s kernels ran: the union of their intervals, ns.
fn busy_ns(call: &[KernelRecord]) -> u64 {
    let mut spans: Vec<(u64, u64)> = call.iter().map(|r| (r.start, r.end.max(r.start))).collect();
    spans.sort_unstable();
    let (mut busy, mut reach) = (0, 0);
    for (start, end) in spans {
        let from = start.max(reach);
        if end > from {
            busy += end - from;
        }
        reach = reach.max(end);
    }
    busy
}

/// How each call's kernels lay in time: span, busy time, overlaps, streams.
fn layout(records: &[KernelRecord], per_call: usize) -> CallLayout {
    let calls: Vec<&[KernelRecord]> = records.chunks(per_call).collect();
    let spans = calls.iter().map(|c| (last_end(c) - first_start(c)) as f64).collect();
    let busy: Vec<u64> = calls.iter().map(|c| busy_ns(c)).collect();
    let at_once: Vec<bool> = calls
        .iter()
        .zip(&busy)
        .map(|(c, b)| *b < c.iter().map(KernelRecord::duration_ns).sum::<u64>())
        .collect();
    let overlapped = at_once.iter().filter(|o| **o).count();
    // The busy time of the calls of one layout, median; `None` where no call had it.
    let busy_of = |layout: bool| {
        let v: Vec<f64> = busy
            .iter()
            .zip(&at_once)
            .filter(|(_, o)| **o == layout)
            .map(|(b, _)| *b as f64)
            .collect();
        (!v.is_empty()).then(|| sorted_median(v))
    };
    let next = calls.windows(2).filter(|w| first_start(w[1]) < last_end(w[0])).count();
    let mut streams: Vec<u32> = calls[0].iter().map(|r| r.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    CallLayout {
        span_median_ns: sorted_median(spans),
        busy_median_ns: sorted_median(busy.iter().map(|&b| b as f64).collect()),
        overlapped_calls: overlapped as u32,
        overlapped_next_calls: next as u32,
        streams: streams.len() as u32,
        busy_at_once_median_ns: busy_of(true),
        busy_in_turn_median_ns: busy_of(false),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated records, not a measurement: two calls of two kernels each.
    fn record(stream: u32, start: u64, end: u64) -> KernelRecord {
        KernelRecord {
            name: "k".into(),
            start,
            end,
            correlation: 0,
            stream,
        }
    }

    #[test]
    fn busy_time_counts_overlapping_kernels_once() {
        assert_eq!(busy_ns(&[record(1, 0, 10), record(2, 5, 12)]), 12);
        assert_eq!(busy_ns(&[record(1, 0, 10), record(1, 20, 25)]), 15);
        assert_eq!(busy_ns(&[record(1, 0, 10), record(2, 2, 4)]), 10);
    }

    #[test]
    fn layout_tells_overlapped_calls_and_streams_apart() {
        let records = [record(7, 0, 10), record(9, 5, 12), record(7, 20, 30), record(9, 31, 35)];
        let l = layout(&records, 2);
        assert_eq!(l.overlapped_calls, 1);
        assert_eq!(l.overlapped_next_calls, 0);
        assert_eq!(l.streams, 2);
        assert_eq!(l.span_median_ns, 13.5);
        assert_eq!(l.busy_median_ns, 13.0);
        assert_eq!(l.busy_at_once_median_ns, Some(12.0));
        assert_eq!(l.busy_in_turn_median_ns, Some(14.0));
        let all_at_once = layout(&records[..2], 2);
        assert_eq!(
            (all_at_once.busy_at_once_median_ns, all_at_once.busy_in_turn_median_ns),
            (Some(12.0), None)
        );
    }
}
