//! Records the git commit nppbench was built from, for run.json.

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
    // `--no-optional-locks`: status must not refresh and rewrite the index it is watched by.
    let dirty =
        git(&["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=NPPBENCH_GIT_COMMIT={commit}{suffix}");
    // A commit moves the branch's ref, not HEAD (which names the branch): watch both. Only files
    // that exist are watched: cargo reruns a build script on every build while a watched file is
    // missing (a repository whose refs are all loose has no packed-refs, a fresh one no index).
    let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) else {
        return;
    };
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let watched = ["HEAD", "index", "packed-refs"]
        .into_iter()
        .map(str::to_owned)
        .chain(branch)
        .map(|file| Path::new(&dir).join(file))
        .filter(|path| path.exists());
    for path in watched {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    // An edit that is not staged changes neither: watch the workspace's sources too, so that a
    // binary built from edited files says `-dirty` (cargo scans a watched folder's files).
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for folder in ["crates", "xtask", "templates", "Cargo.toml"] {
        let path = workspace.join(folder);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
