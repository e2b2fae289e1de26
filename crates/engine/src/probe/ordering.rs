//! Whether NPP's work waits for the caller's stream: a memory scenario's ordering rounds.
//!
//! First, once per scenario: a call outside the rounds (NPP loads a function's kernels at their
//! first launch, slower than the spin) and a device synchronise (the sources' upload, on the
//! legacy default stream, must land before a non-blocking stream copies them aside).
//! Then each round, on the scenario's stream kind and context filling, from the probe's own thread:
//! 1. each source is set to a byte pattern unlike its own, and the destination cleared; the
//!    device is synchronised (before the late write, never between it and the call);
//! 2. on the caller's stream: a kernel that spins for [`DELAY_CYCLES`] clock cycles (about a
//!    millisecond), then a copy of the source's real pattern into each source (the late write,
//!    as an upload with `cudaMemcpyAsync` is), then the NPP call with the scenario's context,
//!    then a copy of the destination to page-locked host memory (the read after the call);
//! 3. the device is synchronised, and the copy compared with the first call's output, made
//!    synchronised (the function's own answer, right or wrong: ordering is judged apart from
//!    the wrong-pixel hazard).
//!
//! Work that waits for the caller's stream reads the real pattern and is right. Work NPP runs on
//! a stream of its own that does not wait reads the stale bytes (or writes after the read), and
//! its pixels are wrong: those are counted and located. The legacy default stream, and a
//! context that declares a non-blocking stream, are where NPP does not split the call.

use nppbench_gpu::{DelayKernel, DeviceBuffer, GpuError, HostBuffer, Stream};
use nppbench_model::{FailureKind, OrderingRounds};

use super::setup::Setup;
use crate::error::ProbeError;

/// Rounds a scenario makes: a race shows in nearly every round where there is one.
pub(crate) const ROUNDS: u32 = 4;
/// The caller's stream spins this long before the late write: about 0.25 ms at 2 GHz, many times
/// what the host takes to queue the late write and the NPP call behind it (tens of µs). The
/// spin holds the GPU from the other probes' contexts while it runs (contexts of different
/// processes time-slice it), so it is no longer than it must be; 2,000,000 found the same races
/// (docs/performance.md).
pub(crate) const DELAY_CYCLES: u64 = 500_000;
/// The byte each source holds until the late write: unlike the patterns' bytes.
const STALE: u8 = 0x5a;

/// The ordering rounds of `setup` on `stream`. A fault of NPP's ends the rounds with the reason
/// recorded; a fault of the device (which may have poisoned the context) is the scenario's.
pub(crate) fn rounds(
    delay: Result<&DelayKernel, &GpuError>,
    setup: &mut Setup,
    stream: &Stream,
    host: &mut HostBuffer,
    kept: &mut Vec<Box<dyn std::any::Any>>,
) -> Result<OrderingRounds, ProbeError> {
    let mut out = OrderingRounds {
        delay_cycles: DELAY_CYCLES,
        ..OrderingRounds::default()
    };
    let delay = match delay {
        Ok(d) => d,
        Err(why) => {
            out.not_measured = Some(format!("no delay kernel to write the source late: {why}"));
            return Ok(out);
        }
    };
    if let Some(why) = serialised() {
        out.not_measured = Some(why);
        return Ok(out);
    }
    match run(delay, setup, stream, host, kept, &mut out) {
        Ok(()) => Ok(out),
        Err(e) if e.kind == FailureKind::Npp => {
            out.not_measured = Some(format!("round {}: {}", out.rounds + 1, e.message));
            Ok(out)
        }
        Err(e) => Err(e),
    }
}

fn run(
    delay: &DelayKernel,
    setup: &mut Setup,
    stream: &Stream,
    host: &mut HostBuffer,
    kept: &mut Vec<Box<dyn std::any::Any>>,
    out: &mut OrderingRounds,
) -> Result<(), ProbeError> {
    let gpu = setup.gpu().clone();
    let ctx = setup.context(stream)?;
    // The sources were uploaded on the legacy default stream, which a non-blocking stream does
    // not wait for: neither the first call nor the copies below may read them before the upload
    // has landed.
    gpu.synchronize()?;
    // A first call, outside the rounds: it loads NPP's kernels for this function (lazily, at
    // their first launch, which takes longer than the spin and would hide a race in the first
    // round) and makes NPP's streams for this thread and stream. Synchronised, its output is
    // what every round must give (the race oracle): where NPP computes this configuration wrong
    // even synchronised (the wrong-pixel hazard), the rounds still judge ordering alone.
    setup.lock_dst().fill(nppbench_npp::DST_FILL)?;
    setup.launch(&mut setup.lock_dst(), &ctx)?;
    gpu.synchronize()?;
    let synchronised = setup.lock_dst().download()?;
    // Each source's real pattern, copied aside while the sources still hold it.
    let mut staged = Vec::new();
    for source in setup.sources() {
        let mut copy = DeviceBuffer::alloc(&gpu, source.len())?;
        copy.copy_from_async(source, stream)?;
        staged.push(copy);
    }
    gpu.synchronize()?;
    let result = (|| {
        for _ in 0..ROUNDS {
            for source in setup.sources_mut() {
                source.fill(STALE)?;
            }
            setup.lock_dst().fill(nppbench_npp::DST_FILL)?;
            gpu.synchronize()?;
            delay.launch(DELAY_CYCLES, stream)?;
            for (source, copy) in setup.sources_mut().iter_mut().zip(&staged) {
                source.copy_from_async(copy, stream)?;
            }
            {
                let mut dst = setup.lock_dst();
                setup.launch(&mut dst, &ctx)?;
                dst.download_async(host, stream)?;
            }
            // The whole device, not the caller's stream alone: NPP's own stream may still run,
            // and the next round starts from an idle device.
            gpu.synchronize()?;
            let len = setup.lock_dst().len() as usize;
            let wrong = setup.wrong_pixels(&synchronised, host.bytes(len));
            out.rounds += 1;
            if wrong.count > 0 {
                out.wrong_rounds += 1;
                out.wrong_pixels = out.wrong_pixels.max(wrong.count);
                out.columns = widen(out.columns, wrong.columns);
                out.rows = widen(out.rows, wrong.rows);
            }
        }
        Ok::<(), ProbeError>(())
    })();
    // The real pattern back in place, whatever happened, and the copies kept with the rest.
    for (source, copy) in setup.sources_mut().iter_mut().zip(&staged) {
        let _ = source.copy_from_async(copy, stream);
    }
    let _ = gpu.synchronize();
    kept.push(Box::new(staged));
    result
}

/// Whether this process has one hardware connection: it queues every stream's work behind the
/// others', so NPP's stream never overtakes the caller's and no race can show.
pub(crate) fn one_connection() -> bool {
    std::env::var("CUDA_DEVICE_MAX_CONNECTIONS").is_ok_and(|v| v.trim() == "1")
}

/// Why this process cannot show a race, if it cannot.
fn serialised() -> Option<String> {
    one_connection().then(|| {
        "CUDA_DEVICE_MAX_CONNECTIONS=1 queues every stream behind the others, so NPP's stream cannot overtake the caller's here; run with --probe-connections inherit".to_owned()
    })
}

fn widen(a: Option<[u32; 2]>, b: Option<[u32; 2]>) -> Option<[u32; 2]> {
    match (a, b) {
        (Some([a0, a1]), Some([b0, b1])) => Some([a0.min(b0), a1.max(b1)]),
        (x, None) | (None, x) => x,
    }
}
