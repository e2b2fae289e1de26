//! Records the git commit nppbench was built from, for run.json.

#[path = "build/git_watch.rs"]
mod git_watch;

use std::path::Path;
use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    // `--no-optional-locks`: this status must not refresh and rewrite the user's index.
    let dirty =
        git(&["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=NPPBENCH_GIT_COMMIT={commit}{suffix}");
    // A commit moves HEAD or the ref it names: watch those (`git_watch`), never the index,
    // which a `git status` rewrites.
    let (Some(dir), Some(common), Ok(here)) = (
        git(&["rev-parse", "--absolute-git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
        std::env::current_dir(),
    ) else {
        return;
    };
    // The common dir may be said relative to where git ran, this folder.
    let common = here.join(common);
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    for path in git_watch::git_watched(Path::new(&dir), &common, branch.as_deref()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    // An edit changes neither: watch the workspace's sources too, so that a binary built from
    // edited files says `-dirty` (cargo scans a watched folder's files; staging one changes
    // nothing the binary says).
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for folder in ["crates", "xtask", "templates", "Cargo.toml"] {
        let path = workspace.join(folder);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
