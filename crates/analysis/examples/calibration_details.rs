//! Lists what a machine's calibration flags (a development aid): every same-against-same
//! scenario not called the same, and every scaled-hook scenario of 1 MP and over not found
//! slower, with its test.
use std::path::PathBuf;

use nppbench_analysis::calibration::Machine;
use nppbench_analysis::compare::{Change, Thresholds};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("give a machine's folder")?);
    let m = Machine::read(&dir)?;
    let t = Thresholds::default();
    for c in m.same_against_same(t) {
        for x in c.throughput.iter().filter(|x| x.verdict != Change::Same) {
            println!(
                "same-against-same {:?}: {} {:?} {:?} {:?}",
                x.verdict,
                x.id,
                x.kernel,
                x.by_layout,
                x.pass_values()
            );
        }
    }
    for c in m.delayed_against_plain(t) {
        for x in c
            .throughput
            .iter()
            .filter(|x| x.pixels >= 1_000_000 && x.verdict != Change::Slower)
        {
            println!("hook missed {:?}: {} {:?} {:?}", x.verdict, x.id, x.kernel, x.by_layout);
        }
    }
    Ok(())
}
