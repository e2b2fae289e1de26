//! The leak and race oracles of `call-catalogue` (issue #45): a function that ran at the aligned
//! steps is called again at a geometry where the leak and the race show for the functions
//! measured (a row of [`WIDTH`] samples, not a multiple of 16, its steps aligned), on a created
//! blocking stream whose context declares it (`nStreamFlags` 0), and asked:
//! - the leak: [`LEAK_THREADS`] calls, each from a new host thread, with the streams created on
//!   each thread and never destroyed counted by CUPTI, and the process's device memory read by
//!   NVML before and after;
//! - the race: [`RACE_ROUNDS`] rounds in which every input is set stale, then, on the caller's
//!   stream, a spin, the inputs written late from copies, the call, and a copy of its outputs:
//!   each round's outputs against the same call synchronised on the same inputs.
//!
//! What they find is a lead (`nppbench_analysis::calls::Lead`), confirmed only by measuring the
//! function's scenarios. Both are written into the function's line; a sticky error ends the child
//! after the line is written, as the aligned call's does.

use std::collections::BTreeSet;

use nppbench_gpu::{DelayKernel, DeviceBuffer, Gpu, ProcessMemoryProbe, Stream, StreamTracker};
use nppbench_headers::generate::FunctionRow;
use nppbench_headers::synth::{Shape, Sizers, plan};
use nppbench_model::{ContextFill, StreamKind};
use nppbench_npp::generic::{Made, Outputs};
use nppbench_npp::{Npp, StreamContext};
use serde_json::json;

use super::{CallError, sticky};

/// A row's samples: not a multiple of 16, wide enough for the functions measured to split their
/// work (rows shorter than a function's chunk do not leak).
pub const WIDTH: u32 = 1918;
pub const HEIGHT: u32 = 32;
pub(crate) const LEAK_THREADS: u32 = 8;
pub(crate) const RACE_ROUNDS: u32 = 4;
/// The spin before the late write, as the ordering rounds of a memory scenario make it.
const DELAY_CYCLES: u64 = crate::probe::ORDERING_DELAY_CYCLES;
/// The byte every input holds until the late write: unlike the patterns' bytes (0 to 63).
const STALE: u8 = 0x5a;

/// What the oracles keep for a child's functions: the blocking stream and its context, CUPTI's
/// stream tracker, the delay kernel and NVML, each that could not be had with why.
pub(crate) struct Oracles {
    stream: Stream,
    ctx: StreamContext,
    tracker: Result<StreamTracker, String>,
    delay: Result<DelayKernel, String>,
    memory: Option<ProcessMemoryProbe>,
}

impl Oracles {
    pub(crate) fn new(gpu: &Gpu, npp: &Npp) -> anyhow::Result<Oracles> {
        let stream = Stream::new(gpu, StreamKind::Blocking)?;
        let ctx = npp.context(ContextFill::FromStream, &stream, gpu.props())?;
        let delay = if crate::probe::one_connection() {
            Err("CUDA_DEVICE_MAX_CONNECTIONS=1 queues every stream behind the others: unset it".to_owned())
        } else {
            DelayKernel::compile(gpu).map_err(|e| format!("no delay kernel to write the inputs late: {e}"))
        };
        Ok(Oracles {
            stream,
            ctx,
            tracker: StreamTracker::start().map_err(|e| e.to_string()),
            delay,
            memory: ProcessMemoryProbe::new(&gpu.props().uuid).ok(),
        })
    }
}

impl Oracles {
    /// CUPTI's stream tracker, or why there is none.
    pub(crate) fn tracker(&self) -> Result<&StreamTracker, &str> {
        self.tracker.as_ref().map_err(String::as_str)
    }

    /// The kernel that delays the late write, or why there is none.
    pub(crate) fn delay(&self) -> Result<&DelayKernel, &str> {
        self.delay.as_ref().map_err(String::as_str)
    }
}

/// The oracles of `row`, written into `line`; whether the CUDA context is dead after them.
pub(crate) fn ask(
    o: &Oracles,
    npp: &Npp,
    gpu: &Gpu,
    row: &FunctionRow,
    sizers: &Sizers<'_>,
    line: &mut serde_json::Value,
) -> bool {
    let shape = Shape {
        width: WIDTH,
        height: HEIGHT,
        src_step: None,
        dst_step: None,
    };
    let p = match plan(row, sizers, &shape) {
        Ok(p) => p,
        Err(why) => {
            line["oracles_not_planned"] = json!(why);
            return false;
        }
    };
    match asked(o, npp, gpu, &p, line) {
        Ok(()) => false,
        Err(e) => {
            let dead = e.is_sticky();
            line["oracles_error"] = json!(e.to_string());
            dead
        }
    }
}

fn asked(
    o: &Oracles,
    npp: &Npp,
    gpu: &Gpu,
    p: &nppbench_headers::synth::CallPlan,
    line: &mut serde_json::Value,
) -> Result<(), CallError> {
    // The first call loads the function's kernels and makes NPP's streams for this thread.
    let mut made = npp.call_planned(gpu, p, &o.ctx).map_err(CallError::alive)?;
    gpu.synchronize().map_err(sticky)?;
    line["oracles_status"] = json!(made.status);
    if made.status < 0 {
        line["oracles_status_name"] = json!(npp.status_name(made.status));
        return Ok(());
    }
    // What every round must give: the call synchronised on the inputs the rounds write late.
    let staged = made.stage_inputs(gpu, &o.stream).map_err(sticky)?;
    made.restore_inputs_async(&staged, &o.stream).map_err(sticky)?;
    made.again(npp, &o.ctx).map_err(CallError::alive)?;
    gpu.synchronize().map_err(sticky)?;
    let synchronised = made.outputs().map_err(sticky)?;

    match &o.tracker {
        Ok(tracker) => {
            let before = o.memory.as_ref().and_then(|m| m.used_bytes().ok().flatten());
            let keeping = threads_keeping(tracker, &mut made, npp, gpu, (&o.ctx, &o.stream), LEAK_THREADS, 1)?;
            let after = o.memory.as_ref().and_then(|m| m.used_bytes().ok().flatten());
            line["leak_threads"] = json!(LEAK_THREADS);
            line["leak_threads_keeping_streams"] = json!(keeping);
            if let (Some(b), Some(a)) = (before, after) {
                line["leak_growth_bytes"] = json!(a as i64 - b as i64);
            }
        }
        Err(why) => line["leak_not_measured"] = json!(why),
    }

    let delay = match &o.delay {
        Ok(d) => d,
        Err(why) => {
            line["race_not_measured"] = json!(why);
            return Ok(());
        }
    };
    let differing = rounds_differing(
        delay,
        &mut made,
        npp,
        gpu,
        (&o.ctx, &o.stream),
        (&staged, &synchronised),
        RACE_ROUNDS,
    )?;
    line["race_rounds"] = json!(RACE_ROUNDS);
    line["race_rounds_differing"] = json!(differing);
    Ok(())
}

/// The leak question: `threads` host threads, one after another, each making `calls` calls of
/// `made` on `on`'s context and waiting for its stream; how many kept a stream NPP created on
/// them (CUPTI). One call each is a new thread per call; several, a pool's threads.
pub(crate) fn threads_keeping(
    tracker: &StreamTracker,
    made: &mut Made<'_>,
    npp: &Npp,
    gpu: &Gpu,
    on: (&StreamContext, &Stream),
    threads: u32,
    calls: u32,
) -> Result<u32, CallError> {
    let (ctx, stream) = on;
    let mut keeping = 0;
    for _ in 0..threads {
        let mark = tracker.count();
        let tid = std::thread::scope(|scope| {
            scope
                .spawn(|| -> Result<i64, CallError> {
                    gpu.bind_to_thread().map_err(sticky)?;
                    for _ in 0..calls {
                        made.again(npp, ctx).map_err(CallError::alive)?;
                        stream.synchronize().map_err(sticky)?;
                    }
                    Ok(nppbench_gpu::thread_id())
                })
                .join()
                .map_err(|_| CallError::alive("a calling thread panicked"))?
        })?;
        if kept_by(&tracker.events_since(mark), tid) > 0 {
            keeping += 1;
        }
    }
    Ok(keeping)
}

/// The race question: `rounds` rounds in which every input of `made` is set stale, then, on
/// `on`'s stream, a spin, the inputs written late from `staged`, the call, and a copy of its
/// outputs; how many rounds' outputs differ from `synchronised` (the same call synchronised on
/// the same inputs).
pub(crate) fn rounds_differing(
    delay: &DelayKernel,
    made: &mut Made<'_>,
    npp: &Npp,
    gpu: &Gpu,
    on: (&StreamContext, &Stream),
    (staged, synchronised): (&[DeviceBuffer], &Outputs),
    rounds: u32,
) -> Result<u32, CallError> {
    let (ctx, stream) = on;
    let mut differing = 0;
    for _ in 0..rounds {
        made.clobber(STALE).map_err(sticky)?;
        gpu.synchronize().map_err(sticky)?;
        delay.launch(DELAY_CYCLES, stream).map_err(sticky)?;
        made.restore_inputs_async(staged, stream).map_err(sticky)?;
        made.again(npp, ctx).map_err(CallError::alive)?;
        let snapshot = made.snapshot_async(gpu, stream).map_err(sticky)?;
        // The whole device: NPP's own stream may still run.
        gpu.synchronize().map_err(sticky)?;
        if made
            .outputs_of(&snapshot)
            .map_err(sticky)?
            .differing_bytes(synchronised)
            > 0
        {
            differing += 1;
        }
    }
    Ok(differing)
}

/// Streams created on thread `tid` among `events` and not destroyed by their end.
fn kept_by(events: &[nppbench_gpu::StreamEvent], tid: i64) -> usize {
    let mut alive = BTreeSet::new();
    for e in events {
        if e.created && e.thread == tid {
            alive.insert(e.stream);
        } else if !e.created {
            alive.remove(&e.stream);
        }
    }
    alive.len()
}

#[cfg(test)]
mod tests {
    use nppbench_gpu::StreamEvent;

    /// Made-up events: a stream the thread made and destroyed is not kept; one it made and left,
    /// and none another thread made, are counted.
    #[test]
    fn streams_kept_are_those_the_thread_made_and_nothing_destroyed() {
        let e = |created, stream, thread| StreamEvent {
            created,
            stream,
            thread,
        };
        let events = [e(true, 1, 7), e(true, 2, 7), e(false, 1, 7), e(true, 3, 8)];
        assert_eq!(super::kept_by(&events, 7), 1);
        assert_eq!(super::kept_by(&events, 9), 0);
    }
}
