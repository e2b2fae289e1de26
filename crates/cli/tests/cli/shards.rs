//! `nppbench report --from` of the runs of `run --shard K/N`: every shard given, one merged run
//! (its run.json beside the page holds every scenario of the unsharded run); a shard missing,
//! bad input saying which were given.

use nppbench_model::{RunFile, Shard};

use super::{nppbench, reports, stderr};

/// A committed run split as `count` hosts would have measured it, each shard's run.json in a
/// folder of its own under `dir`; returns the folders and the whole run.
fn split(dir: &std::path::Path, count: u32) -> (Vec<String>, RunFile) {
    let whole = RunFile::read(&reports().join("h100-quick-npp-13.0.1/run.json.gz")).unwrap();
    let folders = (1..=count)
        .map(|k| {
            let shard = Shard::new(k, count).unwrap();
            let mut run = whole.clone();
            run.matrix.keep_shard(shard);
            run.memory.retain(|r| shard.holds(&r.scenario.id));
            run.throughput.retain(|r| shard.holds(&r.scenario.id));
            let folder = dir.join(format!("shard-{k}"));
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("run.json"), serde_json::to_string(&run).unwrap()).unwrap();
            folder.to_str().unwrap().to_owned()
        })
        .collect();
    (folders, whole)
}

#[test]
fn report_merges_every_shards_run_into_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (folders, whole) = split(tmp.path(), 3);
    let out = tmp.path().join("report");
    let mut args = vec!["report", "--from"];
    args.extend(folders.iter().map(String::as_str));
    args.extend(["--out", out.to_str().unwrap()]);
    let o = nppbench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = RunFile::read(&out.join("run.json")).unwrap();
    assert_eq!(merged.matrix.shard, None);
    assert_eq!(merged.memory.len(), whole.memory.len());
    assert_eq!(merged.throughput.len(), whole.throughput.len());
    assert_eq!(merged.matrix.memory.len(), whole.matrix.memory.len());

    // Two shards of three: bad input, naming those given.
    let o = nppbench(&[
        "report",
        "--from",
        &folders[0],
        &folders[2],
        "--out",
        tmp.path().join("partial").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("2 of 3 shards given (1/3, 3/3)"), "{}", stderr(&o));
}
