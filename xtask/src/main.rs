//! `cargo xtask`: the project's jobs. `report` measures and renders (or renders committed runs
//! with `--from`); `npp fetch` gets other NPP versions; `compare` judges runs against each other
//! and gates CI on the result.
//!
//! Kept light on purpose: it drives the `nppbench` binary through cargo and never compiles the
//! GPU stack itself.

#![forbid(unsafe_code)]

mod history;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "nppbench's jobs")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Measure on this machine's GPU and render reports/latest/ (or render --from run.json files).
    Report {
        /// Render these run.json files instead of measuring (no GPU needed).
        #[arg(long, value_name = "RUN.json")]
        from: Vec<PathBuf>,
        /// The report folder.
        #[arg(long, value_name = "DIR", default_value = "reports/latest")]
        out: PathBuf,
        /// quick (the default) or full.
        #[arg(long, default_value = "quick")]
        preset: String,
        /// A custom matrix file instead of the preset.
        #[arg(long, value_name = "FILE")]
        matrix: Option<PathBuf>,
        /// NPP to measure: `system` (the default search), a version fetched with `cargo xtask npp
        /// fetch` (`12.2.3.2`), or a folder. Repeat it for versions side by side.
        #[arg(long, value_name = "system|VERSION|DIR")]
        npp: Vec<String>,
    },
    /// Compare runs against the first: `nppbench compare` (compare.html, summary.md, exit status 3
    /// when a --fail-on gate trips).
    Compare {
        /// Everything after `compare`, passed on: RUN... --out DIR [--fail-on regression,leak,streams] ...
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<String>,
    },
    /// The fleet's history: `nppbench history add|report|export` (exit status 3 when a --fail-on
    /// gate trips).
    History(history::Args),
    /// Render every committed report under reports/ again from its runs (after a change to the
    /// report): each folder holding run.json or run-N-*.json, and each compare folder from the
    /// arguments in its compare.args.
    Rerender,
    /// Measure the baseline a CI gate compares against: the quick preset with five throughput
    /// passes, into .ci/baseline/ (commit its run.json; refresh it after a driver, CUDA or NPP
    /// upgrade that was judged and accepted).
    Baseline {
        /// NPP to measure, as for `report`.
        #[arg(long, value_name = "system|VERSION|DIR", default_value = "system")]
        npp: String,
        #[arg(long, value_name = "DIR", default_value = ".ci/baseline")]
        out: PathBuf,
    },
    /// Other NPP versions, from their wheels on the Python package index.
    Npp {
        #[command(subcommand)]
        command: NppCmd,
    },
}

#[derive(Subcommand)]
enum NppCmd {
    /// Download NPP VERSION... (12.x from nvidia-npp-cu12, 13.x from nvidia-npp) into .npp/VERSION/.
    Fetch {
        #[arg(required = true)]
        versions: Vec<String>,
    },
}

/// Bad input: exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadInput(String);

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<BadInput>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn run(cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::Report {
            from,
            out,
            preset,
            matrix,
            npp,
        } => report(&from, &out, &preset, matrix.as_deref(), &npp),
        Cmd::Npp {
            command: NppCmd::Fetch { versions },
        } => versions.iter().try_for_each(|v| fetch(v)),
        Cmd::History(args) => history::run(args),
        Cmd::Rerender => rerender(),
        Cmd::Baseline { npp, out } => baseline(&npp, &out),
        Cmd::Compare { args } => {
            let mut c = nppbench(&["compare"]);
            c.args(&args);
            // The exit status is the gate: pass it on unchanged.
            let status = c.status().context("starting nppbench compare")?;
            match status.code() {
                Some(0) => Ok(()),
                Some(code) => std::process::exit(code),
                None => bail!("nppbench compare was killed ({status})"),
            }
        }
    }
}

fn root() -> PathBuf {
    // xtask's manifest sits one folder below the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_owned()
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(root());
    c
}

/// `nppbench ARGS…`, built and run through cargo.
fn nppbench(args: &[&str]) -> Command {
    let mut c = cargo();
    c.args(["run", "--quiet", "--release", "--package", "nppbench", "--"])
        .args(args);
    c
}

fn check(mut cmd: Command, what: &str) -> anyhow::Result<()> {
    let status = cmd.status().with_context(|| format!("starting {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// Whether this machine has an NVIDIA GPU and driver, without loading any CUDA library.
fn gpu_present() -> bool {
    Path::new("/proc/driver/nvidia/version").exists() || Path::new("/dev/nvidia0").exists()
}

/// The committed sample reports' run.json files, for the no-GPU message.
fn samples() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(dirs) = std::fs::read_dir(root().join("reports")) {
        for d in dirs.flatten() {
            let p = d.path().join("run.json");
            if p.exists() {
                out.push(p.strip_prefix(root()).unwrap_or(&p).display().to_string());
            }
        }
    }
    out.sort();
    out
}

fn build_nppbench() -> anyhow::Result<PathBuf> {
    let mut c = cargo();
    c.args(["build", "--release", "--package", "nppbench"]);
    check(c, "cargo build --release --package nppbench")?;
    Ok(root().join("target/release/nppbench"))
}

/// `--npp` as the nppbench binary takes it: `None` for the default search.
fn npp_dir(spec: &str) -> anyhow::Result<Option<PathBuf>> {
    if spec == "system" {
        return Ok(None);
    }
    let fetched = root().join(".npp").join(spec);
    if fetched.is_dir() {
        return Ok(Some(fetched));
    }
    let dir = PathBuf::from(spec);
    if dir.is_dir() {
        return Ok(Some(dir));
    }
    Err(BadInput(format!(
        "--npp {spec}: not `system`, not a fetched version (.npp/{spec}/ is missing: run `cargo xtask npp fetch {spec}`), and not a folder"
    ))
    .into())
}

/// Every committed report folder, rendered again by the nppbench built here.
fn rerender() -> anyhow::Result<()> {
    let bin = build_nppbench()?;
    // The folders of reports/ and of its folders (reports/calibration/same-1-vs-2-3-4/).
    let subdirs = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect()
    };
    let top = subdirs(&root().join("reports"));
    let mut dirs: Vec<PathBuf> = top.iter().flat_map(|d| subdirs(d)).chain(top.iter().cloned()).collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.strip_prefix(root()).unwrap_or(&dir).display().to_string();
        let several = std::fs::read_dir(&dir)?.flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with("run-") && e.file_name().to_string_lossy().ends_with(".json")
        });
        let mut c = Command::new(&bin);
        c.current_dir(root());
        if dir.join("compare.args").exists() {
            // One argument a line: the runs (paths from the repository root) and the flags.
            let args = std::fs::read_to_string(dir.join("compare.args"))?;
            c.arg("compare")
                .args(args.lines().map(str::trim).filter(|l| !l.is_empty()))
                .arg("--out")
                .arg(&dir);
            // A compare that trips its gates exits 3: the page is still written.
            let status = c.status().with_context(|| format!("rendering {name}"))?;
            if !matches!(status.code(), Some(0 | 3)) {
                bail!("rendering {name} failed ({status})");
            }
            continue;
        } else if dir.join("run.json").exists() || several {
            c.args(["report", "--from"]).arg(&dir).arg("--out").arg(&dir);
        } else {
            continue;
        }
        check(c, &format!("rendering {name}"))?;
    }
    Ok(())
}

/// The CI baseline: the quick preset with five passes, on this machine's GPU.
fn baseline(npp: &str, out: &Path) -> anyhow::Result<()> {
    if !gpu_present() {
        return Err(BadInput("cargo xtask baseline measures on this machine's GPU, and it has none: run it on the machine (or the kind of runner) CI gates on".into()).into());
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
        "{}: commit it; CI compares each run against it (see README, 'A CI gate')",
        out.join("run.json").display()
    );
    Ok(())
}

fn report(from: &[PathBuf], out: &Path, preset: &str, matrix: Option<&Path>, npp: &[String]) -> anyhow::Result<()> {
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

/// The Python package that carries NPP `version`.
fn wheel_package(version: &str) -> anyhow::Result<&'static str> {
    match version.split('.').next() {
        Some("12") => Ok("nvidia-npp-cu12"),
        Some("13") => Ok("nvidia-npp"),
        _ => Err(BadInput(format!(
            "NPP {version}: nppbench knows NPP 12.x (nvidia-npp-cu12) and 13.x (nvidia-npp)"
        ))
        .into()),
    }
}

fn fetch(version: &str) -> anyhow::Result<()> {
    let package = wheel_package(version)?;
    let major = version.split('.').next().unwrap_or_default();
    let dest = root().join(".npp").join(version);
    let tmp = root().join("target/npp-wheels").join(version);
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut pip = Command::new("python3");
    pip.args([
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        "3.12",
    ])
    .args([
        "--platform",
        "manylinux2014_x86_64",
        "--platform",
        "manylinux_2_27_x86_64",
        "--platform",
        "manylinux_2_28_x86_64",
    ])
    .arg("--dest")
    .arg(&tmp)
    .arg(format!("{package}=={version}"));
    check(
        pip,
        &format!("pip download {package}=={version} (is the version right, and the package index reachable?)"),
    )?;
    let wheel = std::fs::read_dir(&tmp)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .with_context(|| format!("pip left no wheel in {}", tmp.display()))?;
    std::fs::create_dir_all(&dest).with_context(|| format!("creating {}", dest.display()))?;
    // Only the two libraries nppbench loads (NPP links its CUDA runtime statically).
    let script = format!(
        "import zipfile,sys,os\nz=zipfile.ZipFile(sys.argv[1])\nfound=0\nfor n in z.namelist():\n  b=os.path.basename(n)\n  if b in ('libnppc.so.{major}','libnppidei.so.{major}'):\n    open(os.path.join(sys.argv[2],b),'wb').write(z.read(n)); found+=1\nsys.exit(0 if found==2 else 3)\n"
    );
    let mut py = Command::new("python3");
    py.arg("-c").arg(script).arg(&wheel).arg(&dest);
    check(
        py,
        &format!(
            "extracting libnppc.so.{major} and libnppidei.so.{major} from {}",
            wheel.display()
        ),
    )?;
    // The version NPP reports (nppGetLibVersion needs no GPU).
    let mut info = nppbench(&["npp", "--npp"]);
    info.arg(&dest);
    check(info, "nppbench npp (checking what was fetched)")?;
    println!("{}", dest.display());
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
            .find(|s| s.contains("reports/compare/summary.md >> \"$GITHUB_STEP_SUMMARY\""))
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

    #[test]
    fn wheel_packages_by_major_version() {
        assert_eq!(wheel_package("12.2.3.2").unwrap(), "nvidia-npp-cu12");
        assert_eq!(wheel_package("13.0.1.2").unwrap(), "nvidia-npp");
        assert!(wheel_package("11.8").unwrap_err().to_string().contains("12.x"));
    }

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

    #[test]
    fn unknown_npp_spec_says_how_to_fetch() {
        let err = npp_dir("12.9.9.9").unwrap_err().to_string();
        assert!(err.contains("cargo xtask npp fetch 12.9.9.9"), "{err}");
        assert!(npp_dir("system").unwrap().is_none());
    }
}
