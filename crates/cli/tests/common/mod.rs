//! What the CLI's tests share: the binary, the committed reports, answers as CSV, and made-up
//! design lines.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test: `NPPBENCH_BIN` where set (a release build carried to a GPU machine),
/// else the one cargo built.
pub(crate) fn bin() -> String {
    std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned())
}

pub(crate) fn nppbench(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

/// The repository: `NPPBENCH_ROOT` where set (a copy of the tree on a GPU machine, elsewhere than
/// where the tests were built), else the one cargo built from.
pub(crate) fn repo() -> PathBuf {
    std::env::var_os("NPPBENCH_ROOT").map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."), PathBuf::from)
}

pub(crate) fn reports() -> PathBuf {
    repo().join("reports")
}

pub(crate) fn atlas(version: &str) -> String {
    reports()
        .join(format!("h100-atlas-bisected-npp-{version}"))
        .display()
        .to_string()
}

/// The answers as CSV rows (header first).
pub(crate) fn predict_csv(args: &[&str]) -> Vec<csv::StringRecord> {
    let mut all = vec!["predict", "--format", "csv"];
    all.extend_from_slice(args);
    let o = nppbench(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(o.stdout.as_slice())
        .records()
        .map(Result::unwrap)
        .collect()
}

/// A made-up design line (no GPU wrote it) of `symbol` at shape `s`: NPP_NO_ERROR, the same
/// pixels at aligned steps, and streams kept on each of 4 calls' threads where `keeps`.
pub(crate) fn made_up_design_line(
    symbol: &str,
    px: nppbench_analysis::calls::design::Pixels,
    s: nppbench_analysis::calls::design::Shape,
    keeps: bool,
) -> nppbench_analysis::calls::design::ShapeLine {
    nppbench_analysis::calls::design::ShapeLine {
        symbol: symbol.into(),
        shape: Some(s),
        pixels: Some(px),
        status: Some(0),
        differing_bytes: Some(0),
        leak_calls: Some(4),
        threads_keeping_streams: Some(if keeps { 4 } else { 0 }),
        ..Default::default()
    }
}
