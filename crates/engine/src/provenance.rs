//! Where a run came from: this nppbench build (version, git commit) and the host it ran on.
//! The GPUs, driver and NPP are described by the environment probe (`probe/environment.rs`).

use nppbench_model::{CpuInfo, HostInfo, ToolInfo};

/// This nppbench: name, version and the git commit it was built from.
pub fn tool_info() -> ToolInfo {
    ToolInfo {
        name: "nppbench".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        // Set at compile time by build.rs; not a variable of the probe protocol.
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
