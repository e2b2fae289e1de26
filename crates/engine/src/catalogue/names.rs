//! The functions a `--functions` file names, and those a file of lines already holds (a run
//! resumed).

use std::path::Path;

use anyhow::Context;
use nppbench_headers::generate::FunctionRow;

use super::Resumed;

/// The symbols of the functions of `rows` that `file` names (symbols or bare names); a name of
/// no function is an error naming it.
pub(super) fn named_in(file: &Path, rows: &[FunctionRow]) -> anyhow::Result<std::collections::BTreeSet<String>> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let by_name: std::collections::BTreeMap<&str, &str> = rows
        .iter()
        .flat_map(|r| {
            [
                (r.symbol.as_str(), r.symbol.as_str()),
                (nppbench_headers::name::bare(&r.symbol), r.symbol.as_str()),
            ]
        })
        .collect();
    let names = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace);
    let (mut found, mut unknown) = (std::collections::BTreeSet::new(), Vec::new());
    for name in names {
        match by_name.get(name) {
            Some(symbol) => {
                found.insert((*symbol).to_owned());
            }
            None => unknown.push(name),
        }
    }
    if !unknown.is_empty() {
        anyhow::bail!(
            "{} names {} that this catalogue does not declare: {}",
            file.display(),
            if unknown.len() == 1 { "a function" } else { "functions" },
            unknown.join(" ")
        );
    }
    Ok(found)
}

/// What a file of lines holds; `None` where it does not exist yet (a run not begun).
fn read_unless_missing(file: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    match std::fs::read(file) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

/// What a resumed run's file of lines holds (nothing where it does not exist yet), read once: the
/// functions with a line, and with `design` (`--design`'s lines) those whose designs are not whole
/// (a run stopped in them), each with the shapes and point its lines hold. A resumed run leaves the
/// others with a line out whole, and designs those again without what is written.
pub(super) fn resumed_in(file: &Path, design: bool) -> anyhow::Result<(std::collections::BTreeSet<String>, Resumed)> {
    let Some(bytes) = read_unless_missing(file)? else {
        return Ok(Default::default());
    };
    if design {
        let lines: Vec<nppbench_analysis::calls::design::ShapeLine> =
            nppbench_analysis::calls::read_lines_of(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        let symbols = lines.iter().map(|l| l.symbol.clone()).collect();
        return Ok((symbols, nppbench_analysis::calls::design::unfinished_written(&lines)));
    }
    let text = String::from_utf8(bytes).with_context(|| format!("reading {}", file.display()))?;
    let symbols = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: serde_json::Value = serde_json::from_str(l)
                .with_context(|| format!("{} line {}: not a call-catalogue line", file.display(), i + 1))?;
            v["symbol"]
                .as_str()
                .map(str::to_owned)
                .with_context(|| format!("{} line {}: no symbol", file.display(), i + 1))
        })
        .collect::<anyhow::Result<_>>()?;
    Ok((symbols, Resumed::default()))
}

#[cfg(test)]
mod tests {
    use nppbench_analysis::calls::design::{self, Pixels, ShapeLine};

    use super::super::{CatalogueCalls, Shapes};

    /// Made-up design lines (no GPU wrote them) of two functions, one whole and one stopped before
    /// its last shape: a resumed design calls the second again, leaving out the shapes written;
    /// resumed without shapes, both are left out.
    #[test]
    fn a_resumed_design_calls_again_the_functions_a_stop_left_unfinished() {
        let dir = tempfile::tempdir().unwrap();
        let names = dir.path().join("names.txt");
        std::fs::write(&names, "Not_8u_C1R Add_8u_C1RSfs").unwrap();
        let px = Pixels {
            src_bytes_per_pixel: 1,
            src_sample_bytes: 1,
            dst_bytes_per_pixel: 1,
            dst_sample_bytes: 1,
        };
        let lines = |symbol: &str, cut: usize| -> String {
            let shapes = design::design(symbol, &px);
            shapes[..shapes.len() - cut]
                .iter()
                .map(|s| {
                    let line = ShapeLine {
                        symbol: symbol.into(),
                        shape: Some(*s),
                        pixels: Some(px),
                        status: Some(0),
                        ..ShapeLine::default()
                    };
                    serde_json::to_string(&line).unwrap() + "\n"
                })
                .collect()
        };
        let done = dir.path().join("design.jsonl");
        let add = "nppiAdd_8u_C1RSfs_Ctx";
        std::fs::write(&done, lines("nppiNot_8u_C1R_Ctx", 0) + &lines(add, 1)).unwrap();
        let mut calls = CatalogueCalls {
            names: Some(names),
            done: Some(done),
            shapes: Some(Shapes::Design),
            ..CatalogueCalls::of_13_0_1()
        };
        let symbols =
            |c: &CatalogueCalls| -> Vec<String> { c.functions().unwrap().1.into_iter().map(|r| r.symbol).collect() };
        assert_eq!(symbols(&calls), [add]);
        let unfinished = calls.functions_resumed().unwrap().2;
        let n = design::design(add, &px).len();
        assert_eq!(unfinished[add].shapes, (0..n - 1).collect());
        assert!(!unfinished[add].point);
        calls.shapes = None;
        assert!(symbols(&calls).is_empty());
        assert!(calls.functions_resumed().unwrap().2.is_empty());
    }
}
