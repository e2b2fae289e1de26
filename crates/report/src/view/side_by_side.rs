//! Several runs side by side: one row per scenario, one column per run.

use serde::Serialize;

use super::{class_name, fmt};
use crate::analysis::{MemoryAnalysis, RunAnalysis};
use crate::compare::{self, Thresholds};
use crate::stats::LeakClass;

/// Several runs side by side: one row per scenario, one column per run.
#[derive(Debug, Serialize)]
pub struct Comparison {
    pub versions: Vec<String>,
    pub memory: Vec<ComparisonRow>,
    pub throughput: Vec<ComparisonRow>,
    pub differences: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ComparisonRow {
    pub scenario: String,
    pub cells: Vec<String>,
    pub differs: bool,
}

pub(crate) fn comparison(analyses: &[RunAnalysis<'_>]) -> Option<Comparison> {
    if analyses.len() < 2 {
        return None;
    }
    let versions: Vec<String> = analyses.iter().map(|a| format!("NPP {}", a.npp_version())).collect();
    let mut differences = Vec::new();
    let mut memory = Vec::new();
    for m in &analyses[0].memory {
        let id = &m.record.scenario.id;
        let cells_of: Vec<Option<&MemoryAnalysis<'_>>> = analyses
            .iter()
            .map(|a| a.memory.iter().find(|x| &x.record.scenario.id == id))
            .collect();
        let classes: Vec<&str> = cells_of
            .iter()
            .map(|c| c.map_or("not run", |c| class_name(c.class)))
            .collect();
        let differs = classes.iter().any(|c| *c != classes[0]);
        if differs {
            differences.push(format!(
                "{id}: {}",
                versions
                    .iter()
                    .zip(&classes)
                    .map(|(v, c)| format!("{v} {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        memory.push(ComparisonRow {
            scenario: id.clone(),
            cells: cells_of
                .iter()
                .map(|c| match c {
                    None => "not run".into(),
                    Some(c) => match (c.class, c.per_thread.or(c.per_call)) {
                        (Some(LeakClass::Leak), Some(f)) => format!("leak {} MiB", fmt(f.slope, 2)),
                        (class, _) => class_name(class).to_owned(),
                    },
                })
                .collect(),
            differs,
        });
    }
    // Faster or slower by the one comparison rule `nppbench compare` uses.
    let judged: Vec<compare::Comparison> = analyses[1..]
        .iter()
        .map(|a| compare::compare(analyses[0].run, a.run, Thresholds::default()))
        .collect();
    let mut throughput = Vec::new();
    for t in &analyses[0].throughput {
        let id = &t.record.scenario.id;
        let values: Vec<Option<f64>> = analyses
            .iter()
            .map(|a| {
                a.throughput
                    .iter()
                    .find(|x| &x.record.scenario.id == id)
                    .and_then(|x| x.gbps)
            })
            .collect();
        let differs = values.iter().any(Option::is_none)
            || judged.iter().any(|c| {
                c.throughput
                    .iter()
                    .any(|x| &x.id == id && x.verdict != compare::Change::Same)
            });
        throughput.push(ComparisonRow {
            scenario: id.clone(),
            cells: values
                .iter()
                .map(|v| v.map_or_else(|| "—".into(), |v| format!("{} GB/s", fmt(v, 0))))
                .collect(),
            differs,
        });
    }
    Some(Comparison {
        versions,
        memory,
        throughput,
        differences,
    })
}
