//! Whether a scenario's output was right, the wrong-pixel hazard: judged from the check of its
//! synchronised calls against the CPU reference ([`Correctness::wrong`], schema version 4), or,
//! in older runs, from the failure a wrong output was filed as. A miss of a function with a
//! tolerance is told apart from an exact function's wrong pixels: the first may be nppbench's own
//! reference being too strict, never NPP's defect on that evidence alone, unless the aligned twin
//! (the same call at aligned strides: `OrderingRounds::aligned_twin`, in older runs
//! `Correctness::aligned_twin`) disagrees with it too.

use nppbench_model::catalog::Tolerance;
use nppbench_model::{FailureKind, MemoryRecord, Outcome, Primitive, WrongOutput, WrongSample};

/// A scenario's output, judged.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputClass {
    /// Every sample within the function's tolerance of the reference, the padding untouched.
    Right,
    /// An exact function's output differs from the reference with every call synchronised: NPP
    /// computed wrong pixels.
    Wrong(WrongFacts),
    /// A function with a tolerance missed it: the reference of nppbench's own may be too strict,
    /// so this is not stated as NPP's defect.
    ReferenceMiss(WrongFacts),
    /// The call faulted the device (a misaligned or illegal address), after which every CUDA
    /// call of the process fails: the wrong-pixel hazard's worst form.
    Faults(String),
    /// No output was checked, and why.
    NotMeasured(String),
}

/// What is known of a wrong output: everything, from a run that records it (schema version 4);
/// the first wrong sample alone, read from an older run's failure.
#[derive(Debug, Clone, PartialEq)]
pub struct WrongFacts {
    /// Wrong pixels (values, for a reduction); `None` where the run recorded only the first.
    pub pixels: Option<u64>,
    pub first: Option<WrongSample>,
    pub rows: Option<[u32; 2]>,
    pub columns: Option<[u32; 2]>,
    /// Bytes changed outside the ROI, where counted.
    pub outside_bytes: Option<u64>,
}

impl WrongFacts {
    fn of(w: &WrongOutput) -> WrongFacts {
        WrongFacts {
            pixels: Some(w.pixels),
            first: w.first,
            rows: w.rows,
            columns: w.columns,
            outside_bytes: Some(w.outside_bytes),
        }
    }

    /// The largest difference of the first wrong sample, where known.
    pub fn first_error(&self) -> Option<f64> {
        self.first.map(|s| (s.actual - s.expected).abs())
    }
}

impl OutputClass {
    /// The name scenarios.csv's `output_class` column and the JSON use.
    pub fn as_str(&self) -> &'static str {
        match self {
            OutputClass::Right => "right",
            OutputClass::Wrong(_) => "wrong",
            OutputClass::ReferenceMiss(_) => "reference_miss",
            OutputClass::Faults(_) => "faults",
            OutputClass::NotMeasured(_) => "not_measured",
        }
    }

    /// Whether NPP computed wrong pixels (or faulted), where that was measured: the value a
    /// rule of the hazard is fitted on. A miss of nppbench's own reference is not measured.
    pub fn wrong(&self) -> Option<bool> {
        match self {
            OutputClass::Right => Some(false),
            OutputClass::Wrong(_) | OutputClass::Faults(_) => Some(true),
            OutputClass::ReferenceMiss(_) | OutputClass::NotMeasured(_) => None,
        }
    }

    /// Whether the output was judged wrong, a fault or a miss of the reference: a class of its
    /// own, never a failed scenario.
    pub fn judged(&self) -> bool {
        matches!(
            self,
            OutputClass::Wrong(_) | OutputClass::ReferenceMiss(_) | OutputClass::Faults(_)
        )
    }

    pub fn facts(&self) -> Option<&WrongFacts> {
        match self {
            OutputClass::Wrong(f) | OutputClass::ReferenceMiss(f) => Some(f),
            _ => None,
        }
    }

    /// The output class of a memory scenario.
    pub fn of(record: &MemoryRecord) -> OutputClass {
        let p = record.scenario.primitive;
        if let Some(result) = &record.result {
            let c = &result.correctness;
            // The twin is the memory probe's in runs made before 2026-12-08, the ordering
            // probe's since.
            let twin = c
                .aligned_twin
                .as_ref()
                .or_else(|| result.ordering.as_ref()?.aligned_twin.as_ref());
            return match (&c.wrong, twin.and_then(|t| t.wrong.as_ref())) {
                (None, _) => OutputClass::Right,
                // A function with a tolerance that missed the CPU reference and disagrees with
                // its own aligned twin too: NPP's own oracle says it is wrong.
                (Some(_), Some(twin)) if p.row().tolerance != Tolerance::Exact => {
                    OutputClass::Wrong(WrongFacts::of(twin))
                }
                (Some(w), _) => judged(p, WrongFacts::of(w)),
            };
        }
        match &record.outcome {
            Outcome::Failed {
                kind: FailureKind::Mismatch,
                reason,
            } => match first_from_reason(reason) {
                Some(first) => judged(
                    p,
                    WrongFacts {
                        pixels: None,
                        first: Some(first),
                        rows: None,
                        columns: None,
                        outside_bytes: None,
                    },
                ),
                // A mismatch that names no sample: outside the ROI, or nppbench's own sizes.
                None if reason.contains("outside its") => judged(
                    p,
                    WrongFacts {
                        pixels: None,
                        first: None,
                        rows: None,
                        columns: None,
                        outside_bytes: None,
                    },
                ),
                None => OutputClass::NotMeasured(reason.clone()),
            },
            Outcome::Failed {
                kind: FailureKind::Gpu,
                reason,
            } if faults(reason) => OutputClass::Faults(reason.clone()),
            Outcome::Failed { reason, .. } | Outcome::NotMeasured { reason } => {
                OutputClass::NotMeasured(reason.clone())
            }
            Outcome::Ok | Outcome::StoppedAtBudget { .. } => {
                OutputClass::NotMeasured("the scenario gave no result".into())
            }
        }
    }
}

/// Wrong, for an exact function; a miss of the reference, for one with a tolerance.
fn judged(p: Primitive, facts: WrongFacts) -> OutputClass {
    match p.row().tolerance {
        Tolerance::Exact => OutputClass::Wrong(facts),
        Tolerance::Abs(_) | Tolerance::Rel(_) => OutputClass::ReferenceMiss(facts),
    }
}

/// CUDA errors by which a kernel faults the context: the address it read or wrote.
const FAULTS: [&str; 3] = [
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
];

fn faults(reason: &str) -> bool {
    FAULTS.iter().any(|f| reason.contains(f))
}

/// The first wrong sample an older run's failure names: "… at row 7, pixel 0, channel 0: 123
/// where 215 is expected (…)", or "… at value 2: 3 where 4 is expected (…)" for a reduction.
fn first_from_reason(reason: &str) -> Option<WrongSample> {
    let at = reason.split_once(" at ")?.1;
    let (place, values) = at.split_once(": ")?;
    let number = |s: &str| s.trim().parse::<f64>().ok();
    let (actual, rest) = values.split_once(" where ")?;
    let expected = rest.split_once(" is expected")?.0;
    let mut sample = WrongSample {
        row: 0,
        pixel: 0,
        channel: 0,
        expected: number(expected)?,
        actual: number(actual)?,
    };
    for part in place.split(", ") {
        let (name, n) = part.split_once(' ')?;
        let n: u32 = n.parse().ok()?;
        match name {
            "row" => sample.row = n,
            "pixel" | "value" => sample.pixel = n,
            "channel" => sample.channel = n,
            _ => return None,
        }
    }
    Some(sample)
}

#[cfg(test)]
mod tests;
