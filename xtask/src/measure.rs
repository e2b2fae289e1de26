//! `cargo xtask report`: measure on this machine's GPU with the nppbench built here and render
//! the report, or render committed runs (`--from`) where there is no GPU.

use std::path::{Path, PathBuf};
use std::process::Command;

use nppbench_model::{Matrix, Preset, RunFile};

use crate::npp::npp_dir;
use crate::{BadInput, Unavailable, build_nppbench, check, nppbench, root};

/// Whether this machine has an NVIDIA GPU and driver, without loading any CUDA library.
pub(crate) fn gpu_present() -> bool {
    Path::new("/proc/driver/nvidia/version").exists() || Path::new("/dev/nvidia0").exists()
}

/// `cargo xtask report`'s folder when no `--out` is given: under `target/`, as criterion keeps its
/// report, so that what a run writes never sits among the committed evidence under `reports/` that
/// the tests read (a run there once failed the history page's test: the README's two commands
/// conflicted).
pub(crate) const DEFAULT_OUT: &str = "target/nppbench/latest";

/// The committed run the README renders where there is no GPU, and the no-GPU message names.
pub(crate) const SAMPLE_RUN: &str = "reports/h200-full-npp-13.0.1/run.json.gz";

/// The committed sample reports' run.json files under `root`'s reports/ (one run a report), for
/// the no-GPU message: never what a render wrote, in `out` or the default folder.
fn samples(root: &Path, out: &Path) -> Vec<String> {
    let written = [root.join(DEFAULT_OUT), out.to_owned()];
    let mut list: Vec<String> = RunFile::find_in(&root.join("reports"))
        .iter()
        .filter(|p| !written.iter().any(|w| p.starts_with(w)))
        .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
        .collect();
    list.sort();
    list
}

/// What `cargo xtask report` says where there is no GPU: the README's sample run to render, and
/// the other committed runs.
fn no_gpu(root: &Path, out: &Path) -> Unavailable {
    let others: Vec<String> = samples(root, out).into_iter().filter(|s| s != SAMPLE_RUN).collect();
    Unavailable(format!(
        "no NVIDIA GPU here, so nothing can be measured; render a committed run instead: cargo xtask report --from {SAMPLE_RUN}{}",
        if others.is_empty() {
            String::new()
        } else {
            format!(" (other samples: {})", others.join(", "))
        }
    ))
}

/// The matrix `--matrix` names, read and checked (bad input, exit 2, where it is not one; the
/// message names the file).
fn check_matrix(path: &Path) -> anyhow::Result<()> {
    Matrix::from_file(path)
        .map(drop)
        .map_err(|e| BadInput(format!("--matrix: {e}")).into())
}

pub(crate) fn report(
    from: &[PathBuf],
    out: &Path,
    preset: Preset,
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
        // Bad input is said before the GPU is looked for, as `nppbench run` does.
        if let Some(m) = matrix {
            check_matrix(m)?;
        }
        let dirs = if npp.is_empty() {
            vec![None]
        } else {
            npp.iter().map(|s| npp_dir(s)).collect::<anyhow::Result<_>>()?
        };
        if !gpu_present() {
            return Err(no_gpu(&root(), &out).into());
        }
        let bin = build_nppbench()?;
        for (i, dir) in dirs.iter().enumerate() {
            let run_dir = out.join("runs").join(format!("{}", i + 1));
            let mut c = Command::new(&bin);
            c.arg("run").arg("--out").arg(&run_dir);
            match matrix {
                Some(m) => c.arg("--matrix").arg(m),
                None => c.arg("--preset").arg(preset.name()),
            };
            if let Some(d) = dir {
                c.arg("--npp").arg(d);
            }
            check(c, "nppbench run")?;
            let mut version_runs = vec![run_dir.join("run.json")];
            if matrix.is_none() && preset == Preset::Atlas {
                // The threshold search's rounds (docs/atlas.md), pooled with the atlas.
                let rounds = search_thresholds(
                    &version_runs[0],
                    &run_dir,
                    |next, round_dir| {
                        let mut c = Command::new(&bin);
                        c.args(["run", "--matrix"]).arg(next).arg("--out").arg(round_dir);
                        if let Some(d) = dir {
                            c.arg("--npp").arg(d);
                        }
                        check(c, "nppbench run --matrix (a threshold search round)")
                    },
                    |atlas, next| {
                        let mut c = Command::new(&bin);
                        c.args(["design", "--bisect", "--out"]).arg(next);
                        for r in atlas {
                            c.arg("--atlas").arg(r);
                        }
                        check(c, "nppbench design --bisect")
                    },
                )?;
                version_runs.extend(rounds);
            }
            runs.extend(version_runs);
        }
    }
    let mut c = nppbench(&["report", "--out"]);
    c.arg(&out);
    for r in &runs {
        c.arg("--from").arg(r);
    }
    check(c, "nppbench report")
}

/// The most rounds of the threshold search: each shrinks every open interval about four-fold,
/// so twelve close any width's.
const MAX_ROUNDS: u32 = 12;

/// Rounds of the threshold search after the atlas run `atlas` (in `dir`): `design` writes the
/// next round's matrix from the runs so far (or nothing, once every boundary is found), `run`
/// measures it into a folder of its own. Returns the rounds' run files.
fn search_thresholds(
    atlas: &Path,
    dir: &Path,
    run: impl Fn(&Path, &Path) -> anyhow::Result<()>,
    design: impl Fn(&[PathBuf], &Path) -> anyhow::Result<()>,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut all = vec![atlas.to_owned()];
    for round in 1..=MAX_ROUNDS {
        let next = dir.join(format!("bisect-{round:02}.toml"));
        design(&all, &next)?;
        if !next.exists() {
            break;
        }
        let round_dir = dir.join(format!("round-{round:02}"));
        run(&next, &round_dir)?;
        all.push(round_dir.join("run.json"));
    }
    Ok(all.split_off(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_gpu_report_names_from_and_the_committed_runs() {
        if gpu_present() {
            nppbench_model::say_skipped(
                "without_a_gpu_report_names_from_and_the_committed_runs",
                "needs a machine without a GPU",
            );
            return;
        }
        let err = report(&[], Path::new(DEFAULT_OUT), Preset::Quick, None, &[]).unwrap_err();
        // The status `nppbench run` gives where there is no GPU (it gave 2 here, 1 there).
        assert_eq!(crate::exit_code(&err), std::process::ExitCode::from(crate::UNAVAILABLE));
        let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", crate::UNAVAILABLE)))
            .expect("README's exit statuses");
        assert!(
            row.contains("no NVIDIA GPU") && row.contains("cargo xtask report"),
            "{row}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("cargo xtask report --from {SAMPLE_RUN}")),
            "{msg}"
        );
        assert!(msg.contains("h100-npp-13.0.1/run.json.gz"), "{msg}");
    }

    /// The message named `reports/h100-npp-12.2.3.2/run.json.gz` (the first found) where the README
    /// says `reports/h200-full-npp-13.0.1/run.json.gz`.
    #[test]
    fn the_no_gpu_message_names_the_readmes_run() {
        let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
        assert!(readme.contains(&format!("`cargo xtask report --from {SAMPLE_RUN}`")));
        assert!(root().join(SAMPLE_RUN).is_file(), "{SAMPLE_RUN} is committed");
        let msg = no_gpu(&root(), &root().join(DEFAULT_OUT)).to_string();
        assert!(
            msg.contains(&format!(
                "render a committed run instead: cargo xtask report --from {SAMPLE_RUN}"
            )),
            "{msg}"
        );
    }

    /// After a render, `reports/latest/run.json` was listed among the committed samples.
    #[test]
    fn what_a_render_wrote_is_never_a_sample() {
        let dir = tempfile::tempdir().unwrap();
        let run = std::fs::read(root().join(SAMPLE_RUN)).unwrap();
        for folder in ["reports/mine", "reports/h100-npp-13.0.1", DEFAULT_OUT] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
            std::fs::write(dir.path().join(folder).join("run.json.gz"), &run).unwrap();
        }
        let msg = no_gpu(dir.path(), &dir.path().join("reports/mine")).to_string();
        assert!(
            msg.contains("(other samples: reports/h100-npp-13.0.1/run.json.gz)"),
            "{msg}"
        );
        assert!(!msg.contains("latest") && !msg.contains("mine"), "{msg}");
        assert!(
            !DEFAULT_OUT.starts_with("reports"),
            "a run renders outside the evidence"
        );
    }

    /// `--matrix bad.toml` and `--npp` naming nothing said "no NVIDIA GPU" and exited 5.
    #[test]
    fn a_bad_matrix_or_npp_is_bad_input_before_any_gpu_is_looked_for() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "name = 3\n").unwrap();
        let missing = dir.path().join("missing.toml");
        let out = dir.path().join("out");
        for (matrix, npp) in [
            (Some(bad.as_path()), vec![]),
            (Some(missing.as_path()), vec![]),
            (None, vec!["no-such-version".to_owned()]),
        ] {
            let err = report(&[], &out, Preset::Quick, matrix, &npp).unwrap_err();
            assert_eq!(crate::exit_code(&err), std::process::ExitCode::from(2), "{err:#}");
            let msg = format!("{err:#}");
            assert!(!msg.contains("no NVIDIA GPU"), "{msg}");
            assert!(
                msg.contains("--matrix") || msg.contains("--npp no-such-version"),
                "{msg}"
            );
        }
    }

    #[test]
    fn the_threshold_search_runs_rounds_until_design_writes_nothing() {
        // A stand-in `design` that proposes three rounds, and a `run` that records what it was
        // given: the orchestration is under test, not the measurement.
        let dir = tempfile::tempdir().unwrap();
        let atlas = dir.path().join("run.json");
        let ran = std::cell::RefCell::new(Vec::new());
        let rounds = search_thresholds(
            &atlas,
            dir.path(),
            |next, round_dir| {
                ran.borrow_mut().push((next.to_owned(), round_dir.to_owned()));
                Ok(())
            },
            |runs, next| {
                if runs.len() <= 3 {
                    std::fs::write(next, "name = \"atlas-bisect\"").unwrap();
                }
                // Every round's design sees the atlas and every earlier round.
                assert_eq!(runs[0], atlas);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(rounds.len(), 3);
        assert_eq!(rounds[2], dir.path().join("round-03/run.json"));
        assert_eq!(ran.borrow()[0].0, dir.path().join("bisect-01.toml"));
    }
}
