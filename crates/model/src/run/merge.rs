//! The runs of every shard of a matrix (`nppbench run --shard K/N`) merged into one run, as the
//! unsharded run would have recorded it (`report --from`).

use super::RunFile;
use crate::Shard;

/// Merges the runs of every complete set of shards (the same matrix and NPP version, shards
/// 1/N … N/N each once) into one run, as the unsharded run would have recorded it; other runs
/// are left as they are. The merged run keeps the first shard's environment and command, and
/// spans from the first start to the last finish.
pub fn merge_shards(runs: Vec<RunFile>) -> Result<Vec<RunFile>, String> {
    let mut out: Vec<RunFile> = Vec::new();
    let mut groups: Vec<Vec<RunFile>> = Vec::new();
    for run in runs {
        let Some(shard) = run.matrix.shard else {
            out.push(run);
            continue;
        };
        let key = |r: &RunFile| {
            (
                r.matrix.name.clone(),
                r.environment.npp.version.clone(),
                r.matrix.shard.map(Shard::count),
            )
        };
        match groups.iter_mut().find(|g| key(&g[0]) == key(&run)) {
            Some(group) => {
                if group.iter().any(|r| r.matrix.shard == Some(shard)) {
                    return Err(format!(
                        "shard {shard} of matrix {} is given twice: give each shard's run once",
                        run.matrix.name
                    ));
                }
                group.push(run);
            }
            None => groups.push(vec![run]),
        }
    }
    for mut group in groups {
        let count = group[0].matrix.shard.map_or(1, Shard::count) as usize;
        if group.len() != count {
            let have: Vec<String> = group
                .iter()
                .filter_map(|r| r.matrix.shard.map(|s| s.to_string()))
                .collect();
            return Err(format!(
                "matrix {}: {} of {count} shards given ({}): give every shard's run to merge them",
                group[0].matrix.name,
                group.len(),
                have.join(", ")
            ));
        }
        group.sort_by_key(|r| r.matrix.shard.map(Shard::index));
        let mut merged = group.remove(0);
        for run in group {
            merged.matrix.memory.extend(run.matrix.memory);
            merged.matrix.throughput.extend(run.matrix.throughput);
            merged.matrix.primitives.extend(run.matrix.primitives);
            merged.memory.extend(run.memory);
            merged.throughput.extend(run.throughput);
            merged.interrupted |= run.interrupted;
            if run.started_at < merged.started_at {
                merged.started_at = run.started_at;
            }
            if run.finished_at > merged.finished_at {
                merged.finished_at = run.finished_at;
            }
            merged.wall_s = merged.wall_s.max(run.wall_s);
        }
        merged.matrix.primitives.sort();
        merged.matrix.primitives.dedup();
        merged.matrix.shard = None;
        out.push(merged);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Matrix, Preset};

    /// The N shards of each real preset are disjoint and together exactly its scenarios.
    #[test]
    fn shards_of_every_preset_partition_its_scenarios() {
        for preset in Preset::ALL {
            let whole = preset.matrix().unwrap();
            let ids = |m: &Matrix| -> Vec<String> {
                m.memory
                    .iter()
                    .map(|s| s.id.clone())
                    .chain(m.throughput.iter().map(|s| s.id.clone()))
                    .collect()
            };
            let mut all = ids(&whole);
            all.sort();
            for n in [1, 2, 3, 7] {
                let mut union = Vec::new();
                for k in 1..=n {
                    let mut part = whole.clone();
                    part.keep_shard(Shard::new(k, n).unwrap());
                    assert_eq!(part.shard, Some(Shard::new(k, n).unwrap()));
                    union.extend(ids(&part));
                }
                union.sort();
                assert_eq!(union, all, "{preset:?} in {n} shards");
            }
        }
    }

    /// A committed run split as N hosts would have measured it merges back into its scenarios
    /// and records, each once.
    #[test]
    fn shard_runs_merge_into_the_unsharded_run() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-quick-npp-13.0.1/run.json.gz");
        let whole = RunFile::read(&path).unwrap();
        let n = 3;
        let shards: Vec<RunFile> = (1..=n)
            .rev()
            .map(|k| {
                let shard = Shard::new(k, n).unwrap();
                let mut run = whole.clone();
                run.matrix.keep_shard(shard);
                run.memory.retain(|r| shard.holds(&r.scenario.id));
                run.throughput.retain(|r| shard.holds(&r.scenario.id));
                run
            })
            .collect();
        let merged = merge_shards(shards.clone()).unwrap();
        assert_eq!(merged.len(), 1);
        let merged = &merged[0];
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        let scenario_ids = |r: &RunFile| {
            sorted(
                r.matrix
                    .memory
                    .iter()
                    .map(|s| s.id.clone())
                    .chain(r.matrix.throughput.iter().map(|s| s.id.clone()))
                    .collect(),
            )
        };
        let record_ids = |r: &RunFile| {
            sorted(
                r.memory
                    .iter()
                    .map(|m| m.scenario.id.clone())
                    .chain(r.throughput.iter().map(|t| format!("{} {}", t.scenario.id, t.pass)))
                    .collect(),
            )
        };
        assert_eq!(scenario_ids(merged), scenario_ids(&whole));
        assert_eq!(record_ids(merged), record_ids(&whole));
        assert_eq!(merged.matrix.primitives, whole.matrix.primitives);
        assert_eq!(merged.matrix.shard, None);
        // A shard missing, or given twice, is refused with what to do.
        let err = merge_shards(shards[1..].to_vec()).unwrap_err();
        assert!(err.contains("2 of 3 shards given"), "{err}");
        let twice = vec![shards[0].clone(), shards[0].clone()];
        assert!(merge_shards(twice).unwrap_err().contains("given twice"));
    }
}
