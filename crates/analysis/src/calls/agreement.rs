//! How two files of `call-catalogue` lines agree, oracle by oracle (another GPU, another NPP
//! version, or a build before a change).

use std::collections::BTreeMap;

use super::{CallLine, Lead};

/// How two runs' oracles agree on the functions both asked: how many each flagged, alone or
/// together (a run on another GPU, or after a change, against one before).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Agreement {
    /// Functions both runs asked this oracle.
    pub asked: usize,
    pub both: usize,
    /// The functions (symbols) only one run flagged, in the first run's order.
    pub first_only: Vec<String>,
    pub second_only: Vec<String>,
}

/// The oracles' agreement between `first` and `second` (functions matched by symbol): the leak
/// (streams kept on half the new threads or more), the race (a round that differed), the wrong
/// pixels (other bytes at either unaligned step, where both runs compared) and the faults (an
/// unaligned step killed the context: the wrong-pixel hazard's worst form, as the atlas files it).
pub fn agreement(first: &[CallLine], second: &[CallLine]) -> Vec<(&'static str, Agreement)> {
    let by_symbol: BTreeMap<&str, &CallLine> = second.iter().map(|l| (l.symbol.as_str(), l)).collect();
    type Flag = fn(&CallLine) -> Option<bool>;
    let oracles: [(&'static str, Flag); 4] = [
        ("leak", |l| {
            l.leak_threads
                .map(|_| l.leads().iter().any(|x| matches!(x, Lead::StreamsKept { .. })))
        }),
        ("race", |l| {
            l.race_rounds
                .map(|_| l.leads().iter().any(|x| matches!(x, Lead::RoundsDiffered { .. })))
        }),
        ("wrong", CallLine::wrong_pixels),
        ("fault", CallLine::faults),
    ];
    oracles
        .map(|(name, flag)| {
            let mut a = Agreement::default();
            for l in first {
                let Some(other) = by_symbol.get(l.symbol.as_str()) else {
                    continue;
                };
                let (Some(x), Some(y)) = (flag(l), flag(other)) else {
                    continue;
                };
                a.asked += 1;
                match (x, y) {
                    (true, true) => a.both += 1,
                    (true, false) => a.first_only.push(l.symbol.clone()),
                    (false, true) => a.second_only.push(l.symbol.clone()),
                    (false, false) => {}
                }
            }
            (name, a)
        })
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(json: &str) -> CallLine {
        serde_json::from_str(json).unwrap()
    }

    /// Lines made up for the test: functions matched by symbol, each oracle counted only where
    /// both runs asked it.
    #[test]
    fn two_runs_agree_where_both_asked_and_each_flag_is_counted_once() {
        let l = |symbol: &str, kept: u32, differing: u32, wrong: u64| {
            line(&format!(
                r#"{{"symbol":"{symbol}","status":0,"unaligned_status":0,"unaligned_differing_bytes":{wrong},"leak_threads":8,"leak_threads_keeping_streams":{kept},"race_rounds":4,"race_rounds_differing":{differing}}}"#
            ))
        };
        let first = [
            l("a", 8, 4, 0),
            l("b", 0, 1, 6),
            l("c", 8, 0, 0),
            l("only-first", 8, 4, 9),
        ];
        let not_asked = line(r#"{"symbol":"c","status":-14}"#);
        // "a" killed the context at the destination step in the second run alone.
        let mut a_faulted = l("a", 8, 4, 3);
        a_faulted.unaligned_dst_error = Some("sticky: CUDA_ERROR_MISALIGNED_ADDRESS".into());
        let second = [l("b", 0, 0, 6), a_faulted, not_asked];
        let got = agreement(&first, &second);
        let names = |s: &[&str]| s.iter().map(|x| x.to_string()).collect();
        let want = |asked, both, first_only: &[&str], second_only: &[&str]| Agreement {
            asked,
            both,
            first_only: names(first_only),
            second_only: names(second_only),
        };
        assert_eq!(
            got,
            [
                ("leak", want(2, 1, &[], &[])),
                ("race", want(2, 1, &["b"], &[])),
                ("wrong", want(2, 1, &[], &["a"])),
                ("fault", want(2, 0, &[], &["a"]))
            ]
        );
    }
}
