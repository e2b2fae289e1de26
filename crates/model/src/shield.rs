//! What `nppbench shield` and the interposer it preloads exchange: the plan (each catalogued
//! function's leak, race and wrong-pixel rules, compiled from an atlas into integer tests the
//! interposer evaluates per call: [`ShieldPlan`]) and the report the interposer writes at exit
//! ([`ShieldReport`]: calls seen, rewritten per hazard and per call site, left alone and why,
//! what the shield cost).
//!
//! The rules are the ones `trace` and `predict` use (`nppbench-analysis`'s `FunctionRules`); the
//! CLI compiles them, so that the interposer never links the analysis. A rule's conditions on the
//! threading model are dropped at compilation: a call cannot know whether the program will call
//! again from new threads, so a configuration is hazardous where its rule holds under some
//! threading model (docs/shield.md).

use serde::{Deserialize, Serialize};

use crate::{ContextFill, StreamKind, TraceEnd, TraceStreamKind};

/// The schema of both files this build writes. 2 added the wrong pixels (the plan's `wrong`
/// rules, the report's staged calls and cost); a report of schema 1 reads with those empty.
pub const SHIELD_SCHEMA_VERSION: u32 = 2;

/// A hazard the shield can end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hazard {
    /// NPP keeps streams for every new host thread (device memory grows with the threads).
    Leak,
    /// NPP's work on its own stream does not wait for the caller's (wrong pixels).
    Race,
    /// NPP computes wrong pixels at some unaligned source strides, every call synchronised.
    Wrong,
}

impl Hazard {
    pub fn as_str(self) -> &'static str {
        match self {
            Hazard::Leak => "leak",
            Hazard::Race => "race",
            Hazard::Wrong => "wrong",
        }
    }
}

/// The compiled rules of every NPP version the atlas runs measured; the interposer picks the one
/// whose version is the NPP the program loads, at its first catalogued call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShieldPlan {
    pub schema_version: u32,
    /// The hazards to end (`--hazards`).
    pub hazards: Vec<Hazard>,
    pub knowledge: Vec<ShieldKnowledge>,
}

/// One NPP version's compiled rules, from the atlas runs of that version and one GPU model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShieldKnowledge {
    /// As the runs recorded it (`13.0.1.2`); the interposer compares major.minor.build.
    pub npp_version: String,
    pub gpu: String,
    pub runs: usize,
    pub functions: Vec<ShieldFunction>,
}

/// One function's rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShieldFunction {
    /// The exported symbol, `nppiConvert_8u32f_C1R_Ctx`.
    pub symbol: String,
    /// Bytes per pixel of the source and the destination (row-length conditions).
    pub src_bytes_per_pixel: u32,
    pub dst_bytes_per_pixel: u32,
    pub leak: HazardRule,
    pub race: HazardRule,
    /// Where the call computes wrong pixels (or faults) with every call synchronised: the shield
    /// runs it on staging copies at aligned strides.
    pub wrong: HazardRule,
}

/// When a call of a function has a hazard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "tests", rename_all = "snake_case")]
pub enum HazardRule {
    Never,
    Always,
    /// Where every test holds.
    When(Vec<ShieldTest>),
    /// The atlas cannot say (the hazard was not measured, or no measured feature tells the
    /// configurations apart): calls are left alone and counted.
    Unknown(String),
}

/// A condition, or its negation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShieldTest {
    pub condition: Condition,
    pub holds: bool,
}

/// What a test looks at in a call: the ROI, the line steps, the stream and the context's flags.
/// The names are the rules' features (`nppbench_analysis::rules::Feature`), the threading model
/// aside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    SrcRowBytesMultiple(u32),
    DstRowBytesMultiple(u32),
    WidthMultiple(u32),
    SrcStepMultiple(u32),
    DstStepMultiple(u32),
    SrcRowBytesAtLeast(u64),
    DstRowBytesAtLeast(u64),
    WidthAtLeast(u64),
    HeightAtLeast(u64),
    PixelsAtLeast(u64),
    DeclaresNonBlocking,
    StreamIn(Vec<StreamKind>),
    ContextIn(Vec<ContextFill>),
    /// Some source row starts this many bytes (inclusive bounds) past a multiple of 16: the
    /// source pointer plus each row's step, for the first 16 rows (the offsets repeat after).
    SrcRowStartsIn(u32, u32),
}

impl ShieldPlan {
    /// The variable naming the plan's file: set, the preloaded interposer shields.
    pub const PLAN_VAR: &'static str = "NPPBENCH_SHIELD_PLAN";
    /// The variable naming the report's path (a process the program started writes
    /// [`ShieldReport::descendant_file_name`] beside it).
    pub const REPORT_VAR: &'static str = "NPPBENCH_SHIELD_REPORT";
    /// The report's file name in `--report`.
    pub const REPORT_FILE_NAME: &'static str = "shield.json";
}

/// What the shield did in one process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShieldReport {
    pub schema_version: u32,
    pub program: Vec<String>,
    pub pid: u32,
    /// Set in a process forked from the shielded one: it counts its own calls after the fork.
    pub forked_from: Option<u32>,
    pub hazards: Vec<Hazard>,
    /// `nppGetLibVersion` of the NPP the program loaded, where it answered.
    pub npp_version: Option<String>,
    /// The atlas's version whose rules were used; `None` where none matched (`knowledge_missing`).
    pub knowledge_version: Option<String>,
    /// Why no rules were used: no knowledge for the loaded NPP version, or no catalogued call.
    pub knowledge_missing: Option<String>,
    /// The NPP libraries mapped in the process at the end.
    pub npp_libraries: Vec<String>,
    pub end: TraceEnd,
    pub totals: ShieldTotals,
    /// Per call site (function, geometry, stream, declared flags), the most calls first.
    pub sites: Vec<ShieldSite>,
    /// Calls at sites past the table's room, counted in `totals` only.
    pub calls_at_sites_not_listed: u64,
    /// What the shield cost (schema 2; zero in a report of schema 1).
    #[serde(default)]
    pub cost: ShieldCost,
}

/// What the shield cost the program: the host time spent deciding, staging and queueing the
/// copies back (NPP's own time excluded: the copies run on the GPU, in the stream's order), and
/// the staging pool.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ShieldCost {
    /// Nanoseconds on the program's threads in the shield, every call together.
    pub shield_ns: u64,
    /// Of those, in calls left alone (the decision only).
    pub left_alone_ns: u64,
    /// Bytes the staged calls copied (into the staging buffers and back).
    pub staged_bytes: u64,
    /// The most device memory the staging buffers held at once, allocated and not yet freed:
    /// what the shield's pools keep reserved (they keep what they reserved); `None` where no call
    /// was staged.
    pub staging_peak_bytes: Option<u64>,
}

impl ShieldCost {
    /// Nanoseconds per call in the shield, where there were calls.
    pub fn per_call_ns(&self, calls: u64) -> Option<f64> {
        (calls > 0).then(|| self.shield_ns as f64 / calls as f64)
    }

    /// Nanoseconds per call left alone.
    pub fn per_call_left_alone_ns(&self, totals: &ShieldTotals) -> Option<f64> {
        let n = totals.left_alone();
        (n > 0).then(|| self.left_alone_ns as f64 / n as f64)
    }
}

/// Calls by what the shield did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShieldTotals {
    pub calls: u64,
    /// Calls passed NPP a context declaring `cudaStreamNonBlocking`.
    pub rewritten: u64,
    /// Of those, the calls whose configuration leaks, and those whose configuration races (a
    /// call can count in both).
    pub rewritten_leak: u64,
    pub rewritten_race: u64,
    /// Calls run on staging copies at aligned strides, their configuration computing wrong
    /// pixels (counted in `rewritten`).
    #[serde(default)]
    pub rewritten_wrong: u64,
    /// Calls whose configuration computes wrong pixels that could not be staged (the function's
    /// images cannot be, or the driver refused a buffer); left alone unless declared non-blocking
    /// for another hazard.
    #[serde(default)]
    pub wrong_not_staged: u64,
    /// Left alone: no rule says the configuration leaks or races.
    pub not_hazardous: u64,
    /// Left alone: the atlas does not know the function.
    pub unknown_function: u64,
    /// Left alone: the rules cannot judge the configuration (a hazard not measured, a stream's
    /// flags the driver would not tell, a negative size).
    pub unknown_configuration: u64,
    /// Left alone: no knowledge for the NPP version loaded.
    pub no_knowledge: u64,
}

/// What the shield did with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShieldAction {
    /// Declared non-blocking for the leak or the race, staged for the wrong pixels: for the
    /// hazards that are true.
    Rewritten {
        leak: bool,
        race: bool,
        #[serde(default)]
        wrong: bool,
    },
    /// The configuration computes wrong pixels but the call could not be staged; declared
    /// non-blocking where it also leaks or races.
    NotStaged {
        leak: bool,
        race: bool,
    },
    NotHazardous,
    UnknownFunction,
    UnknownConfiguration,
    NoKnowledge,
}

impl ShieldAction {
    /// Whether the shield changed what NPP was passed: a context declaring non-blocking, or
    /// staged images.
    pub fn rewrites(self) -> bool {
        match self {
            ShieldAction::Rewritten { .. } => true,
            ShieldAction::NotStaged { leak, race } => leak || race,
            _ => false,
        }
    }
}

impl ShieldTotals {
    /// Counts `calls` calls that met `action`.
    pub fn add(&mut self, action: ShieldAction, calls: u64) {
        self.calls += calls;
        let n = |on: bool| if on { calls } else { 0 };
        self.rewritten += n(action.rewrites());
        match action {
            ShieldAction::Rewritten { leak, race, wrong } => {
                self.rewritten_leak += n(leak);
                self.rewritten_race += n(race);
                self.rewritten_wrong += n(wrong);
            }
            ShieldAction::NotStaged { leak, race } => {
                self.wrong_not_staged += calls;
                self.rewritten_leak += n(leak);
                self.rewritten_race += n(race);
            }
            ShieldAction::NotHazardous => self.not_hazardous += calls,
            ShieldAction::UnknownFunction => self.unknown_function += calls,
            ShieldAction::UnknownConfiguration => self.unknown_configuration += calls,
            ShieldAction::NoKnowledge => self.no_knowledge += calls,
        }
    }

    /// Calls left alone, for any reason.
    pub fn left_alone(&self) -> u64 {
        self.calls - self.rewritten
    }
}

/// All calls with one function, ROI, steps, stream and declared flags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShieldSite {
    pub function: String,
    pub width: i32,
    pub height: i32,
    pub src_step: Option<i32>,
    pub dst_step: Option<i32>,
    pub stream: TraceStreamKind,
    /// The created stream's real flags' non-blocking bit, where known.
    pub stream_non_blocking: Option<bool>,
    /// `nStreamFlags` as the caller declared it.
    pub declared_flags: u32,
    pub action: ShieldAction,
    pub calls: u64,
    /// Nanoseconds the shield spent on these calls (schema 2).
    #[serde(default)]
    pub shield_ns: u64,
}

impl ShieldReport {
    /// The file-name prefix of a descendant or forked process's report.
    pub const DESCENDANT_PREFIX: &'static str = "shield-";

    /// `shield-<pid>.json`: the report of a process the shielded program started or forked.
    pub fn descendant_file_name(pid: u32) -> String {
        format!("{}{pid}.json", Self::DESCENDANT_PREFIX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made-up figures: the time per call left alone is the decisions' time over the calls not
    /// rewritten, and there is none where every call was rewritten.
    #[test]
    fn the_cost_of_a_call_left_alone_is_over_the_calls_left_alone() {
        let cost = ShieldCost {
            shield_ns: 10_000,
            left_alone_ns: 3_000,
            ..ShieldCost::default()
        };
        let totals = ShieldTotals {
            calls: 10,
            rewritten: 4,
            ..ShieldTotals::default()
        };
        assert_eq!(cost.per_call_left_alone_ns(&totals), Some(500.0));
        assert_eq!(cost.per_call_ns(totals.calls), Some(1000.0));
        let all = ShieldTotals {
            rewritten: 10,
            ..totals
        };
        assert_eq!(cost.per_call_left_alone_ns(&all), None);
    }

    #[test]
    fn a_call_rewritten_for_both_hazards_counts_once_in_all_and_in_each_hazard() {
        let mut t = ShieldTotals::default();
        t.add(
            ShieldAction::Rewritten {
                leak: true,
                race: true,
                wrong: true,
            },
            3,
        );
        t.add(
            ShieldAction::Rewritten {
                leak: false,
                race: true,
                wrong: false,
            },
            1,
        );
        t.add(ShieldAction::UnknownFunction, 2);
        assert_eq!((t.calls, t.rewritten, t.rewritten_leak, t.rewritten_race), (6, 4, 3, 4));
        assert_eq!(t.rewritten_wrong, 3);
        assert_eq!(t.left_alone(), 2);
    }

    #[test]
    fn a_wrong_call_not_staged_is_left_alone_unless_declared_non_blocking_for_another_hazard() {
        let mut t = ShieldTotals::default();
        t.add(
            ShieldAction::NotStaged {
                leak: false,
                race: false,
            },
            2,
        );
        t.add(
            ShieldAction::NotStaged {
                leak: true,
                race: false,
            },
            5,
        );
        assert_eq!(
            (t.calls, t.wrong_not_staged, t.rewritten, t.rewritten_leak),
            (7, 7, 5, 5)
        );
        assert_eq!(t.left_alone(), 2);
    }

    /// A report written by the shield before the wrong pixels (schema 1) reads, with no staged
    /// call and no cost.
    #[test]
    fn a_report_of_schema_1_reads_with_nothing_staged() {
        let site = r#"{"function":"f","width":1,"height":1,"src_step":null,"dst_step":null,"stream":"legacy_default","stream_non_blocking":null,"declared_flags":0,"action":{"rewritten":{"leak":true,"race":false}},"calls":3}"#;
        let s: ShieldSite = serde_json::from_str(site).unwrap();
        assert_eq!(
            s.action,
            ShieldAction::Rewritten {
                leak: true,
                race: false,
                wrong: false
            }
        );
        assert_eq!(s.shield_ns, 0);
    }

    #[test]
    fn the_plan_reads_back_what_was_written() {
        let plan = ShieldPlan {
            schema_version: SHIELD_SCHEMA_VERSION,
            hazards: vec![Hazard::Leak],
            knowledge: vec![ShieldKnowledge {
                npp_version: "13.0.1.2".into(),
                gpu: "H100".into(),
                runs: 1,
                functions: vec![ShieldFunction {
                    symbol: "nppiConvert_8u32f_C1R_Ctx".into(),
                    src_bytes_per_pixel: 1,
                    dst_bytes_per_pixel: 4,
                    leak: HazardRule::When(vec![ShieldTest {
                        condition: Condition::StreamIn(vec![StreamKind::Blocking]),
                        holds: true,
                    }]),
                    race: HazardRule::Unknown("not measured".into()),
                    wrong: HazardRule::When(vec![ShieldTest {
                        condition: Condition::SrcRowStartsIn(9, 11),
                        holds: true,
                    }]),
                }],
            }],
        };
        let text = serde_json::to_string(&plan).unwrap();
        assert_eq!(serde_json::from_str::<ShieldPlan>(&text).unwrap(), plan);
    }
}
