//! Prints docs/calibration.md's leave-one-out table (a development aid): each machine folder
//! under the given folder (default `reports/calibration`) held out in turn, judged with the noise
//! band fitted on the others.
use std::path::PathBuf;

use nppbench_analysis::calibration::{FalseAlarms, Machine, leave_one_out};
use nppbench_analysis::compare::Thresholds;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "reports/calibration".to_owned()),
    );
    let machines = Machine::read_all(&dir)?;
    println!(
        "| machine | runs (quick, full, scaled) | band fitted on the others | quick pairs tripped | quick slower/faster | quick unsettled | full pairs tripped | full slower/faster | full unsettled | scaled hook found at 1 MP+ | under 1 MP | called faster |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let f = |a: &FalseAlarms| {
        (
            format!("{} of {}", a.pairs_tripped, a.pairs),
            format!("{} of {}", a.slower_or_faster, a.comparisons),
            format!("{} of {}", a.unsettled, a.comparisons),
        )
    };
    for (h, m) in leave_one_out(&machines, Thresholds::default()).iter().zip(&machines) {
        let (qt, qf, qu) = f(&h.quick);
        let (ft, ff, fu) = f(&h.full);
        let k = &h.known_change;
        println!(
            "| {} | {}, {}, {} | {}% | {qt} | {qf} | {qu} | {ft} | {ff} | {fu} | {} of {} ({:.1}%) | {} of {} | {} |",
            h.machine,
            m.quick.len(),
            m.full.len(),
            m.scaled_quick.len() + m.scaled_full.len(),
            h.fitted_noise_pct,
            k.large_found,
            k.large,
            k.large_found_pct(),
            k.small_found,
            k.small,
            k.called_faster
        );
    }
    Ok(())
}
