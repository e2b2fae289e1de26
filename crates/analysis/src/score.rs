//! How right the rules are: their class (leak, bounded, flat) against the measured class of
//! scenarios they were not fitted on, in all, by width octave and by function. The atlas's own
//! held-out scenarios are scored from the rules alone; another run's scenarios (a stranger's
//! draw, `nppbench predict --against`) as `predict` answers them.

use nppbench_model::Primitive;
use nppbench_stats::LeakClass;

use crate::evidence::{Evidence, FunctionRules};
use crate::predict::{answer, query};
use crate::rules::Case;

/// Right, wrong and unanswered scenarios.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub right: usize,
    pub wrong: usize,
    /// No class given: nothing measured of the function, or a measured scenario not stable.
    pub unknown: usize,
}

impl Tally {
    pub fn total(&self) -> usize {
        self.right + self.wrong + self.unknown
    }

    fn add(&mut self, predicted: Option<LeakClass>, measured: LeakClass) {
        match predicted {
            Some(p) if p == measured => self.right += 1,
            Some(_) => self.wrong += 1,
            None => self.unknown += 1,
        }
    }

    /// "412 of 499 right (82.6%), 1 unknown".
    pub fn words(&self) -> String {
        let total = self.total();
        let pct = if total == 0 {
            0.0
        } else {
            100.0 * self.right as f64 / total as f64
        };
        let mut s = format!("{} of {total} right ({pct:.1}%)", self.right);
        if self.unknown > 0 {
            s.push_str(&format!(", {} unknown", self.unknown));
        }
        s
    }
}

/// A scenario the rules got wrong, or could not answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Miss {
    pub id: String,
    pub measured: LeakClass,
    pub predicted: Option<LeakClass>,
}

/// A score in all, by width octave (`octave_label`) and by function: of the class (leak,
/// bounded, flat), and of whether it leaks at all (bounded and flat alike), which is what the
/// leak rule says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Score {
    pub total: Tally,
    pub leak_total: Tally,
    /// Races or not, where the race was measured (`Leak` standing for races).
    pub race_total: Tally,
    /// Wrong pixels (or a fault) or not, with every call synchronised, where the output was judged
    /// (`Leak` standing for wrong).
    pub wrong_total: Tally,
    /// As `wrong_total`, by the source stride's remainder modulo 4, in its order: the classes
    /// the wrong-pixel rule must hold in each.
    pub wrong_by_stride_mod4: Vec<(u32, Tally)>,
    /// (k, tally) for widths in [2^k, 2^(k+1)), in k's order.
    pub by_octave: Vec<(u32, Tally)>,
    /// As `by_octave`, of leaking or not.
    pub leak_by_octave: Vec<(u32, Tally)>,
    /// In catalogue order.
    pub by_function: Vec<(Primitive, Tally)>,
    pub misses: Vec<Miss>,
}

/// "1", "2–3", "4–7", … for octave k.
pub fn octave_label(k: u32) -> String {
    match k {
        0 => "1".to_owned(),
        k => format!("{}–{}", 1u64 << k, (1u64 << (k + 1)) - 1),
    }
}

/// Adds to the tally of `k` in `list`, kept in `k`'s order.
fn add_to<K: Ord + Copy>(list: &mut Vec<(K, Tally)>, k: K, predicted: Option<LeakClass>, measured: LeakClass) {
    match list.iter_mut().find(|(o, _)| *o == k) {
        Some((_, t)) => t.add(predicted, measured),
        None => {
            let mut t = Tally::default();
            t.add(predicted, measured);
            list.push((k, t));
            list.sort_by_key(|(o, _)| *o);
        }
    }
}

/// Leaking or not, as a class: bounded and flat are both "not".
fn leaks(c: LeakClass) -> LeakClass {
    if c == LeakClass::Leak {
        LeakClass::Leak
    } else {
        LeakClass::Flat
    }
}

impl Score {
    fn add(&mut self, c: &Case, predicted: Option<LeakClass>) {
        self.total.add(predicted, c.class);
        self.leak_total.add(predicted.map(leaks), leaks(c.class));
        let k = c.geometry.width.max(1).ilog2();
        add_to(&mut self.by_octave, k, predicted, c.class);
        add_to(&mut self.leak_by_octave, k, predicted.map(leaks), leaks(c.class));
        add_to(&mut self.by_function, c.primitive, predicted, c.class);
        if predicted != Some(c.class) {
            self.misses.push(Miss {
                id: c.id.clone(),
                measured: c.class,
                predicted,
            });
        }
    }

    /// Adds the race of `c`, where it was measured, against what `predicted` says.
    fn add_race(&mut self, c: &Case, predicted: impl FnOnce() -> Option<bool>) {
        if let Some(measured) = c.race {
            self.race_total.add(predicted().map(as_class), as_class(measured));
        }
    }

    /// Adds whether `c` computed wrong pixels, where its output was judged, against what
    /// `predicted` says.
    fn add_wrong(&mut self, c: &Case, predicted: impl FnOnce() -> Option<bool>) {
        if let Some(measured) = c.wrong {
            let predicted = predicted().map(as_class);
            self.wrong_total.add(predicted, as_class(measured));
            add_to(
                &mut self.wrong_by_stride_mod4,
                stride_mod4(c),
                predicted,
                as_class(measured),
            );
        }
    }

    /// The score of one function, if any of its scenarios was scored.
    pub fn of(&self, p: Primitive) -> Option<Tally> {
        self.by_function.iter().find(|(q, _)| *q == p).map(|(_, t)| *t)
    }
}

/// The rules' class against every held-out scenario of `evidence` (the rules never saw them).
pub fn held_out(evidence: &Evidence, rules: &[FunctionRules]) -> Score {
    let mut score = Score::default();
    for c in evidence.cases.iter().filter(|c| c.held_out) {
        let f = rules.iter().find(|f| f.primitive == c.primitive);
        score.add(c, f.map(|f| f.predict(c)));
        score.add_race(c, || f.and_then(|f| f.predict_race(c)));
    }
    for c in evidence.outputs.iter().filter(|c| c.held_out) {
        let f = rules.iter().find(|f| f.primitive == c.primitive);
        score.add_wrong(c, || f.and_then(|f| f.predict_wrong(c)));
    }
    score
}

/// `predict`'s answers from `evidence` against the measured `truth` (another run's cases).
pub fn against(evidence: &Evidence, rules: &[FunctionRules], truth: &[Case]) -> Score {
    let mut score = Score::default();
    for c in truth {
        let q = query(c.primitive, c.geometry, c.stream, c.context, c.threading);
        score.add(c, answer(evidence, rules, &q).class);
        score.add_race(c, || crate::predict::answer_race(evidence, rules, &q).races);
        score.add_wrong(c, || crate::predict::answer_wrong(evidence, rules, &q).wrong);
    }
    score
}

/// The stride the wrong-pixel hazard follows, modulo 4: the source's (Set's one stride, which
/// the geometry keeps there too).
fn stride_mod4(c: &Case) -> u32 {
    c.geometry.src_stride % 4
}

/// Races as the class a tally counts: `Leak` for races, `Flat` for ordered.
fn as_class(races: bool) -> LeakClass {
    if races { LeakClass::Leak } else { LeakClass::Flat }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octaves_are_labelled_by_their_widths() {
        assert_eq!(octave_label(0), "1");
        assert_eq!(octave_label(1), "2–3");
        assert_eq!(octave_label(11), "2048–4095");
    }

    #[test]
    fn a_tally_counts_unknown_apart() {
        let mut t = Tally::default();
        t.add(Some(LeakClass::Leak), LeakClass::Leak);
        t.add(Some(LeakClass::Flat), LeakClass::Leak);
        t.add(None, LeakClass::Flat);
        assert_eq!((t.right, t.wrong, t.unknown, t.total()), (1, 1, 1, 3));
        assert_eq!(t.words(), "1 of 3 right (33.3%), 1 unknown");
    }
}
