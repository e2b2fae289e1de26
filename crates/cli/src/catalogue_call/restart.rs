//! Where `call-catalogue`'s next child starts after one ended: read from what the child said on
//! its stdout (`begin i`, `at i k`, `wrote i k`, `done i`) and how it ended. With shapes (`--design`,
//! `--stranger`), a child whose context died at a shape, or which died itself, is followed by one
//! that starts at the function's next shape, so that one bad shape costs that shape, not the rest
//! of its function's design.

/// What a child said of its progress.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Progress {
    /// The last function it began, and whether its lines were all written.
    pub(crate) last: Option<(usize, bool)>,
    /// The shape after the last one of that function whose line it wrote, or the one it said it
    /// was at (`in_flight`) after that.
    pub(crate) next_shape: Option<usize>,
    pub(crate) in_flight: bool,
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
                    self.in_flight = said == "at";
                    self.next_shape = Some(if self.in_flight { k } else { k.saturating_add(1) });
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

/// What the parent does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// The share is done.
    Finished,
    /// The child ended before its first function (no CUDA context, say): start it again.
    NotStarted,
    /// Start a child at function `from`, shape `shape`, after writing a line for `lost`: the
    /// function the child died in, and the shape it was at where the calls have shapes.
    Restart {
        from: usize,
        shape: usize,
        lost: Option<(usize, Option<usize>)>,
    },
}

/// Where the next child starts, after one started at function `from`, shape `first_shape`, said
/// `progress` and ended so.
pub(crate) fn next(progress: &Progress, ended: Ended, (from, first_shape): (usize, usize), shapes: bool) -> Next {
    if ended == Ended::Success {
        return Next::Finished;
    }
    let Some((i, done)) = progress.last else {
        return Next::NotStarted;
    };
    if done {
        return Next::Restart {
            from: i + 1,
            shape: 0,
            lost: None,
        };
    }
    if !shapes {
        return Next::Restart {
            from: i + 1,
            shape: 0,
            lost: Some((i, None)),
        };
    }
    // The shape it was at: the one after the last written, else the first it was given.
    let at = progress.next_shape.unwrap_or(if i == from { first_shape } else { 0 });
    match (ended, progress.next_shape, progress.in_flight) {
        (Ended::ContextDead, Some(_), false) => Next::Restart {
            from: i,
            shape: at,
            lost: None,
        },
        _ => Next::Restart {
            from: i,
            shape: at.saturating_add(1),
            lost: Some((i, Some(at))),
        },
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

    #[test]
    fn a_function_done_is_followed_by_the_next() {
        let p = said(&["begin 4", "wrote 4 0", "done 4"]);
        assert_eq!(
            next(&p, Ended::ContextDead, (4, 0), true),
            Next::Restart {
                from: 5,
                shape: 0,
                lost: None
            }
        );
        assert_eq!(next(&p, Ended::Success, (4, 0), true), Next::Finished);
        assert_eq!(next(&Progress::default(), Ended::Died, (4, 0), true), Next::NotStarted);
    }

    /// A context dead at shape 7 of function 9: the next child starts at its shape 8, and no line
    /// is written for it (shape 7's line says how it failed).
    #[test]
    fn a_dead_context_costs_one_shape() {
        let p = said(&["begin 8", "done 8", "begin 9", "wrote 9 6", "wrote 9 7"]);
        assert_eq!(
            next(&p, Ended::ContextDead, (8, 0), true),
            Next::Restart {
                from: 9,
                shape: 8,
                lost: None
            }
        );
    }

    /// A child killed in shape 3 (after writing shape 2): that shape gets a line, the next starts
    /// at shape 4; one restarted at shape 5 that dies before writing any loses shape 5.
    #[test]
    fn a_dead_child_costs_the_shape_it_was_in() {
        let p = said(&["begin 2", "wrote 2 1", "wrote 2 2"]);
        assert_eq!(
            next(&p, Ended::Died, (2, 0), true),
            Next::Restart {
                from: 2,
                shape: 4,
                lost: Some((2, Some(3)))
            }
        );
        let p = said(&["begin 2"]);
        assert_eq!(
            next(&p, Ended::Died, (2, 5), true),
            Next::Restart {
                from: 2,
                shape: 6,
                lost: Some((2, Some(5)))
            }
        );
        assert_eq!(
            next(&p, Ended::ContextDead, (2, 5), true),
            Next::Restart {
                from: 2,
                shape: 6,
                lost: Some((2, Some(5)))
            }
        );
    }

    /// A child that dies in a step it said it was at (the throughput point, told by an index past
    /// the shapes') loses that step, and the next starts past it.
    #[test]
    fn a_step_said_before_it_is_lost_with_its_child() {
        let at = usize::MAX - 1;
        let p = said(&["begin 3", "wrote 3 49", &format!("at 3 {at}")]);
        assert_eq!(
            next(&p, Ended::Died, (3, 0), true),
            Next::Restart {
                from: 3,
                shape: usize::MAX,
                lost: Some((3, Some(at)))
            }
        );
        let p = said(&["begin 3", &format!("at 3 {at}"), &format!("wrote 3 {at}")]);
        assert_eq!(
            next(&p, Ended::ContextDead, (3, 0), true),
            Next::Restart {
                from: 3,
                shape: usize::MAX,
                lost: None
            }
        );
    }

    /// Without shapes, a function is called once: a child that dies in it, or whose context dies,
    /// is followed by one at the next function.
    #[test]
    fn without_shapes_the_next_function() {
        let p = said(&["begin 2", "wrote 7 1"]);
        assert_eq!(p.next_shape, None, "a line of another function is not this one's");
        assert_eq!(
            next(&p, Ended::Died, (2, 0), false),
            Next::Restart {
                from: 3,
                shape: 0,
                lost: Some((2, None))
            }
        );
    }
}
