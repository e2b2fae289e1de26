//! The first lines of the versions page: where a run computes wrong pixels the base computed
//! right, the functions, the rule and a measured example, before leaks and races.

use nppbench_analysis::RunAnalysis;
use nppbench_analysis::compare;
use nppbench_analysis::evidence::FunctionRules;
use nppbench_model::Primitive;

use super::Evidence;
use super::prose;

/// One lead line per compared run (`compared`, each against the first run, as `comparisons`)
/// that computes wrong pixels the first computed right.
pub(super) fn leads(
    analyses: &[RunAnalysis<'_>],
    compared: &[usize],
    comparisons: &[compare::Comparison],
    evidence: &Evidence,
) -> Vec<String> {
    compared
        .iter()
        .zip(comparisons)
        .filter_map(|(&i, c)| wrong_lead(&analyses[0], &analyses[i], c, &evidence.of_run(i).rules))
        .collect()
}

/// "NPP 13.0.1 computes wrong pixels where NPP 12.2.3 computed them right: …", where the
/// candidate's synchronised calls are wrong (or fault) in scenarios the base computed right: the
/// functions, the first one's rule in the candidate's evidence, and its worst example.
fn wrong_lead(
    base: &RunAnalysis<'_>,
    cand: &RunAnalysis<'_>,
    c: &compare::Comparison,
    rules: &[FunctionRules],
) -> Option<String> {
    let newly: Vec<&nppbench_analysis::MemoryAnalysis<'_>> = c
        .memory
        .iter()
        .filter(|m| m.new_wrong)
        .filter_map(|m| cand.memory.iter().find(|x| x.record.scenario.id == m.id))
        .collect();
    let mut functions: Vec<Primitive> = newly.iter().map(|m| m.record.scenario.primitive).collect();
    functions.sort();
    functions.dedup();
    let first = functions.first()?;
    let names: Vec<String> = functions.iter().map(ToString::to_string).collect();
    let mut out = format!(
        "NPP {} computes wrong pixels where NPP {} computed them right: {} scenario(s) of {} function(s) ({}), every call synchronised.",
        cand.npp_version(),
        base.npp_version(),
        newly.len(),
        functions.len(),
        names.join(", ")
    );
    if let Some(rule) = rules
        .iter()
        .find(|f| f.primitive == *first)
        .and_then(|f| f.wrong.as_ref())
    {
        out.push_str(&format!(" {first}: {}.", prose::wrong_sentence(rule)));
    }
    let worst = newly
        .iter()
        .filter_map(|m| Some((m, m.output.facts()?.first?)))
        .max_by(|(_, a), (_, b)| (a.actual - a.expected).abs().total_cmp(&(b.actual - b.expected).abs()));
    if let Some((m, w)) = worst {
        let s = &m.record.scenario;
        out.push_str(&format!(
            " For example {} {} · {}: row {}, pixel {}, channel {} is {} where {} is expected.",
            s.primitive,
            s.geometry.label(),
            s.stream,
            w.row,
            w.pixel,
            w.channel,
            w.actual,
            w.expected
        ));
    }
    Some(out)
}
