//! A made-up child that designs its functions in batches as `catalogue/design/batch.rs` does and
//! says what that child says, failing at chosen steps: run by the parent's restarts
//! ([`next`]) until its share is done, whatever the batch size and wherever it fails, every
//! shape gets exactly one line, and every fault costs one child.

use std::collections::BTreeMap;

use super::super::*;
use super::POINT;

/// A made-up function's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// At aligned steps: called and asked whole in phase A.
    Aligned,
    /// At unaligned steps: called in phase B, asked in phase C.
    Unaligned,
    /// At unaligned steps, refused by NPP: its line written at its call, in phase B.
    Refused,
}

/// A made-up function: its shapes in its design's order, and whether it has a throughput point;
/// or none planned (one line, shape 0, saying why).
#[derive(Debug, Clone)]
struct Function {
    shapes: Vec<Kind>,
    point: bool,
    planned: bool,
}

/// A step of a made-up child.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// Function `i` begun (its probe planned, say).
    Begin(usize),
    /// The call of shape `k` (or of the point) of function `i`: the whole shape where aligned.
    Call(usize, usize),
    /// The questions of an unaligned shape.
    Ask(usize, usize),
}

/// How a step fails, each time it is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// The child is killed in it.
    Killed,
    /// The context is dead after it, its line written.
    ContextDead,
}

/// A line of the share, by who wrote it: a child, of a shape; the parent, of the shape a child
/// died in or of the rest of the function it died in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Line {
    Child(usize, usize),
    Parent(usize, Option<usize>),
}

struct Child<'a> {
    functions: &'a [Function],
    faults: &'a BTreeMap<Step, Fault>,
    /// Killed once it has said this many lines (a signal from outside).
    killed_after: Option<usize>,
    said: Vec<String>,
    lines: &'a mut Vec<Line>,
    /// The calls made alone (phase B), of every child.
    alone: &'a mut Vec<(usize, usize)>,
}

/// How a made-up child ended early.
type Stopped = Result<(), Ended>;

impl Child<'_> {
    fn say(&mut self, what: String) -> Stopped {
        self.said.push(what);
        match Some(self.said.len()) == self.killed_after {
            true => Err(Ended::Died),
            false => Ok(()),
        }
    }

    fn wrote(&mut self, i: usize, k: usize) -> Stopped {
        self.lines.push(Line::Child(i, k));
        self.say(format!("wrote {i} {k}"))
    }

    /// A step of shape `k` of function `i`, said; its line written after it where `writes`.
    fn step(&mut self, step: Step, writes: bool) -> Stopped {
        let (Step::Call(i, k) | Step::Ask(i, k)) = step else {
            unreachable!("a shape's step")
        };
        self.say(format!("at {i} {k}"))?;
        match self.faults.get(&step) {
            Some(Fault::Killed) => Err(Ended::Died),
            Some(Fault::ContextDead) => {
                self.wrote(i, k)?;
                Err(Ended::ContextDead)
            }
            None if writes => self.wrote(i, k),
            None => Ok(()),
        }
    }

    /// The functions `start.from..to` in batches of `g`, in batch.rs's three phases.
    fn share(&mut self, start: &Start, to: usize, g: usize) -> Stopped {
        let functions = self.functions;
        let skips = |i: usize, k: usize| start.lost.contains(&i) || start.done.contains(&(i, k));
        let alive = |i: usize, k: usize| start.alive.contains(&(i, k));
        let todo: Vec<usize> = (start.from..to).filter(|i| !start.lost.contains(i)).collect();
        for batch in todo.chunks(g) {
            let mut phase_b = Vec::new();
            for &i in batch {
                self.say(format!("begin {i}"))?;
                if self.faults.get(&Step::Begin(i)) == Some(&Fault::Killed) {
                    return Err(Ended::Died);
                }
                let f = &functions[i];
                if !f.planned {
                    if !skips(i, 0) {
                        self.wrote(i, 0)?;
                    }
                    continue;
                }
                for (k, kind) in f.shapes.iter().enumerate().filter(|(k, _)| !skips(i, *k)) {
                    match kind {
                        Kind::Aligned => self.step(Step::Call(i, k), true)?,
                        // Its call lived before: called and asked whole, in a shared turn.
                        Kind::Unaligned if alive(i, k) => self.step(Step::Ask(i, k), true)?,
                        _ => phase_b.push((i, k, *kind)),
                    }
                }
                if f.point && !skips(i, POINT) {
                    phase_b.push((i, POINT, Kind::Refused));
                }
            }
            let mut kept = Vec::new();
            for (i, k, kind) in phase_b {
                self.alone.push((i, k));
                self.step(Step::Call(i, k), kind == Kind::Refused)?;
                if kind == Kind::Unaligned {
                    self.say(format!("alive {i} {k}"))?;
                    kept.push((i, k));
                }
            }
            for (i, k) in kept {
                self.step(Step::Ask(i, k), true)?;
            }
            for &i in batch {
                self.say(format!("done {i}"))?;
            }
        }
        Ok(())
    }
}

/// The lines of a share of `functions` designed in batches of `g` with `faults`, the first child
/// killed after it said `killed_after` lines, its children restarted as the parent restarts
/// them; and how many children it took. No shape's call is made alone twice: a restarted child
/// calls those its predecessors lived through in shared turns.
fn run(
    functions: &[Function],
    g: usize,
    faults: &BTreeMap<Step, Fault>,
    killed_after: Option<usize>,
) -> (Vec<Line>, usize) {
    let (mut lines, mut alone) = (Vec::new(), Vec::new());
    let (mut start, mut children, mut killed_after) = (Start::at(0), 0, killed_after);
    while start.from < functions.len() {
        children += 1;
        assert!(children <= 100, "restarts without end at {start:?}: {lines:?}");
        let mut child = Child {
            functions,
            faults,
            killed_after: killed_after.take(),
            said: Vec::new(),
            lines: &mut lines,
            alone: &mut alone,
        };
        let ended = child.share(&start, functions.len(), g).err().unwrap_or(Ended::Success);
        let mut progress = Progress::default();
        child.said.iter().for_each(|l| progress.read(l));
        match next(&progress, ended, &start, true) {
            Next::Finished => break,
            Next::NotStarted => panic!("a made-up child always begins: {start:?}"),
            Next::Restart { start: s, lost } => {
                lines.extend(lost.map(|(i, k)| Line::Parent(i, k)));
                start = s;
            }
        }
    }
    let mut once = alone.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), alone.len(), "a call made alone twice: {alone:?}");
    (lines, children)
}

/// Every shape (and point) of every function has exactly one line, a child's or the parent's, or
/// none where the parent wrote the line of the rest of its function, at most once.
fn one_line_a_shape(functions: &[Function], lines: &[Line], why: &str) {
    for (i, f) in functions.iter().enumerate() {
        let rest = lines.iter().filter(|l| **l == Line::Parent(i, None)).count();
        assert!(rest <= 1, "{why}: function {i}'s rest lost twice: {lines:?}");
        let shapes: Vec<usize> = match f.planned {
            true => (0..f.shapes.len()).chain(f.point.then_some(POINT)).collect(),
            false => vec![0],
        };
        for k in shapes {
            let n = lines
                .iter()
                .filter(|l| **l == Line::Child(i, k) || **l == Line::Parent(i, Some(k)))
                .count();
            assert!(
                n == 1 || (n == 0 && rest == 1),
                "{why}: shape {k} of function {i} has {n} lines: {lines:?}"
            );
        }
    }
}

/// Ten made-up functions: aligned shapes first or none, unaligned ones interleaved (a
/// stranger's), one not planned, one refused by NPP at an unaligned step, with and without a
/// point.
fn functions() -> Vec<Function> {
    use Kind::{Aligned as A, Refused as R, Unaligned as U};
    let f = |shapes: &[Kind], point| Function {
        shapes: shapes.to_vec(),
        point,
        planned: true,
    };
    vec![
        f(&[A, A, U, U], true),
        f(&[A, U, R, U], true),
        Function {
            shapes: Vec::new(),
            point: false,
            planned: false,
        },
        f(&[A, A], false),
        f(&[U, U, U], true),
        f(&[A, U], true),
        f(&[A, A, U], true),
        f(&[A], true),
        f(&[U, A, U], false),
        f(&[A, U, U], true),
    ]
}

/// Steps that fail each time: contexts dead at unaligned calls (function 1's while function 0's
/// calls are kept unasked), at a whole aligned shape, at a point, at questions; children killed in
/// a call, in questions, and in function 6 before its first shape (its rest lost).
fn faults() -> BTreeMap<Step, Fault> {
    use Fault::{ContextDead as Dead, Killed};
    use Step::{Ask, Begin, Call};
    [
        (Call(1, 3), Dead),
        (Call(4, 1), Killed),
        (Ask(0, 3), Dead),
        (Begin(6), Killed),
        (Call(5, 0), Dead),
        (Call(9, POINT), Dead),
        (Call(8, 0), Dead),
        (Ask(9, 2), Killed),
    ]
    .into()
}

/// Whatever the batch size, each step that fails costs one child and its shape (function 6 its
/// rest), and every other shape gets its line once.
#[test]
fn every_fault_in_a_batch_costs_one_child_and_every_shape_gets_one_line() {
    let (functions, faults) = (functions(), faults());
    for g in [1, 2, 3, 4, 8, 16] {
        let (lines, children) = run(&functions, g, &faults, None);
        one_line_a_shape(&functions, &lines, &format!("batches of {g}"));
        assert_eq!(children, 1 + faults.len(), "batches of {g}: {lines:?}");
        let mut parents: Vec<Line> = lines
            .iter()
            .copied()
            .filter(|l| matches!(l, Line::Parent(..)))
            .collect();
        parents.sort();
        let lost = [
            Line::Parent(4, Some(1)),
            Line::Parent(6, None),
            Line::Parent(9, Some(2)),
        ];
        assert_eq!(parents, lost, "batches of {g}");
    }
}

/// A child killed after any line it says (in any phase of any batch, with or without faults
/// besides): every shape still gets one line, and the kill costs one line of the parent's at most.
#[test]
fn a_child_killed_after_any_line_costs_at_most_one_line_and_every_shape_gets_one() {
    let functions = functions();
    for faults in [BTreeMap::new(), faults()] {
        for g in [1, 3, 8] {
            let (mut lines, mut alone) = (Vec::new(), Vec::new());
            let mut clean = Child {
                functions: &functions,
                faults: &faults,
                killed_after: None,
                said: Vec::new(),
                lines: &mut lines,
                alone: &mut alone,
            };
            let _ = clean.share(&Start::at(0), functions.len(), g);
            let said = clean.said.len();
            let (without, _) = run(&functions, g, &faults, None);
            let parents = |lines: &[Line]| lines.iter().filter(|l| matches!(l, Line::Parent(..))).count();
            for n in 1..=said {
                let why = format!("batches of {g}, {} faults, killed after line {n}", faults.len());
                let (lines, _) = run(&functions, g, &faults, Some(n));
                one_line_a_shape(&functions, &lines, &why);
                assert!(parents(&lines) <= parents(&without) + 1, "{why}: {lines:?}");
            }
        }
    }
}
