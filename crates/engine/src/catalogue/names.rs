//! The functions a `--functions` file names, and those a file of lines already holds (a run
//! resumed).

use std::path::Path;

use anyhow::Context;
use nppbench_headers::generate::FunctionRow;

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

/// The functions a file of lines has a line of; none where the file does not exist yet.
pub(super) fn symbols_in(file: &Path) -> anyhow::Result<std::collections::BTreeSet<String>> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    text.lines()
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
        .collect()
}
