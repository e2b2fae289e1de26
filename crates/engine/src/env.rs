//! What a run records of where it ran: the tool, the host, and (in a child probe) the GPUs,
//! driver and NPP, with the other processes on the GPUs when it started.

use std::path::Path;

use nppbench_gpu::{Gpu, ProcessMemoryProbe, copy_throughput};
use nppbench_model::{CpuInfo, Environment, GpuEnvironment, GpuInfo, HostInfo, MissingLibrary, NppInfo, ToolInfo};
use nppbench_npp::{Npp, NppSearch};

use crate::protocol::{Devices, EnvironmentReply};

/// The copy-ceiling measurement: bytes per buffer (capped by free memory) and repetitions.
const COPY_BYTES: u64 = 1 << 30;
const COPY_REPETITIONS: u32 = 20;

/// This nppbench: name, version and the git commit it was built from.
pub fn tool_info() -> ToolInfo {
    ToolInfo {
        name: "nppbench".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        git_commit: env!("NPPBENCH_GIT_COMMIT").to_owned(),
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_owned())
}

/// Host name, OS, kernel and CPU, read from /proc and /etc on Linux.
pub fn host_info() -> HostInfo {
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    HostInfo {
        hostname: read_trimmed("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".to_owned()),
        os,
        kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".to_owned()),
        cpu: CpuInfo {
            model: cpu_model,
            logical_cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        },
    }
}

/// Opens NPP, then each GPU asked for (with NVML) in this (child) process, describes them and
/// measures each GPU's copy ceiling, one GPU after the other.
pub(crate) fn capture(npp_dir: Option<&Path>, devices: &Devices) -> EnvironmentReply {
    let count = match Gpu::device_count() {
        Ok(n) => n,
        Err(e) => return EnvironmentReply::Err(e.to_string()),
    };
    let ordinals: Vec<u32> = match devices {
        Devices::All => (0..count as u32).collect(),
        Devices::List(list) => list.clone(),
    };
    if count == 0 {
        return EnvironmentReply::Err("the CUDA driver sees no GPU on this machine".into());
    }
    if let Some(bad) = ordinals.iter().find(|o| **o as usize >= count) {
        return EnvironmentReply::BadDevices(format!(
            "--devices: there is no GPU {bad}; this machine has {count} (0 to {}); use --devices all or ordinals from that range",
            count - 1
        ));
    }
    match describe(npp_dir, &ordinals) {
        Ok(env) => EnvironmentReply::Ok(Box::new(env)),
        Err(e) => EnvironmentReply::Err(e),
    }
}

fn describe(npp_dir: Option<&Path>, ordinals: &[u32]) -> Result<Environment, String> {
    let npp = Npp::load(&NppSearch::new(npp_dir)).map_err(|e| e.to_string())?;
    let missing = npp
        .load_all()
        .into_iter()
        .map(|(library, reason)| MissingLibrary {
            library: library.name().to_owned(),
            reason,
        })
        .collect();
    let parent = std::os::unix::process::parent_id();
    let mut gpus = Vec::new();
    let mut other_processes = Vec::new();
    let mut driver_version = None;
    let mut process_memory_probe = true;
    for &ordinal in ordinals {
        let gpu = Gpu::open(ordinal as usize).map_err(|e| e.to_string())?;
        let props = gpu.props().clone();
        let nvml = ProcessMemoryProbe::new(&props.uuid).ok();
        let (free, total) = gpu.mem_info().map_err(|e| e.to_string())?;
        let copy_bytes = COPY_BYTES.min(free / 4);
        let copy_ceiling_bytes_per_s = copy_throughput(&gpu, copy_bytes, COPY_REPETITIONS).ok();
        driver_version = driver_version.or_else(|| nvml.as_ref().and_then(|n| n.driver_version().ok()));
        process_memory_probe &= nvml.as_ref().is_some_and(|n| matches!(n.used_bytes(), Ok(Some(_))));
        crate::probe::merge_processes(
            &mut other_processes,
            crate::probe::other_processes(nvml.as_ref(), &props.uuid, parent),
        );
        gpus.push(GpuEnvironment {
            gpu: GpuInfo {
                ordinal: props.ordinal,
                name: props.name.clone(),
                uuid: props.uuid.clone(),
                sm_count: props.sm_count as u32,
                memory_total_bytes: total,
                memory_free_bytes_at_start: free,
                compute_capability: format!("{}.{}", props.compute_capability.0, props.compute_capability.1),
                l2_cache_bytes: props.l2_cache_bytes,
            },
            copy_ceiling_bytes_per_s,
        });
    }
    let first = gpus.first().cloned().ok_or("no GPU asked for")?;
    Ok(Environment {
        gpu: first.gpu,
        driver_version,
        cuda_driver_api_version: Gpu::driver_api_version().map_err(|e| e.to_string())?,
        npp: NppInfo {
            version: npp.version().to_string(),
            libraries: npp.library_paths().iter().map(|p| p.display().to_string()).collect(),
            missing,
        },
        host: host_info(),
        process_memory_probe,
        copy_ceiling_bytes_per_s: first.copy_ceiling_bytes_per_s,
        gpus,
        other_processes,
    })
}
