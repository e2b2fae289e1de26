//! Other processes on the GPU: NVML's list less this probe and its siblings (the other probes
//! of the same `nppbench run`, which the parent started).

use nppbench_gpu::ProcessMemoryProbe;
use nppbench_model::GpuProcess;

use crate::protocol::PROBE_PIDS_ENV;

/// The parent pid of `pid`, from `/proc/PID/stat` (`None` where it cannot be read).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: the fields after it are plain.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn name_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// What NVML lists on the device, split into other processes and the number of sibling probes.
#[derive(Clone)]
pub(crate) struct Census {
    pub(crate) others: Vec<GpuProcess>,
    pub(crate) siblings: u32,
}

/// Who else is on the device now. Without NVML, nothing is known: no others, no siblings.
pub(crate) fn census(nvml: Option<&ProcessMemoryProbe>, uuid: &str, parent_pid: u32) -> Census {
    census_of(nvml.and_then(|n| n.processes().ok()), uuid, parent_pid)
}

/// Who else was on the device at the last memory reading (its compute processes), with the
/// graphics processes now: after a scenario's last reading, one query of the driver instead of
/// listing the compute processes again (`ProcessMemoryProbe::processes_since_reading`).
pub(crate) fn census_since_reading(nvml: Option<&ProcessMemoryProbe>, uuid: &str, parent_pid: u32) -> Census {
    census_of(nvml.and_then(|n| n.processes_since_reading().ok()), uuid, parent_pid)
}

fn census_of(list: Option<Vec<nppbench_gpu::DeviceProcess>>, uuid: &str, parent_pid: u32) -> Census {
    let Some(list) = list else {
        return Census {
            others: Vec::new(),
            siblings: 0,
        };
    };
    split(
        list.into_iter().map(|p| (p.pid, p.used_bytes)),
        uuid,
        std::process::id(),
        parent_pid,
        &known_probes(),
    )
}

/// The pids of the run's probes, from the file the parent names in `NPPBENCH_PROBE_PIDS`
/// (empty where there is none).
fn known_probes() -> Vec<u32> {
    std::env::var_os(PROBE_PIDS_ENV)
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Splits NVML's list (pid, bytes) into siblings and others: this probe, its parent, a process
/// the parent started (listed in `known`, or whose parent it is) are not others. A probe that
/// has exited is gone from `/proc` while the driver may still list it: the list of known pids
/// tells it apart from a stranger.
fn split(
    list: impl Iterator<Item = (u32, Option<u64>)>,
    uuid: &str,
    me: u32,
    parent_pid: u32,
    known: &[u32],
) -> Census {
    let mut census = Census {
        others: Vec::new(),
        siblings: 0,
    };
    for (pid, used_bytes) in list {
        if pid == me || pid == parent_pid {
            continue;
        }
        if known.contains(&pid) || (parent_pid != 0 && parent_of(pid) == Some(parent_pid)) {
            census.siblings += 1;
            continue;
        }
        census.others.push(GpuProcess {
            pid,
            name: name_of(pid),
            gpu_uuid: uuid.to_owned(),
            used_bytes,
        });
    }
    census
}

/// Adds to `into` the processes of `more` not yet in it (by pid and GPU).
pub(crate) fn merge(into: &mut Vec<GpuProcess>, more: Vec<GpuProcess>) {
    for p in more {
        if !into.iter().any(|q| q.pid == p.pid && q.gpu_uuid == p.gpu_uuid) {
            into.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_of_this_process_is_read_from_proc() {
        let me = std::process::id();
        // The test harness's parent is whatever started it; what matters is that it parses.
        assert!(parent_of(me).is_some());
        assert!(!name_of(me).is_empty());
        assert_eq!(parent_of(u32::MAX), None);
    }

    #[test]
    fn a_listed_probe_is_a_sibling_even_once_gone_from_proc() {
        // Generated pids: 4_000_000_001 is in no /proc; as a known probe it is a sibling, and as
        // a stranger it is another process (its name unknown).
        let gone = 4_000_000_001;
        let c = split([(gone, Some(1 << 20))].into_iter(), "GPU-x", 1, 2, &[gone]);
        assert_eq!((c.siblings, c.others.len()), (1, 0));
        let c = split(
            [(gone, Some(1 << 20)), (1, Some(5)), (2, None)].into_iter(),
            "GPU-x",
            1,
            2,
            &[],
        );
        assert_eq!(
            (c.siblings, c.others.len()),
            (0, 1),
            "this probe and its parent are neither"
        );
        assert_eq!(c.others[0].name, "");
    }
}
