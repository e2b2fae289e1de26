//! What `nppbench call-catalogue` wrote, judged (issue #45): each function's outcome at the
//! aligned steps and at the unaligned source step, and the counts a reader wants first: how many
//! ran, how many NPP refused and with which status, how many killed the CUDA context, how many
//! gave other pixels when only the layout changed (the wrong-pixel oracle).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod agreement;
pub mod design;

pub use agreement::{Agreement, agreement};

/// One function's line, as the command writes it (fields absent where they do not apply; written
/// back so, as a knowledge file keeps the lines of its version's calls).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallLine {
    pub symbol: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// The ROI of the aligned and unaligned calls (absent in lines written before it was kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// The card that called it (`GPU-…`) and NPP's version (`13.0.1`, its three parts), where
    /// recorded: a run resumed on another machine holds lines of several cards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_uuid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub npp_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_planned: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_process: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outputs_vary: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unaligned_status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unaligned_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unaligned_differing_bytes: Option<u64>,
    /// The same pixels with the destination's rows further apart, the sources' aligned: NPP's
    /// status and the output bytes that changed, or the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unaligned_dst_status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unaligned_dst_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unaligned_dst_differing_bytes: Option<u64>,
    /// The leak oracle: new host threads that each made the call once, and after how many of
    /// them NPP kept streams it had created (CUPTI); the process's device memory over those
    /// calls, bytes (NVML), where read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leak_threads: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leak_threads_keeping_streams: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leak_growth_bytes: Option<i64>,
    /// The race oracle: rounds with the inputs written late on the caller's stream and the
    /// outputs read right after the call, and how many gave other bytes than the call
    /// synchronised on the same inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race_rounds: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race_rounds_differing: Option<u32>,
    /// Why the oracles were not asked (no plan at their geometry), or how their calls failed (a
    /// sticky error ends the child), or why one of them measured nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oracles_not_planned: Option<String>,
    /// NPP's status at the oracles' geometry (an error there: neither oracle asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oracles_status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oracles_status_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oracles_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leak_not_measured: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race_not_measured: Option<String>,
}

/// Why the bytes of a file are not `call-catalogue` lines.
#[derive(Debug, thiserror::Error)]
pub enum LinesError {
    #[error("gzip-compressed, but {0}")]
    Gzip(std::io::Error),
    #[error("not text")]
    NotText,
    #[error("line {line}: not a call-catalogue line ({source}): give the file `nppbench call-catalogue --out` wrote")]
    Line { line: usize, source: serde_json::Error },
}

/// The lines of a file `call-catalogue` wrote (its bytes, gzip-compressed or not), blank lines
/// skipped; the first that is not a line is the error.
pub fn read_lines(bytes: &[u8]) -> Result<Vec<CallLine>, LinesError> {
    read_lines_of(bytes)
}

/// [`read_lines`], of any kind of line (`design::ShapeLine`, say).
pub fn read_lines_of<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<Vec<T>, LinesError> {
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(bytes), &mut text)
            .map_err(LinesError::Gzip)?;
        text
    } else {
        std::str::from_utf8(bytes).map_err(|_| LinesError::NotText)?.to_owned()
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|source| LinesError::Line { line: i + 1, source }))
        .collect()
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

impl Lead {
    /// The lead in words, as the page of every function and `predict` say it.
    pub fn words(&self) -> String {
        let bytes = |n: u64| match n {
            1 => "1 other output byte".to_owned(),
            n => format!("{n} other output bytes"),
        };
        match self {
            Lead::KilledContext(e) => format!("left the CUDA context dead at an unaligned source step ({e})"),
            Lead::OtherPixels(n) => format!("gave {} at an unaligned source step, the same pixels", bytes(*n)),
            Lead::KilledContextAtDestination(e) => {
                format!("left the CUDA context dead at an unaligned destination step ({e})")
            }
            Lead::OtherPixelsAtDestination(n) => {
                format!("gave {} at an unaligned destination step, the same pixels", bytes(*n))
            }
            Lead::StreamsKept { threads, kept } => {
                format!("NPP kept streams after the calls of {kept} of {threads} new threads")
            }
            Lead::RoundsDiffered { rounds, differing } => format!(
                "{differing} of {rounds} rounds with the inputs written late on the caller's stream gave other outputs"
            ),
        }
    }
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

/// The cards and NPP builds the functions were called with (`GPU-… with NPP 13.0.1`), the
/// most first; lines that record neither (older runs, a child that died) are not counted.
pub fn made_on<'a>(lines: impl IntoIterator<Item = &'a CallLine>) -> Vec<(String, usize)> {
    most_first(lines.into_iter().filter_map(|l| match (&l.gpu_uuid, &l.npp_version) {
        (Some(gpu), Some(npp)) => Some(format!("{gpu} with NPP {npp}")),
        (Some(gpu), None) => Some(gpu.clone()),
        (None, Some(npp)) => Some(format!("NPP {npp}")),
        (None, None) => None,
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
mod tests;
