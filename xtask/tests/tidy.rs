//! Tidy tests (rust-analyzer's habit): the invariants ARCHITECTURE.md states, checked on the
//! code. The crate graph from `cargo metadata` against ARCHITECTURE.md's table (module cycles:
//! `cycles.rs`), no source file over 450 lines, no function over 100, a
//! `//!` line at the top of every source file, `unsafe` kept out of every crate but the FFI
//! ones, and a clone's tracked files under 60 MB (issue #46).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const MAX_FILE_LINES: usize = 450;
const MAX_FN_LINES: usize = 100;
/// What the files git tracks may weigh together (issue #46: a clone weighs megabytes). Runs that
/// only back a claim leave the tree, listed in reports/ELSEWHERE.tsv (`cargo xtask evidence`).
const MAX_TRACKED_BYTES: u64 = 60_000_000;
/// The crates that bind C libraries; every other crate forbids `unsafe`.
const FFI_CRATES: [&str; 5] = ["gpu", "npp", "npp-sys", "trace", "trace-standin"];

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

// ---- sizes and headers ----

/// The tracked files' sizes in the working tree, the largest first; `None` outside a git
/// checkout.
fn tracked_sizes() -> Option<Vec<(u64, String)>> {
    let out = Command::new("git")
        .current_dir(root())
        .args(["ls-files", "-z"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let mut sizes: Vec<(u64, String)> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let p = String::from_utf8_lossy(p).into_owned();
            // A file deleted but not yet staged weighs nothing.
            (std::fs::metadata(root().join(&p)).map_or(0, |m| m.len()), p)
        })
        .collect();
    sizes.sort_by(|a, b| b.cmp(a));
    Some(sizes)
}

#[test]
fn the_tracked_files_weigh_under_60_mb() {
    let Some(sizes) = tracked_sizes() else {
        eprintln!("skipped: not a git checkout, so no tracked files to weigh");
        return;
    };
    let total: u64 = sizes.iter().map(|(n, _)| n).sum();
    let largest: Vec<String> = sizes
        .iter()
        .take(12)
        .map(|(n, p)| format!("{:.2} MB {p}", *n as f64 / 1e6))
        .collect();
    assert!(
        total < MAX_TRACKED_BYTES,
        "the tracked files weigh {:.1} MB, over {} MB: move runs that only back a claim out of the tree and name them in reports/ELSEWHERE.tsv (docs/run.md, `cargo xtask evidence`). The largest:\n{}",
        total as f64 / 1e6,
        MAX_TRACKED_BYTES / 1_000_000,
        largest.join("\n")
    );
}

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

// ---- the interposer's seam ----

/// What the interposer's code on the program's threads (`crates/trace/src/recorder/`) must never
/// name: a lock, or the writer (ARCHITECTURE.md: a program thread never waits for the writer, and
/// a signal that interrupts one can never leave the exit path waiting on it).
const RECORDER_FORBIDDEN: [&str; 7] = [
    "Mutex",
    "RwLock",
    "Condvar",
    ".lock(",
    "lock_until",
    "sync::lock",
    "writer::",
];

/// The forbidden names in a recorder file's code: comments and test code (a `tests.rs` file, or
/// what follows the first `#[cfg(test)]`) are left out, since neither runs on a program's thread.
fn recorder_violations(text: &str) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") {
            continue;
        }
        out.extend(
            RECORDER_FORBIDDEN
                .iter()
                .filter(|w| code.contains(*w))
                .map(|w| (i + 1, *w)),
        );
    }
    out
}

#[test]
fn the_recorder_takes_no_lock_and_names_no_writer() {
    // Everything on the program's threads: the recorder, the shield and the seam between them.
    let src = root().join("crates/trace/src");
    let on_threads = [src.join("recorder"), src.join("shield"), src.join("seam.rs")];
    let files: Vec<PathBuf> = sources()
        .into_iter()
        .filter(|f| on_threads.iter().any(|d| f.starts_with(d)) && f.file_name().is_some_and(|n| n != "tests.rs"))
        .collect();
    for d in &on_threads {
        assert!(
            files.iter().any(|f| f.starts_with(d)),
            "no source under {}",
            d.display()
        );
    }
    assert!(files.len() >= 10, "the recorder's files: {files:?}");
    let found: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            recorder_violations(&text)
                .into_iter()
                .map(|(line, w)| format!("{}:{line}: {w}", relative(f)))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        found.is_empty(),
        "the recorder names a lock or the writer:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_seam_check_finds_a_lock_and_the_writer_and_skips_comments_and_tests() {
    let text = "//! r\n// a Mutex in a comment\nuse crate::writer::sync::lock;\nstatic M: Mutex<()> = Mutex::new(());\n#[cfg(test)]\nmod tests { use std::sync::Mutex; }\n";
    assert_eq!(
        recorder_violations(text),
        [(3, "sync::lock"), (3, "writer::"), (4, "Mutex")]
    );
}
