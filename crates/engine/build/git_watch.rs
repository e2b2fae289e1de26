//! The files a change of commit touches, which the build script watches (and nothing a `git
//! status` rewrites).

use std::path::{Path, PathBuf};

/// What the build script watches so that the commit it records stays true: `HEAD` (in `git_dir`,
/// a worktree's own), and the ref it names (`branch`, `refs/heads/NAME`, in `common_dir`, where
/// a worktree's refs live): its loose file where there is one, else `packed-refs`. Never the
/// index: `git status` refreshes and rewrites it, and every build after one would rerun the
/// script and rebuild the crates above it. Only files that exist: cargo reruns a build script on
/// every build while a watched file is missing.
pub(crate) fn git_watched(git_dir: &Path, common_dir: &Path, branch: Option<&str>) -> Vec<PathBuf> {
    let mut files = vec![git_dir.join("HEAD")];
    if let Some(branch) = branch {
        let loose = common_dir.join(branch);
        files.push(if loose.exists() {
            loose
        } else {
            common_dir.join("packed-refs")
        });
    }
    files.retain(|f| f.exists());
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    /// `.git/index` was watched, so a `git status` made the next `cargo xtask` or `cargo test`
    /// rebuild the engine and everything above it.
    #[test]
    fn a_git_status_rebuilds_nothing_the_index_is_not_watched() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path();
        for f in ["HEAD", "index", "packed-refs", "refs/heads/main"] {
            touch(&git.join(f));
        }
        let watched = git_watched(git, git, Some("refs/heads/main"));
        assert_eq!(watched, [git.join("HEAD"), git.join("refs/heads/main")]);
    }

    #[test]
    fn a_packed_branch_is_watched_through_packed_refs_and_a_worktrees_in_the_common_dir() {
        let dir = tempfile::tempdir().unwrap();
        let common = dir.path();
        let worktree = common.join("worktrees/wt");
        for f in ["HEAD", "index"] {
            touch(&worktree.join(f));
        }
        touch(&common.join("packed-refs"));
        assert_eq!(
            git_watched(&worktree, common, Some("refs/heads/wt")),
            [worktree.join("HEAD"), common.join("packed-refs")]
        );
        touch(&common.join("refs/heads/wt"));
        assert_eq!(
            git_watched(&worktree, common, Some("refs/heads/wt")),
            [worktree.join("HEAD"), common.join("refs/heads/wt")]
        );
        // A detached HEAD names no branch: HEAD alone holds the commit.
        assert_eq!(git_watched(&worktree, common, None), [worktree.join("HEAD")]);
    }
}
