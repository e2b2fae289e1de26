//! The process over time: its device memory as NVML lists it
//! (`nvmlDeviceGetComputeRunningProcesses`, summed over devices), its live threads and live
//! streams. See the [NVML device queries](https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html).

use nppbench_model::{MemorySample, TraceDevice};
use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;

use crate::protocol::MEMORY_SAMPLES_KEPT;

/// NVML, loaded once on the writer's thread.
pub(crate) struct Sampler {
    nvml: Option<Nvml>,
    /// Why device memory cannot be sampled.
    pub(crate) missing: Option<String>,
    pub(crate) devices: Vec<TraceDevice>,
    pid: u32,
}

impl Sampler {
    pub(crate) fn new() -> Sampler {
        let nvml = Nvml::builder()
            .lib_path(std::ffi::OsStr::new("libnvidia-ml.so.1"))
            .init()
            .or_else(|_| Nvml::init());
        let (nvml, missing) = match nvml {
            Ok(n) => (Some(n), None),
            Err(e) => (None, Some(format!("NVML could not be initialised: {e}"))),
        };
        let devices = nvml.as_ref().map(devices).unwrap_or_default();
        Sampler {
            nvml,
            missing,
            devices,
            pid: std::process::id(),
        }
    }

    /// This process's device memory summed over devices; `None` where no device lists it.
    pub(crate) fn device_bytes(&self) -> Option<u64> {
        let nvml = self.nvml.as_ref()?;
        let mut total = None;
        for i in 0..nvml.device_count().ok()? {
            let Ok(d) = nvml.device_by_index(i) else { continue };
            let mut procs = d.running_compute_processes().unwrap_or_default();
            procs.extend(d.running_graphics_processes().unwrap_or_default());
            if let Some(p) = procs.iter().find(|p| p.pid == self.pid)
                && let UsedGpuMemory::Used(b) = p.used_gpu_memory
            {
                total = Some(total.unwrap_or(0) + b);
            }
        }
        total
    }
}

fn devices(nvml: &Nvml) -> Vec<TraceDevice> {
    let n = nvml.device_count().unwrap_or(0);
    (0..n)
        .filter_map(|i| {
            let d = nvml.device_by_index(i).ok()?;
            Some(TraceDevice {
                ordinal: i,
                name: d.name().unwrap_or_default(),
                memory_total_bytes: d.memory_info().map(|m| m.total).unwrap_or(0),
            })
        })
        .collect()
}

/// The process's live threads (`Threads:` in `/proc/self/status`).
pub(crate) fn live_threads() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    threads_in(&status)
}

fn threads_in(status: &str) -> u32 {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The samples so far, thinned to at most [`MEMORY_SAMPLES_KEPT`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Samples {
    pub(crate) list: Vec<MemorySample>,
    /// The interval between kept samples (doubles each time they are thinned).
    pub(crate) interval_s: f64,
    /// Samples taken since the last kept one.
    skipped: u32,
    /// Keep one sample in this many.
    every: u32,
}

impl Samples {
    pub(crate) fn new(interval_s: f64) -> Samples {
        Samples {
            list: Vec::new(),
            interval_s,
            skipped: 0,
            every: 1,
        }
    }

    pub(crate) fn push(&mut self, s: MemorySample) {
        self.skipped += 1;
        if self.skipped < self.every {
            return;
        }
        self.skipped = 0;
        self.list.push(s);
        if self.list.len() > MEMORY_SAMPLES_KEPT {
            let mut i = 0;
            self.list.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.every *= 2;
            self.interval_s *= 2.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_s: f64) -> MemorySample {
        MemorySample {
            t_s,
            device_bytes: None,
            live_threads: 1,
            live_streams: 0,
        }
    }

    #[test]
    fn threads_are_read_from_proc_status() {
        assert_eq!(threads_in("Name:\tx\nThreads:\t17\nSigQ:\t0/1\n"), 17);
        assert!(live_threads() >= 1);
    }

    #[test]
    fn samples_are_thinned_evenly_and_the_interval_follows() {
        let mut s = Samples::new(0.5);
        let n = MEMORY_SAMPLES_KEPT * 3;
        for i in 0..n {
            s.push(sample(i as f64 * 0.5));
        }
        assert!(s.list.len() <= MEMORY_SAMPLES_KEPT, "{}", s.list.len());
        assert!(s.list.len() > MEMORY_SAMPLES_KEPT / 2);
        assert_eq!(s.interval_s, 2.0);
        let gaps: Vec<f64> = s.list.windows(2).map(|w| w[1].t_s - w[0].t_s).collect();
        assert!(gaps.iter().all(|g| *g == 2.0), "{:?}", &gaps[..5]);
    }

    #[test]
    fn without_nvml_memory_is_missing_with_a_reason() {
        let s = Sampler::new();
        if s.nvml.is_none() {
            assert!(s.missing.as_deref().unwrap().contains("NVML"));
            assert_eq!(s.device_bytes(), None);
        }
    }
}
