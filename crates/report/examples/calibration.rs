//! Prints the calibration table of docs/calibration.md from the committed runs (a development
//! aid): each same-against-same pair and each delayed run against each plain run, with how many
//! scenarios `compare` flags at the default settings, by image size.
use nppbench_analysis::compare::{Change, Thresholds, compare};
use nppbench_model::RunFile;

fn is_delayed(name: &str) -> bool {
    name.starts_with("delay-") || name.starts_with("scaled-")
}

fn main() {
    // The folder (default: the committed quick runs) holds plain runs and delayed ones, whose
    // names start with `delay-` (the fixed hook) or `scaled-` (the hook scaled to the image).
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "reports/calibration".to_owned());
    let runs = |delayed: bool| -> Vec<(String, RunFile)> {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                nppbench_model::is_json_name(&p.file_name().unwrap().to_string_lossy())
                    && is_delayed(&p.file_name().unwrap().to_string_lossy()) == delayed
            })
            .collect();
        files.sort();
        let name = if delayed { "delay-" } else { "plain-" };
        files
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("{name}{}", i + 1), RunFile::read(p).unwrap()))
            .collect()
    };
    let (plain, delayed) = (runs(false), runs(true));
    println!(
        "| base | candidate | under 1 MP: slower / faster / unsettled / judged | 1 MP and over: slower / faster / unsettled / judged |"
    );
    println!("|---|---|---|---|");
    let mut pairs = Vec::new();
    for (i, a) in plain.iter().enumerate() {
        for b in &plain[i + 1..] {
            pairs.push((a, b));
        }
    }
    for d in &delayed {
        for p in &plain {
            pairs.push((p, d));
        }
    }
    for ((an, a), (bn, b)) in pairs {
        let c = compare(a, b, Thresholds::default());
        let count = |large: bool| {
            let rows: Vec<_> = c
                .throughput
                .iter()
                .filter(|t| (t.pixels >= 1_000_000) == large)
                .collect();
            let n = |v: Change| rows.iter().filter(|t| t.verdict == v).count();
            format!(
                "{} / {} / {} / {}",
                n(Change::Slower),
                n(Change::Faster),
                n(Change::Unsettled),
                rows.len()
            )
        };
        println!("| {an} | {bn} | {} | {} |", count(false), count(true));
    }
    // The size of the change the delay makes, at 1 MP and over: kernel time per call.
    for (dn, d) in &delayed {
        let c = compare(&plain[0].1, d, Thresholds::default());
        let mut changes: Vec<f64> = c
            .throughput
            .iter()
            .filter(|t| t.pixels >= 1_000_000)
            .map(|t| t.kernel.candidate - t.kernel.base)
            .collect();
        changes.sort_by(f64::total_cmp);
        for p in &plain {
            for t in compare(&p.1, d, Thresholds::default())
                .throughput
                .iter()
                .filter(|t| t.pixels >= 1_000_000 && t.verdict != Change::Slower)
            {
                println!(
                    "{dn} against {}: not found: {} ({:+.1}%, p {:.3}, {:?})",
                    p.0,
                    t.id,
                    t.kernel.change_pct,
                    t.kernel.p_value.unwrap_or(f64::NAN),
                    t.verdict
                );
            }
        }
        println!(
            "{dn} against plain-1: kernel time per call added at 1 MP and over, ns: {:.0} … {:.0}",
            changes.first().unwrap_or(&0.0),
            changes.last().unwrap_or(&0.0)
        );
    }
}
