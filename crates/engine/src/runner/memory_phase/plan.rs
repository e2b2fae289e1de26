//! How the memory phase is laid out: how many probe processes run at once, how many scenarios
//! each measures, in what order, and with which `CUDA_DEVICE_MAX_CONNECTIONS`.

use nppbench_model::{Batching, Environment, Jobs, Matrix, MemoryReadings, ProbeConnections};

use crate::runner::{Progress, RunError, RunOptions};

/// Device memory one memory probe may take besides its buffers: a CUDA context, NPP's static
/// runtime, CUPTI's and NVML's own.
const PROBE_OVERHEAD_MIB: u64 = 768;
/// The most probes a GPU takes at once by default: past this, their CUDA contexts time-slice the
/// GPU and start-up contends in the driver for no gain.
const DEFAULT_PER_GPU: u32 = 8;

/// The most memory scenarios one probe process measures by default: enough that the start of a
/// process (its CUDA context, serialised host-wide by the driver) is a small part of its time,
/// few enough that a fault sends little work to fresh processes.
pub(crate) const DEFAULT_PER_PROCESS: u32 = 64;

/// The memory phase's layout as `opts` asks and the machine allows, said to `progress` before it
/// starts and recorded in run.json: processes at once and why, batches, the probes' connections,
/// how they read their memory, where the race rounds are made and the ordering probes beside.
pub(crate) fn layout(
    opts: &RunOptions,
    matrix: &Matrix,
    env: &Environment,
    progress: &dyn Progress,
) -> Result<Jobs, RunError> {
    let batching = batching(opts.batch, opts.seed.unwrap_or_else(|| fastrand::u64(..)));
    let mut jobs = jobs(opts.jobs, matrix, env, batching)?;
    let connections = connections(opts.probe_connections);
    jobs.memory_readings = opts.memory_readings;
    jobs.race_rounds = Some(opts.race_rounds);
    jobs.ordering_jobs = opts.ordering_jobs;
    // Recorded as the number used, the default resolved.
    jobs.ordering_jobs = Some(jobs.ordering_beside());
    progress.note(&format!(
        "memory scenarios: {} processes at once ({}), {}; {}; memory readings: {}; race rounds: {} ({} ordering probes beside the memory probes on one GPU)",
        jobs.jobs,
        jobs.reason,
        jobs.batching.as_ref().map_or_else(String::new, Batching::describe),
        connections.describe(),
        jobs.memory_readings.name(),
        opts.race_rounds.name(),
        jobs.ordering_beside(),
    ));
    jobs.connections = Some(connections);
    Ok(jobs)
}

/// How scenarios go into processes: `given` scenarios at most per process (`--batch`), else
/// [`DEFAULT_PER_PROCESS`]; shuffled by `seed`.
pub(crate) fn batching(given: Option<u32>, seed: u64) -> Batching {
    let (max_per_process, reason) = match given {
        Some(n) => (n.max(1), "given with --batch".to_owned()),
        None => (
            DEFAULT_PER_PROCESS,
            format!("the default: at most {DEFAULT_PER_PROCESS} a process"),
        ),
    };
    Batching {
        max_per_process,
        reason,
        seed,
    }
}

/// How many memory probes run at once: `given` (checked against device memory), or chosen from
/// the machine, with the reason. A probe measuring several scenarios may hold the streams they
/// kept, up to the memory budget, besides the budget of the scenario under way.
pub(crate) fn jobs(
    given: Option<u32>,
    matrix: &Matrix,
    env: &Environment,
    batching: Batching,
) -> Result<Jobs, RunError> {
    let gpus = env.all_gpus();
    let largest = matrix
        .memory
        .iter()
        .map(|s| s.geometry.buffer_bytes(s.primitive))
        .max()
        .unwrap_or(0);
    let budgets = if batching.max_per_process > 1 { 2 } else { 1 };
    let per_probe = (PROBE_OVERHEAD_MIB << 20) + largest + budgets * (matrix.settings.memory_budget_mib << 20);
    let fit: u64 = gpus
        .iter()
        .map(|g| g.gpu.memory_free_bytes_at_start / per_probe.max(1))
        .sum();
    let fit = u32::try_from(fit).unwrap_or(u32::MAX).max(1);
    let per_probe_mib = per_probe >> 20;
    if let Some(n) = given {
        if n > fit {
            return Err(RunError::Input(format!(
                "--jobs {n}: each memory probe may take up to {per_probe_mib} MiB of device memory (a CUDA context, its buffers and {budgets} × the {} MiB memory budget), so the free memory of {} GPU(s) holds at most {fit}; use --jobs {fit} or fewer, or lower memory_budget_mib",
                matrix.settings.memory_budget_mib,
                gpus.len()
            )));
        }
        return Ok(Jobs {
            jobs: n,
            reason: "given with --jobs".into(),
            connections: None,
            batching: Some(batching),
            memory_readings: MemoryReadings::Own,
            race_rounds: None,
            ordering_jobs: None,
        });
    }
    if !env.process_memory_probe {
        return Ok(Jobs {
            jobs: 1,
            reason: "NVML gives no per-process memory here, and the device-wide figure a leak would be judged on is shared by concurrent probes".into(),
            connections: None,
            batching: Some(batching),
            memory_readings: MemoryReadings::Own,
            race_rounds: None,
            ordering_jobs: None,
        });
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let by_cores = (cores / 2).max(1);
    let by_gpus = DEFAULT_PER_GPU * gpus.len() as u32;
    let jobs = by_cores.min(by_gpus).min(fit).max(1);
    let limit = if jobs == fit {
        format!("device memory holds {fit} probes of up to {per_probe_mib} MiB")
    } else if jobs == by_gpus {
        format!("{DEFAULT_PER_GPU} per GPU on {} GPU(s)", gpus.len())
    } else {
        format!("half of the {cores} logical cores")
    };
    Ok(Jobs {
        jobs,
        reason: format!("chosen from the machine: {limit}"),
        connections: None,
        batching: Some(batching),
        memory_readings: MemoryReadings::Own,
        race_rounds: None,
        ordering_jobs: None,
    })
}

/// The variable that caps a CUDA context's hardware connections (work queues).
pub(crate) const MAX_CONNECTIONS_ENV: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// What the memory probes will have for `CUDA_DEVICE_MAX_CONNECTIONS`: `given` (set by
/// nppbench), else this process's own value, inherited.
pub(crate) fn connections(given: Option<u32>) -> ProbeConnections {
    match given {
        Some(n) => ProbeConnections {
            value: Some(n),
            set_by_nppbench: true,
        },
        None => ProbeConnections {
            value: std::env::var(MAX_CONNECTIONS_ENV)
                .ok()
                .and_then(|v| v.trim().parse().ok()),
            set_by_nppbench: false,
        },
    }
}

/// How many scenarios the next probe process takes: an equal share of what is left among the
/// `jobs` workers (so that the last processes end together), at most `max`, at least one.
pub(crate) fn batch_size(remaining: usize, jobs: u32, max: u32) -> usize {
    remaining.div_ceil(jobs.max(1) as usize).clamp(1, max.max(1) as usize)
}

/// A batch's scenarios in the order its process measures them: shuffled by `seed`, so that no
/// scenario always has the same place or the same neighbours, and the same order for the same
/// seed.
pub(crate) fn shuffled<T>(mut items: Vec<T>, seed: u64) -> Vec<T> {
    fastrand::Rng::with_seed(seed).shuffle(&mut items);
    items
}
