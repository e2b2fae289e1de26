//! The race's part of the verdict: where it never raced, and what a racing configuration's output
//! looks like.

use nppbench_model::{ContextFill, StreamKind};

use super::{Group, RaceExample, never_in, stream_is};
use crate::MemoryAnalysis;
use crate::memory::RaceClass;

/// The stream kinds and context fillings among `ordered` (the scenarios whose race was measured)
/// that never raced.
pub(super) fn never_raced(ordered: &[&MemoryAnalysis<'_>]) -> Vec<String> {
    let races = |m: &MemoryAnalysis<'_>| m.race == RaceClass::Races;
    let mut never = never_in(
        ordered,
        races,
        StreamKind::ALL.map(|k| (format!("the {k} stream"), stream_is(k))),
    );
    never.extend(never_in(
        ordered,
        races,
        ContextFill::ALL.map(|c| {
            let group: Group = Box::new(move |m| m.record.scenario.context == c);
            (format!("a context filled {c}"), group)
        }),
    ));
    never
}

/// What a user of the largest racing image among `racing` sees.
pub(super) fn example(racing: &[&MemoryAnalysis<'_>]) -> Option<RaceExample> {
    racing
        .iter()
        .max_by_key(|m| m.record.scenario.geometry.pixels())
        .and_then(|m| {
            let s = &m.record.scenario;
            let o = m.rounds()?;
            Some(RaceExample {
                label: format!("{} {} · {} · {}", s.primitive, s.geometry.label(), s.stream, s.context),
                width: s.geometry.width,
                columns: o.columns?,
                rows: o.rows?,
                wrong_rounds: o.wrong_rounds,
                rounds: o.rounds,
            })
        })
}
