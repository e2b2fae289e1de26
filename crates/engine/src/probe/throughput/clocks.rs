//! The device's clocks around the timing: working the GPU until its SM clock settles, and the
//! state (clocks, power, temperature, throttling) it was in while criterion timed.

use std::time::{Duration, Instant};

use nppbench_gpu::{DeviceReading, ProcessMemoryProbe, Stream};
use nppbench_model::{DeviceSample, DeviceState};

use crate::error::ProbeError;

/// Works the GPU with `launch` until its SM clock settles (three readings in a row within 1%,
/// one after each `batch` of work), or `limit` passes. Returns how long it took and whether the
/// clocks settled.
pub(super) fn warm_up(
    nvml: Option<&ProcessMemoryProbe>,
    stream: &Stream,
    (limit, batch): (Duration, Duration),
    mut launch: impl FnMut() -> Result<(), ProbeError>,
) -> Result<(f64, bool), ProbeError> {
    let t = Instant::now();
    let Some(nvml) = nvml else {
        // No clocks to read: work for the whole limit's tenth.
        while t.elapsed() < limit / 10 {
            launch()?;
            stream.synchronize()?;
        }
        return Ok((t.elapsed().as_secs_f64() * 1e3, false));
    };
    let mut last: Vec<u32> = Vec::new();
    while t.elapsed() < limit {
        let started = Instant::now();
        while started.elapsed() < batch {
            launch()?;
        }
        stream.synchronize()?;
        if let Ok(r) = nvml.reading() {
            last.push(r.sm_mhz);
            if last.len() >= 3 {
                let tail = &last[last.len() - 3..];
                let (lo, hi) = (
                    tail.iter().min().copied().unwrap_or(0),
                    tail.iter().max().copied().unwrap_or(0),
                );
                if lo > 0 && f64::from(hi - lo) <= 0.01 * f64::from(hi) {
                    return Ok((t.elapsed().as_secs_f64() * 1e3, true));
                }
            }
        }
    }
    Ok((t.elapsed().as_secs_f64() * 1e3, false))
}

/// The device's state during the timing: the warm-up's length and whether it settled, then the
/// readings of criterion's last `samples` batches.
pub(super) fn device_state(warmup: (f64, bool), readings: Vec<DeviceReading>, samples: usize) -> DeviceState {
    // Criterion's warm-up batches come first; its samples are the last readings.
    let samples: Vec<DeviceSample> = readings[readings.len().saturating_sub(samples)..]
        .iter()
        .map(|r| DeviceSample {
            sm_mhz: r.sm_mhz,
            memory_mhz: r.memory_mhz,
            power_mw: r.power_mw,
            temperature_c: r.temperature_c,
            throttle_reasons: r.throttle_reasons,
        })
        .collect();
    let throttled = readings[readings.len().saturating_sub(samples.len())..]
        .iter()
        .filter(|r| r.throttled())
        .count() as u32;
    DeviceState {
        warmup_ms: warmup.0,
        settled: warmup.1,
        samples,
        throttled_samples: throttled,
    }
}
