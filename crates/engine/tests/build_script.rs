//! The engine's build script's choices, tested where a build script's own tests cannot run.

#[path = "../build/git_watch.rs"]
mod git_watch;
