//! How the pages write numbers, statuses, classes and run labels: every formatting helper the
//! views share, in one place.

use nppbench_analysis::LeakClass;
use nppbench_model::{Geometry, Outcome, Primitive, RunFile};

pub(crate) fn fmt(v: f64, digits: usize) -> String {
    format!("{v:.digits$}")
}

/// At least three significant digits, without trailing noise: `22.4`, `1.66`, `0.832`, `6272`.
pub(crate) fn fmt_sig(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let a = v.abs();
    let digits = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    format!("{v:.digits$}")
}

/// A p-value as a reader takes it in: `0.034`, `4.2e-4`, `< 1e-6` (never `0.00e0`).
pub(crate) fn fmt_p(p: f64) -> String {
    if p < 1e-6 {
        "< 1e-6".into()
    } else if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// Each run's label: one run, its short label ([`RunFile::short_label`]); several, only what
/// differs between them (NPP version, GPU, driver, matrix, test hook, start time), so that labels stay short
/// and tell the runs apart; runs alike in all of these by their position.
pub fn labels(runs: &[RunFile]) -> Vec<String> {
    if runs.len() == 1 {
        return vec![runs[0].short_label()];
    }
    let parts: Vec<[String; 6]> = runs
        .iter()
        .map(|r| {
            let e = &r.environment;
            [
                format!("NPP {}", e.npp.full_version()),
                e.gpu.name.trim_start_matches("NVIDIA ").to_owned(),
                format!("driver {}", e.driver_version.as_deref().unwrap_or("unknown")),
                r.matrix.name.clone(),
                if r.test_hooks.is_empty() {
                    "no test hook".to_owned()
                } else {
                    format!("hook {}", r.test_hooks.join(", "))
                },
                format!(
                    "{} UTC",
                    r.started_at.get(..16).unwrap_or(&r.started_at).replace('T', " ")
                ),
            ]
        })
        .collect();
    let differs = |k: usize| parts.iter().any(|p| p[k] != parts[0][k]);
    let mut kept: Vec<usize> = (0..5).filter(|&k| differs(k)).collect();
    if kept.is_empty() {
        kept.push(5);
    }
    let labels: Vec<String> = parts
        .iter()
        .map(|p| kept.iter().map(|&k| p[k].as_str()).collect::<Vec<_>>().join(" · "))
        .collect();
    labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if labels.iter().filter(|x| *x == l).count() > 1 {
                format!("{l} · run {}", i + 1)
            } else {
                l.clone()
            }
        })
        .collect()
}

/// Each run's label where each run has a name of its own (the file or folder `compare` was given
/// it by: `quick-1`, `baseline`): the name, then what else tells the runs apart (NPP version, GPU,
/// driver, matrix, test hook) where something does; never the start time, which the name says
/// better. Names that are missing or repeat give [`labels`].
pub fn named_labels(runs: &[RunFile], names: &[String]) -> Vec<String> {
    let unique = names.len() == runs.len()
        && names.iter().all(|n| !n.is_empty())
        && names.iter().enumerate().all(|(i, n)| !names[..i].contains(n));
    if !unique || runs.len() < 2 {
        return labels(runs);
    }
    let differing: Vec<Vec<String>> = {
        let all = labels(runs);
        let at = |r: &RunFile| r.started_at.get(..16).unwrap_or(&r.started_at).replace('T', " ");
        all.iter()
            .zip(runs)
            .map(|(l, r)| {
                l.split(" · ")
                    .filter(|p| !p.starts_with(&at(r)) && !p.starts_with("run "))
                    .map(str::to_owned)
                    .collect()
            })
            .collect()
    };
    names
        .iter()
        .zip(differing)
        .map(|(n, parts)| std::iter::once(n.clone()).chain(parts).collect::<Vec<_>>().join(" · "))
        .collect()
}

/// `1 leak`, `2 leaks`, `0 leaks`: a count with its noun, never `leak(s)`.
pub(crate) fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `47`, or `108 (warm)` where the figure is at the warm kernel time (see
/// [`nppbench_analysis::ThroughputAnalysis::ceiling_pct`]).
pub(crate) fn ceiling_pct_text(pct: Option<(f64, bool)>) -> String {
    match pct {
        Some((p, true)) => fmt(p, 0),
        // Warm figures of images that fit in L2 can pass a ceiling measured from DRAM.
        Some((p, false)) if p > 100.0 => format!("{} (warm)†", fmt(p, 0)),
        Some((p, false)) => format!("{} (warm)", fmt(p, 0)),
        None => "—".into(),
    }
}

/// How a call's kernels lay in time, in words: on how many streams, how often they ran at once,
/// and what summing them would read beside the busy time shown as the kernel time.
pub(crate) fn layout_text(l: &nppbench_analysis::throughput::LayoutSummary) -> String {
    let streams = if l.streams > 1 {
        format!("on {} streams (NPP's own beside the caller's)", l.streams)
    } else {
        "on one stream".to_owned()
    };
    let summed = l
        .summed_us
        .map_or_else(String::new, |us| format!("; summed {} µs", fmt(us, 2)));
    format!(
        "{streams}, at once in {}% of calls (most calls in {} of {} passes){summed}",
        fmt(100.0 * l.overlapped_share, 0),
        l.mostly_overlapped_passes,
        l.passes
    )
}

pub(crate) fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "—".to_owned(), |v| fmt(v, digits))
}

pub(crate) fn alignment(p: Primitive, g: &Geometry) -> String {
    let w = if g.width_aligned(p) { "aligned" } else { "unaligned" };
    let s = if g.src_stride_aligned() { "aligned" } else { "unaligned" };
    let pad = if g.padded_from.is_some() { ", padded ROI" } else { "" };
    format!("width {w}, stride {s}{pad}")
}

pub(crate) fn status(o: &Outcome) -> String {
    match o {
        Outcome::Ok => "ok".to_owned(),
        Outcome::Failed { .. } => "failed".to_owned(),
        Outcome::StoppedAtBudget { budget_mib } => format!("stopped at {budget_mib} MiB budget"),
        Outcome::NotMeasured { .. } => "not measured".to_owned(),
    }
}

pub(crate) fn class_name(class: Option<LeakClass>) -> &'static str {
    class.map_or("failed", LeakClass::as_str)
}

/// The build that renders a page: this nppbench (the report crate is built with it). A run's
/// own build, the one that measured it, is [`measured_by`].
pub fn rendered_by() -> String {
    format!("nppbench {}", env!("CARGO_PKG_VERSION"))
}

/// The build that measured `run`, in words: `nppbench 0.1.0, built from commit 146057c55726 with
/// uncommitted changes` where run.json records `146057c55726-dirty`.
pub fn measured_by(run: &RunFile) -> String {
    format!(
        "{} {}, {}",
        run.tool.name,
        run.tool.version,
        built_from(&run.tool.git_commit, usize::MAX)
    )
}

/// The commit a build was made from, its first `digits` characters, in words: a commit recorded
/// with `-dirty` (a build with uncommitted changes) says so rather than print the suffix.
pub fn built_from(commit: &str, digits: usize) -> String {
    let (hash, dirty) = match commit.strip_suffix("-dirty") {
        Some(hash) => (hash, true),
        None => (commit, false),
    };
    let short = hash.get(..digits).unwrap_or(hash);
    match (short, dirty) {
        ("" | "unknown", _) => "built from a commit not recorded".to_owned(),
        (c, false) => format!("built from commit {c}"),
        (c, true) => format!("built from commit {c} with uncommitted changes"),
    }
}

/// The page of run `index` in a report of several runs.
pub fn run_page_name(index: usize) -> String {
    format!("run-{}.html", index + 1)
}

/// The run.json link of run `index` of `total` rendered together.
pub fn run_json_name(index: usize, run: &RunFile, total: usize) -> String {
    if total == 1 {
        "run.json".to_owned()
    } else {
        format!("run-{}-npp-{}.json", index + 1, run.environment.npp.version)
    }
}

/// A run.json link made the name of its gzip-compressed file where `compressed`.
pub fn link_compressed(link: &mut String, compressed: bool) {
    if compressed && !link.ends_with(".gz") {
        link.push_str(".gz");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_read_as_numbers_never_as_zero() {
        assert_eq!(fmt_p(0.0), "< 1e-6");
        assert_eq!(fmt_p(3.2e-9), "< 1e-6");
        assert_eq!(fmt_p(4.2e-4), "4.2e-4");
        assert_eq!(fmt_p(0.034), "0.034");
        assert_ne!(fmt_p(0.0), "0.00e0");
    }

    #[test]
    fn figures_keep_three_significant_digits() {
        assert_eq!(fmt_sig(22.37), "22.4");
        assert_eq!(fmt_sig(1.664), "1.66");
        assert_eq!(fmt_sig(0.8321), "0.832");
        assert_eq!(fmt_sig(6272.4), "6272");
        assert_eq!(fmt_sig(f64::NAN), "—");
    }
}
