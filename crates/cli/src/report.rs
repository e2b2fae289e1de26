//! `nppbench report`: render runs into a folder, each run.json copied beside the page; or render
//! a trace.json (`nppbench trace`) into its page, with the rules and fixes of `--atlas` runs.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use anyhow::Context;
use nppbench_analysis::knowledge::Knowledge;
use nppbench_model::{RunFile, TRACE_SCHEMA_VERSION, TraceFile, merge_shards};
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::exit::bad_input;
use crate::runs::{check_not_another_report, check_out_dir, read_runs};

pub(crate) fn report(from: &[PathBuf], out: &Path, force: bool, atlas: &[PathBuf]) -> anyhow::Result<()> {
    check_out_dir(out)?;
    let traces: Vec<PathBuf> = from.iter().filter_map(|p| trace_json(p)).collect();
    if let Some(trace) = traces.first() {
        if from.len() > 1 {
            return Err(bad_input(format!(
                "--from {}: a trace is rendered alone; give one trace.json in --from, and atlas runs with --atlas",
                trace.display()
            )));
        }
        check_not_another_report(out, &[], force)?;
        check_not_another_trace(trace, out, force)?;
        let (written, _) = trace_page(trace, atlas, out)?;
        println!("{}", written.display());
        return Ok(());
    }
    if !atlas.is_empty() {
        return Err(bad_input(
            "--atlas goes with a trace.json in --from (the atlas's rules and fixes are shown beside a trace's call sites); drop --atlas to render runs",
        ));
    }
    let (from, runs): (Vec<PathBuf>, Vec<RunFile>) = read_runs(from)?.into_iter().unzip();
    // The runs of `nppbench run --shard K/N`, every shard given, are merged into the one run they
    // split; the merged run.json is written beside the page.
    let sharded = runs.iter().any(|r| r.matrix.shard.is_some());
    let runs = if sharded {
        merge_shards(runs).map_err(bad_input)?
    } else {
        runs
    };
    check_not_another_report(out, &runs, force)?;
    // A run read from a .json.gz stays compressed beside the page (committed evidence is kept so);
    // a merged run is written whole.
    let compressed: Vec<bool> = (0..runs.len())
        .map(|i| !sharded && nppbench_model::is_gzip(&from[i]))
        .collect();
    let written = nppbench_report::render_to_dir(&runs, &compressed, out)
        .with_context(|| format!("rendering the report into {}", out.display()))?;
    // Each run.json beside the page, under the name the page links to.
    for (i, run) in runs.iter().enumerate() {
        let mut name = nppbench_report::view::run_json_name(i, run, runs.len());
        nppbench_report::view::link_compressed(&mut name, compressed[i]);
        let dest = out.join(name);
        if sharded {
            let text = serde_json::to_string_pretty(run).context("serialising the merged run")?;
            std::fs::write(&dest, text).with_context(|| format!("writing {}", dest.display()))?;
            continue;
        }
        let path = &from[i];
        if path.canonicalize().ok() != dest.canonicalize().ok() {
            std::fs::copy(path, &dest).with_context(|| format!("copying {} to {}", path.display(), dest.display()))?;
        }
    }
    println!("{}", written.display());
    Ok(())
}

/// `nppbench report --catalogue`: the page of every function a version's headers declare.
pub(crate) fn catalogue_page(
    catalogue: &Path,
    calls: &[PathBuf],
    atlas: &[PathBuf],
    designs: crate::catalogue::Designs,
    out: &Path,
) -> anyhow::Result<()> {
    check_out_dir(out)?;
    let written = crate::catalogue::page(catalogue, calls, atlas, designs, out)?;
    println!("{}", written.display());
    Ok(())
}

/// Renders the trace at `trace_path` into `out` (index.html, summary.md, call_sites.csv, and the
/// trace.json the page links to, copied unless it is already there), with the rules, fixes and
/// predictions of the `atlas` runs; returns the page's path.
/// Renders the trace page of `trace_path` with the atlas runs `atlas` into `out`; returns the
/// page's path and the atlas runs read.
pub(crate) fn trace_page(
    trace_path: &Path,
    atlas: &[PathBuf],
    out: &Path,
) -> anyhow::Result<(PathBuf, Vec<Knowledge>)> {
    let trace = read_trace(trace_path)?;
    let known = crate::knowledge::for_trace(atlas, &trace)?;
    let written = nppbench_report::render_trace_to_dir(&trace, &known, out)
        .with_context(|| format!("rendering the trace page into {}", out.display()))?;
    let dest = out.join("trace.json");
    if trace_path.canonicalize().ok() != dest.canonicalize().ok() {
        std::fs::copy(trace_path, &dest)
            .with_context(|| format!("copying {} to {}", trace_path.display(), dest.display()))?;
    }
    Ok((written, known))
}

/// The keys that tell a trace.json from a run.json.
#[derive(Deserialize)]
struct Sniff {
    schema_version: Option<IgnoredAny>,
    call_sites: Option<IgnoredAny>,
}

/// The trace.json a `--from` path names, if it names one: a file named trace.json, a JSON file
/// with `schema_version` and `call_sites`, or a folder holding trace.json and no run.json.
fn trace_json(path: &Path) -> Option<PathBuf> {
    if path.is_dir() {
        let trace = path.join("trace.json");
        return (trace.is_file() && !path.join("run.json").is_file()).then_some(trace);
    }
    if path.file_name().is_some_and(|n| n == "trace.json") {
        return Some(path.to_owned());
    }
    let file = std::fs::File::open(path).ok()?;
    let sniff: Sniff = serde_json::from_reader(BufReader::new(file)).ok()?;
    (sniff.schema_version.is_some() && sniff.call_sites.is_some()).then(|| path.to_owned())
}

fn read_trace(path: &Path) -> anyhow::Result<TraceFile> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| bad_input(format!("{}: not a trace.json ({e})", path.display())))?;
    let found = value.get("schema_version").and_then(serde_json::Value::as_u64);
    if found.is_some_and(|v| v > u64::from(TRACE_SCHEMA_VERSION)) {
        return Err(bad_input(format!(
            "{}: trace.json schema version {} is newer than this nppbench reads ({TRACE_SCHEMA_VERSION}); render it with a newer nppbench",
            path.display(),
            found.unwrap_or_default()
        )));
    }
    serde_json::from_value(value).map_err(|e| {
        bad_input(format!(
            "{}: not a trace.json nppbench can read ({e}); was it written by `nppbench trace`?",
            path.display()
        ))
    })
}

/// A folder holding another program's trace is not overwritten without --force.
fn check_not_another_trace(trace: &Path, out: &Path, force: bool) -> anyhow::Result<()> {
    let there = out.join("trace.json");
    if force || !there.is_file() || trace.canonicalize().ok() == there.canonicalize().ok() {
        return Ok(());
    }
    let same = std::fs::read(trace).ok() == std::fs::read(&there).ok();
    if !same {
        return Err(bad_input(format!(
            "--out {} holds the page of another trace; choose another folder, or pass --force to replace it",
            out.display()
        )));
    }
    Ok(())
}
