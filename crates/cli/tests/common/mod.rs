//! What the `predict` tests share: the binary, the committed reports, and answers as CSV.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) fn nppbench(args: &[&str]) -> Output {
    let bin = std::env::var("NPPBENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_nppbench").to_owned());
    Command::new(bin).args(args).output().unwrap()
}

pub(crate) fn reports() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports")
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
