//! Where the memory scenarios' time went, summed over them: each part of a scenario's time from
//! its turn in its probe to its answer (`wall_ms`), in probe-seconds, so that a change aimed at
//! the memory scenarios a second can be aimed at the largest part.

use nppbench_model::{MemoryRecord, PhaseTime};

/// One part of the memory scenarios' time, summed over them.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub name: String,
    pub seconds: f64,
}

/// The memory scenarios' time summed part by part, s. A record without a result (a scenario that
/// failed) counts in [`SummedTime::total`] alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummedTime {
    /// Each start-up step (`startup`: a probe's own before its first scenario's, then the
    /// scenario's setting up), in the order a scenario records them.
    pub start_up: Vec<Part>,
    /// The warm-up calls: each scenario's first call's latency (`samples.latency_us`).
    pub warm_up_calls: f64,
    /// The scenarios' later calls' latencies.
    pub later_calls: f64,
    /// The memory readings (`samples.reading_us`; 0 in runs made before they were timed).
    pub readings: f64,
    /// The rest from the first call to the last sample (`samples.elapsed_ms`): the threads made,
    /// the stream counts, the scheduling around the calls; in runs that did not time their
    /// readings, those too.
    pub around_calls: f64,
    /// Each step after the last call (`after_calls`), in the order a scenario records them.
    pub after_calls: Vec<Part>,
    /// From each scenario's turn in its probe to its answer (`wall_ms`), summed over the records
    /// that record it.
    pub total: f64,
}

impl SummedTime {
    /// What the parts leave of [`SummedTime::total`]: a process's start before its first step,
    /// the census after the calls in runs that did not time it, answering; never below zero.
    pub fn outside(&self) -> f64 {
        let parts: f64 = self
            .start_up
            .iter()
            .chain(&self.after_calls)
            .map(|p| p.seconds)
            .sum::<f64>()
            + self.warm_up_calls
            + self.later_calls
            + self.readings
            + self.around_calls;
        (self.total - parts).max(0.0)
    }
}

/// Adds `steps` to `parts`, by name, a name not seen before placed after the step before it in
/// `steps`: a probe's own steps, which only its first scenario records, come before the steps
/// every scenario records, whichever scenario comes first.
fn add_steps(parts: &mut Vec<Part>, steps: &[PhaseTime]) {
    let mut next = 0;
    for s in steps {
        match parts.iter().position(|p| p.name == s.phase) {
            Some(i) => {
                parts[i].seconds += s.wall_s;
                next = i + 1;
            }
            None => {
                parts.insert(
                    next,
                    Part {
                        name: s.phase.clone(),
                        seconds: s.wall_s,
                    },
                );
                next += 1;
            }
        }
    }
}

/// The memory scenarios' time of `records`, summed part by part.
pub fn summed_time(records: &[MemoryRecord]) -> SummedTime {
    let mut t = SummedTime::default();
    for m in records {
        t.total += m.wall_ms.unwrap_or(0.0) / 1e3;
        let Some(r) = &m.result else { continue };
        add_steps(&mut t.start_up, &r.startup);
        add_steps(&mut t.after_calls, &r.after_calls);
        let s = &r.samples;
        let first = s.latency_us.first().copied().unwrap_or(0.0) / 1e3;
        let later = s.latency_us.iter().skip(1).sum::<f64>() / 1e3;
        let readings = s.reading_us.iter().sum::<f64>() / 1e3;
        t.warm_up_calls += first / 1e3;
        t.later_calls += later / 1e3;
        t.readings += readings / 1e3;
        let span_ms = s.elapsed_ms.last().copied().unwrap_or(0.0);
        t.around_calls += (span_ms - first - later - readings).max(0.0) / 1e3;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up record (not a measurement): its start-up steps, latencies, readings and elapsed
    /// times as given, in ms, and its wall time.
    fn record(
        startup: &[(&str, f64)],
        latency_ms: &[f64],
        reading_ms: &[f64],
        elapsed_ms: &[f64],
        wall_ms: f64,
    ) -> MemoryRecord {
        let steps = |v: &[(&str, f64)]| -> Vec<serde_json::Value> {
            v.iter()
                .map(|(p, ms)| serde_json::json!({"phase": p, "wall_s": ms / 1e3}))
                .collect()
        };
        let n = latency_ms.len();
        serde_json::from_value(serde_json::json!({
            "scenario": {"id": "mem/x", "primitive": "Convert_8u32f_C1R",
                         "geometry": {"width": 31, "height": 31, "src_stride": 32, "dst_stride": 128},
                         "stream": "blocking", "context": "from_stream", "threading": "thread_per_call", "calls": n},
            "outcome": {"status": "ok"},
            "wall_ms": wall_ms,
            "result": {
                "baseline": {"device_used_bytes": null, "process_used_bytes": 0},
                "samples": {
                    "call": (1..=n).collect::<Vec<_>>(),
                    "threads_spawned": (1..=n).collect::<Vec<_>>(),
                    "elapsed_ms": elapsed_ms,
                    "latency_us": latency_ms.iter().map(|l| l * 1e3).collect::<Vec<_>>(),
                    "device_used_bytes": vec![serde_json::Value::Null; n],
                    "process_used_bytes": vec![0; n],
                    "reading_us": reading_ms.iter().map(|r| r * 1e3).collect::<Vec<_>>(),
                },
                "wall_ms": elapsed_ms.last().copied().unwrap_or(0.0),
                "startup": steps(startup),
                "after_calls": steps(&[("check", 2.0)]),
                "correctness": {"pixels_checked": 1, "padding_bytes_checked": 0, "max_abs_error": 0.0},
            }
        }))
        .unwrap()
    }

    #[test]
    fn each_part_is_summed_over_the_scenarios_and_the_rest_is_what_they_leave() {
        let a = record(
            &[("gpu", 300.0), ("npp", 3.0), ("baseline", 1.0)],
            &[5.0, 0.5, 0.5],
            &[1.0, 0.0, 0.5],
            &[6.5, 7.5, 9.0],
            320.0,
        );
        let b = record(
            &[("npp", 2.0), ("baseline", 1.0)],
            &[4.0, 1.0],
            &[0.5, 0.0],
            &[5.0, 7.0],
            20.0,
        );
        let mut failed = b.clone();
        failed.result = None;
        failed.wall_ms = Some(100.0);
        // The process's first scenario after another: its own steps still come first.
        let t = summed_time(&[b, a, failed]);
        let names: Vec<&str> = t.start_up.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["gpu", "npp", "baseline"]);
        let close = |x: f64, want: f64| assert!((x - want).abs() < 1e-12, "{x} against {want}");
        close(t.start_up[1].seconds, 0.005);
        close(t.warm_up_calls, 0.009);
        close(t.later_calls, 0.002);
        close(t.readings, 0.002);
        // a: 9.0 - 5.0 - 1.0 - 1.5 = 1.5 ms; b: 7.0 - 4.0 - 1.0 - 0.5 = 1.5 ms.
        close(t.around_calls, 0.003);
        close(t.after_calls[0].seconds, 0.004);
        close(t.total, 0.44);
        // 440 ms less 307 of start-up, 9 + 2 + 2 + 3 around the calls and 4 after them.
        close(t.outside(), 0.44 - 0.307 - 0.016 - 0.004);
    }
}
