//! A tidy test (see `tidy.rs`): no module of a crate imports another in a cycle, read from whole
//! files, test items left out wherever they stand.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// Every `.rs` file below `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

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
    let code = without_tests(text);
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

/// `text` without its test items: each `#[cfg(test)]` and the item it marks (`mod tests;`, or a
/// block to its closing brace), wherever they stand, so that code after a test module's
/// declaration is still read.
fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "#[cfg(test)]" {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        // Skip the marked item: to its `;` at depth 0, or to the brace that closes it.
        let mut depth = 0i32;
        for item in lines.by_ref() {
            let t = item.trim();
            if t.starts_with("#[") && depth == 0 {
                continue;
            }
            depth += item.matches('{').count() as i32 - item.matches('}').count() as i32;
            if depth <= 0 && (t.ends_with(';') || t.ends_with('}')) {
                break;
            }
        }
    }
    out
}

#[test]
fn test_items_are_left_out_and_what_follows_them_is_read() {
    let text = "mod a;\n#[cfg(test)]\nmod tests;\n\nuse super::expand::Axes;\n#[cfg(test)]\nmod more {\n    use crate::x;\n    fn f() { }\n}\nuse crate::y;\n";
    let code = without_tests(text);
    assert!(
        code.contains("use super::expand::Axes;") && code.contains("use crate::y;"),
        "{code}"
    );
    assert!(!code.contains("mod tests;") && !code.contains("crate::x"), "{code}");
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

/// What a module re-exports (`pub use run::Evidence;` in `lib.rs`): the module and the name it
/// gives, to the path of what it names. `*` stands for a glob's names.
type Reexports = BTreeMap<(Vec<String>, String), Vec<String>>;

/// The `pub use` and `pub(crate) use` items of a file whose module is `module`, each statement
/// read whole (a brace list may span lines); paths outside the crate are left out.
fn reexports_of(module: &[String], text: &str, modules: &BTreeSet<Vec<String>>, out: &mut Reexports) {
    let code = without_tests(text);
    let mut statement = String::new();
    for line in code.lines() {
        let t = line.trim();
        if statement.is_empty() {
            let Some(rest) = t.strip_prefix("pub use ").or_else(|| t.strip_prefix("pub(crate) use ")) else {
                continue;
            };
            statement.push_str(rest);
        } else {
            statement.push(' ');
            statement.push_str(t);
        }
        if !statement.contains(';') {
            continue;
        }
        let path = statement.split(';').next().unwrap_or("").replace(' ', "");
        statement.clear();
        let (head, items) = match path.split_once("::{") {
            Some((head, tail)) => (
                head.to_owned(),
                tail.trim_end_matches('}').split(',').map(str::to_owned).collect(),
            ),
            None => match path.rsplit_once("::") {
                Some((head, last)) => (head.to_owned(), vec![last.to_owned()]),
                None => continue,
            },
        };
        let mut segments = head.split("::");
        let first = segments.next().unwrap_or("");
        let mut base = match first {
            "crate" => Vec::new(),
            "super" => parent_of(module),
            "self" => module.to_vec(),
            _ => {
                let mut local = module.to_vec();
                local.push(first.to_owned());
                if !modules.contains(&local) {
                    continue; // another crate's item
                }
                local
            }
        };
        base.extend(segments.map(str::to_owned));
        for item in items.iter().filter(|i| !i.is_empty()) {
            let (item_path, name) = match item.split_once("as") {
                Some((p, alias))
                    if item.contains("as")
                        && !alias.is_empty()
                        && p.ends_with(|c: char| c.is_alphanumeric() || c == '_') =>
                {
                    (p.to_owned(), alias.to_owned())
                }
                _ => (item.clone(), item.rsplit("::").next().unwrap_or("").to_owned()),
            };
            let mut target = base.clone();
            target.extend(
                item_path
                    .split("::")
                    .filter(|s| *s != "*" && *s != "self")
                    .map(str::to_owned),
            );
            out.insert((module.to_vec(), name), target);
        }
    }
}

/// The module `path` names, through the re-exports it passes: `crate::Evidence`, re-exported by
/// the crate's root from `run`, is `run`'s.
fn resolve_through(path: &[String], modules: &BTreeSet<Vec<String>>, reexports: &Reexports) -> Option<Vec<String>> {
    let mut path = path.to_vec();
    for _ in 0..16 {
        let target = resolve(&path, modules)?;
        let Some(name) = path.get(target.len()) else {
            return Some(target);
        };
        let key = (target.clone(), name.clone());
        let glob = (target.clone(), "*".to_owned());
        let Some(via) = reexports.get(&key).or_else(|| reexports.get(&glob)) else {
            return Some(target);
        };
        let mut next = via.clone();
        if reexports.contains_key(&key) {
            next.extend(path[target.len() + 1..].iter().cloned());
        } else {
            next.extend(path[target.len()..].iter().cloned());
        }
        if next == path || resolve(&next, modules).as_ref() == Some(&target) {
            return Some(target);
        }
        path = next;
    }
    resolve(&path, modules)
}

/// A crate's module graph: an edge from each module to every other module it refers to,
/// ancestors excepted (a module may use what its parent declares for its children), a name a
/// module re-exports counted as a reference to the module that defines it.
fn module_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files = rust_files(src);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let texts: Vec<(Vec<String>, String)> = files
        .iter()
        .map(|f| (module_of(src, f), std::fs::read_to_string(f).unwrap()))
        .collect();
    let mut reexports = Reexports::new();
    for (m, text) in &texts {
        reexports_of(m, text, &modules, &mut reexports);
    }
    graph_of(&texts, &modules, &reexports)
}

fn graph_of(
    texts: &[(Vec<String>, String)],
    modules: &BTreeSet<Vec<String>>,
    reexports: &Reexports,
) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (m, text) in texts {
        for r in references(m, text) {
            if let Some(target) = resolve_through(&r, modules, reexports)
                && target != *m
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
            failures.push(format!(
                "{}: {}",
                src.strip_prefix(root()).unwrap().display(),
                names.join(" → ")
            ));
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

/// `use crate::Evidence`, where the root re-exports `run::Evidence`, named the root, which every
/// module may use: the cycles `run ↔ evidence` and `throughput ↔ compare::passes` went unseen.
#[test]
fn a_cycle_through_a_reexport_is_found() {
    let texts: Vec<(Vec<String>, String)> = [
        (
            "",
            "//! x\nmod a;\nmod b;\npub use a::A;\npub(crate) use b::{B, C as D};\n",
        ),
        ("a", "//! a\nuse crate::D;\npub struct A;\n"),
        ("b", "//! b\nuse crate::A;\npub struct B;\npub struct C;\n"),
    ]
    .iter()
    .map(|(m, t)| {
        (
            m.split('/').filter(|s| !s.is_empty()).map(str::to_owned).collect(),
            t.to_string(),
        )
    })
    .collect();
    let modules: BTreeSet<Vec<String>> = texts.iter().map(|(m, _)| m.clone()).collect();
    let mut reexports = Reexports::new();
    for (m, text) in &texts {
        reexports_of(m, text, &modules, &mut reexports);
    }
    assert_eq!(
        reexports.get(&(vec![], "D".to_owned())),
        Some(&vec!["b".to_owned(), "C".to_owned()])
    );
    let graph = graph_of(&texts, &modules, &reexports);
    assert!(
        cycle(&graph).is_some(),
        "a ↔ b through the root's re-exports: {graph:?}"
    );
}
