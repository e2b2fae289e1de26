//! Other processes on the GPU: NVML's list less this probe and its siblings (the other probes
//! of the same `nppbench run`, which the parent started).

use nppbench_gpu::ProcessMemoryProbe;
use nppbench_model::GpuProcess;

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
pub(crate) struct Census {
    pub(crate) others: Vec<GpuProcess>,
    pub(crate) siblings: u32,
}

/// Who else is on the device now. Without NVML, nothing is known: no others, no siblings.
pub(crate) fn census(nvml: Option<&ProcessMemoryProbe>, uuid: &str, parent_pid: u32) -> Census {
    let me = std::process::id();
    let mut census = Census {
        others: Vec::new(),
        siblings: 0,
    };
    let Some(list) = nvml.and_then(|n| n.processes().ok()) else {
        return census;
    };
    for p in list {
        if p.pid == me || p.pid == parent_pid {
            continue;
        }
        if parent_pid != 0 && parent_of(p.pid) == Some(parent_pid) {
            census.siblings += 1;
            continue;
        }
        census.others.push(GpuProcess {
            pid: p.pid,
            name: name_of(p.pid),
            gpu_uuid: uuid.to_owned(),
            used_bytes: p.used_bytes,
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
}
