//! Tidy tests (rust-analyzer's habit): the invariants ARCHITECTURE.md states, checked on the
//! code. The crate graph from `cargo metadata` against ARCHITECTURE.md's table, no module of a
//! crate importing another in a cycle, no source file over 450 lines, no function over 100, a
//! `//!` line at the top of every source file, and `unsafe` kept out of every crate but the FFI
//! ones.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const MAX_FILE_LINES: usize = 450;
const MAX_FN_LINES: usize = 100;
/// The crates that bind C libraries; every other crate forbids `unsafe`.
const FFI_CRATES: [&str; 4] = ["gpu", "npp", "trace", "trace-standin"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// Every `.rs` file under the workspace's crates, xtask and benches.
fn sources() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = ["crates", "xtask", "benches"].iter().map(|d| root().join(d)).collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn relative(p: &Path) -> String {
    p.strip_prefix(root()).unwrap().display().to_string()
}

// ---- the crate graph ----

/// ARCHITECTURE.md's table of crates and what each may depend on, between the markers.
fn documented_graph() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("<!-- crate graph -->")
        .expect("ARCHITECTURE.md has a `<!-- crate graph -->` table");
    let end = text[start..]
        .find("<!-- end crate graph -->")
        .expect("the table is closed")
        + start;
    let mut out = BTreeMap::new();
    for line in text[start..end].lines().map(str::trim).filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let name = cells[0].trim_matches('`').to_owned();
        let deps = cells[1]
            .split(',')
            .map(|d| d.trim().trim_matches('`').to_owned())
            .filter(|d| !d.is_empty() && d != "—")
            .collect();
        out.insert(name, deps);
    }
    out
}

/// Each workspace package's normal dependencies on other workspace packages, from cargo.
fn actual_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let members: BTreeSet<String> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    let short = |n: &str| n.strip_prefix("nppbench-").unwrap_or(n).to_owned();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap())
                .filter(|d| members.contains(*d))
                .map(short)
                .collect();
            (short(p["name"].as_str().unwrap()), deps)
        })
        .collect()
}

#[test]
fn the_crate_graph_is_the_one_architecture_md_states() {
    let documented = documented_graph();
    let actual = actual_graph();
    assert_eq!(
        documented.keys().collect::<Vec<_>>(),
        actual.keys().collect::<Vec<_>>(),
        "ARCHITECTURE.md's crate table and the workspace list different crates"
    );
    for (name, deps) in &actual {
        assert_eq!(
            deps, &documented[name],
            "crate {name}: cargo says it depends on {deps:?}; ARCHITECTURE.md says {:?}",
            documented[name]
        );
    }
}

#[test]
fn the_judging_and_rendering_crates_never_reach_a_gpu_crate() {
    let graph = actual_graph();
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(c) = stack.pop() {
            for d in &graph[&c] {
                if seen.insert(d.clone()) {
                    stack.push(d.clone());
                }
            }
        }
        seen
    };
    for judge in ["stats", "analysis", "history", "report"] {
        let r = reach(judge);
        for gpu in ["gpu", "npp", "engine"] {
            assert!(!r.contains(gpu), "{judge} depends on {gpu}, a GPU crate");
        }
    }
    for gpu in ["gpu", "npp", "engine"] {
        assert!(!reach(gpu).contains("report"), "{gpu} depends on the report crate");
    }
    for c in ["report", "history"] {
        assert!(
            !graph[c].contains("stats"),
            "{c} takes statistics from nppbench-analysis, not nppbench-stats"
        );
    }
}

// ---- module cycles ----

/// The module path of a source file of a crate (`["view", "run"]` for `src/view/run.rs`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "lib" | "main" | "mod") {
        parts.push(stem.to_owned());
    }
    parts
}

/// The module paths a file refers to through `crate::…` and `super::…`, re-exports (`pub use`,
/// a module's facade) and test modules left out.
fn references(module: &[String], text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let code = text.split("#[cfg(test)]").next().unwrap();
    for line in code.lines() {
        let line = line.trim();
        if line.starts_with("//") || line.starts_with("pub use") || line.starts_with("pub(crate) use") {
            continue;
        }
        for (key, base) in [("crate::", Vec::new()), ("super::", parent_of(module))] {
            let mut rest = line;
            while let Some(i) = rest.find(key) {
                let after = &rest[i + key.len()..];
                let path: Vec<String> = after
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .next()
                    .unwrap_or("")
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                let mut full = base.clone();
                full.extend(path);
                // `use crate::{a, b}`: the braces name modules of the base.
                if let Some(braced) = after.strip_prefix('{') {
                    let inner = braced.split('}').next().unwrap_or("");
                    for name in inner.split(',') {
                        let first = name.trim().split("::").next().unwrap_or("").to_owned();
                        if !first.is_empty() {
                            let mut p = base.clone();
                            p.push(first);
                            out.push(p);
                        }
                    }
                } else {
                    out.push(full);
                }
                rest = after;
            }
        }
    }
    out
}

fn parent_of(module: &[String]) -> Vec<String> {
    module[..module.len().saturating_sub(1)].to_vec()
}

/// The longest known module that is a prefix of `path`.
fn resolve(path: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

fn cycle(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<Vec<String>>> {
    fn visit(
        n: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        path: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        state.insert(n.clone(), 1);
        path.push(n.clone());
        for m in graph.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|p| p == m).unwrap();
                    let mut c = path[start..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, graph, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n).copied().unwrap_or(0) == 0
            && let Some(c) = visit(n, graph, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// A crate's module graph: an edge from each module to every other module it refers to,
/// ancestors excepted (a module may use what its parent declares for its children).
fn module_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files: Vec<PathBuf> = sources().into_iter().filter(|f| f.starts_with(src)).collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for f in &files {
        let m = module_of(src, f);
        let text = std::fs::read_to_string(f).unwrap();
        for r in references(&m, &text) {
            if let Some(target) = resolve(&r, &modules)
                && target != m
                && !m.starts_with(&target)
            {
                graph.entry(m.clone()).or_default().insert(target);
            }
        }
    }
    graph
}

#[test]
fn no_crate_has_modules_that_import_each_other_in_a_cycle() {
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if let Some(c) = cycle(&module_graph(&src)) {
            let names: Vec<String> = c
                .iter()
                .map(|m| if m.is_empty() { "(root)".into() } else { m.join("::") })
                .collect();
            failures.push(format!("{}: {}", relative(&src), names.join(" → ")));
        }
    }
    assert!(failures.is_empty(), "module cycles:\n{}", failures.join("\n"));
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let dir = tempfile_dir();
    std::fs::write(dir.join("lib.rs"), "//! x\nmod a;\nmod b;\n").unwrap();
    std::fs::write(dir.join("a.rs"), "//! a\nuse crate::b::B;\npub struct A;\n").unwrap();
    std::fs::write(dir.join("b.rs"), "//! b\nuse super::a::A;\npub struct B;\n").unwrap();
    let modules: BTreeSet<Vec<String>> = ["", "a", "b"]
        .iter()
        .map(|m| if m.is_empty() { vec![] } else { vec![m.to_string()] })
        .collect();
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for name in ["a", "b"] {
        let m = vec![name.to_owned()];
        let text = std::fs::read_to_string(dir.join(format!("{name}.rs"))).unwrap();
        for r in references(&m, &text) {
            if let Some(t) = resolve(&r, &modules).filter(|t| *t != m && !m.starts_with(t)) {
                graph.entry(m.clone()).or_default().insert(t);
            }
        }
    }
    assert!(cycle(&graph).is_some(), "a ↔ b is a cycle: {graph:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nppbench-tidy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ---- sizes and headers ----

#[test]
fn no_source_file_is_over_450_lines() {
    let long: Vec<String> = sources()
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{} ({n} lines)", relative(f)))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// Functions longer than [`MAX_FN_LINES`]: from a line that starts an `fn` to the line, at the
/// same indentation, that closes it (rustfmt's layout).
fn long_functions(text: &str) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let starts_fn = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "async fn ",
            "const fn ",
            "unsafe fn ",
            "pub unsafe fn ",
            "pub(crate) unsafe fn ",
            "pub const fn ",
        ]
        .iter()
        .any(|p| trimmed.starts_with(p));
        if !starts_fn || trimmed.ends_with(';') || trimmed.ends_with('}') {
            continue;
        }
        let close = " ".repeat(indent) + "}";
        if let Some(end) = lines[i..].iter().position(|l| *l == close) {
            let len = end + 1;
            if len > MAX_FN_LINES {
                out.push((i + 1, len));
            }
        }
    }
    out
}

#[test]
fn no_function_is_over_100_lines() {
    let long: Vec<String> = sources()
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            long_functions(&text)
                .into_iter()
                .map(|(line, len)| format!("{}:{line} ({len} lines)", relative(f)))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_length_check_counts_a_long_function() {
    let body = "    let x = 1;\n".repeat(MAX_FN_LINES);
    let text = format!("//! t\nfn long() {{\n{body}}}\n\nfn short() {{\n}}\n");
    assert_eq!(long_functions(&text), [(2, MAX_FN_LINES + 2)]);
}

#[test]
fn every_source_file_says_what_it_is_for() {
    let bare: Vec<String> = sources()
        .iter()
        .filter(|f| !std::fs::read_to_string(f).unwrap().starts_with("//!"))
        .map(|f| relative(f))
        .collect();
    assert!(
        bare.is_empty(),
        "files without a leading `//!` line:\n{}",
        bare.join("\n")
    );
}

#[test]
fn unsafe_code_is_forbidden_outside_the_ffi_crates() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if FFI_CRATES.contains(&name.as_str()) {
            continue;
        }
        for top in ["src/lib.rs", "src/main.rs"] {
            let f = dir.join(top);
            if f.exists() && !std::fs::read_to_string(&f).unwrap().contains("#![forbid(unsafe_code)]") {
                missing.push(relative(&f));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "crates that do not forbid unsafe code:\n{}",
        missing.join("\n")
    );
}
