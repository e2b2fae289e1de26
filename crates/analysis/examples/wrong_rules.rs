//! Each function's wrong-pixel rule for the runs given (pooled as one body of evidence):
//! `cargo run -p nppbench-analysis --example wrong_rules -- RUN.json [RUN.json …]`. Prints, per
//! function whose output was judged, the scenarios right and wrong, the rule found, and how it did
//! on the scenarios held out of its fit.

use nppbench_analysis::RunAnalysis;
use nppbench_analysis::evidence::pool;
use nppbench_model::RunFile;

fn main() {
    let runs: Vec<RunFile> = std::env::args()
        .skip(1)
        .map(|p| RunFile::read(std::path::Path::new(&p)).unwrap_or_else(|e| panic!("{p}: {e}")))
        .collect();
    let analyses: Vec<RunAnalysis<'_>> = runs.iter().map(RunAnalysis::new).collect();
    let evidence = pool(&analyses.iter().collect::<Vec<_>>());
    for f in evidence.rules() {
        let Some(rule) = &f.wrong else { continue };
        let of = |wrong: bool| {
            evidence
                .outputs
                .iter()
                .filter(|c| c.primitive == f.primitive && c.wrong == Some(wrong))
                .count()
        };
        println!(
            "{}: {} wrong, {} right; {:?}; held out {} of {}",
            f.primitive,
            of(true),
            of(false),
            rule.kind,
            rule.held_out.predicted(),
            rule.held_out.total
        );
    }
    println!("output flips: {}", evidence.output_flips.len());
}
