//! The fleet view: runners (host and GPU) of one GPU model, on the same NPP and driver, whose
//! latest kernel times for a scenario disagree beyond the noise.

use std::collections::BTreeMap;

use super::{Disagreement, RunnerFigure, Settings};
use crate::rows::Kind;
use crate::series::History;

/// A runner's latest figure for a scenario, with the series it comes from.
type Latest = (usize, RunnerFigure);
/// Runners by (host, GPU UUID).
type ByRunner<'a> = BTreeMap<(&'a str, &'a str), Latest>;

/// Runners of one model whose latest figures disagree (see [`Disagreement`]).
pub(super) fn fleet(history: &History, settings: &Settings) -> Vec<Disagreement> {
    // (scenario, model) → runner (host, uuid) → its latest figure.
    let mut latest: BTreeMap<(&str, &str), ByRunner<'_>> = BTreeMap::new();
    for (i, s) in history.series.iter().enumerate() {
        if s.key.kind != Kind::Throughput {
            continue;
        }
        let runners = latest.entry((&s.key.scenario_id, &s.key.gpu_model)).or_default();
        for p in &s.points {
            for g in &p.gpus {
                let Some(t) = &g.throughput else { continue };
                let figure = RunnerFigure {
                    host: s.key.host.clone(),
                    gpu_uuid: g.gpu_uuid.clone(),
                    run: p.run,
                    kernel_ns: t.kernel_ns,
                    kernel_ns_range: (t.kernel_ns_min, t.kernel_ns_max),
                    passes: t.passes,
                };
                let slot = runners.entry((&s.key.host, &g.gpu_uuid)).or_insert((i, figure.clone()));
                if figure.run >= slot.1.run {
                    *slot = (i, figure);
                }
            }
        }
    }
    let mut out = Vec::new();
    for ((_, model), runners) in latest {
        // Only runners on the same software stack are compared.
        let mut stacks: BTreeMap<(&str, Option<&str>), Vec<&Latest>> = BTreeMap::new();
        for r in runners.values() {
            let run = &history.runs[r.1.run].run;
            stacks
                .entry((&run.npp_version, run.driver_version.as_deref()))
                .or_default()
                .push(r);
        }
        for ((npp, driver), group) in stacks {
            if group.len() < 2 {
                continue;
            }
            let by_time =
                |a: &&&(usize, RunnerFigure), b: &&&(usize, RunnerFigure)| a.1.kernel_ns.total_cmp(&b.1.kernel_ns);
            let (Some(fast), Some(slow)) = (group.iter().min_by(by_time), group.iter().max_by(by_time)) else {
                continue;
            };
            let pct = 100.0 * (slow.1.kernel_ns - fast.1.kernel_ns) / fast.1.kernel_ns;
            let apart = slow.1.kernel_ns_range.0 > fast.1.kernel_ns_range.1;
            if apart && pct >= settings.noise_pct {
                out.push(Disagreement {
                    series: slow.0,
                    gpu_model: model.to_owned(),
                    npp_version: npp.to_owned(),
                    driver_version: driver.map(str::to_owned),
                    runners: group.len(),
                    fastest: fast.1.clone(),
                    slowest: slow.1.clone(),
                    pct,
                });
            }
        }
    }
    out.sort_by(|a, b| b.pct.total_cmp(&a.pct));
    out
}
