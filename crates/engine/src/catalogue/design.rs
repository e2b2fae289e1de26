//! `call-catalogue --design` (issue #45): a function called at every shape of its design, or of
//! a stranger's draw (`nppbench_analysis::calls::design`), each shape's three questions asked
//! and written as one line. A sticky error ends the child after the shape's line, as elsewhere.

use std::collections::BTreeMap;
use std::time::Instant;

use nppbench_analysis::calls::design::{self, LEAK_CALLS, Pixels, RACE_ROUNDS, ShapeLine};
use nppbench_gpu::{Gpu, Stream};
use nppbench_headers::generate::FunctionRow;
use nppbench_headers::roles::Role;
use nppbench_headers::synth::{CallPlan, Shape, plan};
use nppbench_model::{ContextFill, StreamKind};
use nppbench_npp::{Npp, StreamContext};

use super::oracles::{rounds_differing, threads_keeping};
use super::{CallError, Called, sticky};

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

/// Every shape of `row` past the first `skip`, each written as a line by `write` with its index
/// (and the throughput point after a design's, `write(THROUGHPUT_INDEX, None)` said before it is
/// taken); whether the CUDA context is dead after the last written (the shapes after it are left
/// to a new child).
pub(crate) fn shapes_of(
    c: &Called<'_>,
    contexts: &mut Contexts,
    row: &FunctionRow,
    (shapes, skip): (Shapes, usize),
    base: &ShapeLine,
    write: &mut dyn FnMut(usize, Option<&ShapeLine>) -> anyhow::Result<()>,
) -> anyhow::Result<bool> {
    let aligned = |width, height| Shape {
        width,
        height,
        src_step: None,
        dst_step: None,
    };
    let probe = match plan(row, c.sizers, &aligned(PROBE, PROBE)) {
        Ok(p) => p,
        Err(why) => {
            if skip == 0 {
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
    // The GPU shared with the other children a shape at a time (so that one waiting to be alone
    // waits for a shape, not a function), then alone from the first shape at unaligned steps on
    // (they come last), as the catalogue's own unaligned calls take it: where calls leave
    // contexts dead. A turn that cannot be had is said in the shape's line.
    let mut turn: Held<'_> = None;
    let list = match shapes {
        Shapes::Design => design::design(&row.symbol, &px),
        Shapes::Stranger { count, seed } => design::stranger(&row.symbol, &px, count, seed),
    };
    for (k, shape) in list.into_iter().enumerate().skip(skip) {
        let mut line = ShapeLine {
            shape: Some(shape),
            pixels: Some(px),
            ..base.clone()
        };
        let alone = !shape.aligned(&px);
        if !alone || !matches!(turn, Some(Ok((_, true)))) {
            drop(turn.take());
            turn = take(c.turns, alone);
        }
        if let Some(Err(e)) = &turn {
            line.questions_error = Some(format!("no turn on the GPU: {e}"));
        }
        // The shape's own time, its turn had: the wait for it is the other children's.
        let start = Instant::now();
        let dead = match one_shape(c, contexts, row, &shape, &mut line) {
            Ok(()) => false,
            Err(e) => {
                let dead = e.is_sticky();
                if line.status.is_none() {
                    line.error = Some(e.to_string());
                } else {
                    line.questions_error = Some(e.to_string());
                }
                dead
            }
        };
        line.ms = Some(start.elapsed().as_secs_f64() * 1e3);
        write(k, Some(&line))?;
        if dead {
            return Ok(true);
        }
    }
    if shapes == Shapes::Design && skip <= THROUGHPUT_INDEX {
        write(THROUGHPUT_INDEX, None)?;
        // Alone, as the last shapes left it (or taken now), so that no other child's calls are
        // timed with its own.
        if !matches!(turn, Some(Ok((_, true)))) {
            drop(turn.take());
            turn = take(c.turns, true);
        }
        let mut line = base.clone();
        let dead = match throughput_point(c, contexts, row) {
            Ok(t) => {
                line.throughput = Some(t);
                false
            }
            Err(e) => {
                line.throughput_error = Some(e.to_string());
                e.is_sticky()
            }
        };
        drop(turn);
        write(THROUGHPUT_INDEX, Some(&line))?;
        return Ok(dead);
    }
    Ok(false)
}

/// The function's throughput point (`design::throughput`): one call, then
/// [`design::throughput::TIMED_CALLS`] timed back to back at 1080p on a non-blocking stream.
fn throughput_point(
    c: &Called<'_>,
    contexts: &mut Contexts,
    row: &FunctionRow,
) -> Result<design::Throughput, CallError> {
    let (npp, gpu) = (c.npp, c.gpu);
    let (width, height) = design::throughput::AT;
    let at = Shape {
        width,
        height,
        src_step: None,
        dst_step: None,
    };
    let p = plan(row, c.sizers, &at).map_err(CallError::Alive)?;
    let (stream, ctx) = contexts.get(gpu, npp, StreamKind::NonBlocking, ContextFill::FromStream)?;
    let mut made = npp.call_planned(gpu, &p, ctx).map_err(CallError::alive)?;
    gpu.synchronize().map_err(sticky)?;
    if made.status < 0 {
        return Err(CallError::Alive(format!(
            "NPP refused it: {}",
            npp.status_name(made.status)
        )));
    }
    let events = nppbench_gpu::EventPair::new(gpu).map_err(sticky)?;
    events.start(stream).map_err(sticky)?;
    for _ in 0..design::throughput::TIMED_CALLS {
        made.again(npp, ctx).map_err(CallError::alive)?;
    }
    let ns = events.stop(stream).map_err(sticky)?;
    let bytes_per_call = p
        .buffers
        .iter()
        .filter_map(|b| {
            let im = b.image?;
            let times = match b.role {
                Role::SourceDestination | Role::SourceDestinationPlanes => 2,
                _ => 1,
            };
            Some(times * im.row_bytes * im.rows)
        })
        .sum();
    Ok(design::Throughput {
        width,
        height,
        calls: design::throughput::TIMED_CALLS,
        ns_per_call: ns / f64::from(design::throughput::TIMED_CALLS),
        bytes_per_call,
    })
}

/// A turn on the GPU (alone, or shared) where the children take turns, and whether it is alone.
type Held<'t> = Option<Result<(super::turns::Turn<'t>, bool), String>>;

fn take<'t>(turns: Option<&'t super::GpuTurns>, alone: bool) -> Held<'t> {
    let t = turns?;
    Some(
        if alone { t.alone() } else { t.shared() }
            .map(|turn| (turn, alone))
            .map_err(|e| e.to_string()),
    )
}

/// One shape's call and questions, written into `line`.
fn one_shape(
    c: &Called<'_>,
    contexts: &mut Contexts,
    row: &FunctionRow,
    shape: &design::Shape,
    line: &mut ShapeLine,
) -> Result<(), CallError> {
    let (npp, gpu) = (c.npp, c.gpu);
    let at = Shape {
        width: shape.width,
        height: shape.height,
        src_step: shape.src_step.map(u64::from),
        dst_step: shape.dst_step.map(u64::from),
    };
    let p = match plan(row, c.sizers, &at) {
        Ok(p) => p,
        Err(why) => {
            line.not_planned = Some(why);
            return Ok(());
        }
    };
    let (stream, ctx) = contexts.get(gpu, npp, shape.stream, shape.context)?;
    line.declared_non_blocking = Some(ctx.record().declared_flags & 1 == 1);
    let mut made = npp.call_planned(gpu, &p, ctx).map_err(CallError::alive)?;
    gpu.synchronize().map_err(sticky)?;
    line.status = Some(made.status);
    if made.status < 0 {
        line.status_name = Some(npp.status_name(made.status).to_owned());
        return Ok(());
    }
    let first = made.outputs().map_err(sticky)?;
    let (src, dst) = image_steps(&p);
    (line.src_step_bytes, line.dst_step_bytes) = (src, dst);
    // Wrong pixels: the same pixels at aligned steps (nothing to ask where the shape's are).
    let straight = plan(
        row,
        c.sizers,
        &Shape {
            src_step: None,
            dst_step: None,
            ..at
        },
    )
    .map_err(CallError::Alive)?;
    if steps(&straight) == steps(&p) {
        line.differing_bytes = Some(0);
    } else {
        let m = npp.call_planned(gpu, &straight, c.ctx).map_err(CallError::alive)?;
        gpu.synchronize().map_err(sticky)?;
        if m.status < 0 {
            line.aligned_error = Some(npp.status_name(m.status).to_owned());
        } else {
            line.differing_bytes = Some(m.outputs().map_err(sticky)?.differing_bytes(&first));
        }
    }
    match c.oracles.tracker() {
        Ok(tracker) => {
            let (threads, calls) = match shape.threading.thread_bound() {
                Some(n) => (n, LEAK_CALLS.div_ceil(n)),
                None => (LEAK_CALLS, 1),
            };
            line.threads_keeping_streams = Some(threads_keeping(
                tracker,
                &mut made,
                npp,
                gpu,
                (ctx, stream),
                threads,
                calls,
            )?);
            line.leak_calls = Some(LEAK_CALLS);
        }
        Err(why) => line.questions_error = Some(why.to_owned()),
    }
    match c.oracles.delay() {
        Ok(delay) => {
            // What every round must give: the call synchronised on the inputs the rounds write
            // late (an in-place call changed them).
            let staged = made.stage_inputs(gpu, stream).map_err(sticky)?;
            made.restore_inputs_async(&staged, stream).map_err(sticky)?;
            made.again(npp, ctx).map_err(CallError::alive)?;
            gpu.synchronize().map_err(sticky)?;
            let synchronised = made.outputs().map_err(sticky)?;
            line.race_rounds_differing = Some(rounds_differing(
                delay,
                &mut made,
                npp,
                gpu,
                (ctx, stream),
                (&staged, &synchronised),
                RACE_ROUNDS,
            )?);
            line.race_rounds = Some(RACE_ROUNDS);
        }
        Err(why) => line.questions_error = Some(why.to_owned()),
    }
    Ok(())
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
