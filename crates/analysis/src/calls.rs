//! What `nppbench call-catalogue` wrote, judged (issue #45): each function's outcome at the
//! aligned steps and at the unaligned source step, and the counts a reader wants first: how many
//! ran, how many NPP refused and with which status, how many killed the CUDA context, how many
//! gave other pixels when only the layout changed (the wrong-pixel oracle).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod agreement;

pub use agreement::{Agreement, agreement};

/// One function's line, as the command writes it (fields absent where they do not apply).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CallLine {
    pub symbol: String,
    pub library: Option<String>,
    /// The ROI of the aligned and unaligned calls (absent in lines written before it was kept).
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub not_planned: Option<String>,
    pub ended_process: Option<String>,
    pub error: Option<String>,
    pub status: Option<i32>,
    pub status_name: Option<String>,
    pub outputs_vary: Option<bool>,
    pub unaligned_status: Option<i32>,
    pub unaligned_error: Option<String>,
    pub unaligned_differing_bytes: Option<u64>,
    /// The same pixels with the destination's rows further apart, the sources' aligned: NPP's
    /// status and the output bytes that changed, or the error.
    pub unaligned_dst_status: Option<i32>,
    pub unaligned_dst_error: Option<String>,
    pub unaligned_dst_differing_bytes: Option<u64>,
    /// The leak oracle: new host threads that each made the call once, and after how many of
    /// them NPP kept streams it had created (CUPTI); the process's device memory over those
    /// calls, bytes (NVML), where read.
    pub leak_threads: Option<u32>,
    pub leak_threads_keeping_streams: Option<u32>,
    pub leak_growth_bytes: Option<i64>,
    /// The race oracle: rounds with the inputs written late on the caller's stream and the
    /// outputs read right after the call, and how many gave other bytes than the call
    /// synchronised on the same inputs.
    pub race_rounds: Option<u32>,
    pub race_rounds_differing: Option<u32>,
    /// Why the oracles were not asked (no plan at their geometry), or how their calls failed (a
    /// sticky error ends the child), or why one of them measured nothing.
    pub oracles_not_planned: Option<String>,
    /// NPP's status at the oracles' geometry (an error there: neither oracle asked).
    pub oracles_status: Option<i32>,
    pub oracles_status_name: Option<String>,
    pub oracles_error: Option<String>,
    pub leak_not_measured: Option<String>,
    pub race_not_measured: Option<String>,
}

/// What a function's calls from roles found that only a measurement can confirm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Lead {
    /// At the unaligned source step the call left the CUDA context dead: the error.
    KilledContext(String),
    /// At the unaligned source step the same pixels gave this many other output bytes.
    OtherPixels(u64),
    /// At the unaligned destination step the call left the CUDA context dead: the error.
    KilledContextAtDestination(String),
    /// At the unaligned destination step the same pixels gave this many other output bytes.
    OtherPixelsAtDestination(u64),
    /// NPP kept streams after the calls of `kept` of `threads` new threads (half or more).
    StreamsKept { threads: u32, kept: u32 },
    /// With the inputs written late on the caller's stream, `differing` of `rounds` rounds gave
    /// other outputs than the call synchronised.
    RoundsDiffered { rounds: u32, differing: u32 },
}

/// What a function did.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// No call could be synthesised: why.
    NotPlanned(String),
    /// Its child process ended during the call (a host-side fault): how.
    EndedProcess(String),
    /// The call could not be made, or left the context dead at the aligned steps.
    Failed(String),
    /// NPP returned this error status at the aligned steps.
    Refused(String),
    /// It ran at the aligned steps; what the unaligned step gave.
    Ran(Unaligned),
}

/// What the same pixels at an unaligned source step gave.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unaligned {
    Same,
    /// Other output bytes: this many.
    Differs(u64),
    Refused(i32),
    /// The context died (a misaligned address): a sticky error.
    Faulted(String),
    NotCalled,
}

impl CallLine {
    pub fn outcome(&self) -> Outcome {
        if let Some(why) = &self.not_planned {
            return Outcome::NotPlanned(why.clone());
        }
        if let Some(how) = &self.ended_process {
            return Outcome::EndedProcess(how.clone());
        }
        if let Some(e) = &self.error {
            return Outcome::Failed(e.clone());
        }
        match self.status {
            Some(s) if s < 0 => Outcome::Refused(self.status_name.clone().unwrap_or_else(|| s.to_string())),
            Some(_) => Outcome::Ran(unaligned(
                &self.unaligned_error,
                self.unaligned_status,
                self.unaligned_differing_bytes,
            )),
            None => Outcome::Failed("no status".into()),
        }
    }

    /// What the unaligned destination step gave (`NotCalled` where it was not called: the
    /// function did not run, or died at the source step, or has no destination image of its own).
    pub fn destination_step(&self) -> Unaligned {
        unaligned(
            &self.unaligned_dst_error,
            self.unaligned_dst_status,
            self.unaligned_dst_differing_bytes,
        )
    }

    /// Whether the wrong-pixel oracle flagged it: other pixels at either unaligned step; `None`
    /// where neither step compared outputs.
    pub fn wrong_pixels(&self) -> Option<bool> {
        let Outcome::Ran(source) = self.outcome() else {
            return None;
        };
        match (source, self.destination_step()) {
            (Unaligned::Differs(_), _) | (_, Unaligned::Differs(_)) => Some(true),
            (Unaligned::Same, _) | (_, Unaligned::Same) => Some(false),
            _ => None,
        }
    }
}

impl CallLine {
    /// Whether an unaligned step killed the context (a misaligned or illegal address: the call
    /// returned and the kernel faulted), at the source step or at the destination's; `None` where
    /// the function did not run or neither step was called.
    pub fn faults(&self) -> Option<bool> {
        let Outcome::Ran(source) = self.outcome() else {
            return None;
        };
        match (source, self.destination_step()) {
            (Unaligned::Faulted(_), _) | (_, Unaligned::Faulted(_)) => Some(true),
            (Unaligned::NotCalled, Unaligned::NotCalled) => None,
            _ => Some(false),
        }
    }
}

/// An unaligned step's outcome from its error, status and changed output bytes.
fn unaligned(error: &Option<String>, status: Option<i32>, differing: Option<u64>) -> Unaligned {
    match (error, status, differing) {
        (Some(e), _, _) => Unaligned::Faulted(e.clone()),
        (None, Some(s), _) if s < 0 => Unaligned::Refused(s),
        (None, _, Some(0)) => Unaligned::Same,
        (None, _, Some(n)) => Unaligned::Differs(n),
        _ => Unaligned::NotCalled,
    }
}

impl CallLine {
    /// What the leak and race oracles found: NPP kept streams after the calls of half the new
    /// threads or more (a leak keeps them after every one; a function that keeps none is the
    /// rule), and any round with the inputs written late that gave other outputs.
    pub fn leads(&self) -> Vec<Lead> {
        let mut out = Vec::new();
        if let (Some(threads), Some(kept)) = (self.leak_threads, self.leak_threads_keeping_streams)
            && threads > 0
            && 2 * kept >= threads
        {
            out.push(Lead::StreamsKept { threads, kept });
        }
        if let (Some(rounds), Some(differing)) = (self.race_rounds, self.race_rounds_differing)
            && differing > 0
        {
            out.push(Lead::RoundsDiffered { rounds, differing });
        }
        out
    }
}

/// Functions with each kind of lead from the leak and race oracles, in words (a function may have
/// both, and either beside its outcome).
pub fn lead_counts(lines: &[CallLine]) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for lead in lines.iter().flat_map(CallLine::leads) {
        let kind = match lead {
            Lead::StreamsKept { .. } => "NPP kept streams on half its new threads or more",
            Lead::RoundsDiffered { .. } => "a round with its inputs written late gave other outputs",
            Lead::KilledContext(_)
            | Lead::OtherPixels(_)
            | Lead::KilledContextAtDestination(_)
            | Lead::OtherPixelsAtDestination(_) => continue,
        };
        *counts.entry(kind.to_owned()).or_default() += 1;
    }
    counts.into_iter().collect()
}

impl CallLine {
    /// Why a function that ran was not judged by the leak or race oracle, in words: their plan,
    /// their calls' failure, what one of them lacked (CUPTI, the delay kernel), or that they were
    /// not asked (a run before them). `None` where both answered or the function did not run.
    pub fn oracles_missing(&self) -> Option<String> {
        if !matches!(self.outcome(), Outcome::Ran(_)) {
            return None;
        }
        let first = |e: &str| e.split(": ").next().unwrap_or(e).to_owned();
        if let Some(why) = &self.oracles_not_planned {
            return Some(format!("not planned at their geometry: {}", first(why)));
        }
        if let Some(e) = &self.oracles_error {
            let what = self.without_symbol(e);
            // A sticky error names the driver call and its error, then the driver's words.
            let kind = what.split(" (").next().unwrap_or(what);
            return Some(format!("failed: {kind}"));
        }
        if let Some(s) = self.oracles_status.filter(|s| *s < 0) {
            let name = self
                .oracles_status_name
                .clone()
                .unwrap_or_else(|| format!("status {s}"));
            return Some(format!("refused at their geometry: {name}"));
        }
        match (&self.leak_not_measured, &self.race_not_measured) {
            (Some(why), _) => Some(format!("leak not measured: {why}")),
            (None, Some(why)) => Some(format!("race not measured: {why}")),
            // A line of a run made before the oracles, or cut off between its calls.
            (None, None) if self.leak_threads.is_none() && self.race_rounds.is_none() => Some("not asked".to_owned()),
            (None, None) => None,
        }
    }
}

impl CallLine {
    /// An error message without the function's name it starts with: what differs between kinds.
    fn without_symbol<'e>(&self, e: &'e str) -> &'e str {
        e.strip_prefix(&format!("{}: ", self.symbol)).unwrap_or(e)
    }
}

/// Each kind counted, the most first (ties in name order).
fn most_first(kinds: impl Iterator<Item = String>) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for kind in kinds {
        *counts.entry(kind).or_default() += 1;
    }
    let mut out: Vec<(String, usize)> = counts.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// Functions that ran but that the leak or race oracle did not judge, by why, the most first.
pub fn oracles_missing(lines: &[CallLine]) -> Vec<(String, usize)> {
    most_first(lines.iter().filter_map(CallLine::oracles_missing))
}

/// What the unaligned destination step gave, in words, the most first (the functions that
/// were called at it).
pub fn destination_counts(lines: &[CallLine]) -> Vec<(String, usize)> {
    most_first(lines.iter().filter_map(|l| match l.destination_step() {
        Unaligned::Same => Some("the same".to_owned()),
        Unaligned::Differs(_) => Some("other pixels".to_owned()),
        Unaligned::Refused(_) => Some("refused".to_owned()),
        Unaligned::Faulted(_) => Some("killed the context".to_owned()),
        Unaligned::NotCalled => None,
    }))
}

/// Counts by kind of outcome, in words, the most first.
pub fn summarize(lines: &[CallLine]) -> Vec<(String, usize)> {
    most_first(lines.iter().map(|l| match l.outcome() {
        Outcome::NotPlanned(why) => format!("not planned: {}", why.split(':').next().unwrap_or(&why)),
        Outcome::EndedProcess(how) => format!("ended its process: {how}"),
        Outcome::Failed(e) => {
            let what = l.without_symbol(&e);
            format!("failed: {}", what.split(": ").next().unwrap_or(what))
        }
        Outcome::Refused(status) => format!("refused: {status}"),
        Outcome::Ran(Unaligned::Same) => "ran; the same at the unaligned step".into(),
        Outcome::Ran(Unaligned::Differs(_)) => "ran; other pixels at the unaligned step".into(),
        Outcome::Ran(Unaligned::Refused(_)) => "ran; refused at the unaligned step".into(),
        Outcome::Ran(Unaligned::Faulted(_)) => "ran; killed the context at the unaligned step".into(),
        Outcome::Ran(Unaligned::NotCalled) => "ran; not called unaligned".into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines made up for the test, one of each kind the command writes.
    fn line(json: &str) -> CallLine {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn each_kind_of_line_has_its_outcome_and_the_counts_come_most_first() {
        let lines = [
            line(r#"{"symbol":"a","not_planned":"no image: a size query"}"#),
            line(r#"{"symbol":"b","ended_process":"signal: 11 (SIGSEGV)"}"#),
            line(r#"{"symbol":"c","status":-14,"status_name":"NPP_STEP_ERROR"}"#),
            line(r#"{"symbol":"d","status":0,"unaligned_status":0,"unaligned_differing_bytes":0}"#),
            line(r#"{"symbol":"e","status":0,"unaligned_status":0,"unaligned_differing_bytes":12}"#),
            line(r#"{"symbol":"f","status":0,"unaligned_error":"sticky: misaligned address"}"#),
            line(r#"{"symbol":"g","status":0,"unaligned_status":0,"unaligned_differing_bytes":0}"#),
            line(r#"{"symbol":"h","error":"h: its sizer returned -6"}"#),
            line(r#"{"symbol":"i","error":"i: its sizer returned -6"}"#),
        ];
        assert_eq!(lines[4].outcome(), Outcome::Ran(Unaligned::Differs(12)));
        assert_eq!(
            lines[5].outcome(),
            Outcome::Ran(Unaligned::Faulted("sticky: misaligned address".into()))
        );
        let s = summarize(&lines);
        // Ties in name order.
        assert_eq!(s[0], ("failed: its sizer returned -6".to_owned(), 2));
        assert_eq!(s[1], ("ran; the same at the unaligned step".to_owned(), 2));
        assert!(s.contains(&("refused: NPP_STEP_ERROR".to_owned(), 1)));
        assert!(s.contains(&("not planned: no image".to_owned(), 1)));
        assert_eq!(s.iter().map(|x| x.1).sum::<usize>(), lines.len());
        assert!(lead_counts(&lines).is_empty(), "no oracle ran on these lines");
    }

    /// Lines made up for the test: the destination step's outcome, counted apart, and the
    /// wrong-pixel and fault flags from either step (no wrong-pixel flag where neither compared
    /// outputs).
    #[test]
    fn the_destination_step_is_counted_apart_and_either_step_flags_wrong_pixels() {
        let at = |src: &str, dst: &str| line(&format!(r#"{{"symbol":"a","status":0,{src}{dst}}}"#));
        let same = r#""unaligned_status":0,"unaligned_differing_bytes":0"#;
        let dead = r#""unaligned_error":"sticky: misaligned address""#;
        let lines = [
            at(same, r#","unaligned_dst_status":0,"unaligned_dst_differing_bytes":40"#),
            at(same, r#","unaligned_dst_status":0,"unaligned_dst_differing_bytes":0"#),
            at(same, r#","unaligned_dst_error":"sticky: misaligned address""#),
            at(dead, ""),
            at(same, ""),
        ];
        assert_eq!(lines[0].destination_step(), Unaligned::Differs(40));
        assert_eq!(lines[0].outcome(), Outcome::Ran(Unaligned::Same));
        let flags: Vec<Option<bool>> = lines.iter().map(CallLine::wrong_pixels).collect();
        assert_eq!(flags, [Some(true), Some(false), Some(false), None, Some(false)]);
        // A fault at either step is a fault; a step that ran without one is not.
        let faults: Vec<Option<bool>> = lines.iter().map(CallLine::faults).collect();
        assert_eq!(faults, [Some(false), Some(false), Some(true), Some(true), Some(false)]);
        assert_eq!(line(r#"{"symbol":"a","status":-4}"#).faults(), None);
        assert_eq!(
            destination_counts(&lines),
            [
                ("killed the context".to_owned(), 1),
                ("other pixels".to_owned(), 1),
                ("the same".to_owned(), 1)
            ]
        );
    }

    /// Lines made up for the test: the leak oracle's streams kept on half the new threads or
    /// more is a lead, on fewer is not; any round that differed is a lead.
    #[test]
    fn streams_kept_on_half_the_threads_and_a_round_that_differed_are_leads() {
        let ran = r#""status":0,"unaligned_status":0,"unaligned_differing_bytes":0"#;
        let leak = |kept: u32| {
            line(&format!(
                r#"{{"symbol":"a",{ran},"leak_threads":8,"leak_threads_keeping_streams":{kept},"race_rounds":4,"race_rounds_differing":0}}"#
            ))
        };
        assert_eq!(leak(4).leads(), [Lead::StreamsKept { threads: 8, kept: 4 }]);
        assert!(leak(3).leads().is_empty());
        assert!(leak(0).leads().is_empty());
        let race = line(&format!(
            r#"{{"symbol":"b",{ran},"leak_threads":8,"leak_threads_keeping_streams":0,"race_rounds":4,"race_rounds_differing":1}}"#
        ));
        assert_eq!(
            race.leads(),
            [Lead::RoundsDiffered {
                rounds: 4,
                differing: 1
            }]
        );
        let counts = lead_counts(&[leak(8), leak(1), race]);
        assert_eq!(
            counts,
            [
                ("NPP kept streams on half its new threads or more".to_owned(), 1),
                ("a round with its inputs written late gave other outputs".to_owned(), 1)
            ]
        );
    }

    /// Lines made up for the test: a function the oracles could not judge says why (a sticky
    /// error's call and code without the driver's words, the function's name left out); one
    /// they judged says nothing.
    #[test]
    fn a_function_the_oracles_did_not_judge_is_counted_by_why() {
        let sticky = line(
            r#"{"symbol":"t","status":0,"oracles_error":"sticky: cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"}"#,
        );
        let refused = line(r#"{"symbol":"u","status":0,"oracles_error":"u: NPP returned -6 at 1918x32"}"#);
        let unplanned = line(r#"{"symbol":"v","status":0,"oracles_not_planned":"pSrc: a step of 4 leaves no margin"}"#);
        let no_cupti = line(
            r#"{"symbol":"w","status":0,"leak_not_measured":"no CUPTI","race_rounds":4,"race_rounds_differing":0}"#,
        );
        let step = line(r#"{"symbol":"y","status":0,"oracles_status":-14}"#);
        assert_eq!(
            step.oracles_missing().as_deref(),
            Some("refused at their geometry: status -14")
        );
        let named = line(r#"{"symbol":"z","status":0,"oracles_status":-14,"oracles_status_name":"NPP_STEP_ERROR"}"#);
        assert_eq!(
            named.oracles_missing().as_deref(),
            Some("refused at their geometry: NPP_STEP_ERROR")
        );
        let judged = line(
            r#"{"symbol":"x","status":0,"leak_threads":8,"leak_threads_keeping_streams":0,"race_rounds":4,"race_rounds_differing":0}"#,
        );
        assert_eq!(
            sticky.oracles_missing().as_deref(),
            Some("failed: sticky: cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS")
        );
        assert_eq!(
            refused.oracles_missing().as_deref(),
            Some("failed: NPP returned -6 at 1918x32")
        );
        assert_eq!(judged.oracles_missing(), None);
        let before_them = line(r#"{"symbol":"o","status":0,"unaligned_status":0,"unaligned_differing_bytes":0}"#);
        assert_eq!(before_them.oracles_missing().as_deref(), Some("not asked"));
        let not_run = line(r#"{"symbol":"r","status":-14}"#);
        assert_eq!(not_run.oracles_missing(), None, "not run: nothing to judge");
        let counts = oracles_missing(&[sticky.clone(), sticky, refused, unplanned, no_cupti, judged]);
        assert_eq!(
            counts[0],
            (
                "failed: sticky: cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS".to_owned(),
                2
            )
        );
        assert_eq!(counts.iter().map(|c| c.1).sum::<usize>(), 5);
        assert!(counts.contains(&("not planned at their geometry: pSrc".to_owned(), 1)));
        assert!(counts.contains(&("leak not measured: no CUPTI".to_owned(), 1)));
    }
}
