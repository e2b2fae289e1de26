//! The words a run is shown by: a short label, NPP's version as fetched, the probes' connections.

use super::{NppInfo, ProbeConnections, RunFile};

impl RunFile {
    /// A short label a reader can tell runs apart by: `NPP 13.0.1.2 · H200 · driver 580.159.04`
    /// (and `· 2 GPUs` where the run measured several).
    pub fn short_label(&self) -> String {
        let e = &self.environment;
        let gpu = e.gpu.name.trim_start_matches("NVIDIA ").to_owned();
        let gpus = e.gpus.len();
        let several = if gpus > 1 {
            format!(" · {gpus} GPUs")
        } else {
            String::new()
        };
        format!(
            "NPP {} · {gpu} · driver {}{several}",
            e.npp.full_version(),
            e.driver_version.as_deref().unwrap_or("unknown")
        )
    }
}

impl NppInfo {
    /// The version as fetched: `nppGetLibVersion`'s three numbers, with the fourth where a
    /// library's file or folder name carries it (`libnppc.so.13.0.1.2`, `.npp/12.2.3.2/`,
    /// `npp-13.2.0.93/`); the three alone where nothing does.
    pub fn full_version(&self) -> String {
        let prefix = format!("{}.", self.version);
        for path in &self.libraries {
            for part in path.split(['/', '-']) {
                let part = part.trim_start_matches("libnppc.so.");
                if let Some(build) = part.strip_prefix(&prefix)
                    && !build.is_empty()
                    && build.chars().all(|c| c.is_ascii_digit())
                {
                    return format!("{}{build}", prefix);
                }
            }
        }
        self.version.clone()
    }
}

impl crate::Batching {
    /// The batching as a sentence fragment: `at most 64 scenarios a process (the default), seed 7`.
    pub fn describe(&self) -> String {
        match self.max_per_process {
            1 => format!("a fresh process per scenario ({})", self.reason),
            n => format!(
                "at most {n} scenarios a process ({}), shuffled with --seed {}",
                self.reason, self.seed
            ),
        }
    }
}

impl ProbeConnections {
    /// The value as a sentence fragment: `CUDA_DEVICE_MAX_CONNECTIONS=1 (set by nppbench)`.
    pub fn describe(&self) -> String {
        match (self.value, self.set_by_nppbench) {
            (Some(v), true) => format!("CUDA_DEVICE_MAX_CONNECTIONS={v} (set by nppbench, --probe-connections)"),
            (Some(v), false) => format!("CUDA_DEVICE_MAX_CONNECTIONS={v} (from the environment)"),
            (None, _) => "CUDA_DEVICE_MAX_CONNECTIONS unset (the driver's default, 8)".to_owned(),
        }
    }
}
