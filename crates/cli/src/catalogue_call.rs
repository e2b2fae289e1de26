//! `nppbench call-catalogue` (hidden; issue #45): every function of a version's catalogue that a
//! call can be synthesised for, called on the GPU from its roles by child processes
//! (`nppbench_engine::call_catalogue_from`). One JSON line a function, never one dropped: a
//! function that cannot be planned or loaded says why, and one that kills the CUDA context (a
//! fault, a sticky error) is recorded here, and a new child starts at the next function.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;
use clap::Args;
use nppbench_engine::{CatalogueCalls, append_line, call_catalogue_from};
use serde_json::json;

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The version's catalogue folder (`catalogue/npp-13.0.1.2`: prototypes.tsv.gz).
    #[arg(long, value_name = "DIR")]
    catalogue: PathBuf,
    /// NPP's libraries (of that version); default: the same search as `run`.
    #[arg(long, value_name = "DIR")]
    npp: Option<PathBuf>,
    /// The JSON lines written, one a function (appended to).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Only functions whose symbol contains this.
    #[arg(long)]
    only: Option<String>,
    /// The ROI's width and height.
    #[arg(long, default_value_t = 64)]
    width: u32,
    #[arg(long, default_value_t = 32)]
    height: u32,
    /// Internal: a child's first function.
    #[arg(long, hide = true)]
    from: Option<usize>,
}

impl CallArgs {
    fn calls(&self) -> CatalogueCalls {
        CatalogueCalls {
            catalogue: self.catalogue.clone(),
            npp: self.npp.clone(),
            out: self.out.clone(),
            only: self.only.clone(),
            width: self.width,
            height: self.height,
        }
    }
}

pub(crate) fn call_catalogue(args: CallArgs) -> anyhow::Result<()> {
    match args.from {
        Some(from) => {
            // A function that faults ends the child: without a core file, which for a process
            // holding a CUDA context takes seconds to write.
            let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
            call_catalogue_from(&args.calls(), from)
        }
        None => parent(&args),
    }
}

/// Starts children until every function has its line: a child that dies leaves the function it
/// began without one, which gets a line saying how the child ended.
fn parent(args: &CallArgs) -> anyhow::Result<()> {
    let (_, rows) = args.calls().functions()?;
    let exe = std::env::current_exe()?;
    let mut from = 0;
    while from < rows.len() {
        let mut cmd = Command::new(&exe);
        cmd.arg("call-catalogue")
            .arg("--catalogue")
            .arg(&args.catalogue)
            .arg("--out")
            .arg(&args.out)
            .args(["--width", &args.width.to_string(), "--height", &args.height.to_string()])
            .args(["--from", &from.to_string()]);
        if let Some(npp) = &args.npp {
            cmd.arg("--npp").arg(npp);
        }
        if let Some(o) = &args.only {
            cmd.args(["--only", o]);
        }
        let mut child = cmd.stdout(Stdio::piped()).spawn().context("starting a child")?;
        let mut begun = None;
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            if let Some(i) = line?.strip_prefix("begin ") {
                begun = i.parse::<usize>().ok();
            }
        }
        let status = child.wait()?;
        match (status.success(), begun) {
            (true, _) => break,
            (false, Some(i)) => {
                if !has_line(&args.out, i)? {
                    append_line(
                        &args.out,
                        &json!({"index": i, "symbol": rows[i].symbol, "library": rows[i].library,
                            "ended_process": format!("{status}")}),
                    )?;
                }
                from = i + 1;
            }
            (false, None) => anyhow::bail!("a child ended ({status}) before its first function"),
        }
    }
    Ok(())
}

fn has_line(out: &Path, index: usize) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(out).unwrap_or_default();
    Ok(text
        .lines()
        .rev()
        .take(4)
        .any(|l| serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| v["index"] == json!(index))))
}
