//! A designed function's throughput point (`design::throughput`): one call, then
//! [`design::throughput::TIMED_CALLS`] timed back to back at 1080p on a non-blocking stream, by
//! CUDA events.

use nppbench_analysis::calls::design;
use nppbench_headers::generate::FunctionRow;
use nppbench_headers::roles::Role;
use nppbench_headers::synth::{Shape, plan};
use nppbench_model::{ContextFill, StreamKind};

use super::super::{CallError, Called, sticky};
use super::Contexts;

/// The function's throughput point.
pub(super) fn throughput_point(
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
