//! How well each function's rules predict the scenarios held out of their fit, for the runs
//! given (pooled as one body of evidence): `cargo run -p nppbench-analysis --example held_out --
//! RUN.json [RUN.json …]`. Prints, per function, the held-out scenarios whose class (leak,
//! bounded, flat) the rules got right, then the total.

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
    let (mut right, mut total, mut leak_right) = (0, 0, 0);
    for f in evidence.rules() {
        let held: Vec<_> = evidence
            .cases
            .iter()
            .filter(|c| c.held_out && c.primitive == f.primitive)
            .collect();
        let ok = held.iter().filter(|c| f.predict(c) == c.class).count();
        let leak_ok = held.iter().filter(|c| f.leak.predicts(c) == c.leaks()).count();
        right += ok;
        leak_right += leak_ok;
        total += held.len();
        let wrong: Vec<String> = held
            .iter()
            .filter(|c| f.predict(c) != c.class)
            .map(|c| format!("{} is {}, predicted {}", c.id, c.class.as_str(), f.predict(c).as_str()))
            .collect();
        println!(
            "{}: {ok} of {} right (leak or not: {leak_ok}){}{}",
            f.primitive,
            held.len(),
            if f.flips.is_empty() {
                String::new()
            } else {
                format!("; {} flips", f.flips.len())
            },
            if wrong.is_empty() {
                String::new()
            } else {
                format!("\n  {}", wrong.join("\n  "))
            }
        );
    }
    println!(
        "held out: {right} of {total} classes right ({:.1}%), leak or not {leak_right} of {total} ({:.1}%)",
        100.0 * right as f64 / total.max(1) as f64,
        100.0 * leak_right as f64 / total.max(1) as f64
    );
}
