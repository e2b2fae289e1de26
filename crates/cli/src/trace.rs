//! `nppbench trace`: runs a program with the interposer preloaded and renders what it recorded.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct TraceArgs {
    /// The folder trace.json and its page are written to.
    #[arg(long, value_name = "DIR", default_value = "nppbench-trace")]
    pub(crate) out: PathBuf,
    /// The folder holding NPP's libraries to run the program against (put first on
    /// LD_LIBRARY_PATH); by default the program's own.
    #[arg(long, value_name = "DIR")]
    pub(crate) npp: Option<PathBuf>,
    /// Atlas runs whose rules and fixes the page shows beside each call site.
    #[arg(long, value_name = "RUN")]
    pub(crate) atlas: Vec<PathBuf>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub(crate) program: Vec<String>,
}

pub(crate) fn trace(_args: TraceArgs) -> anyhow::Result<()> {
    anyhow::bail!("nppbench trace is not built yet")
}
