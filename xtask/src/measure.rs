//! `cargo xtask report`: measure on this machine's GPU with the nppbench built here and render
//! the report, or render committed runs (`--from`) where there is no GPU.

use std::path::{Path, PathBuf};
use std::process::Command;

use nppbench_model::RunFile;

use crate::npp::npp_dir;
use crate::{BadInput, build_nppbench, check, nppbench, root};

/// Whether this machine has an NVIDIA GPU and driver, without loading any CUDA library.
pub(crate) fn gpu_present() -> bool {
    Path::new("/proc/driver/nvidia/version").exists() || Path::new("/dev/nvidia0").exists()
}

/// The committed sample reports' run.json files (one run a report), for the no-GPU message.
fn samples() -> Vec<String> {
    let mut out: Vec<String> = RunFile::find_in(&root().join("reports"))
        .iter()
        .map(|p| p.strip_prefix(root()).unwrap_or(p).display().to_string())
        .collect();
    out.sort();
    out
}

pub(crate) fn report(
    from: &[PathBuf],
    out: &Path,
    preset: &str,
    matrix: Option<&Path>,
    npp: &[String],
) -> anyhow::Result<()> {
    let out = if out.is_absolute() {
        out.to_owned()
    } else {
        root().join(out)
    };
    let mut runs: Vec<PathBuf> = from
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    if runs.is_empty() {
        if !gpu_present() {
            let list = samples();
            return Err(BadInput(format!(
                "no NVIDIA GPU here, so nothing can be measured; render a committed run instead: cargo xtask report --from {}{}",
                list.first().map_or("RUN.json", String::as_str),
                if list.len() > 1 { format!(" (samples: {})", list.join(", ")) } else { String::new() }
            ))
            .into());
        }
        let dirs = if npp.is_empty() {
            vec![None]
        } else {
            npp.iter().map(|s| npp_dir(s)).collect::<anyhow::Result<_>>()?
        };
        let bin = build_nppbench()?;
        for (i, dir) in dirs.iter().enumerate() {
            let run_dir = out.join("runs").join(format!("{}", i + 1));
            let mut c = Command::new(&bin);
            c.arg("run").arg("--out").arg(&run_dir);
            match matrix {
                Some(m) => c.arg("--matrix").arg(m),
                None => c.arg("--preset").arg(preset),
            };
            if let Some(d) = dir {
                c.arg("--npp").arg(d);
            }
            check(c, "nppbench run")?;
            runs.push(run_dir.join("run.json"));
        }
    }
    let mut c = nppbench(&["report", "--out"]);
    c.arg(&out);
    for r in &runs {
        c.arg("--from").arg(r);
    }
    check(c, "nppbench report")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_gpu_report_names_from_and_the_committed_runs() {
        if gpu_present() {
            eprintln!("skipped without_a_gpu_report_names_from_and_the_committed_runs: needs a machine without a GPU");
            return;
        }
        let err = report(&[], Path::new("reports/latest"), "quick", None, &[]).unwrap_err();
        assert!(err.downcast_ref::<BadInput>().is_some(), "exit status 2");
        let msg = err.to_string();
        assert!(msg.contains("cargo xtask report --from reports/"), "{msg}");
        assert!(msg.contains("h100-npp-13.0.1/run.json"), "{msg}");
    }
}
