//! One shape of a design in two steps: its call at the shape's steps ([`probe`]: where the steps
//! are unaligned, the step that may leave the context dead, taken alone on the GPU), then its
//! three questions ([`questions`]: the wrong pixels, the leak, the race), beside the other
//! children's calls. A call that survived its probe is made again with the same buffers by the
//! questions.

use nppbench_analysis::calls::design::{self, LEAK_CALLS, RACE_ROUNDS, ShapeLine};
use nppbench_headers::generate::FunctionRow;
use nppbench_headers::synth::{CallPlan, Shape, plan};
use nppbench_npp::generic::{Made, Outputs};

use super::super::oracles::{rounds_differing, threads_keeping};
use super::super::{CallError, Called, sticky};
use super::{Contexts, image_steps, steps};

/// What a shape's probe left.
pub(super) enum Probed<'p> {
    /// Its line says all there is: NPP refused the call.
    Done,
    /// The call made, with what it wrote: its questions are left.
    Made(Made<'p>, Outputs),
}

/// The shape's call at its steps, planned as `p`, synchronised, written into `line`.
pub(super) fn probe<'p>(
    c: &Called<'_>,
    contexts: &mut Contexts,
    p: &'p CallPlan,
    shape: &design::Shape,
    line: &mut ShapeLine,
) -> Result<Probed<'p>, CallError> {
    let (npp, gpu) = (c.npp, c.gpu);
    let (_, ctx) = contexts.get(gpu, npp, shape.stream, shape.context)?;
    line.declared_non_blocking = Some(ctx.record().declared_flags & 1 == 1);
    let made = npp.call_planned(gpu, p, ctx).map_err(CallError::alive)?;
    gpu.synchronize().map_err(sticky)?;
    line.status = Some(made.status);
    if made.status < 0 {
        line.status_name = Some(npp.status_name(made.status).to_owned());
        return Ok(Probed::Done);
    }
    let first = made.outputs().map_err(sticky)?;
    (line.src_step_bytes, line.dst_step_bytes) = image_steps(p);
    Ok(Probed::Made(made, first))
}

/// The three questions of a shape whose call `made` was made at `at` (its probe), with `first`
/// what it wrote, written into `line`.
pub(super) fn questions(
    c: &Called<'_>,
    contexts: &mut Contexts,
    (row, at, shape): (&FunctionRow, &Shape, &design::Shape),
    (made, first): (&mut Made<'_>, &Outputs),
    line: &mut ShapeLine,
) -> Result<(), CallError> {
    let (npp, gpu) = (c.npp, c.gpu);
    // Wrong pixels: the same pixels at aligned steps (nothing to ask where the shape's are).
    let straight = plan(
        row,
        c.sizers,
        &Shape {
            src_step: None,
            dst_step: None,
            ..*at
        },
    )
    .map_err(CallError::Alive)?;
    if steps(&straight) == steps(made.plan()) {
        line.differing_bytes = Some(0);
    } else {
        let m = npp.call_planned(gpu, &straight, c.ctx).map_err(CallError::alive)?;
        gpu.synchronize().map_err(sticky)?;
        if m.status < 0 {
            line.aligned_error = Some(npp.status_name(m.status).to_owned());
        } else {
            line.differing_bytes = Some(m.outputs().map_err(sticky)?.differing_bytes(first));
        }
    }
    let (stream, ctx) = contexts.get(gpu, npp, shape.stream, shape.context)?;
    match c.oracles.tracker() {
        Ok(tracker) => {
            let (threads, calls) = match shape.threading.thread_bound() {
                Some(n) => (n, LEAK_CALLS.div_ceil(n)),
                None => (LEAK_CALLS, 1),
            };
            line.threads_keeping_streams =
                Some(threads_keeping(tracker, made, npp, gpu, (ctx, stream), threads, calls)?);
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
                made,
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
