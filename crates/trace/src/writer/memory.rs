//! The process over time: its device memory (NVML), its live threads and live streams, sampled
//! by the writer thread. See the [NVML device queries](https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html).
//!
//! # Whose memory
//!
//! The process's own, where NVML lists it: the traced pid among each device's compute and
//! graphics processes (`nvmlDeviceGetComputeRunningProcesses`), summed over devices. In a
//! container NVML lists the host's pids, never the container's, so the traced pid is never
//! found; the trace then falls back to the used memory of the devices the process used
//! (`nvmlDeviceGetMemoryInfo`'s `used`: every process on them, other programs' included), and
//! says so ([`nppbench_model::Capture::memory_device_wide`]). The devices are those the calls'
//! contexts named (`nCudaDeviceId`, matched to NVML's by PCI bus id where the driver says it,
//! else by number), else all. Where neither figure is to be had, samples carry none and
//! `memory_missing` says why.
//!
//! One scope per trace: every sample keeps both figures ([`RawSample`]), and each write chooses
//! the scope from all of them ([`resolve`]): the process's own wherever any sample found it, so a
//! trace never mixes the two. A pid that NVML lists for another process of the host (the
//! container's pid reused by chance) would be taken for the traced one; nothing in the container
//! can tell them apart.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use nppbench_model::{MemorySample, TraceDevice};
use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;

use crate::protocol::MEMORY_SAMPLES_KEPT;
use crate::recorder::driver;
use crate::writer::sync::lock;

/// NVML, loaded once on the writer's thread.
pub(crate) struct Sampler {
    nvml: Option<Nvml>,
    /// Why device memory cannot be sampled.
    pub(crate) missing: Option<String>,
    pub(crate) devices: Vec<TraceDevice>,
    pid: u32,
    /// CUDA ordinals matched to NVML indices.
    indices: Mutex<HashMap<i32, Option<u32>>>,
}

/// One sample with both figures, before the trace's scope is chosen.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawSample {
    pub(crate) t_s: f64,
    /// The process's memory summed over the devices that list its pid; `None` where none does.
    pub(crate) process_bytes: Option<u64>,
    /// Each device's used memory, by NVML index; `None` where NVML did not say.
    pub(crate) device_used: Vec<Option<u64>>,
    pub(crate) live_threads: u32,
    pub(crate) live_streams: u64,
}

impl Sampler {
    pub(crate) fn new() -> Sampler {
        // The test hook of a slow NVML (`protocol::TEST_NVML_DELAY_MS`): loading it took about a
        // second on the GPU machine, and the calls must be flushed meanwhile.
        if let Some(ms) = std::env::var(crate::protocol::TEST_NVML_DELAY_MS)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
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
            indices: Mutex::default(),
        }
    }

    /// A sample now: the process's memory where a device lists its pid, and every device's used
    /// memory.
    pub(crate) fn sample(&self, t_s: f64, live_threads: u32, live_streams: u64) -> RawSample {
        let mut s = RawSample {
            t_s,
            process_bytes: None,
            device_used: Vec::new(),
            live_threads,
            live_streams,
        };
        let Some(nvml) = &self.nvml else { return s };
        for i in 0..nvml.device_count().unwrap_or(0) {
            let Ok(d) = nvml.device_by_index(i) else {
                s.device_used.push(None);
                continue;
            };
            s.device_used.push(d.memory_info().ok().map(|m| m.used));
            let mut procs = d.running_compute_processes().unwrap_or_default();
            procs.extend(d.running_graphics_processes().unwrap_or_default());
            if let Some(p) = procs.iter().find(|p| p.pid == self.pid)
                && let UsedGpuMemory::Used(b) = p.used_gpu_memory
            {
                s.process_bytes = Some(s.process_bytes.unwrap_or(0) + b);
            }
        }
        s
    }

    /// The NVML indices of the devices the program calls by these CUDA ordinals: by PCI bus id
    /// where the driver says it, else the same number where NVML has such a device.
    pub(crate) fn nvml_indices(&self, ordinals: &BTreeSet<i32>) -> Vec<u32> {
        let Some(nvml) = &self.nvml else { return Vec::new() };
        let count = nvml.device_count().unwrap_or(0);
        let mut known = lock(&self.indices);
        let mut out: BTreeSet<u32> = BTreeSet::new();
        for &ordinal in ordinals {
            let index = *known.entry(ordinal).or_insert_with(|| {
                driver::pci_bus_id(ordinal)
                    .and_then(|bus| nvml.device_by_pci_bus_id(bus).ok()?.index().ok())
                    .or_else(|| u32::try_from(ordinal).ok().filter(|o| *o < count))
            });
            out.extend(index);
        }
        out.into_iter().collect()
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

/// The trace's memory: the samples in one scope, the devices of a device-wide scope, and why
/// there is no figure where there is none.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Memory {
    pub(crate) samples: Vec<MemorySample>,
    pub(crate) device_wide: Option<Vec<u32>>,
    pub(crate) missing: Option<String>,
}

/// Chooses the scope of `raw` (see the module's docs): the process's own where any sample found
/// it; else the used memory of `used` (NVML indices; empty: every device); else none, with why.
/// `unavailable` is why NVML could not be asked at all (not loaded, not sampled yet).
pub(crate) fn resolve(raw: &[RawSample], used: &[u32], unavailable: Option<&str>, pid: u32) -> Memory {
    let with = |bytes: &dyn Fn(&RawSample) -> Option<u64>| -> Vec<MemorySample> {
        raw.iter()
            .map(|s| MemorySample {
                t_s: s.t_s,
                device_bytes: bytes(s),
                live_threads: s.live_threads,
                live_streams: s.live_streams,
            })
            .collect()
    };
    if let Some(why) = unavailable {
        return Memory {
            samples: with(&|_| None),
            device_wide: None,
            missing: Some(why.to_owned()),
        };
    }
    if raw.iter().any(|s| s.process_bytes.is_some()) {
        return Memory {
            samples: with(&|s| s.process_bytes),
            device_wide: None,
            missing: None,
        };
    }
    let devices: Vec<u32> = if used.is_empty() {
        let n = raw.iter().map(|s| s.device_used.len()).max().unwrap_or(0);
        (0..n as u32).collect()
    } else {
        used.to_vec()
    };
    let sum = |s: &RawSample| -> Option<u64> {
        devices
            .iter()
            .map(|&d| s.device_used.get(d as usize).copied().flatten())
            .sum::<Option<u64>>()
            .filter(|_| !devices.is_empty())
    };
    if raw.iter().any(|s| sum(s).is_some()) {
        return Memory {
            samples: with(&sum),
            device_wide: Some(devices),
            missing: None,
        };
    }
    let why = if raw.is_empty() {
        "no sample was taken before the program ended".to_owned()
    } else {
        format!(
            "NVML listed no process with pid {pid} on any device (in a container NVML lists the host's pids) and gave no used memory for {}",
            if used.is_empty() {
                "any device".to_owned()
            } else {
                format!("device(s) {used:?}")
            }
        )
    };
    Memory {
        samples: with(&|_| None),
        device_wide: None,
        missing: Some(why),
    }
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
    pub(crate) list: Vec<RawSample>,
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

    pub(crate) fn push(&mut self, s: RawSample) {
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
mod tests;
