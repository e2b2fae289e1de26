//! A child's functions designed in batches of consecutive ones (`--alone-batch G`), so that the
//! children drain the GPU for a turn alone once a batch, not once a function. A batch in three
//! phases:
//!
//! - **A**, in shared turns, function by function: `begin i`; its probe planned (a line saying
//!   why where it cannot be); its shapes at aligned steps called and asked whole, a turn a shape,
//!   and so those at unaligned steps whose call a child before made alone and lived through
//!   (`--shapes-alive`); its other shapes at unaligned steps planned (CPU work, done before the
//!   turn alone).
//! - **B**, in one turn alone for the whole batch, function by function: each unaligned shape's
//!   call made and synchronised (its probe: the step that may leave the context dead), then the
//!   function's throughput point. A call NPP refused, or that failed, gets its line here; the
//!   calls that lived are said (`alive i k`) and kept, buffers and all, for phase C.
//! - **C**, in shared turns, shape by shape: the questions of every call kept, each shape's line
//!   written after them; then `done i` for every function of the batch, in order.
//!
//! A step that leaves the context dead ends the child at once, after its line, with no function of the batch done:
//! the parent starts the next at the first of them, leaving out in each the shapes whose lines were written
//! (`crates/cli/src/catalogue_call/restart.rs`). A batch of one designs a function as before batches: its aligned
//! shapes, its unaligned calls and point alone, their questions.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use nppbench_analysis::calls::design::{self, Pixels, ShapeLine};
use nppbench_headers::generate::FunctionRow;
use nppbench_headers::synth::{CallPlan, plan};
use nppbench_npp::generic::{Made, Outputs};

use super::super::turns::Holding;
use super::super::{Called, CatalogueCalls, append_line};
use super::{
    Contexts, PROBE, Shapes, Skipped, THROUGHPUT_INDEX, at, failed, ms_since, pixels, point, shape, synth_shape,
};

/// A function's shapes by phase, each in its design's order, the shapes skipped left out: those at
/// aligned steps (phase A), those at unaligned steps (called in phase B, asked in phase C), and
/// whether its throughput point is made (phase B, after its unaligned calls).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Phases {
    pub(crate) aligned: Vec<(usize, design::Shape)>,
    pub(crate) unaligned: Vec<(usize, design::Shape)>,
    pub(crate) point: bool,
}

/// The phases of a function's `shapes` (indexed by their place), with pixel sizes `px`, where
/// `skips` leaves out the shapes it names (and the point, [`THROUGHPUT_INDEX`]); `point`: whether
/// the calls have one (a design's, not a stranger's draw).
pub(crate) fn phases(shapes: Vec<design::Shape>, px: &Pixels, point: bool, skips: impl Fn(usize) -> bool) -> Phases {
    let (aligned, unaligned) = shapes
        .into_iter()
        .enumerate()
        .filter(|(k, _)| !skips(*k))
        .partition(|(_, s)| s.aligned(px));
    Phases {
        aligned,
        unaligned,
        point: point && !skips(THROUGHPUT_INDEX),
    }
}

/// Designs the functions `from..` of `rows` (those `args` does not leave out whole) at their
/// shapes, in batches of `args.alone_batch`, leaving out of the functions a resumed run stopped in
/// what `resumed` says their lines hold; exits 3 at a step after which the context is dead.
pub(crate) fn design_from(
    c: &Called<'_>,
    args: &CatalogueCalls,
    rows: &[FunctionRow],
    (from, resumed): (usize, super::super::Resumed),
    shapes: Shapes,
) -> anyhow::Result<()> {
    let skip = Skipped {
        resumed,
        ..Skipped::given(args)
    };
    let say = Saying { out: &args.out };
    let mut contexts = Contexts::default();
    let todo: Vec<usize> = (from..rows.len()).filter(|&i| !skip.function(i)).collect();
    for batch in todo.chunks(args.alone_batch.max(1)) {
        let mut d = Designing {
            c,
            contexts: &mut contexts,
            turn: Holding::new(c.turns),
            say: &say,
        };
        if d.batch(rows, batch, shapes, &skip)? {
            nppbench_gpu::exit_now(3);
        }
        // Every line of the batch's functions is written: the parent starts no child in them.
        for &i in batch {
            say.tell(format_args!("done {i}"))?;
        }
    }
    Ok(())
}

/// What a child says on its stdout, and the lines it writes.
struct Saying<'a> {
    out: &'a Path,
}

impl Saying<'_> {
    fn tell(&self, what: std::fmt::Arguments<'_>) -> anyhow::Result<()> {
        println!("{what}");
        std::io::stdout().flush()?;
        Ok(())
    }

    /// `at i k`: the child is in a step of shape `k` of function `i`.
    fn at(&self, i: usize, k: usize) -> anyhow::Result<()> {
        self.tell(format_args!("at {i} {k}"))
    }

    /// The line of shape `k` of function `i` written, then `wrote i k`.
    fn wrote(&self, i: usize, k: usize, line: &ShapeLine) -> anyhow::Result<()> {
        append_line(self.out, &serde_json::to_value(line)?)?;
        self.tell(format_args!("wrote {i} {k}"))
    }
}

/// A function of a batch past phase A: the part of its lines every shape shares, and its
/// unaligned shapes planned (or why not), with its throughput point where it is made.
struct Planned<'r> {
    i: usize,
    row: &'r FunctionRow,
    base: ShapeLine,
    px: Pixels,
    unaligned: Vec<(usize, design::Shape, Result<CallPlan, String>)>,
    point: bool,
}

impl Planned<'_> {
    fn line(&self, shape: &design::Shape) -> ShapeLine {
        ShapeLine {
            shape: Some(*shape),
            pixels: Some(self.px),
            ..self.base.clone()
        }
    }
}

/// A call of phase B that lived, kept for its questions in phase C.
struct Kept<'p> {
    f: &'p Planned<'p>,
    k: usize,
    shape: design::Shape,
    line: ShapeLine,
    made: Made<'p>,
    first: Outputs,
}

/// A batch being designed: what the calls need, and the turn held.
struct Designing<'a, 'c> {
    c: &'a Called<'c>,
    contexts: &'a mut Contexts,
    turn: Holding<'c>,
    say: &'a Saying<'a>,
}

impl Designing<'_, '_> {
    /// The functions `batch` of `rows`, in three phases; whether the context died.
    fn batch(&mut self, rows: &[FunctionRow], batch: &[usize], shapes: Shapes, skip: &Skipped) -> anyhow::Result<bool> {
        let mut planned = Vec::new();
        for &i in batch {
            if self.phase_a((i, &rows[i]), shapes, skip, &mut planned)? {
                return Ok(true);
            }
        }
        let mut kept = Vec::new();
        if self.phase_b(&planned, &mut kept)? {
            return Ok(true);
        }
        self.phase_c(kept)
    }

    /// Phase A of function `i`: said begun, its probe planned (a line saying why where it cannot
    /// be), its aligned shapes called whole, its unaligned ones planned into `planned`; whether
    /// the context died.
    fn phase_a<'r>(
        &mut self,
        (i, row): (usize, &'r FunctionRow),
        shapes: Shapes,
        skip: &Skipped,
        planned: &mut Vec<Planned<'r>>,
    ) -> anyhow::Result<bool> {
        self.say.tell(format_args!("begin {i}"))?;
        let base = ShapeLine {
            symbol: row.symbol.clone(),
            library: row.library.clone(),
            gpu_uuid: Some(self.c.gpu.props().uuid.clone()),
            npp_version: Some(self.c.npp.version().to_string()),
            ..Default::default()
        };
        let probe = match plan(row, self.c.sizers, &synth_shape(PROBE, PROBE, None, None)) {
            Ok(p) => p,
            Err(why) => {
                if !skip.skips(i, 0) {
                    let line = ShapeLine {
                        not_planned: Some(why),
                        ..base
                    };
                    self.say.wrote(i, 0, &line)?;
                }
                return Ok(false);
            }
        };
        let px = pixels(&probe);
        let list = match shapes {
            Shapes::Design => design::design(&row.symbol, &px),
            Shapes::Stranger { count, seed } => design::stranger(&row.symbol, &px, count, seed),
        };
        let written = skip.resumed.get(&row.symbol);
        let resumed = |k: usize| match (written, k) {
            (None, _) => false,
            (Some(w), THROUGHPUT_INDEX) => w.point,
            (Some(w), k) => w.shapes.contains(&k),
        };
        let phases = phases(list, &px, shapes == Shapes::Design, |k| skip.skips(i, k) || resumed(k));
        let mut f = Planned {
            i,
            row,
            base,
            px,
            unaligned: Vec::new(),
            point: phases.point,
        };
        // An unaligned call a child before lived through is made again in a shared turn.
        let (alive, unaligned): (Vec<_>, Vec<_>) = phases
            .unaligned
            .into_iter()
            .partition(|(k, _)| skip.alive.contains(&(i, *k)));
        let aligned = phases.aligned.iter().map(|ks| (ks, None));
        for ((k, shape), lived) in aligned.chain(alive.iter().map(|ks| (ks, Some(true)))) {
            if self.whole(&f, *k, shape, lived)? {
                return Ok(true);
            }
        }
        f.unaligned = unaligned
            .into_iter()
            .map(|(k, s)| (k, s, plan(row, self.c.sizers, &at(&s))))
            .collect();
        planned.push(f);
        Ok(false)
    }

    /// A shape at aligned steps, or one whose call a child before made alone and lived through
    /// (`lived_alone_before`), called and asked in one shared turn; whether the context died.
    fn whole(
        &mut self,
        f: &Planned<'_>,
        k: usize,
        shape: &design::Shape,
        lived_alone_before: Option<bool>,
    ) -> anyhow::Result<bool> {
        let mut line = ShapeLine {
            lived_alone_before,
            ..f.line(shape)
        };
        self.turn.take_into(false, &mut line);
        self.say.at(f.i, k)?;
        let start = Instant::now();
        let dead = match plan(f.row, self.c.sizers, &at(shape)) {
            Err(why) => {
                line.not_planned = Some(why);
                false
            }
            Ok(p) => match shape::probe(self.c, self.contexts, &p, shape, &mut line) {
                Ok(shape::Probed::Done) => false,
                Ok(shape::Probed::Made(mut made, first)) => {
                    let on = (f.row, &at(shape), shape);
                    match shape::questions(self.c, self.contexts, on, (&mut made, &first), &mut line) {
                        Ok(()) => false,
                        Err(e) => failed(&mut line, &e),
                    }
                }
                Err(e) => failed(&mut line, &e),
            },
        };
        line.ms = Some(ms_since(start));
        self.say.wrote(f.i, k, &line)?;
        Ok(dead)
    }

    /// Phase B, in one turn alone: function by function, each unaligned shape's call (its probe),
    /// then the throughput point; the calls that lived go to `kept`, the others' lines are
    /// written. Whether the context died.
    fn phase_b<'p>(&mut self, planned: &'p [Planned<'p>], kept: &mut Vec<Kept<'p>>) -> anyhow::Result<bool> {
        for f in planned {
            for (k, shape, p) in &f.unaligned {
                let mut line = f.line(shape);
                self.turn.take_into(true, &mut line);
                self.say.at(f.i, *k)?;
                let start = Instant::now();
                let made = match p {
                    Err(why) => {
                        line.not_planned = Some(why.clone());
                        None
                    }
                    Ok(p) => match shape::probe(self.c, self.contexts, p, shape, &mut line) {
                        Ok(shape::Probed::Done) => None,
                        Ok(shape::Probed::Made(made, first)) => Some((made, first)),
                        Err(e) => {
                            let dead = failed(&mut line, &e);
                            line.ms = Some(ms_since(start));
                            line.alone_ms = line.ms;
                            self.say.wrote(f.i, *k, &line)?;
                            if dead {
                                return Ok(true);
                            }
                            continue;
                        }
                    },
                };
                line.alone_ms = Some(ms_since(start));
                match made {
                    Some((made, first)) => {
                        // Should the child die before its line, the next calls it in a shared turn.
                        self.say.tell(format_args!("alive {} {k}", f.i))?;
                        kept.push(Kept {
                            f,
                            k: *k,
                            shape: *shape,
                            line,
                            made,
                            first,
                        })
                    }
                    None => {
                        line.ms = line.alone_ms;
                        self.say.wrote(f.i, *k, &line)?;
                    }
                }
            }
            if f.point {
                self.turn.take(true);
                if self.point(f)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The throughput point, in the turn alone held, as a line of its own; whether the context
    /// died.
    fn point(&mut self, f: &Planned<'_>) -> anyhow::Result<bool> {
        self.say.at(f.i, THROUGHPUT_INDEX)?;
        let mut line = f.base.clone();
        let dead = match point::throughput_point(self.c, self.contexts, f.row) {
            Ok(t) => {
                line.throughput = Some(t);
                false
            }
            Err(e) => {
                line.throughput_error = Some(e.to_string());
                e.is_sticky()
            }
        };
        self.say.wrote(f.i, THROUGHPUT_INDEX, &line)?;
        Ok(dead)
    }

    /// Phase C, in shared turns: the questions of each call `kept`, its line written after
    /// them; whether the context died.
    fn phase_c(&mut self, kept: Vec<Kept<'_>>) -> anyhow::Result<bool> {
        for mut a in kept {
            self.turn.take_into(false, &mut a.line);
            self.say.at(a.f.i, a.k)?;
            let start = Instant::now();
            let on = (a.f.row, &at(&a.shape), &a.shape);
            let dead = match shape::questions(self.c, self.contexts, on, (&mut a.made, &a.first), &mut a.line) {
                Ok(()) => false,
                Err(e) => failed(&mut a.line, &e),
            };
            a.line.ms = Some(a.line.alone_ms.unwrap_or(0.0) + ms_since(start));
            self.say.wrote(a.f.i, a.k, &a.line)?;
            if dead {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// AddC_8u_C3RSfs's pixels (3 bytes, a byte a sample), made up.
    const PX: Pixels = Pixels {
        src_bytes_per_pixel: 3,
        src_sample_bytes: 1,
        dst_bytes_per_pixel: 3,
        dst_sample_bytes: 1,
    };

    /// A design's shapes split into its phases: every shape once, the aligned ones in phase A,
    /// the others (a design's last) in phase B, each in the design's order, and the point made.
    #[test]
    fn a_designs_shapes_go_each_to_one_phase_in_order() {
        let list = design::design("nppiMadeUp_8u_C3R_Ctx", &PX);
        let ph = phases(list.clone(), &PX, true, |_| false);
        assert!(ph.point);
        assert!(!ph.aligned.is_empty() && !ph.unaligned.is_empty(), "{ph:?}");
        assert!(ph.aligned.iter().all(|(_, s)| s.aligned(&PX)));
        assert!(ph.unaligned.iter().all(|(_, s)| !s.aligned(&PX)));
        let mut ks: Vec<usize> = ph.aligned.iter().chain(&ph.unaligned).map(|(k, _)| *k).collect();
        assert!(ks.is_sorted(), "a design's unaligned shapes come last: {ks:?}");
        ks.dedup();
        assert_eq!(ks, (0..list.len()).collect::<Vec<_>>());
        for (k, s) in ph.aligned.iter().chain(&ph.unaligned) {
            assert_eq!(list[*k], *s);
        }
    }

    /// A child started again leaves out the shapes written and the point where written; without
    /// a point (a stranger's draw), shapes in any order: the unaligned ones, among the aligned,
    /// all go to phase B.
    #[test]
    fn skipped_shapes_and_the_point_are_left_out_and_unaligned_shapes_gathered_from_any_order() {
        let list = design::design("nppiMadeUp_8u_C3R_Ctx", &PX);
        let last = list.len() - 1;
        let skip: BTreeSet<usize> = [0, 3, last, THROUGHPUT_INDEX].into();
        let ph = phases(list.clone(), &PX, true, |k| skip.contains(&k));
        assert!(!ph.point);
        let ks: BTreeSet<usize> = ph.aligned.iter().chain(&ph.unaligned).map(|(k, _)| *k).collect();
        assert_eq!(ks.len(), list.len() - 3);
        assert!(ks.is_disjoint(&skip));
        let everything = |_| true;
        assert_eq!(phases(list.clone(), &PX, true, everything), Phases::default());
        // Every other shape taken from the end: aligned and unaligned interleaved.
        let (front, back) = list.split_at(list.len() / 2);
        let mixed: Vec<design::Shape> = front
            .iter()
            .zip(back.iter().rev())
            .flat_map(|(a, b)| [*a, *b])
            .collect();
        let ph = phases(mixed.clone(), &PX, false, |_| false);
        assert!(!ph.point);
        let of =
            |aligned: bool| -> Vec<usize> { (0..mixed.len()).filter(|&k| mixed[k].aligned(&PX) == aligned).collect() };
        let (aligned, unaligned) = (of(true), of(false));
        assert!(unaligned[0] < *aligned.last().unwrap(), "{unaligned:?}");
        assert_eq!(ph.aligned.iter().map(|(k, _)| *k).collect::<Vec<_>>(), aligned);
        assert_eq!(ph.unaligned.iter().map(|(k, _)| *k).collect::<Vec<_>>(), unaligned);
    }
}
