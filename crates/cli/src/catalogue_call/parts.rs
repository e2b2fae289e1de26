//! The children's part files beside `--out` (`OUT.part0`, `OUT.part1` …) that a parent killed
//! before it merged them leaves behind: SIGKILL, or a machine's time limit, gives it no time to.
//! A resumed run keeps their whole lines; a run that is not resumed refuses an `--out` that holds
//! lines or parts, rather than append to them or lose them. A resumed run also calls again the
//! functions whose library was missing from NPP's folder.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Part `k`'s file beside `out` (`calls.jsonl.part2`), which child `k` writes.
pub(crate) fn part(out: &Path, k: usize) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(format!(".part{k}"));
    PathBuf::from(name)
}

/// The part files beside `out`, in their number's order.
pub(crate) fn left_parts(out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Some(name) = out.file_name().and_then(|n| n.to_str()) else {
        return Ok(Vec::new());
    };
    let prefix = format!("{name}.part");
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("listing {}", dir.display())),
    };
    let mut parts: Vec<(usize, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let k = e.file_name().to_str()?.strip_prefix(&prefix)?.parse().ok()?;
            Some((k, e.path()))
        })
        .collect();
    parts.sort();
    Ok(parts.into_iter().map(|(_, p)| p).collect())
}

/// Appends the whole lines of the part files a killed parent left beside `out` to `out`, and
/// removes the parts; a line the kill cut short (no newline, or not JSON) is dropped, so that its
/// function is called again. Returns how many lines were kept.
pub(crate) fn join_left_parts(out: &Path) -> anyhow::Result<usize> {
    let mut kept = 0;
    for part in left_parts(out)? {
        let text = std::fs::read_to_string(&part).with_context(|| format!("reading {}", part.display()))?;
        let whole: String = text
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n') && serde_json::from_str::<serde_json::Value>(l).is_ok())
            .collect();
        kept += whole.lines().count();
        let mut all = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(out)
            .with_context(|| format!("opening {}", out.display()))?;
        std::io::Write::write_all(&mut all, whole.as_bytes())?;
        std::fs::remove_file(&part).with_context(|| format!("removing {}", part.display()))?;
    }
    Ok(kept)
}

/// Removes from `out` the lines of functions whose library was missing from NPP's folder when
/// they were called (`libnppif.so.12 is missing beside …`: never called), so that a resumed run
/// calls them, with the library now there or not. Returns how many.
pub(crate) fn forget_missing_libraries(out: &Path) -> anyhow::Result<usize> {
    let text = match std::fs::read_to_string(out) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e).with_context(|| format!("reading {}", out.display())),
    };
    let missing = |l: &str| {
        serde_json::from_str::<serde_json::Value>(l)
            .ok()
            .and_then(|v| v["error"].as_str().map(nppbench_engine::is_missing_library))
            .unwrap_or(false)
    };
    let kept: String = text.split_inclusive('\n').filter(|l| !missing(l)).collect();
    let forgotten = text.lines().count() - kept.lines().count();
    if forgotten > 0 {
        std::fs::write(out, kept).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(forgotten)
}

/// Refuses to start a run that is not resumed over an `--out` that holds lines or part files:
/// its lines would be appended to them (or, were it emptied, lost).
pub(crate) fn refuse_unless_fresh(out: &Path) -> anyhow::Result<()> {
    let lines = std::fs::read_to_string(out).map_or(0, |t| t.lines().count());
    let parts = left_parts(out)?.len();
    if lines == 0 && parts == 0 {
        return Ok(());
    }
    Err(crate::exit::bad_input(format!(
        "{} already holds {lines} function lines and {parts} part files of a run: pass --resume to call only \
         the functions without a line (keeping the parts' lines), or give another --out, or remove it",
        out.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made-up lines: the parts of a parent killed mid-line are joined, the cut line dropped; a
    /// fresh run is refused over them and over the joined file.
    #[test]
    fn a_resumed_run_keeps_the_whole_lines_of_the_parts_a_killed_parent_left() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("calls.jsonl");
        assert!(refuse_unless_fresh(&out).is_ok());
        std::fs::write(
            dir.path().join("calls.jsonl.part1"),
            "{\"symbol\":\"c\"}\n{\"symbol\":\"d\"",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("calls.jsonl.part0"),
            "{\"symbol\":\"a\"}\n{\"symbol\":\"b\"}\n",
        )
        .unwrap();
        assert_eq!(part(&out, 0), dir.path().join("calls.jsonl.part0"));
        std::fs::write(dir.path().join("calls.jsonl.partial"), "not a part").unwrap();
        std::fs::write(dir.path().join("other.jsonl.part0"), "{}\n").unwrap();
        let err = refuse_unless_fresh(&out).unwrap_err().to_string();
        assert!(err.contains("2 part files") && err.contains("--resume"), "{err}");
        assert_eq!(join_left_parts(&out).unwrap(), 3);
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text, "{\"symbol\":\"a\"}\n{\"symbol\":\"b\"}\n{\"symbol\":\"c\"}\n");
        assert!(left_parts(&out).unwrap().is_empty());
        assert!(dir.path().join("calls.jsonl.partial").exists());
        assert!(dir.path().join("other.jsonl.part0").exists());
        let err = refuse_unless_fresh(&out).unwrap_err().to_string();
        assert!(err.contains("3 function lines"), "{err}");
        assert_eq!(join_left_parts(&out).unwrap(), 0);
    }

    /// Made-up lines: those of a library missing from NPP's folder are forgotten, the others
    /// kept as they were.
    #[test]
    fn a_resumed_run_forgets_the_functions_whose_library_was_missing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("calls.jsonl");
        assert_eq!(forget_missing_libraries(&out).unwrap(), 0);
        let kept = "{\"symbol\":\"a\",\"status\":0}\n{\"symbol\":\"c\",\"error\":\"sticky: misaligned\"}\n";
        let missing = "{\"symbol\":\"b\",\"error\":\"nppiB: libnppif.so.12 is missing beside /n/libnppc.so.12\"}\n";
        std::fs::write(&out, format!("{missing}{kept}")).unwrap();
        assert_eq!(forget_missing_libraries(&out).unwrap(), 1);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), kept);
    }
}
