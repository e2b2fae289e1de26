//! A machine that cannot measure (no GPU or driver, no NPP where nppbench looked): what it is
//! told, and one exit status for it, 5, whichever command met it and however NPP was looked for.

use super::{command, nppbench, stderr};

#[test]
fn run_without_a_gpu_says_what_is_missing() {
    if nppbench_engine::gpu_missing().is_none() {
        nppbench_model::say_skipped(
            "run_without_a_gpu_says_what_is_missing",
            "needs a machine without a GPU",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = nppbench(&["run", "--preset", "quick", "--out", dir.path().to_str().unwrap()]);
    // 5, as `cargo xtask report` without a GPU and `nppbench npp` without NPP (it was 1 here).
    assert_eq!(o.status.code(), Some(5));
    let err = stderr(&o);
    assert!(err.contains("nothing was measured"), "{err}");
    // The run names the first thing missing: the driver, checked before any probe starts; then
    // NPP, which the probe loads before it opens the GPU; then the GPU.
    let missing = if !nppbench_gpu::Gpu::driver_present() {
        "no CUDA driver library (libcuda.so)".to_owned()
    } else {
        match nppbench_engine::load_npp(None) {
            Err(e) => e.to_string().lines().next().unwrap_or_default().to_owned(),
            Ok(_) => nppbench_engine::gpu_missing().expect("a GPU is missing"),
        }
    };
    assert!(err.contains(&missing), "{missing:?} not in {err}");
    assert!(!dir.path().join("run.json").exists());
}

/// NPP not found was one failure with two statuses: `nppbench npp` exited 1 where it searched,
/// 2 where `--npp DIR` named a folder that holds none. Now 5 both ways, and from `run` too (on a
/// machine without a GPU the driver is missing first: 5 as well).
#[test]
fn npp_not_found_exits_5_whether_named_or_searched() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    // Searched: $NPPBENCH_NPP_DIR is the only place tried, so no machine's NPP is found.
    let searched = command(&["npp"]).env("NPPBENCH_NPP_DIR", dir).output().unwrap();
    let named = nppbench(&["npp", "--npp", dir]);
    for o in [searched, named] {
        assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
        assert!(stderr(&o).contains("cannot load NPP"), "{}", stderr(&o));
    }
    let out = empty.path().join("out");
    let run = nppbench(&["run", "--preset", "quick", "--npp", dir, "--out", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(5), "{}", stderr(&run));
}
