//! How the history page words runs, runners, series, environment changes and figures.

use nppbench_analysis::compare::{Change, MIN_PASSES, NotJudged, Older};
use nppbench_history::changes::{Alignment, EnvChange, EnvField, FigureMeaning, SeriesFindings, Shift};
use nppbench_history::rows::Kind;
use nppbench_history::series::{History, Series};
use nppbench_history::verdicts::Step;

use std::collections::BTreeMap;

use super::{ChangeRow, RunnerRow, SeriesView};

/// Wording that needs the history (run numbers, runners).
pub(super) struct Words<'a> {
    pub(super) history: &'a History,
}

impl Words<'_> {
    /// `#7 (2026-11-26 03:45)`: runs are numbered from 1 in order of start time.
    pub(super) fn run_label(&self, run: usize) -> String {
        format!("#{} ({})", run + 1, timestamp(&self.history.runs[run].run.started_at))
    }

    pub(super) fn runner(&self, s: &Series) -> String {
        format!("{} @ {}", s.key.gpu_model, s.key.host)
    }

    pub(super) fn series_label(&self, s: &Series) -> String {
        let k = &s.key;
        let axes = match &k.threading {
            Some(t) => format!("{}, {}, {t}", k.stream, k.context),
            None => format!("{}, {}", k.stream, k.context),
        };
        format!("{axes} · {}", self.runner(s))
    }

    pub(super) fn env_list(&self, changes: &[EnvChange]) -> String {
        changes.iter().map(env_words).collect::<Vec<_>>().join("; ")
    }

    pub(super) fn aligned(&self, s: &Series, a: &Option<Alignment>) -> String {
        match a {
            None => "no environment change within a run".to_owned(),
            Some(a) => {
                let at = match a.offset {
                    0 => "at this run".to_owned(),
                    -1 => format!("a run earlier, {}", self.run_label(s.points[a.point].run)),
                    _ => format!("a run later, {}", self.run_label(s.points[a.point].run)),
                };
                format!("{} ({at})", self.env_list(&a.changes))
            }
        }
    }

    /// A change point: the trend's move, then compare's verdict of its run against the run
    /// before (which alone says slower or faster).
    pub(super) fn shift_row(&self, s: &Series, _f: &SeriesFindings, shift: &Shift) -> ChangeRow {
        let c = &shift.change;
        ChangeRow {
            scenario: s.key.scenario_id.clone(),
            runner: self.runner(s),
            run: self.run_label(shift.run),
            class: shift.judged.first().map_or("", step_class).to_owned(),
            wrong_way: shift.judged.iter().any(|j| j.verdict() == Change::Slower),
            change: format!(
                "level {:+.1}% ({} → {}); against the run before: {}",
                shift.shift_pct,
                micros(c.mean_before),
                micros(c.mean_after),
                self.steps_words(s, &shift.judged)
            ),
            lines_up_with: self.aligned(s, &shift.aligned),
        }
    }

    /// Steps of one pair of points in words, each GPU named where the point has several.
    pub(super) fn steps_words(&self, s: &Series, steps: &[Step]) -> String {
        if steps.is_empty() {
            return "no figure both runs have".to_owned();
        }
        steps
            .iter()
            .map(|step| match self.gpu_of(s, step) {
                Some(gpu) => format!("{gpu}: {}", step_words(step)),
                None => step_words(step),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The step's GPU, where its point has several.
    pub(super) fn gpu_of<'s>(&self, s: &Series, step: &'s Step) -> Option<&'s str> {
        (s.points[step.point].gpus.len() > 1).then(|| short_uuid(&step.gpu_uuid))
    }

    pub(super) fn series_view(&self, s: &Series, f: &SeriesFindings) -> SeriesView {
        let latest = s.points.last().map_or_else(String::new, |p| match s.key.kind {
            Kind::Throughput => match (p.kernel_ns, p.kernel_ns_range) {
                (Some(ns), Some((lo, hi))) => format!("{} ({}–{})", micros(ns), micros(lo), micros(hi)),
                _ => p.status.as_str().replace('_', " "),
            },
            Kind::Memory => p
                .class
                .map_or_else(|| p.status.as_str().replace('_', " "), |c| c.as_str().to_owned()),
        });
        let mut changes: Vec<String> = f
            .shifts
            .iter()
            .map(|shift| {
                format!(
                    "{}: level {:+.1}% ({} → {}); {}; against the run before: {}",
                    self.run_label(shift.run),
                    shift.shift_pct,
                    micros(shift.change.mean_before),
                    micros(shift.change.mean_after),
                    self.aligned(s, &shift.aligned),
                    steps_short(&shift.judged)
                )
            })
            .collect();
        changes.extend(f.figure_changes.iter().filter_map(|&point| {
            let m = FigureMeaning::of(&s.points[point])?;
            Some(format!(
                "{}: the kernel time is the {} from here on (another nppbench build): no change point is drawn across it",
                self.run_label(s.points[point].run),
                m.words()
            ))
        }));
        changes.extend(
            f.class_changes
                .iter()
                .map(|c| format!("{}: {} → {}", self.run_label(c.run), c.from.as_str(), c.to.as_str())),
        );
        SeriesView {
            label: self.series_label(s),
            kind: s.key.kind.as_str(),
            points: s.points.len(),
            latest,
            against_before: match s.key.kind {
                Kind::Throughput if !f.latest.is_empty() => steps_short(&f.latest),
                _ => String::new(),
            },
            env_changes: f
                .env
                .iter()
                .map(|(point, c)| format!("{}: {}", self.run_label(s.points[*point].run), self.env_list(c)))
                .collect(),
            changes,
        }
    }

    /// Every runner (host and GPU), with its runs.
    pub(super) fn runners(&self) -> Vec<RunnerRow> {
        let mut by: BTreeMap<(&str, &str), (&str, Vec<usize>)> = BTreeMap::new();
        for (i, r) in self.history.runs.iter().enumerate() {
            for (uuid, model) in r.run.gpu_uuids.iter().zip(&r.run.gpu_models) {
                by.entry((&r.run.host, uuid)).or_insert((model, Vec::new())).1.push(i);
            }
        }
        by.into_iter()
            .map(|((host, uuid), (model, runs))| {
                let mut npp: Vec<&str> = runs
                    .iter()
                    .map(|&i| self.history.runs[i].run.npp_version.as_str())
                    .collect();
                npp.dedup();
                RunnerRow {
                    host: host.to_owned(),
                    gpu_model: model.to_owned(),
                    gpu_uuid: uuid.to_owned(),
                    runs: runs.len(),
                    latest: runs.last().map_or_else(String::new, |&i| self.run_label(i)),
                    npp: npp.join(" → "),
                }
            })
            .collect()
    }
}

/// Steps in short words: `slower (+3.4%)`, one per GPU pair.
pub(super) fn steps_short(steps: &[Step]) -> String {
    if steps.is_empty() {
        return "no figure both runs have".to_owned();
    }
    steps
        .iter()
        .map(|step| match &step.judged {
            None => "not judged (no per-pass figures)".to_owned(),
            Some(j) => match j.not_judged {
                Some(NotJudged::Older(o)) => format!(
                    "not judged: {} made by an older nppbench, the layouts drawn apart ({:+.1}% over all calls)",
                    match o {
                        Older::Base => "the run before was",
                        Older::Candidate => "this run was",
                        Older::Both => "both runs were",
                    },
                    j.kernel.change_pct
                ),
                Some(NotJudged::LayoutsApart) => format!(
                    "not judged: no layout of the calls' kernels in both runs ({:+.1}% over all calls)",
                    j.kernel.change_pct
                ),
                None => format!("{} ({:+.1}%)", verdict_word(j.verdict), j.kernel.change_pct),
            },
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// compare's verdict in words, as its page says it.
pub(super) fn verdict_word(v: Change) -> String {
    match v {
        Change::Slower => "slower".to_owned(),
        Change::Faster => "faster".to_owned(),
        Change::Same => "the same".to_owned(),
        Change::Unsettled => "unsettled".to_owned(),
        Change::NotEnoughPasses => format!("not judged (fewer than {MIN_PASSES} passes a side)"),
    }
}

/// A step's row class (the colour of its change): `slower`, `faster`, `same`, `unsettled`,
/// `unjudged`.
pub(super) fn step_class(step: &Step) -> &'static str {
    match step.verdict() {
        Change::Slower => "slower",
        Change::Faster => "faster",
        Change::Same => "same",
        Change::Unsettled => "unsettled",
        Change::NotEnoughPasses => "unjudged",
    }
}

/// compare's judgement of a step in words: `slower: kernel time per call +3.4% (7.688 µs →
/// 7.952 µs; p = 0.002; 3 and 3 passes)`, with host latency where it moved.
pub(super) fn step_words(step: &Step) -> String {
    let Some(j) = &step.judged else {
        return "not judged (the history has no per-pass figures of a run: add it again)".to_owned();
    };
    let k = &j.kernel;
    let p = k.p_value.map_or_else(String::new, |p| format!("; {}", p_text(p)));
    let mut out = format!(
        "{}: {} {:+.1}% ({} → {}{p}; {} and {} passes)",
        verdict_word(j.verdict),
        j.metric.words(),
        k.change_pct,
        micros(k.base),
        micros(k.candidate),
        j.base_passes,
        j.cand_passes
    );
    if let Some(l) = j
        .latency
        .filter(|l| matches!(l.verdict, Change::Slower | Change::Faster))
    {
        out.push_str(&format!(
            "; host latency {:+.1}% ({:.1} µs → {:.1} µs)",
            l.change_pct, l.base, l.candidate
        ));
    }
    out
}

/// A p-value: `p < 0.001`, `p = 0.042`.
pub(super) fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_owned()
    } else {
        format!("p = {p:.3}")
    }
}

/// "NPP 12.2.3 → 13.0.1", "driver 570.1 → 580.159.04", ….
pub fn env_words(c: &EnvChange) -> String {
    let (from, to) = match c.field {
        EnvField::CudaDriverApi => (cuda_text(&c.from), cuda_text(&c.to)),
        EnvField::Gpu => (uuid_list(&c.from), uuid_list(&c.to)),
        EnvField::Nppbench => (short_commit(&c.from).to_owned(), short_commit(&c.to).to_owned()),
        _ => (c.from.clone(), c.to.clone()),
    };
    format!("{} {from} → {to}", field_name(c.field))
}

pub(super) fn field_name(f: EnvField) -> &'static str {
    match f {
        EnvField::Npp => "NPP",
        EnvField::Driver => "driver",
        EnvField::CudaDriverApi => "CUDA driver API",
        EnvField::Gpu => "GPU",
        EnvField::Nppbench => "nppbench",
        EnvField::Matrix => "matrix",
    }
}

/// The short label of a chart mark: what changed and to what.
pub(super) fn short_env(c: &EnvChange) -> String {
    match c.field {
        EnvField::Npp => format!("NPP {}", c.to),
        EnvField::Driver => format!("driver {}", c.to),
        EnvField::CudaDriverApi => format!("CUDA {}", cuda_text(&c.to)),
        EnvField::Gpu => "GPU".to_owned(),
        EnvField::Nppbench => "nppbench".to_owned(),
        EnvField::Matrix => format!("matrix {}", c.to),
    }
}

pub(super) fn cuda_text(v: &str) -> String {
    v.parse::<i32>().map_or_else(|_| v.to_owned(), cuda_version)
}

/// 13000 → "13.0", 12080 → "12.8".
pub(super) fn cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

pub(super) fn uuid_list(v: &str) -> String {
    if v.is_empty() {
        return "none".to_owned();
    }
    v.split(',').map(short_uuid).collect::<Vec<_>>().join(", ")
}

/// `GPU-637600d3-b2bf-…` → `GPU-637600d3`.
pub(super) fn short_uuid(u: &str) -> &str {
    u.get(..12).unwrap_or(u)
}

pub(super) fn short_commit(c: &str) -> &str {
    c.get(..7).unwrap_or(c)
}

/// RFC 3339 → `2026-11-26 03:45`.
pub(super) fn timestamp(t: &str) -> String {
    t.get(..16).unwrap_or(t).replacen('T', " ", 1)
}

/// Nanoseconds as microseconds with three significant digits or more.
pub(super) fn micros(ns: f64) -> String {
    let us = ns / 1e3;
    let digits = if us < 10.0 {
        3
    } else if us < 100.0 {
        2
    } else {
        1
    };
    format!("{us:.digits$} µs")
}

pub(super) fn anchor(title: &str) -> String {
    let slug: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("g-{slug}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn environment_changes_are_worded() {
        let c = |field, from: &str, to: &str| EnvChange {
            field,
            from: from.into(),
            to: to.into(),
        };
        assert_eq!(
            env_words(&c(EnvField::Driver, "570.1", "580.159.04")),
            "driver 570.1 → 580.159.04"
        );
        assert_eq!(env_words(&c(EnvField::Npp, "12.2.3", "13.0.1")), "NPP 12.2.3 → 13.0.1");
        assert_eq!(
            env_words(&c(EnvField::CudaDriverApi, "12080", "13000")),
            "CUDA driver API 12.8 → 13.0"
        );
        assert_eq!(
            env_words(&c(EnvField::Gpu, "GPU-59ab6514-6532", "GPU-637600d3-b2bf")),
            "GPU GPU-59ab6514 → GPU-637600d3"
        );
        assert_eq!(
            env_words(&c(EnvField::Nppbench, "938dcf3d34aa", "5235713d83bb")),
            "nppbench 938dcf3 → 5235713"
        );
    }

    #[test]
    pub(super) fn numbers_are_formatted_for_reading() {
        assert_eq!(micros(1664.0), "1.664 µs");
        assert_eq!(micros(61_234.0), "61.23 µs");
        assert_eq!(timestamp("2026-11-26T03:45:25.857259784Z"), "2026-11-26 03:45");
        assert_eq!(
            anchor("Convert_8u32f_C1R 31x31-s32-d128"),
            "g-convert-8u32f-c1r-31x31-s32-d128"
        );
    }
}
