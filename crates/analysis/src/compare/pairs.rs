//! Pairing: each scenario of the base with the candidate's (the same id; for throughput, on the
//! same GPU by position), judged: throughput by the test on passes ([`super::passes`]), memory by
//! leak class and NPP's streams.

use std::collections::HashMap;

use nppbench_stats::LeakClass;

use super::passes::judge_throughput;
use super::{MemoryChange, Thresholds, ThroughputChange};
use crate::memory::RaceClass;
use crate::thresholds::{STREAMS_NEVER_DESTROYED_MARGIN, STREAMS_PER_THREAD};
use crate::throughput::ThroughputPasses;
use crate::{MemoryAnalysis, RunAnalysis};

fn hidden(m: &MemoryAnalysis<'_>) -> Option<f64> {
    m.hidden_per_thread
        .map(|f| f.slope)
        .or_else(|| m.hidden_streams_total())
}

/// Each throughput scenario of the base paired with the candidate's on the same GPU, judged.
pub(super) fn throughput_changes(b: &RunAnalysis<'_>, c: &RunAnalysis<'_>, t: Thresholds) -> Vec<ThroughputChange> {
    let mut throughput = Vec::new();
    let gpu_index = |a: &RunAnalysis<'_>, gpu: Option<&str>| {
        let gpus = a.run.environment.all_gpus();
        gpu.and_then(|u| gpus.iter().position(|g| g.gpu.uuid == u)).unwrap_or(0)
    };
    for bt in &b.throughput {
        let id = &bt.record.scenario.id;
        let index = gpu_index(b, bt.gpu);
        // The same scenario on the same GPU (by position: runs from two machines pair their
        // first GPUs, their second, …).
        let Some(ct) = c
            .throughput
            .iter()
            .find(|x| &x.record.scenario.id == id && gpu_index(c, x.gpu) == index)
        else {
            continue;
        };
        let (base_values, cand_values) = (ThroughputPasses::of(bt), ThroughputPasses::of(ct));
        let Some(judged) = judge_throughput(&base_values, &cand_values, t) else {
            continue;
        };
        throughput.push(ThroughputChange {
            id: id.clone(),
            primitive: bt.record.scenario.primitive,
            pixels: bt.record.scenario.geometry.pixels(),
            gpu_index: index,
            kernel: judged.kernel,
            by_layout: judged.by_layout,
            latency: judged.latency,
            verdict: judged.verdict,
            not_judged: judged.not_judged,
            gated: judged.gated,
            base_passes: judged.base_passes,
            cand_passes: judged.cand_passes,
            metric: judged.metric,
            base_values,
            cand_values,
            base_gbps: bt.kernel_gbps,
            cand_gbps: ct.kernel_gbps,
        });
    }
    throughput
}

/// Whether the candidate kept more streams than the base: per thread spawned where both know
/// their threads (two runs that stopped after different numbers of new threads keep different
/// totals at the same rate: the two-GPU atlas kept 33 where the one-GPU atlas kept 30 in 380
/// scenarios, 3 a thread in both), else in total by more than the margin.
fn more_kept(b: &MemoryAnalysis<'_>, c: &MemoryAnalysis<'_>) -> bool {
    let (bn, cn) = (
        b.streams_never_destroyed.unwrap_or(0),
        c.streams_never_destroyed.unwrap_or(0),
    );
    if b.threads_spawned > 0 && c.threads_spawned > 0 {
        let rate = |n: u32, threads: u32| f64::from(n) / f64::from(threads);
        rate(cn, c.threads_spawned) > rate(bn, b.threads_spawned) + STREAMS_PER_THREAD
    } else {
        cn > bn + STREAMS_NEVER_DESTROYED_MARGIN
    }
}

/// Each memory scenario of the base paired with the candidate's, judged.
pub(super) fn memory_changes(b: &RunAnalysis<'_>, c: &RunAnalysis<'_>) -> Vec<MemoryChange> {
    let index: HashMap<&str, &MemoryAnalysis<'_>> = c
        .memory
        .iter()
        .rev()
        .map(|m| (m.record.scenario.id.as_str(), m))
        .collect();
    let mut memory = Vec::new();
    for bm in &b.memory {
        let id = &bm.record.scenario.id;
        // The candidate's first record of the id (a later one of the same id is a repeat).
        let Some(&cm) = index.get(id.as_str()) else {
            continue;
        };
        let leak = |m: &MemoryAnalysis<'_>| m.class == Some(LeakClass::Leak);
        let (bh, ch) = (hidden(bm), hidden(cm));
        let more_streams = match (bh, ch) {
            (Some(x), Some(y)) => y > x + STREAMS_PER_THREAD,
            (None, Some(y)) => y > STREAMS_PER_THREAD,
            _ => false,
        } || more_kept(bm, cm);
        memory.push(MemoryChange {
            id: id.clone(),
            base_class: bm.class,
            cand_class: cm.class,
            base_hidden: bh,
            cand_hidden: ch,
            new_leak: leak(cm) && !leak(bm),
            fixed_leak: leak(bm) && !leak(cm),
            more_streams,
            new_race: bm.race == RaceClass::Ordered && cm.race == RaceClass::Races,
            race_gone: bm.race == RaceClass::Races && cm.race == RaceClass::Ordered,
            new_wrong: bm.output.wrong() == Some(false) && cm.output.wrong() == Some(true),
            wrong_gone: bm.output.wrong() == Some(true) && cm.output.wrong() == Some(false),
        });
    }
    memory
}
