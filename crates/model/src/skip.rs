//! How a test that cannot run here says so: one line past the test harness's capture.

use std::io::Write;

/// Says that the test `name` skipped and why, as `skipped NAME: WHY` on the process's standard
/// error itself. The test harness captures `eprintln!` (and shows it only for a failed test or
/// under `--show-output`), so a skip said that way reads as a pass; a write to `std::io::stderr()`
/// bypasses the capture, so `cargo test` shows every skip and `.ci/run` counts them.
pub fn say_skipped(name: &str, why: &str) {
    // One write of the whole line (standard error is unbuffered: `writeln!` would write it in
    // pieces, which the harness's own lines on a shared pipe could split). A lost line must not
    // fail the test that skipped: the error is dropped.
    let line = format!("skipped {name}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    /// Set in the child: it says a skip and returns.
    const CHILD: &str = "NPPBENCH_SAY_SKIPPED_CHILD";

    /// Skips were said with `eprintln!`, which the harness captured: `cargo test` showed 24 GPU
    /// tests and 3 browser tests as passed, saying nothing. This test runs itself again as a child,
    /// under the harness's default capture, and reads the child's standard error.
    #[test]
    fn a_skip_is_said_past_the_test_harness_capture() {
        let name = "skip::tests::a_skip_is_said_past_the_test_harness_capture";
        if std::env::var_os(CHILD).is_some() {
            say_skipped("some_gpu_test", "needs a GPU (no CUDA driver library)");
            return;
        }
        let o = Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--test-threads=2"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("1 passed"), "the child ran the test: {out}");
        assert!(
            err.lines()
                .any(|l| l == "skipped some_gpu_test: needs a GPU (no CUDA driver library)"),
            "stderr: {err:?}"
        );
    }
}
