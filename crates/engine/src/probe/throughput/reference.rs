//! The reference kernel beside NPP: checked against the CPU reference, then timed as NPP was
//! timed (criterion, then CUPTI's kernel records).

use nppbench_gpu::{HostBuffer, ReferenceConvert, Stream};
use nppbench_model::ReferenceResult;
use nppbench_npp::DST_FILL;

use super::call_records::{RECORDED_CALLS, record_calls};
use super::timer::Timer;
use crate::error::ProbeError;
use crate::probe::setup::Setup;

/// Checks the reference kernel against the CPU reference, then times it as NPP was timed.
pub(super) fn time_reference(
    kernel: &ReferenceConvert,
    setup: &Setup,
    stream: &Stream,
    timer: &mut Timer<'_>,
    host: &mut HostBuffer,
    name: &str,
) -> Result<ReferenceResult, ProbeError> {
    let g = &setup.geometry;
    let correctness = {
        let mut dst = setup.lock_dst();
        dst.fill(DST_FILL)?;
        kernel.launch(g, setup.source(), &mut dst, stream)?;
        stream.synchronize()?;
        drop(dst);
        setup
            .check_with(host)
            .and_then(|c| setup.right(c))
            .map_err(|e| e.context("the reference kernel is wrong"))?
    };
    let timing = timer.time(setup, name, |dst| Ok(kernel.launch(g, setup.source(), dst, stream)?))?;
    let records = {
        let mut dst = setup.lock_dst();
        record_calls(
            stream,
            RECORDED_CALLS,
            || Ok(()),
            || Ok(kernel.launch(g, setup.source(), &mut dst, stream)?),
        )
    };
    Ok(ReferenceResult {
        path: ReferenceConvert::path(g).to_owned(),
        kernel: timing,
        correctness,
        kernel_records: records.ok().map(|(_, aggregate)| aggregate),
        measured_in: None,
    })
}
