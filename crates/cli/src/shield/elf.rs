//! What can be told of a program before it starts: whether it is a statically linked ELF
//! executable, which `LD_PRELOAD` cannot reach (no `PT_INTERP` program header). Anything else
//! (a script, a dynamically linked executable, a file this cannot read) is left to the run.

use std::path::{Path, PathBuf};

/// The program's file: a path as given, else the first match on `PATH`.
pub(crate) fn locate(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Whether `path` is a 64-bit little-endian ELF executable with no interpreter: statically
/// linked. `false` where it is anything else, or cannot be read.
pub(crate) fn statically_linked(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    static_elf(&bytes).unwrap_or(false)
}

fn static_elf(b: &[u8]) -> Option<bool> {
    // ELF magic, 64-bit (class 2), little-endian (data 1), an executable or a PIE (type 2 or 3).
    if b.get(0..4)? != b"\x7fELF" || *b.get(4)? != 2 || *b.get(5)? != 1 {
        return None;
    }
    let u16_at = |o: usize| Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?));
    if !matches!(u16_at(16)?, 2 | 3) {
        return None;
    }
    let (phoff, phentsize, phnum) = (
        usize::try_from(u64_at(32)?).ok()?,
        usize::from(u16_at(54)?),
        usize::from(u16_at(56)?),
    );
    const PT_INTERP: u32 = 3;
    const PT_DYNAMIC: u32 = 2;
    let types: Vec<u32> = (0..phnum)
        .map(|i| u32_at(phoff + i * phentsize))
        .collect::<Option<_>>()?;
    Some(!types.contains(&PT_INTERP) && !types.contains(&PT_DYNAMIC))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamically_linked_executable_and_a_script_are_not_static() {
        let exe = std::env::current_exe().unwrap();
        assert!(!statically_linked(&exe), "the test binary is dynamically linked");
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("s.sh");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert!(!statically_linked(&script));
    }

    #[test]
    fn an_elf_without_interpreter_or_dynamic_section_is_static() {
        // A minimal header: one PT_LOAD program header at offset 64.
        let mut b = vec![0u8; 64 + 56];
        b[0..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[16] = 2;
        b[32..40].copy_from_slice(&64u64.to_le_bytes());
        b[54..56].copy_from_slice(&56u16.to_le_bytes());
        b[56..58].copy_from_slice(&1u16.to_le_bytes());
        b[64..68].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(static_elf(&b), Some(true));
        b[64..68].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(static_elf(&b), Some(false));
    }
}
