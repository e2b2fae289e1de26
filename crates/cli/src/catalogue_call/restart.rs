//! Where `call-catalogue`'s next child starts after one ended: read from what the child said on
//! its stdout (`begin i`, `at i k`, `wrote i k`, `done i`) and how it ended. With shapes (`--design`,
//! `--stranger`), a child whose context died at a shape, or which died itself, is followed by one
//! that starts in the same function and leaves out the shapes written, so that one bad shape
//! costs that shape, not the rest of its function's design. Lines come out of order (a run of
//! unaligned shapes is called first and asked after), so the shapes done are a set.

use std::collections::BTreeSet;

/// What a child said of its progress.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Progress {
    /// The last function it began, and whether its lines were all written.
    pub(crate) last: Option<(usize, bool)>,
    /// The shapes of that function whose lines it wrote.
    pub(crate) written: BTreeSet<usize>,
    /// The step it last said it was at (`at i k`), unless its line followed.
    pub(crate) in_flight: Option<usize>,
}

impl Progress {
    /// Takes one line of the child's stdout into account (others are ignored).
    pub(crate) fn read(&mut self, line: &str) {
        let mut words = line.split(' ');
        let (word, i) = (words.next(), words.next().and_then(|i| i.parse::<usize>().ok()));
        let current = self.last.map(|l| l.0);
        match (word, i) {
            (Some("begin"), Some(i)) => {
                *self = Self {
                    last: Some((i, false)),
                    ..Self::default()
                }
            }
            (Some("done"), Some(i)) if Some(i) == current => self.last = Some((i, true)),
            (Some(said @ ("wrote" | "at")), Some(i)) if Some(i) == current => {
                if let Some(k) = words.next().and_then(|k| k.parse::<usize>().ok()) {
                    if said == "at" {
                        self.in_flight = Some(k);
                    } else {
                        self.written.insert(k);
                        if self.in_flight == Some(k) {
                            self.in_flight = None;
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    Success,
    /// Exit 3: the context died at the last shape or function whose line it wrote.
    ContextDead,
    /// Killed by a signal, or another failure: the function (and shape) it was in got no line.
    Died,
}

/// Where a child starts: at function `from`, leaving out that function's shapes before `first`
/// and those in `done`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Start {
    pub(crate) from: usize,
    pub(crate) first: usize,
    pub(crate) done: BTreeSet<usize>,
}

impl Start {
    pub(crate) fn at(from: usize) -> Start {
        Start {
            from,
            ..Start::default()
        }
    }
}

/// What the parent does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// The share is done.
    Finished,
    /// The child ended before its first function (no CUDA context, say): start it again.
    NotStarted,
    /// Start a child so, after writing a line for `lost`: the function the child died in, and
    /// the shape it was at where the calls have shapes (none where it died outside them).
    Restart {
        start: Start,
        lost: Option<(usize, Option<usize>)>,
    },
}

/// Where the next child starts, after one started at `start`, said `progress` and ended so.
pub(crate) fn next(progress: &Progress, ended: Ended, start: &Start, shapes: bool) -> Next {
    if ended == Ended::Success {
        return Next::Finished;
    }
    let Some((i, done)) = progress.last else {
        return Next::NotStarted;
    };
    if done || !shapes {
        return Next::Restart {
            start: Start::at(i + 1),
            lost: (!done).then_some((i, None)),
        };
    }
    let mut s = if i == start.from { start.clone() } else { Start::at(i) };
    s.done.extend(&progress.written);
    let lost = match (ended, progress.in_flight) {
        // The shape whose call left the context dead has its line.
        (Ended::ContextDead, None) if !progress.written.is_empty() => None,
        (_, Some(k)) => Some(k),
        // It ended outside every shape: the rest of the function is lost with it.
        _ => {
            return Next::Restart {
                start: Start::at(i + 1),
                lost: Some((i, None)),
            };
        }
    };
    s.done.extend(lost);
    while s.done.remove(&s.first) {
        s.first += 1;
    }
    Next::Restart {
        start: s,
        lost: lost.map(|k| (i, Some(k))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(lines: &[&str]) -> Progress {
        let mut p = Progress::default();
        lines.iter().for_each(|l| p.read(l));
        p
    }

    fn start(from: usize, first: usize, done: &[usize]) -> Start {
        Start {
            from,
            first,
            done: done.iter().copied().collect(),
        }
    }

    #[test]
    fn a_function_done_is_followed_by_the_next() {
        let p = said(&["begin 4", "at 4 0", "wrote 4 0", "done 4"]);
        let next_one = Next::Restart {
            start: Start::at(5),
            lost: None,
        };
        assert_eq!(next(&p, Ended::ContextDead, &Start::at(4), true), next_one);
        assert_eq!(next(&p, Ended::Success, &Start::at(4), true), Next::Finished);
        assert_eq!(
            next(&Progress::default(), Ended::Died, &Start::at(4), true),
            Next::NotStarted
        );
    }

    /// A context dead at shape 2 of function 9 (its line written): the next child starts at its
    /// shape 3, and no line is written for it.
    #[test]
    fn a_dead_context_costs_one_shape() {
        let p = said(&[
            "begin 8",
            "done 8",
            "begin 9",
            "at 9 0",
            "wrote 9 0",
            "at 9 1",
            "wrote 9 1",
            "at 9 2",
            "wrote 9 2",
        ]);
        assert_eq!(
            next(&p, Ended::ContextDead, &Start::at(8), true),
            Next::Restart {
                start: start(9, 3, &[]),
                lost: None
            }
        );
    }

    /// A child started at shape 4; a run of unaligned shapes 5 to 8, each called (said `at`), the call of 7 leaving the
    /// context dead: 7's line is written before 5's and 6's, which the next child calls again, and
    /// so on until every shape is done.
    #[test]
    fn shapes_written_out_of_order_are_left_out_and_the_others_called_again() {
        let p = said(&[
            "begin 3",
            "at 3 4",
            "wrote 3 4",
            "at 3 5",
            "at 3 6",
            "at 3 7",
            "wrote 3 7",
        ]);
        let s = start(3, 5, &[7]);
        assert_eq!(
            next(&p, Ended::ContextDead, &start(3, 4, &[]), true),
            Next::Restart {
                start: s.clone(),
                lost: None
            }
        );
        // The next child calls 5, 6 and 8, then asks their questions; it dies in 6's.
        let p = said(&["begin 3", "at 3 5", "at 3 6", "at 3 8", "at 3 5", "wrote 3 5", "at 3 6"]);
        assert_eq!(
            next(&p, Ended::Died, &s, true),
            Next::Restart {
                start: start(3, 8, &[]),
                lost: Some((3, Some(6)))
            }
        );
    }

    /// A child killed in shape 3 (after writing shape 2): that shape gets a line, the next starts
    /// at shape 4; one that dies in no shape (before any, or between them) loses the rest of the
    /// function, so that a child that cannot reach its shapes is not started again and again.
    #[test]
    fn a_dead_child_costs_the_shape_it_was_in() {
        let p = said(&["begin 2", "at 2 1", "wrote 2 1", "at 2 2", "wrote 2 2", "at 2 3"]);
        assert_eq!(
            next(&p, Ended::Died, &start(2, 1, &[]), true),
            Next::Restart {
                start: start(2, 4, &[]),
                lost: Some((2, Some(3)))
            }
        );
        let p = said(&["begin 2"]);
        for ended in [Ended::Died, Ended::ContextDead] {
            assert_eq!(
                next(&p, ended, &start(2, 5, &[]), true),
                Next::Restart {
                    start: Start::at(3),
                    lost: Some((2, None))
                }
            );
        }
    }

    /// A child that dies in a step it said it was at (the throughput point, told by an index past
    /// the shapes') loses that step, and the next leaves it out.
    #[test]
    fn a_step_said_before_it_is_lost_with_its_child() {
        let at = usize::MAX - 1;
        let p = said(&["begin 3", "at 3 49", "wrote 3 49", &format!("at 3 {at}")]);
        assert_eq!(
            next(&p, Ended::Died, &start(3, 49, &[]), true),
            Next::Restart {
                start: start(3, 50, &[at]),
                lost: Some((3, Some(at)))
            }
        );
        let p = said(&["begin 3", &format!("at 3 {at}"), &format!("wrote 3 {at}")]);
        assert_eq!(
            next(&p, Ended::ContextDead, &start(3, 50, &[]), true),
            Next::Restart {
                start: start(3, 50, &[at]),
                lost: None
            }
        );
    }

    /// Without shapes, a function is called once: a child that dies in it, or whose context dies,
    /// is followed by one at the next function.
    #[test]
    fn without_shapes_the_next_function() {
        let p = said(&["begin 2", "wrote 7 1"]);
        assert!(p.written.is_empty(), "a line of another function is not this one's");
        assert_eq!(
            next(&p, Ended::Died, &Start::at(2), false),
            Next::Restart {
                start: Start::at(3),
                lost: Some((2, None))
            }
        );
    }
}
