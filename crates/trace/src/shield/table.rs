//! The plan compiled for the call path: per NPP version, per interposed symbol (by the index a
//! `Site` carries), the leak, race and wrong-pixel rules as a few integer tests. Built once at start from
//! [`ShieldPlan`] (the only place here that allocates), then only read.

use nppbench_model::{Condition, ContextFill, Hazard, HazardRule, ShieldPlan, StreamKind};

use crate::recorder::interposed::SYMBOLS;

/// What a test compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    SrcRowBytesMultiple,
    DstRowBytesMultiple,
    WidthMultiple,
    SrcStepMultiple,
    DstStepMultiple,
    SrcRowBytesAtLeast,
    DstRowBytesAtLeast,
    WidthAtLeast,
    HeightAtLeast,
    PixelsAtLeast,
    DeclaresNonBlocking,
    /// `arg` is a mask of [`stream_bit`]s.
    StreamIn,
    /// `arg` is a mask of [`context_bit`]s.
    ContextIn,
    /// `arg` is the lowest offset, `arg >> 8` the highest, past a multiple of 16 bytes.
    SrcRowStartsIn,
}

/// One test: `op` against `arg`, expected to give `holds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Test {
    pub(crate) op: Op,
    pub(crate) arg: u64,
    pub(crate) holds: bool,
}

/// A compiled rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rule {
    Never,
    Always,
    When(Box<[Test]>),
    Unknown,
}

impl Rule {
    /// Whether a test of the rule reads the stream's kind or the context's filling (which need
    /// the stream's real flags).
    pub(crate) fn needs_stream(&self) -> bool {
        matches!(self, Rule::When(t) if t.iter().any(|t| matches!(t.op, Op::StreamIn | Op::ContextIn)))
    }
}

/// One function's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) src_bytes_per_pixel: u64,
    pub(crate) dst_bytes_per_pixel: u64,
    pub(crate) leak: Rule,
    pub(crate) race: Rule,
    pub(crate) wrong: Rule,
    pub(crate) needs_stream: bool,
}

/// One NPP version's rules.
#[derive(Debug, Clone)]
pub(crate) struct Version {
    pub(crate) name: String,
    /// major.minor.build, as `nppGetLibVersion` gives them; `None` where the name has fewer.
    pub(crate) numbers: Option<[u32; 3]>,
    /// By symbol index; `None`: the atlas does not know the function.
    pub(crate) functions: Box<[Option<Entry>]>,
}

/// The plan, compiled.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    pub(crate) leak: bool,
    pub(crate) race: bool,
    pub(crate) wrong: bool,
    pub(crate) versions: Vec<Version>,
}

/// The bit of a stream kind in a `StreamIn` mask.
pub(crate) fn stream_bit(k: StreamKind) -> u64 {
    1 << match k {
        StreamKind::LegacyDefault => 0,
        StreamKind::PerThreadDefault => 1,
        StreamKind::Blocking => 2,
        StreamKind::NonBlocking => 3,
    }
}

/// The bit of a context filling in a `ContextIn` mask.
pub(crate) fn context_bit(c: ContextFill) -> u64 {
    1 << match c {
        ContextFill::FromStream => 0,
        ContextFill::Zeroed => 1,
        ContextFill::NppGetStreamContext => 2,
        ContextFill::DeclaredBlocking => 3,
        ContextFill::DeclaredNonBlocking => 4,
    }
}

fn test(c: &Condition, holds: bool) -> Test {
    let (op, arg) = match c {
        Condition::SrcRowBytesMultiple(m) => (Op::SrcRowBytesMultiple, u64::from(*m)),
        Condition::DstRowBytesMultiple(m) => (Op::DstRowBytesMultiple, u64::from(*m)),
        Condition::WidthMultiple(m) => (Op::WidthMultiple, u64::from(*m)),
        Condition::SrcStepMultiple(m) => (Op::SrcStepMultiple, u64::from(*m)),
        Condition::DstStepMultiple(m) => (Op::DstStepMultiple, u64::from(*m)),
        Condition::SrcRowBytesAtLeast(k) => (Op::SrcRowBytesAtLeast, *k),
        Condition::DstRowBytesAtLeast(k) => (Op::DstRowBytesAtLeast, *k),
        Condition::WidthAtLeast(k) => (Op::WidthAtLeast, *k),
        Condition::HeightAtLeast(k) => (Op::HeightAtLeast, *k),
        Condition::PixelsAtLeast(k) => (Op::PixelsAtLeast, *k),
        Condition::DeclaresNonBlocking => (Op::DeclaresNonBlocking, 0),
        Condition::StreamIn(set) => (Op::StreamIn, set.iter().map(|k| stream_bit(*k)).sum()),
        Condition::ContextIn(set) => (Op::ContextIn, set.iter().map(|c| context_bit(*c)).sum()),
        // Offsets past 15 never occur: clamped, such a test holds for no row.
        Condition::SrcRowStartsIn(lo, hi) => (
            Op::SrcRowStartsIn,
            u64::from((*lo).min(16)) | (u64::from((*hi).min(16)) << 8),
        ),
    };
    // A modulus of 0 would divide by zero: no rule has one, and such a test never holds.
    let arg = match op {
        Op::SrcRowBytesMultiple
        | Op::DstRowBytesMultiple
        | Op::WidthMultiple
        | Op::SrcStepMultiple
        | Op::DstStepMultiple => arg.max(1),
        _ => arg,
    };
    Test { op, arg, holds }
}

fn rule(r: &HazardRule, on: bool) -> Rule {
    match r {
        _ if !on => Rule::Never,
        HazardRule::Never => Rule::Never,
        HazardRule::Always => Rule::Always,
        HazardRule::When(tests) => Rule::When(tests.iter().map(|t| test(&t.condition, t.holds)).collect()),
        HazardRule::Unknown(_) => Rule::Unknown,
    }
}

/// The first three numbers of a version name (`13.0.1.2` → 13, 0, 1).
pub(crate) fn numbers(name: &str) -> Option<[u32; 3]> {
    let mut it = name.split('.').map(str::parse::<u32>);
    Some([it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?])
}

/// Compiles `plan`: each function found among the interposed symbols (others are ignored: this
/// build does not interpose them).
pub(crate) fn compile(plan: &ShieldPlan) -> Table {
    let leak = plan.hazards.contains(&Hazard::Leak);
    let race = plan.hazards.contains(&Hazard::Race);
    let wrong = plan.hazards.contains(&Hazard::Wrong);
    let versions = plan
        .knowledge
        .iter()
        .map(|k| {
            let mut functions: Vec<Option<Entry>> = vec![None; SYMBOLS.len()];
            for f in &k.functions {
                let Some(i) = SYMBOLS.iter().position(|s| *s == f.symbol) else {
                    continue;
                };
                if functions[i].is_some() {
                    continue;
                }
                let (leak, race, wrong) = (rule(&f.leak, leak), rule(&f.race, race), rule(&f.wrong, wrong));
                functions[i] = Some(Entry {
                    src_bytes_per_pixel: u64::from(f.src_bytes_per_pixel),
                    dst_bytes_per_pixel: u64::from(f.dst_bytes_per_pixel),
                    needs_stream: leak.needs_stream() || race.needs_stream() || wrong.needs_stream(),
                    leak,
                    race,
                    wrong,
                });
            }
            Version {
                name: k.npp_version.clone(),
                numbers: numbers(&k.npp_version),
                functions: functions.into_boxed_slice(),
            }
        })
        .collect();
    Table {
        leak,
        race,
        wrong,
        versions,
    }
}
