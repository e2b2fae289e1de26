//! The changes `predict` lists beside an answer: for a leak, the configurations the same
//! evidence says end it (judged on the race too); for wrong pixels, the stride changes it says
//! compute right, with their cost.

use nppbench_analysis::LeakClass;
use nppbench_analysis::evidence::{Evidence, FunctionRules};
use nppbench_analysis::predict::{Answer, answer, answer_race, answer_wrong, assess, query};
use nppbench_analysis::rules::Case;
use nppbench_model::{ContextFill, Threading};

/// A change of configuration: its words, and the scenario changed.
type Change = (&'static str, fn(&Case) -> Case);

/// The changes of configuration that end a leak, each answered from the same evidence.
const FIXES: [Change; 3] = [
    (
        "declare cudaStreamNonBlocking in nStreamFlags (context declared_non_blocking)",
        |q| Case {
            context: ContextFill::DeclaredNonBlocking,
            ..q.clone()
        },
    ),
    ("call from a fixed pool of 4 threads (pool:4)", |q| Case {
        threading: Threading::Pool(4),
        ..q.clone()
    }),
    ("call from one thread (single)", |q| Case {
        threading: Threading::Single,
        ..q.clone()
    }),
];

/// For a leak: each change of [`FIXES`] that the evidence says ends it, with its class and how
/// that is known.
pub(super) fn fixes(q: &Case, a: &Answer, evidence: &Evidence, rules: &[FunctionRules]) -> String {
    if a.class != Some(LeakClass::Leak) {
        return String::new();
    }
    let mut out = Vec::new();
    for (what, change) in FIXES {
        let c = change(q);
        // Asked as a query of its own: its id is the changed scenario's.
        let fixed = query(c.primitive, c.geometry, c.stream, c.context, c.threading);
        let answer = answer(evidence, rules, &fixed);
        let Some(class) = answer.class.filter(|c| *c != LeakClass::Leak) else {
            continue;
        };
        let how = assess(evidence, rules, &fixed, &answer).confidence;
        // Judged on both hazards: a change that ends the leak may leave the race.
        let race = match answer_race(evidence, rules, &fixed).races {
            Some(true) => ", still races",
            Some(false) => ", ordered",
            None => ", race not measured",
        };
        out.push(format!("{what}: {}{race} ({})", class.as_str(), how.as_str()));
    }
    out.join("; ")
}

/// The changes of a source stride that end wrong pixels: padded to a multiple of 16 bytes (every
/// row then starts on a 16-byte boundary), or the source copied to a buffer whose stride is a
/// multiple of 512 bytes before the call (as the aligned twin computes it).
const WRONG_FIXES: [(&str, u32); 2] = [
    ("pad the source stride to a multiple of 16 bytes", 16),
    (
        "copy the source to a buffer of stride a multiple of 512 bytes before the call",
        512,
    ),
];

/// The source images a call of `p` reads: its row's count, or one for a function known from its
/// headers alone (a source stride was asked about).
fn sources(p: nppbench_model::Primitive) -> u8 {
    if p.is_generated() { 1 } else { p.row().sources }
}

/// For wrong pixels: each change of [`WRONG_FIXES`] that the evidence says computes them right,
/// with its basis and its cost (memory or a copy, by arithmetic: neither is timed).
pub(super) fn wrong_fixes(q: &Case, evidence: &Evidence, rules: &[FunctionRules]) -> String {
    let g = q.geometry;
    let row_bytes = u64::from(g.width) * q.primitive.src_bytes_per_pixel();
    let mut out = Vec::new();
    for (i, (what, multiple)) in WRONG_FIXES.iter().enumerate() {
        let stride = g.src_stride.next_multiple_of(*multiple);
        if stride == g.src_stride || sources(q.primitive) == 0 {
            continue;
        }
        let changed = nppbench_model::Geometry {
            src_stride: stride,
            ..g
        };
        let fixed = query(q.primitive, changed, q.stream, q.context, q.threading);
        let w = answer_wrong(evidence, rules, &fixed);
        if w.wrong != Some(false) {
            continue;
        }
        let sources = u64::from(sources(q.primitive));
        let cost = if i == 0 {
            format!(
                "{} more bytes of source memory, no extra work",
                u64::from(stride - g.src_stride) * u64::from(g.height) * sources
            )
        } else {
            format!(
                "a device-to-device copy of {} bytes on the caller's stream a call",
                row_bytes * u64::from(g.height) * sources
            )
        };
        out.push(format!(
            "{what} ({} → {stride}): right ({}); costs {cost}",
            g.src_stride,
            w.basis.as_str()
        ));
    }
    out.join("; ")
}
