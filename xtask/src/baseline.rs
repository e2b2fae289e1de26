//! `cargo xtask baseline`: the CI baseline measured on this machine's GPU, and the example
//! workflow that gates on it.

use std::path::Path;
use std::process::Command;

use crate::measure::gpu_present;
use crate::npp::npp_dir;
use crate::{Unavailable, build_nppbench, check, root};

/// The CI baseline: the quick preset with five passes, on this machine's GPU.
pub(crate) fn baseline(npp: &str, out: &Path) -> anyhow::Result<()> {
    if !gpu_present() {
        return Err(Unavailable("cargo xtask baseline measures on this machine's GPU, and it has none: run it on the machine (or the kind of runner) CI gates on".into()).into());
    }
    let bin = build_nppbench()?;
    let mut c = Command::new(bin);
    c.current_dir(root())
        .args(["run", "--preset", "quick", "--repeat", "5", "--out"])
        .arg(out);
    if let Some(dir) = npp_dir(npp)? {
        c.arg("--npp").arg(dir);
    }
    check(c, "nppbench run (the baseline)")?;
    println!(
        "{}: commit it; CI compares each run against it (see docs/compare.md, 'A CI gate')",
        out.join("run.json").display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example workflow's steps, each as its text from one `- name:` (or `- uses:`) to the next.
    fn workflow_steps() -> Vec<String> {
        let text = std::fs::read_to_string(root().join(".github/workflows/nppbench.yml")).unwrap();
        let mut steps: Vec<String> = Vec::new();
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with("- name:") || t.starts_with("- uses:") {
                steps.push(String::new());
            }
            if let Some(s) = steps.last_mut() {
                s.push_str(line);
                s.push('\n');
            }
        }
        steps
    }

    #[test]
    fn the_example_workflow_publishes_its_summary_whatever_the_gate_says() {
        let steps = workflow_steps();
        let gate = steps
            .iter()
            .find(|s| s.contains("--fail-on regression,leak,streams"))
            .expect("a gated compare step");
        // The gate exits 3 when it trips: nothing after it in the same step would run.
        assert!(!gate.contains("GITHUB_STEP_SUMMARY"), "{gate}");
        let publish = steps
            .iter()
            .find(|s| s.contains("target/nppbench/compare/summary.md >> \"$GITHUB_STEP_SUMMARY\""))
            .expect("a step that publishes the compare summary");
        assert!(publish.contains("if: always()"), "{publish}");
        // The baseline it reads is where `cargo xtask baseline` writes it.
        assert!(gate.contains(".ci/baseline/run.json"));
        // The history is kept between runs and gated.
        assert!(
            steps
                .iter()
                .any(|s| s.contains("history add") && s.contains("--db history/history.db"))
        );
        assert!(
            steps.iter().any(|s| s.contains("history/history.db")
                && s.contains("upload-artifact")
                && s.contains("if: always()"))
        );
    }
}
