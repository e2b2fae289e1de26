//! What the phases' supervision tests share: a stand-in probe (a shell script, no GPU) installed
//! in a folder, and memory scenarios named as the stand-in reads them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use nppbench_model::{ContextFill, Geometry, MemoryScenario, Primitive, StreamKind, Threading};

/// Writes the stand-in probe `script` to `dir/probe.sh`, executable; returns its path.
pub(super) fn install(dir: &Path, script: &str) -> PathBuf {
    let exe = dir.join("probe.sh");
    std::fs::write(&exe, script).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    exe
}

/// Memory scenarios whose ids are `names` (the stand-in acts on what an id holds).
pub(super) fn scenarios(names: &[&str]) -> Vec<MemoryScenario> {
    let g = Geometry::new(Primitive::CONVERT_8U32F_C1R, 31, 31, 32);
    names
        .iter()
        .map(|name| {
            let mut s = MemoryScenario::new(
                Primitive::CONVERT_8U32F_C1R,
                g,
                StreamKind::Blocking,
                ContextFill::FromStream,
                Threading::ThreadPerCall,
                4,
            );
            s.id = (*name).to_owned();
            s
        })
        .collect()
}
