//! Prints the calibration table of docs/calibration.md from the committed runs (a development
//! aid): each same-against-same pair and each delayed run against each plain run, with how many
//! scenarios `compare` flags at the default settings, by image size.
use nppbench_model::RunFile;
use nppbench_report::compare::{Change, Thresholds, compare};

fn main() {
    let read = |name: &str| RunFile::read(std::path::Path::new(&format!("reports/calibration/{name}.json"))).unwrap();
    let plain: Vec<(String, RunFile)> = (1..=4)
        .map(|i| (format!("quick-{i}"), read(&format!("quick-npp-13.0.1-{i}"))))
        .collect();
    let delayed: Vec<(String, RunFile)> = (1..=2)
        .map(|i| (format!("delay-{i}"), read(&format!("delay-1000-cycles-npp-13.0.1-{i}"))))
        .collect();
    println!("| base | candidate | under 1 MP: slower / faster / judged | 1 MP and over: slower / faster / judged |");
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
            format!("{} / {} / {}", n(Change::Slower), n(Change::Faster), rows.len())
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
                    "{dn} against {}: not found: {} ({:+.1}%, p {:?})",
                    p.0, t.id, t.kernel.change_pct, t.kernel.p_value
                );
            }
        }
        println!(
            "{dn} against quick-1: kernel time per call added at 1 MP and over, ns: {:.0} … {:.0}",
            changes.first().unwrap_or(&0.0),
            changes.last().unwrap_or(&0.0)
        );
    }
}
