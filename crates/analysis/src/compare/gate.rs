//! The gates a comparison can fail on: one enum, whose names `--fail-on`, the history's gates and
//! compare.json all take from clap's `ValueEnum`.

/// What makes a comparison fail a CI gate. Its names (`--fail-on regression,leak`, the history's
/// gates, compare.json) come from this one enum through clap's `ValueEnum`; each variant's doc
/// comment is its `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gate {
    /// A throughput scenario found in both runs whose kernel time per call is slower in the
    /// candidate: Welch's test on the per-pass medians gives p < --alpha and the change is beyond
    /// --noise-pct, at --gate-min-pixels or more (where its calls ran their kernels at once in
    /// some passes and in turn in others, each layout's time apart). Host latency is shown, never
    /// gated.
    Regression,
    /// A new leak: a memory scenario found in both runs that leaks in the candidate and did not in
    /// the base. A scenario that leaks in both does not trip it (see any-leak).
    Leak,
    /// A memory scenario found in both runs whose NPP creates more streams per thread in the
    /// candidate (more than one beyond the base's), or leaves more streams undestroyed.
    Streams,
    /// A new race: a memory scenario found in both runs whose ordering rounds found wrong pixels
    /// in the candidate and none in the base (the source written late on the caller's stream,
    /// read stale by NPP's own stream).
    Race,
    /// Any memory scenario of the candidate that leaks, new or not, whether or not the base has
    /// it.
    AnyLeak,
    /// New wrong pixels: a memory scenario found in both runs whose output, every call
    /// synchronised, is wrong (or faulted the device) in the candidate and right in the base. A
    /// miss of nppbench's own reference (a function with a tolerance) never trips it.
    Wrong,
    /// Any memory scenario of the candidate whose output is wrong or that faulted, new or not.
    AnyWrong,
    /// Any scenario of the candidate that failed (a crash, a timeout, a CUDA or NPP error),
    /// whether or not the base has it. A wrong output is a class (wrong, any-wrong), not a
    /// failure.
    Failed,
}

impl std::fmt::Display for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = clap::ValueEnum::to_possible_value(self).expect("every gate has a name");
        f.write_str(value.get_name())
    }
}

impl std::str::FromStr for Gate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        <Gate as clap::ValueEnum>::from_str(s, false).map_err(|_| {
            let names: Vec<String> = <Gate as clap::ValueEnum>::value_variants()
                .iter()
                .map(Gate::to_string)
                .collect();
            format!("unknown --fail-on {s:?}: use {} (comma-separated)", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_parse_and_reject_unknown_names() {
        assert_eq!("leak".parse::<Gate>(), Ok(Gate::Leak));
        assert_eq!("any-leak".parse::<Gate>(), Ok(Gate::AnyLeak));
        assert_eq!("failed".parse::<Gate>(), Ok(Gate::Failed));
        assert!(
            "leaks"
                .parse::<Gate>()
                .unwrap_err()
                .contains("regression, leak, streams, race, any-leak, wrong, any-wrong, failed")
        );
    }

    /// compare.json and the history's JSON name a gate as `--fail-on` does.
    #[test]
    fn a_gate_serialises_under_its_command_line_name() {
        for g in <Gate as clap::ValueEnum>::value_variants() {
            let json = serde_json::to_string(g).unwrap();
            assert_eq!(json, format!("\"{g}\""));
        }
    }
}
