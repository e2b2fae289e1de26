//! Where `call-catalogue`'s next child starts after one ended: read from what the child said on
//! its stdout (`begin i`, `at i k`, `wrote i k`, `done i`) and how it ended. With shapes
//! (`--design`, `--stranger`), a child designs its functions in batches (`--alone-batch`: each
//! function's aligned shapes, then every unaligned call of the batch in one turn alone, then their
//! questions; `nppbench_engine`'s `catalogue/design/batch.rs`), so it has begun several functions
//! at once and writes their lines out of order. A child whose context died at a shape, or which
//! died itself, is followed by one that starts at the first function begun and not done and
//! leaves out, in every function from there on, the shapes whose lines were written: one bad
//! shape costs that shape, not the rest of its function's design nor its batch's. The shapes done
//! are a set of (function, shape).

use std::collections::BTreeSet;

/// What a child said of its progress.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Progress {
    /// The functions it began.
    pub(crate) begun: BTreeSet<usize>,
    /// The functions begun whose lines were all written.
    pub(crate) done: BTreeSet<usize>,
    /// The function it last said it was in (`begin i`, `at i k`, `wrote i k`).
    pub(crate) current: Option<usize>,
    /// The shapes whose lines it wrote, as (function, shape).
    pub(crate) written: BTreeSet<(usize, usize)>,
    /// The step it last said it was at (`at i k`), unless its line followed.
    pub(crate) in_flight: Option<(usize, usize)>,
    /// The shapes whose call at unaligned steps it made alone and that left the context alive
    /// (`alive i k`), their lines not yet written.
    pub(crate) alive: BTreeSet<(usize, usize)>,
}

impl Progress {
    /// Takes one line of the child's stdout into account (others, and those of a function it did
    /// not begin, are ignored).
    pub(crate) fn read(&mut self, line: &str) {
        let mut words = line.split(' ');
        let word = words.next();
        let mut number = || words.next().and_then(|w| w.parse::<usize>().ok());
        let (Some(i), k) = (number(), number()) else {
            return;
        };
        let begun = self.begun.contains(&i);
        match (word, k) {
            (Some("begin"), _) => {
                self.begun.insert(i);
                self.current = Some(i);
            }
            (Some("done"), _) if begun => {
                self.done.insert(i);
            }
            (Some("at"), Some(k)) if begun => {
                self.in_flight = Some((i, k));
                self.current = Some(i);
            }
            (Some("alive"), Some(k)) if begun => {
                self.alive.insert((i, k));
            }
            (Some("wrote"), Some(k)) if begun => {
                self.written.insert((i, k));
                self.alive.remove(&(i, k));
                if self.in_flight == Some((i, k)) {
                    self.in_flight = None;
                }
                self.current = Some(i);
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

/// Where a child starts: at function `from`, leaving out the shapes in `done` and the functions
/// in `lost`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Start {
    pub(crate) from: usize,
    /// The shapes left out, as (function, shape): their lines written, or lost with a child.
    pub(crate) done: BTreeSet<(usize, usize)>,
    /// The functions left out whole: the rest of each lost with a child that died outside its
    /// shapes (their lines written by the parent).
    pub(crate) lost: BTreeSet<usize>,
    /// Shapes at unaligned steps whose call a child before made alone and that left the context
    /// alive: called again in a shared turn, not alone.
    pub(crate) alive: BTreeSet<(usize, usize)>,
}

impl Start {
    pub(crate) fn at(from: usize) -> Start {
        Start {
            from,
            ..Start::default()
        }
    }

    /// Past the functions lost at `from`, and without what lies before it.
    fn trimmed(mut self) -> Start {
        while self.lost.remove(&self.from) {
            self.from += 1;
        }
        let from = self.from;
        self.done.retain(|&(i, _)| i >= from);
        let done = &self.done;
        self.alive.retain(|p| p.0 >= from && !done.contains(p));
        self.lost.retain(|&i| i >= from);
        self
    }

    /// The child's arguments that say it: `--from`, `--shapes-done I:K,…`, `--shapes-alive
    /// I:K,…` and `--functions-lost I,…` (the last three where there are any).
    pub(crate) fn args(&self) -> Vec<String> {
        let mut out = vec!["--from".to_owned(), self.from.to_string()];
        let joined = |items: Vec<String>| items.join(",");
        if !self.done.is_empty() {
            out.push("--shapes-done".to_owned());
            out.push(joined(self.done.iter().map(|(i, k)| format!("{i}:{k}")).collect()));
        }
        if !self.alive.is_empty() {
            out.push("--shapes-alive".to_owned());
            out.push(joined(self.alive.iter().map(|(i, k)| format!("{i}:{k}")).collect()));
        }
        if !self.lost.is_empty() {
            out.push("--functions-lost".to_owned());
            out.push(joined(self.lost.iter().map(usize::to_string).collect()));
        }
        out
    }
}

/// A shape of a function as `--shapes-done` gives it, `I:K`: shape K of function I.
pub(crate) fn function_shape(s: &str) -> Result<(usize, usize), String> {
    let (i, k) = s
        .split_once(':')
        .ok_or_else(|| format!("{s}: not FUNCTION:SHAPE, two indices"))?;
    let index = |n: &str| n.parse::<usize>().map_err(|e| format!("{s}: {n}: {e}"));
    Ok((index(i)?, index(k)?))
}

/// What the parent does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// The share is done.
    Finished,
    /// The child ended before its first function (no CUDA context, say): start it again.
    NotStarted,
    /// Start a child so, after writing a line for `lost`: the function the child died in, and
    /// the shape it was at where the calls have shapes (none where it died outside them: the
    /// rest of that function is lost).
    Restart {
        start: Start,
        lost: Option<(usize, Option<usize>)>,
    },
}

/// Where the next child starts, after one started at `start`, said `progress` and ended so: at
/// the first function it began and did not finish, leaving out the shapes written before and
/// those it wrote, and the step it died in. Every restart leaves out one more shape or function,
/// so that a share ends after as many children at most as it has shapes.
pub(crate) fn next(progress: &Progress, ended: Ended, start: &Start, shapes: bool) -> Next {
    if ended == Ended::Success {
        return Next::Finished;
    }
    let Some(&last) = progress.begun.last() else {
        return Next::NotStarted;
    };
    let mut s = start.clone();
    let Some(&i) = progress.begun.difference(&progress.done).next() else {
        // Every function it began is done: it ended between two.
        s.from = last + 1;
        return Next::Restart {
            start: s.trimmed(),
            lost: None,
        };
    };
    s.from = i;
    let (in_flight, written) = match shapes {
        true => (progress.in_flight, progress.written.clone()),
        false => (None, BTreeSet::new()),
    };
    let lost = match (ended, in_flight) {
        // The step it was in gets the parent's line, and the next child leaves it out.
        (_, Some((j, k))) => {
            s.done.insert((j, k));
            Some((j, Some(k)))
        }
        // The shape whose call left the context dead has its line.
        (Ended::ContextDead, None) if !written.is_empty() => None,
        // It ended outside every shape: the rest of the function it was in is lost with it, the
        // others of its batch are not.
        _ => {
            let f = progress.current.unwrap_or(i);
            s.lost.insert(f);
            Some((f, None))
        }
    };
    s.done.extend(written);
    if shapes {
        s.alive.extend(&progress.alive);
    }
    Next::Restart {
        start: s.trimmed(),
        lost,
    }
}

#[cfg(test)]
mod tests;
