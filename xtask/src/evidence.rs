//! `cargo xtask evidence`: the committed runs that left the working tree (issue #46), listed in
//! `reports/ELSEWHERE.tsv` with the commit that still holds each, and brought back from git into
//! target/evidence/ on demand (`git archive`), so that a claim in the docs can be checked again
//! without every clone carrying its runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::{BadInput, root};

/// The index of the runs that left the tree, from the repository root.
pub(crate) const INDEX: &str = "reports/ELSEWHERE.tsv";
/// Where `evidence PATH` puts what it brings back, from the repository root.
pub(crate) const OUT: &str = "target/evidence";

/// One run (a file or a folder) that left the tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Elsewhere {
    /// The commit that holds it.
    pub commit: String,
    /// Its path in that commit, from the repository root.
    pub path: String,
    /// What it backs.
    pub backs: String,
}

/// The lines of the index: `#` comments and blank lines skipped; any other line is a commit (40
/// hexadecimal digits), a path under reports/ and what it backs, tab-separated.
pub(crate) fn parse(text: &str) -> anyhow::Result<Vec<Elsewhere>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [commit, path, backs] = fields[..] else {
            bail!(
                "{INDEX} line {}: {} fields, not 3 (commit, path, what it backs, tab-separated)",
                n + 1,
                fields.len()
            );
        };
        if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            bail!(
                "{INDEX} line {}: {commit:?} is not a commit's 40 hexadecimal digits",
                n + 1
            );
        }
        if !path.starts_with("reports/") || path.contains("..") {
            bail!("{INDEX} line {}: {path:?} is not a path under reports/", n + 1);
        }
        out.push(Elsewhere {
            commit: commit.to_owned(),
            path: path.trim_end_matches('/').to_owned(),
            backs: backs.to_owned(),
        });
    }
    Ok(out)
}

/// The committed index, read.
pub(crate) fn index() -> anyhow::Result<Vec<Elsewhere>> {
    let path = root().join(INDEX);
    parse(&std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?)
}

/// The entries `wanted` names: each the path of an entry or a folder above entries. A name that
/// matches none is bad input.
pub(crate) fn select<'a>(all: &'a [Elsewhere], wanted: &[String]) -> anyhow::Result<Vec<&'a Elsewhere>> {
    let mut out = Vec::new();
    for w in wanted {
        let w = w.trim_end_matches('/');
        let found: Vec<&Elsewhere> = all
            .iter()
            .filter(|e| e.path == w || e.path.starts_with(&format!("{w}/")))
            .collect();
        if found.is_empty() {
            return Err(BadInput(format!(
                "{w} is not in {INDEX}: `cargo xtask evidence` lists what left the tree"
            ))
            .into());
        }
        for e in found {
            if !out.contains(&e) {
                out.push(e);
            }
        }
    }
    Ok(out)
}

/// Whether this clone holds `commit` (a shallow clone may not).
pub(crate) fn has_commit(repo: &Path, commit: &str) -> bool {
    Command::new("git")
        .current_dir(repo)
        .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Brings `e` back from its commit into `out` (its path kept below it), with `git archive`.
fn bring_back(repo: &Path, e: &Elsewhere, out: &Path) -> anyhow::Result<PathBuf> {
    if !has_commit(repo, &e.commit) {
        bail!(
            "commit {} (which holds {}) is not in this clone: fetch the whole history (`git fetch --unshallow`)",
            e.commit,
            e.path
        );
    }
    std::fs::create_dir_all(out)?;
    let mut archive = Command::new("git")
        .current_dir(repo)
        .args(["archive", "--format=tar", &e.commit, "--", &e.path])
        .stdout(Stdio::piped())
        .spawn()
        .context("running git archive")?;
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(out)
        .stdin(archive.stdout.take().context("git archive's output")?)
        .status()
        .context("running tar")?;
    let git = archive.wait()?;
    if !git.success() || !tar.success() {
        bail!(
            "bringing back {} from {}: git archive {git}, tar {tar}",
            e.path,
            e.commit
        );
    }
    Ok(out.join(&e.path))
}

/// `cargo xtask evidence [PATH...]`: without paths, the index; with them, each brought back.
pub(crate) fn evidence(paths: &[String]) -> anyhow::Result<()> {
    let all = index()?;
    if paths.is_empty() {
        for e in &all {
            println!("{}  {}  {}", &e.commit[..12], e.path, e.backs);
        }
        println!("`cargo xtask evidence PATH...` brings any of them back into {OUT}/");
        return Ok(());
    }
    let out = root().join(OUT);
    for e in select(&all, paths)? {
        let at = bring_back(&root(), e, &out)?;
        println!("{} (from {})", at.display(), &e.commit[..12]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str) -> Elsewhere {
        Elsewhere {
            commit: "0".repeat(40),
            path: path.into(),
            backs: "x".into(),
        }
    }

    #[test]
    fn an_index_line_is_a_commit_a_path_under_reports_and_what_it_backs() {
        let ok = format!("# comment\n\n{}\treports/a/run.json\tthe claim\n", "ab".repeat(20));
        assert_eq!(parse(&ok).unwrap().len(), 1);
        for (bad, says) in [
            (format!("{}\treports/a\n", "ab".repeat(20)), "2 fields"),
            ("abc\treports/a\tx\n".to_owned(), "40 hexadecimal"),
            (
                format!("{}\tcrates/a\tx\n", "ab".repeat(20)),
                "not a path under reports/",
            ),
            (
                format!("{}\treports/../x\tx\n", "ab".repeat(20)),
                "not a path under reports/",
            ),
        ] {
            let e = parse(&bad).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("line 1"), "{e}");
        }
    }

    #[test]
    fn a_folder_selects_the_entries_below_it_and_an_unknown_path_is_bad_input() {
        let all = [
            entry("reports/batches/a.json"),
            entry("reports/batches/b.json"),
            entry("reports/trace/seam"),
        ];
        assert_eq!(select(&all, &["reports/batches/".into()]).unwrap().len(), 2);
        assert_eq!(
            select(&all, &["reports/trace/seam".into(), "reports/trace".into()])
                .unwrap()
                .len(),
            1
        );
        let e = select(&all, &["reports/bat".into()]).unwrap_err();
        assert!(
            e.downcast_ref::<BadInput>().is_some() && e.to_string().contains("not in"),
            "{e}"
        );
    }

    /// Every committed entry has left the tree, and, where this clone has its history, its commit
    /// holds its path. The newest entry is brought back and holds files.
    #[test]
    fn every_entry_left_the_tree_and_its_commit_holds_it() {
        let all = index().unwrap();
        assert!(!all.is_empty());
        let listed = Command::new("git")
            .current_dir(root())
            .args(["ls-files", "reports"])
            .output()
            .unwrap();
        let tree = String::from_utf8(listed.stdout).unwrap();
        for e in &all {
            assert!(
                !tree
                    .lines()
                    .any(|l| l == e.path || l.starts_with(&format!("{}/", e.path))),
                "{} is still in the tree",
                e.path
            );
        }
        let Some(last) = all.iter().rev().find(|e| has_commit(&root(), &e.commit)) else {
            eprintln!("skipped: this clone has none of the index's commits (a shallow clone)");
            return;
        };
        for e in all.iter().filter(|e| has_commit(&root(), &e.commit)) {
            let ok = Command::new("git")
                .current_dir(root())
                .args(["cat-file", "-e", &format!("{}:{}", e.commit, e.path)])
                .status()
                .unwrap();
            assert!(ok.success(), "{} is not in {}", e.path, e.commit);
        }
        let tmp = tempfile::tempdir().unwrap();
        let at = bring_back(&root(), last, tmp.path()).unwrap();
        assert!(at.exists(), "{}", at.display());
    }
}
