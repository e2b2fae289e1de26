//! The gates a history judges, and what trips them in the latest runs.

use nppbench_analysis::LeakClass;
pub use nppbench_analysis::compare::Gate;

use crate::changes::Findings;

/// The gates a history judges: a throughput scenario whose latest run is slower than the run
/// before by compare's rule, where compare's regression gate counts it (`regression`); a leak
/// class that became `leak` in the latest run (`leak`). The gates and their names are
/// `nppbench_analysis::compare::Gate`'s, the one mapping every gate uses.
pub const HISTORY_GATES: [Gate; 2] = [Gate::Regression, Gate::Leak];

/// The gates among `gates` that a history cannot judge (it keeps no series they could trip on):
/// the caller refuses them rather than pass a gate it never checked.
pub fn unjudged_gates(gates: &[Gate]) -> Vec<Gate> {
    gates.iter().copied().filter(|g| !HISTORY_GATES.contains(g)).collect()
}

/// A gate tripped, and by which series and point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Tripped {
    pub gate: Gate,
    pub series: usize,
    pub point: usize,
}

impl Findings {
    /// The gates among `gates` that the latest runs trip, each with its series and point.
    pub fn tripped(&self, gates: &[Gate]) -> Vec<Tripped> {
        let mut out = Vec::new();
        for f in &self.series {
            if gates.contains(&Gate::Regression) && f.latest.iter().any(|s| s.fails_regression()) {
                out.push(Tripped {
                    gate: Gate::Regression,
                    series: f.series,
                    point: f.latest[0].point,
                });
            }
            if gates.contains(&Gate::Leak) {
                for c in f.class_changes.iter().filter(|c| c.latest && c.to == LeakClass::Leak) {
                    out.push(Tripped {
                        gate: Gate::Leak,
                        series: f.series,
                        point: c.point,
                    });
                }
            }
        }
        out
    }
}
