//! The environment probe: in a child process, opens NPP and each GPU asked for, describes the
//! GPUs, driver and NPP with the other processes on the GPUs, and measures each copy ceiling.

use std::path::Path;

use nppbench_gpu::{Gpu, GpuError, ProcessMemoryProbe, copy_throughput};
use nppbench_model::{Environment, GpuEnvironment, GpuInfo, MissingLibrary, NppInfo};
use nppbench_npp::{LoadError, Npp, NppSearch};

use super::processes;
use crate::protocol::{Devices, EnvironmentReply};
use crate::provenance::host_info;

/// The copy-ceiling measurement: bytes per buffer (capped by free memory) and repetitions.
const COPY_BYTES: u64 = 1 << 30;
const COPY_REPETITIONS: u32 = 20;

/// Why the environment probe could not describe this machine: NPP would not load, a GPU would not
/// open or answer, or no GPU was asked for.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DescribeError {
    #[error(transparent)]
    Npp(#[from] LoadError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("no GPU asked for")]
    NoGpu,
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
        Err(e) => EnvironmentReply::Err(e.to_string()),
    }
}

fn describe(npp_dir: Option<&Path>, ordinals: &[u32]) -> Result<Environment, DescribeError> {
    let npp = Npp::load(&NppSearch::new(npp_dir))?;
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
        let gpu = Gpu::open(ordinal as usize)?;
        let props = gpu.props().clone();
        let nvml = ProcessMemoryProbe::new(&props.uuid).ok();
        let (free, total) = gpu.mem_info()?;
        let copy_bytes = COPY_BYTES.min(free / 4);
        let copy_ceiling_bytes_per_s = copy_throughput(&gpu, copy_bytes, COPY_REPETITIONS).ok();
        driver_version = driver_version.or_else(|| nvml.as_ref().and_then(|n| n.driver_version().ok()));
        process_memory_probe &= nvml.as_ref().is_some_and(|n| matches!(n.used_bytes(), Ok(Some(_))));
        processes::merge(
            &mut other_processes,
            processes::census(nvml.as_ref(), &props.uuid, parent).others,
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
    let first = gpus.first().cloned().ok_or(DescribeError::NoGpu)?;
    Ok(Environment {
        gpu: first.gpu,
        driver_version,
        cuda_driver_api_version: Gpu::driver_api_version()?,
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

#[cfg(test)]
mod tests {
    use super::DescribeError;

    /// The parent shows the reply's message, now the typed error's own words.
    #[test]
    fn no_gpu_asked_for_keeps_its_words() {
        assert_eq!(DescribeError::NoGpu.to_string(), "no GPU asked for");
    }
}
