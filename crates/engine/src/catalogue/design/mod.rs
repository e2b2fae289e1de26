//! `call-catalogue --design` (issue #45): a function called at every shape of its design, or of
//! a stranger's draw (`nppbench_analysis::calls::design`), each shape's three questions asked
//! and written as one line. A sticky error ends the child after the shape's line, as elsewhere.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use nppbench_analysis::calls::design::{self, Pixels, ShapeLine};
use nppbench_gpu::{Gpu, Stream};
use nppbench_headers::generate::FunctionRow;
use nppbench_headers::roles::Role;
use nppbench_headers::synth::{CallPlan, Shape, plan};
use nppbench_model::{ContextFill, StreamKind};
use nppbench_npp::{Npp, StreamContext};

use super::turns::Holding;
use super::{CallError, Called, sticky};

mod point;
mod shape;

/// Which shapes a function is called at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shapes {
    /// Its design: fitted and held-out shapes.
    Design,
    /// A stranger's draw of this many shapes, from this seed.
    Stranger { count: usize, seed: u64 },
}

/// The streams and contexts of the shapes a child has met, made once each.
#[derive(Default)]
pub(crate) struct Contexts {
    made: BTreeMap<(StreamKind, ContextFill), (Stream, StreamContext)>,
}

impl Contexts {
    fn get(
        &mut self,
        gpu: &Gpu,
        npp: &Npp,
        kind: StreamKind,
        fill: ContextFill,
    ) -> Result<&(Stream, StreamContext), CallError> {
        match self.made.entry((kind, fill)) {
            std::collections::btree_map::Entry::Occupied(e) => Ok(e.into_mut()),
            std::collections::btree_map::Entry::Vacant(e) => {
                let stream = Stream::new(gpu, kind).map_err(sticky)?;
                let ctx = npp.context(fill, &stream, gpu.props()).map_err(CallError::alive)?;
                Ok(e.insert((stream, ctx)))
            }
        }
    }
}

/// The ROI a function's pixel sizes are read at: square, so that a transpose's destination rows
/// are as long as its source's.
const PROBE: u32 = 64;

/// The pixel sizes of a call planned at a [`PROBE`]-pixel square: its first source's (or in-place
/// image's) and its destination's, one plane's where planar; 0 for a side without an image.
pub(crate) fn pixels(p: &CallPlan) -> Pixels {
    let side = |dst: bool| {
        p.buffers
            .iter()
            .filter(|b| b.image.is_some())
            .find(|b| matches!(b.role, Role::Destination | Role::DestinationPlanes) == dst)
            .map(|b| {
                let im = b.image.expect("filtered on an image");
                let per_pixel = im.row_bytes / u64::from(PROBE);
                (per_pixel as u32, b.elem.bytes() as u32)
            })
            .unwrap_or((0, 0))
    };
    let ((src_bytes_per_pixel, src_sample_bytes), (dst_bytes_per_pixel, dst_sample_bytes)) = (side(false), side(true));
    Pixels {
        src_bytes_per_pixel,
        src_sample_bytes,
        dst_bytes_per_pixel,
        dst_sample_bytes,
    }
}

/// The index the throughput point is told by, past every shape's: a child started past it skips
/// it.
pub(crate) const THROUGHPUT_INDEX: usize = usize::MAX - 1;

/// The shapes of a function a child leaves out: those before `first`, and those in `done`
/// (their lines written by an earlier child, or lost with it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Skipped {
    pub(crate) first: usize,
    pub(crate) done: BTreeSet<usize>,
}

impl Skipped {
    /// What the arguments say the child's first function skips.
    pub(crate) fn given(args: &super::CatalogueCalls) -> Skipped {
        Skipped {
            first: args.first_shape,
            done: args.shapes_done.iter().copied().collect(),
        }
    }

    pub(crate) fn skips(&self, k: usize) -> bool {
        k < self.first || self.done.contains(&k)
    }
}

/// Every shape of `row` that `skip` leaves, each written as a line by `write` with its index
/// (`write(k, None)` said before each step of it is taken), and the throughput point after a
/// design's shapes ([`THROUGHPUT_INDEX`]); whether the CUDA context is dead after the last line
/// written (the shapes not written are left to a new child).
///
/// The GPU is shared with the other children a shape at a time (so that one waiting to be alone
/// waits for a shape, not a function). A run of shapes at unaligned steps (a design's come last)
/// is called alone, where calls leave contexts dead, as the catalogue's own unaligned calls are:
/// each shape's call once, then, if the context lives, the throughput point where the run ends
/// the design, and then the shapes' questions beside the other children's calls, made again
/// with the same buffers. A turn that cannot be had is said in the shape's line.
pub(crate) fn shapes_of(
    c: &Called<'_>,
    contexts: &mut Contexts,
    row: &FunctionRow,
    (shapes, skip): (Shapes, &Skipped),
    base: &ShapeLine,
    write: &mut dyn FnMut(usize, Option<&ShapeLine>) -> anyhow::Result<()>,
) -> anyhow::Result<bool> {
    let probe = match plan(row, c.sizers, &synth_shape(PROBE, PROBE, None, None)) {
        Ok(p) => p,
        Err(why) => {
            if !skip.skips(0) {
                write(
                    0,
                    Some(&ShapeLine {
                        not_planned: Some(why),
                        ..base.clone()
                    }),
                )?;
            }
            return Ok(false);
        }
    };
    let px = pixels(&probe);
    let list = match shapes {
        Shapes::Design => design::design(&row.symbol, &px),
        Shapes::Stranger { count, seed } => design::stranger(&row.symbol, &px, count, seed),
    };
    let todo: Vec<(usize, design::Shape)> = list.into_iter().enumerate().filter(|(k, _)| !skip.skips(*k)).collect();
    let mut d = Designing {
        c,
        contexts,
        row,
        base,
        px,
        turn: Holding::new(c.turns),
        write,
    };
    let mut point = shapes == Shapes::Design && !skip.skips(THROUGHPUT_INDEX);
    let mut rest = &todo[..];
    while let Some((k, shape)) = rest.first() {
        if shape.aligned(&px) {
            if d.whole(*k, shape)? {
                return Ok(true);
            }
            rest = &rest[1..];
        } else {
            let n = rest.iter().take_while(|(_, s)| !s.aligned(&px)).count();
            let (run, after) = rest.split_at(n);
            let with_point = point && after.is_empty();
            point &= !with_point;
            if d.unaligned(run, with_point)? {
                return Ok(true);
            }
            rest = after;
        }
    }
    if point {
        d.turn.take(true);
        return d.point();
    }
    Ok(false)
}

fn synth_shape(width: u32, height: u32, src_step: Option<u64>, dst_step: Option<u64>) -> Shape {
    Shape {
        width,
        height,
        src_step,
        dst_step,
    }
}

/// A design shape's call shape.
fn at(shape: &design::Shape) -> Shape {
    synth_shape(
        shape.width,
        shape.height,
        shape.src_step.map(u64::from),
        shape.dst_step.map(u64::from),
    )
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// A failed step of a shape, written into its line (`error` where the call itself failed, else
/// `questions_error`); whether the context is dead.
fn failed(line: &mut ShapeLine, e: &CallError) -> bool {
    if line.status.is_none() {
        line.error = Some(e.to_string());
    } else {
        line.questions_error = Some(e.to_string());
    }
    e.is_sticky()
}

/// One function's shapes being called: what each needs, and the turn held.
struct Designing<'a, 'c> {
    c: &'a Called<'c>,
    contexts: &'a mut Contexts,
    row: &'a FunctionRow,
    base: &'a ShapeLine,
    px: Pixels,
    turn: Holding<'c>,
    write: &'a mut dyn FnMut(usize, Option<&ShapeLine>) -> anyhow::Result<()>,
}

impl Designing<'_, '_> {
    fn line(&self, shape: &design::Shape) -> ShapeLine {
        ShapeLine {
            shape: Some(*shape),
            pixels: Some(self.px),
            ..self.base.clone()
        }
    }

    /// A shape at aligned steps, called and asked in one shared turn; whether the context died.
    fn whole(&mut self, k: usize, shape: &design::Shape) -> anyhow::Result<bool> {
        let mut line = self.line(shape);
        self.turn.take_into(false, &mut line);
        (self.write)(k, None)?;
        let start = Instant::now();
        let dead = match plan(self.row, self.c.sizers, &at(shape)) {
            Err(why) => {
                line.not_planned = Some(why);
                false
            }
            Ok(p) => match shape::probe(self.c, self.contexts, &p, shape, &mut line) {
                Ok(shape::Probed::Done) => false,
                Ok(shape::Probed::Made(mut made, first)) => {
                    let on = (self.row, &at(shape), shape);
                    match shape::questions(self.c, self.contexts, on, (&mut made, &first), &mut line) {
                        Ok(()) => false,
                        Err(e) => failed(&mut line, &e),
                    }
                }
                Err(e) => failed(&mut line, &e),
            },
        };
        line.ms = Some(ms_since(start));
        (self.write)(k, Some(&line))?;
        Ok(dead)
    }

    /// A run of shapes at unaligned steps: each one's call alone, the throughput point after
    /// them where `point`, then their questions in shared turns; whether the context died.
    fn unaligned(&mut self, run: &[(usize, design::Shape)], point: bool) -> anyhow::Result<bool> {
        let plans: Vec<Result<CallPlan, String>> =
            run.iter().map(|(_, s)| plan(self.row, self.c.sizers, &at(s))).collect();
        let mut probed = Vec::new();
        for ((k, shape), p) in run.iter().zip(&plans) {
            let mut line = self.line(shape);
            self.turn.take_into(true, &mut line);
            (self.write)(*k, None)?;
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
                        (self.write)(*k, Some(&line))?;
                        if dead {
                            return Ok(true);
                        }
                        continue;
                    }
                },
            };
            line.alone_ms = Some(ms_since(start));
            match made {
                Some((made, first)) => probed.push((*k, *shape, line, made, first)),
                None => {
                    line.ms = line.alone_ms;
                    (self.write)(*k, Some(&line))?;
                }
            }
        }
        if point && self.point()? {
            return Ok(true);
        }
        for (k, shape, mut line, mut made, first) in probed {
            self.turn.take_into(false, &mut line);
            (self.write)(k, None)?;
            let start = Instant::now();
            let on = (self.row, &at(&shape), &shape);
            let dead = match shape::questions(self.c, self.contexts, on, (&mut made, &first), &mut line) {
                Ok(()) => false,
                Err(e) => failed(&mut line, &e),
            };
            line.ms = Some(line.alone_ms.unwrap_or(0.0) + ms_since(start));
            (self.write)(k, Some(&line))?;
            if dead {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The throughput point, in the turn alone held, as a line of its own; whether the context
    /// died.
    fn point(&mut self) -> anyhow::Result<bool> {
        (self.write)(THROUGHPUT_INDEX, None)?;
        let mut line = self.base.clone();
        let dead = match point::throughput_point(self.c, self.contexts, self.row) {
            Ok(t) => {
                line.throughput = Some(t);
                false
            }
            Err(e) => {
                line.throughput_error = Some(e.to_string());
                e.is_sticky()
            }
        };
        (self.write)(THROUGHPUT_INDEX, Some(&line))?;
        Ok(dead)
    }
}

/// The steps of a plan's images, in order.
fn steps(p: &CallPlan) -> Vec<u64> {
    p.buffers.iter().filter_map(|b| b.image.map(|im| im.step)).collect()
}

/// The step of a plan's first source (or in-place) image and of its destination, where it has
/// them.
fn image_steps(p: &CallPlan) -> (Option<u32>, Option<u32>) {
    let step = |dst: bool| {
        p.buffers
            .iter()
            .filter(|b| matches!(b.role, Role::Destination | Role::DestinationPlanes) == dst)
            .find_map(|b| b.image.map(|im| im.step as u32))
    };
    (step(false), step(true))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use nppbench_headers::files::Prototypes;
    use nppbench_headers::synth::{MARGIN_BYTES, Sizers};

    use super::*;

    /// The design's aligned steps are those the synthesised calls take, margins included, and the
    /// pixel sizes are read from the plan: AddC_8u_C3RSfs's 3 bytes a pixel, a transpose's
    /// destination as its source, a reduction's none.
    #[test]
    fn a_designs_steps_and_pixels_are_the_plans() {
        assert_eq!(design::MARGINS, 2 * MARGIN_BYTES);
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../catalogue/npp-13.0.1.2");
        let prototypes = Prototypes::read(&dir).unwrap();
        let sizers = Sizers::new(&prototypes);
        let rows = nppbench_headers::generate::rows(&prototypes).unwrap();
        let planned = |symbol: &str, width| {
            let row = rows.iter().find(|r| r.symbol == symbol).unwrap();
            let square = plan(
                row,
                &sizers,
                &Shape {
                    width: PROBE,
                    height: PROBE,
                    src_step: None,
                    dst_step: None,
                },
            )
            .unwrap();
            let at = plan(
                row,
                &sizers,
                &Shape {
                    width,
                    height: 7,
                    src_step: None,
                    dst_step: None,
                },
            )
            .unwrap();
            (pixels(&square), image_steps(&at))
        };
        let (px, steps) = planned("nppiAddC_8u_C3RSfs_Ctx", 1918);
        assert_eq!(
            (px.src_bytes_per_pixel, px.src_sample_bytes, px.dst_bytes_per_pixel),
            (3, 1, 3)
        );
        let (s, d) = px.aligned_steps(1918);
        assert_eq!(steps, (Some(s), Some(d)));
        let (px, _) = planned("nppiTranspose_16u_C1R_Ctx", 100);
        assert_eq!((px.src_bytes_per_pixel, px.dst_bytes_per_pixel), (2, 2));
        let (px, steps) = planned("nppiSum_8u_C1R_Ctx", 100);
        assert_eq!((px.src_bytes_per_pixel, px.dst_bytes_per_pixel), (1, 0));
        assert_eq!(steps.1, None);
    }
}
