//! Whether a candidate compares with the base, in words: the headline of one that does not, and
//! the line that says how much of the base it covers and which scenarios one run alone has.

use nppbench_analysis::compare::{Comparison, Coverage, MIN_COVERAGE, Mismatch};
use nppbench_model::Primitive;

use super::{ComparisonView, MAX_LISTED};
use crate::view::{counted, fmt};

/// `2 of 58 (3%)`.
fn share_words(c: &Coverage) -> String {
    format!("{} of {} ({}%)", c.paired, c.base_scenarios, fmt(c.share() * 100.0, 0))
}

/// `1 function (Convert_8u32f_C1R)`, or `61 functions (AddC_8u_C1RSfs, … and 58 more)`.
fn functions_words(f: &[Primitive]) -> String {
    let names: Vec<&str> = f.iter().take(3).map(|p| p.name()).collect();
    format!(
        "{} function{} ({}{})",
        f.len(),
        if f.len() == 1 { "" } else { "s" },
        names.join(", "),
        if f.len() > 3 {
            format!(", … and {} more", f.len() - 3)
        } else {
            String::new()
        }
    )
}

/// Why a candidate does not compare, each reason in words; empty where it does.
pub(super) fn mismatch_words(c: &Coverage) -> String {
    c.mismatches()
        .iter()
        .map(|m| match m {
            Mismatch::TooFewPaired { .. } => format!(
                "{} base scenarios have a counterpart in the candidate, under the {}% needed",
                share_words(c),
                fmt(MIN_COVERAGE * 100.0, 0)
            ),
            Mismatch::Functions => format!(
                "the base measures {}, the candidate {}",
                functions_words(&c.base_functions),
                functions_words(&c.candidate_functions)
            ),
            Mismatch::MatrixName => format!(
                "the candidate's matrix is {}, the base's {}",
                c.candidate_matrix, c.base_matrix
            ),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The headline of a candidate that does not compare, and what was done about it.
pub(super) fn partial_line(c: &Comparison, v: &ComparisonView) -> String {
    format!(
        "PARTIAL: {} does not compare with the base: {}. {}",
        v.heading,
        v.mismatch,
        if v.judged {
            format!(
                "Judged below on the {} that pair, as --allow-partial asks.",
                counted(c.coverage.paired, "scenario", "scenarios")
            )
        } else {
            format!(
                "No verdict: compare runs of one matrix, or pass --allow-partial to judge the {} that pair.",
                counted(c.coverage.paired, "scenario", "scenarios")
            )
        }
    )
}

/// How much of the base the candidate covers, and what the matrices say, for the summary.
pub(super) fn coverage_lines(c: &Comparison) -> Vec<String> {
    let cov = &c.coverage;
    let mut out = vec![format!(
        "Scenarios: {} of the base's have a counterpart in the candidate; {} in the base only, {} in the candidate only.",
        share_words(cov),
        c.only_in_base.len(),
        c.only_in_candidate.len()
    )];
    if cov.matrices_differ && !cov.matrix_names_differ() {
        out.push(format!(
            "The matrices differ in their scenarios or settings, though both are named {}.",
            cov.base_matrix
        ));
    }
    out
}

/// The first [`MAX_LISTED`] ids and how many more there are.
pub(super) fn first_ids(ids: &[String]) -> (Vec<String>, usize) {
    (
        ids.iter().take(MAX_LISTED).cloned().collect(),
        ids.len().saturating_sub(MAX_LISTED),
    )
}
