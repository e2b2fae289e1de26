//! The shard manifests shipped in docs/shard/ (a Slurm array job, a Kubernetes Indexed Job) give
//! nppbench command lines its own parser takes: each task's `nppbench run` is the shard its index
//! names, and the merge is a `nppbench report --from` of every shard's folder.

use std::path::{Path, PathBuf};

use clap::Parser;
use nppbench_model::Shard;

use super::{Cli, Cmd};

fn manifest(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/shard")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The manifest's line that runs `nppbench SUBCOMMAND`, the shell's variables given, split into
/// words as the shell would (the manifests quote whole words only).
fn command_line(text: &str, subcommand: &str, vars: &[(&str, &str)]) -> Vec<String> {
    let start = format!("nppbench {subcommand} ");
    let line = text
        .lines()
        .map(|l| l.trim_start_matches(['#', '-', ' ']))
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no `{start}` line in {text}"));
    let mut line = line.to_owned();
    for (var, value) in vars {
        line = line.replace(var, value);
    }
    assert!(!line.contains('$'), "a variable left unexpanded: {line}");
    line.split_whitespace()
        .map(|w| w.trim_matches('"').to_owned())
        .collect()
}

fn parse(words: &[String]) -> Cli {
    Cli::try_parse_from(words).unwrap_or_else(|e| panic!("{words:?}: {e}"))
}

fn shard_and_out(words: &[String]) -> (Option<Shard>, PathBuf) {
    match parse(words).command {
        Cmd::Run(a) => (a.shard, a.out),
        _ => panic!("not a run: {words:?}"),
    }
}

fn report_from(words: &[String]) -> Vec<PathBuf> {
    match parse(words).command {
        Cmd::Report { from, .. } => from,
        _ => panic!("not a report: {words:?}"),
    }
}

/// What the shell makes of `DIR/shard-*` once the four shards have written their folders.
fn shard_folders(dir: &str) -> (String, Vec<PathBuf>) {
    let folders: Vec<String> = (1..=4).map(|k| format!("{dir}/shard-{k}")).collect();
    let paths = folders.iter().map(PathBuf::from).collect();
    (folders.join(" "), paths)
}

#[test]
fn slurm_array_tasks_run_their_shard() {
    let text = manifest("slurm.sh");
    assert!(text.contains("--array=1-4"), "{text}");
    for k in ["1", "3"] {
        let words = command_line(&text, "run", &[("$K", k), ("$N", "4")]);
        let (shard, out) = shard_and_out(&words);
        assert_eq!(shard, Some(Shard::new(k.parse().unwrap(), 4).unwrap()));
        assert_eq!(out, PathBuf::from(format!("runs/shard-{k}")));
    }
    let (glob, folders) = shard_folders("runs");
    let merge = command_line(&text, "report", &[("runs/shard-*", &glob)]);
    assert_eq!(report_from(&merge), folders);
}

#[test]
fn indexed_job_completions_run_their_shard() {
    let text = manifest("indexed-job.yaml");
    assert!(
        text.contains("completions: 4") && text.contains("completionMode: Indexed"),
        "{text}"
    );
    // Kubernetes counts completion indexes from 0; shards count from 1.
    for index in [0, 3] {
        let k = (index + 1).to_string();
        let words = command_line(&text, "run", &[("$((JOB_COMPLETION_INDEX + 1))", &k)]);
        let (shard, out) = shard_and_out(&words);
        assert_eq!(shard, Some(Shard::new(index + 1, 4).unwrap()));
        assert_eq!(out, PathBuf::from(format!("/results/shard-{k}")));
    }
    let (glob, folders) = shard_folders("/results");
    let merge = command_line(&text, "report", &[("/results/shard-*", &glob)]);
    assert_eq!(report_from(&merge), folders);
}

#[test]
fn a_shard_that_is_not_k_of_n_is_refused_with_what_to_give() {
    let words = |shard: &str| -> Vec<String> {
        ["nppbench", "run", "--out", "o", "--shard", shard]
            .map(str::to_owned)
            .to_vec()
    };
    let err = Cli::try_parse_from(words("5/4")).err().expect("5/4 refused");
    assert!(err.to_string().contains("1 <= K <= N"), "{err}");
    assert_eq!(shard_and_out(&words("4/4")).0, Some(Shard::new(4, 4).unwrap()));
}
