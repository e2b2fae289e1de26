//! What tripped each gate of a comparison, in words, for the message a failing `compare` exits
//! with: the gate, how many scenarios, and the worst one.

use nppbench_analysis::compare::Gate;

use super::json::CompareJson;

impl CompareJson {
    /// One line per tripped gate: `regression: 3 scenarios, the worst tp/… (+4.3%)`.
    pub fn what_tripped(&self) -> Vec<String> {
        self.tripped.iter().map(|g| self.tripped_by(*g)).collect()
    }

    fn tripped_by(&self, gate: Gate) -> String {
        let mut slower: Vec<(&str, f64)> = Vec::new();
        let mut ids: Vec<&str> = Vec::new();
        for c in &self.comparisons {
            slower.extend(
                c.throughput
                    .iter()
                    .filter(|t| t.gate == Some(gate))
                    .map(|t| (t.id.as_str(), t.time.change_pct)),
            );
            ids.extend(c.memory.iter().filter(|m| m.gate == Some(gate)).map(|m| m.id.as_str()));
            match gate {
                Gate::AnyLeak => ids.extend(c.candidate_leaking.iter().map(String::as_str)),
                Gate::AnyWrong => ids.extend(c.candidate_wrong.iter().map(String::as_str)),
                Gate::Failed => ids.extend(c.failures.candidate.iter().map(|f| f.id.as_str())),
                _ => {}
            }
        }
        slower.sort_by(|a, b| b.1.total_cmp(&a.1));
        ids.dedup();
        let n = slower.len() + ids.len();
        let worst = match (slower.first(), ids.first()) {
            (Some((id, pct)), _) => format!(", the worst {id} ({pct:+.1}%)"),
            (None, Some(id)) => format!(", the first {id}"),
            (None, None) => String::new(),
        };
        format!("{gate}: {n} scenario{}{worst}", if n == 1 { "" } else { "s" })
    }
}
