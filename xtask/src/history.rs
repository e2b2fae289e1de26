//! `cargo xtask history add|report|export ...`: the fleet's history, forwarded to `nppbench
//! history` (built in release mode through cargo), its exit status passed on unchanged so that
//! `--fail-on` gates CI.

use anyhow::{Context, bail};

use crate::nppbench;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Everything after `history`, passed on: add RUN.json|DIR... --db FILE [--allow-test-hooks];
    /// report --db FILE --out DIR [--fail-on regression,leak]; export --db FILE --out FILE.csv
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    args: Vec<String>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let mut c = nppbench(&["history"]);
    c.args(&args.args);
    let status = c.status().context("starting nppbench history")?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => std::process::exit(code),
        None => bail!("nppbench history was killed ({status})"),
    }
}
