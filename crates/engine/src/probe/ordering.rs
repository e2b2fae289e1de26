//! Whether NPP's work waits for the caller's stream: a memory scenario's ordering rounds.
//!
//! First, once per scenario: a call outside the rounds (NPP loads a function's kernels at their
//! first launch, slower than the spin) and a device synchronise (the sources' upload, on the
//! legacy default stream, must land before a non-blocking stream copies them aside). CUPTI
//! records where that call's kernels, copies and fills ran: where all of them ran on the
//! caller's stream, that stream orders them after any late write and before the read, so no round
//! is made (`--race-rounds where-split`, the default; `always` makes them anyway). That call's
//! output is also checked against its aligned twin (`Setup::aligned_twin`), the wrong-pixel
//! oracle that needs no CPU reference, shared like the rounds by the scenarios of the
//! configuration.
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

use std::collections::VecDeque;

use nppbench_gpu::{DelayKernel, DeviceBuffer, Gpu, GpuError, HostBuffer, KernelRecord, KernelRecorder, Stream};
use nppbench_model::{CallStreams, FailureKind, OrderingRounds, RaceRounds};
use nppbench_npp::StreamContext;

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

/// The most device memory an ordering probe keeps in staged copies between scenarios.
const STAGED_BYTES: u64 = 256 << 20;

/// The ordering rounds of `setup` on `stream`, staging the sources' patterns in copies from
/// `staged`. A fault of NPP's ends the rounds with the reason recorded; a fault of the device
/// (which may have poisoned the context) is the scenario's.
pub(crate) fn rounds(
    delay: Result<&DelayKernel, &GpuError>,
    setup: &mut Setup,
    stream: &Stream,
    host: &mut HostBuffer,
    staged: &mut StagedCopies,
    race_rounds: RaceRounds,
) -> Result<OrderingRounds, ProbeError> {
    let mut out = OrderingRounds {
        delay_cycles: DELAY_CYCLES,
        ..OrderingRounds::default()
    };
    match run(delay, setup, stream, host, staged, race_rounds, &mut out) {
        Ok(()) => Ok(out),
        Err(e) if e.kind == FailureKind::Npp => {
            out.not_measured = Some(format!("round {}: {}", out.rounds + 1, e.message));
            Ok(out)
        }
        Err(e) => Err(e),
    }
}

fn run(
    delay: Result<&DelayKernel, &GpuError>,
    setup: &mut Setup,
    stream: &Stream,
    host: &mut HostBuffer,
    spares: &mut StagedCopies,
    race_rounds: RaceRounds,
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
    out.first_call = first_call(delay.ok(), setup, &ctx, stream)?;
    let synchronised = setup.lock_dst().download()?;
    // The wrong-pixel oracle that needs no reference: the same call at aligned strides.
    out.aligned_twin = setup.aligned_twin(&synchronised, stream)?;
    let delay = match delay {
        Ok(d) => d,
        Err(why) => {
            out.not_measured = Some(format!("no delay kernel to write the source late: {why}"));
            return Ok(());
        }
    };
    if let Some(why) = serialised() {
        out.not_measured = Some(why);
        return Ok(());
    }
    if race_rounds == RaceRounds::WhereSplit && out.first_call.is_some_and(|c| c.all_on_caller()) {
        return Ok(());
    }
    // Each source's real pattern, copied aside while the sources still hold it (into a copy an
    // earlier scenario of the same size left, where there is one: what it held is overwritten).
    let mut staged = Vec::new();
    for source in setup.sources() {
        let mut copy = spares.take(&gpu, source.len())?;
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
    // The real pattern back in place, whatever happened; the copies kept for the next scenarios.
    let mut restored = true;
    for (source, copy) in setup.sources_mut().iter_mut().zip(&staged) {
        restored &= source.copy_from_async(copy, stream).is_ok();
    }
    restored &= gpu.synchronize().is_ok();
    spares.give_back(staged, restored);
    result
}

/// Makes the first call, synchronised, and says where CUPTI saw its device work run: the delay
/// kernel, launched for no cycles on the caller's stream just before the call, names that
/// stream's CUPTI id. `None` where CUPTI records nothing here (unavailable, a profiler holds it,
/// no delay kernel): the rounds are then made.
fn first_call(
    delay: Option<&DelayKernel>,
    setup: &Setup,
    ctx: &StreamContext,
    stream: &Stream,
) -> Result<Option<CallStreams>, ProbeError> {
    // Without the delay kernel there is no marker, and nothing to place the records against.
    let recorder = delay.and_then(|_| KernelRecorder::start_with_copies().ok());
    if let (Some(delay), Some(_)) = (delay, &recorder) {
        delay.launch(0, stream)?;
    }
    setup.launch(&mut setup.lock_dst(), ctx)?;
    setup.gpu().synchronize()?;
    let Some(recorder) = recorder else {
        return Ok(None);
    };
    Ok(recorder.take(stream).ok().and_then(|records| call_streams(&records)))
}

/// The records' work other than the marker (the delay kernel), on the marker's stream and
/// elsewhere; `None` without exactly one marker.
fn call_streams(records: &[KernelRecord]) -> Option<CallStreams> {
    let mut markers = records.iter().filter(|r| r.name == DelayKernel::NAME);
    let caller = markers.next()?.stream;
    if markers.next().is_some() {
        return None;
    }
    let mut out = CallStreams::default();
    for r in records.iter().filter(|r| r.name != DelayKernel::NAME) {
        if r.stream == caller {
            out.on_caller += 1;
        } else {
            out.elsewhere += 1;
        }
    }
    Some(out)
}

/// The staged copies an ordering probe keeps between scenarios, for the next of the same sizes:
/// the most recently used first, within [`STAGED_BYTES`].
pub(crate) struct StagedCopies {
    spares: Spares<DeviceBuffer>,
    /// Copies the device may still work on (their scenario's last synchronise failed): never
    /// reused nor freed.
    unsettled: Vec<Vec<DeviceBuffer>>,
}

impl Default for StagedCopies {
    fn default() -> StagedCopies {
        StagedCopies {
            spares: Spares::new(STAGED_BYTES),
            unsettled: Vec::new(),
        }
    }
}

impl StagedCopies {
    /// A copy of exactly `bytes`: a spare one, else a new allocation.
    fn take(&mut self, gpu: &Gpu, bytes: u64) -> Result<DeviceBuffer, GpuError> {
        match self.spares.take(bytes) {
            Some(copy) => Ok(copy),
            None => DeviceBuffer::alloc(gpu, bytes),
        }
    }

    /// Keeps a scenario's copies for the next scenarios, once the device has `settled` them (no
    /// work on them is left); frees the least recently used past [`STAGED_BYTES`].
    fn give_back(&mut self, copies: Vec<DeviceBuffer>, settled: bool) {
        if !settled {
            self.unsettled.push(copies);
            return;
        }
        for copy in copies {
            drop(self.spares.keep(copy.len(), copy));
        }
    }
}

/// Items kept for reuse by their size in bytes, the most recently kept first, at most `cap`
/// bytes in all.
pub(crate) struct Spares<T> {
    items: VecDeque<(u64, T)>,
    held: u64,
    cap: u64,
}

impl<T> Spares<T> {
    pub(crate) fn new(cap: u64) -> Spares<T> {
        Spares {
            items: VecDeque::new(),
            held: 0,
            cap,
        }
    }

    /// The most recently kept item of exactly `bytes`, if there is one.
    pub(crate) fn take(&mut self, bytes: u64) -> Option<T> {
        let i = self.items.iter().position(|(b, _)| *b == bytes)?;
        let (b, item) = self.items.remove(i)?;
        self.held -= b;
        Some(item)
    }

    /// Keeps `item` of `bytes` as the most recently used; returns the items that no longer fit
    /// (the least recently used, or `item` itself where it is larger than the cap), for the
    /// caller to drop.
    pub(crate) fn keep(&mut self, bytes: u64, item: T) -> Vec<T> {
        if bytes > self.cap {
            return vec![item];
        }
        self.items.push_front((bytes, item));
        self.held += bytes;
        let mut out = Vec::new();
        while self.held > self.cap {
            let Some((b, oldest)) = self.items.pop_back() else {
                break;
            };
            self.held -= b;
            out.push(oldest);
        }
        out
    }

    /// The bytes of the items kept.
    #[cfg(test)]
    pub(crate) fn held_bytes(&self) -> u64 {
        self.held
    }
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

#[cfg(test)]
mod tests {
    use super::{DelayKernel, KernelRecord, Spares, call_streams};
    use nppbench_model::CallStreams;

    fn record(name: &str, stream: u32) -> KernelRecord {
        KernelRecord {
            name: name.into(),
            start: 0,
            end: 0,
            correlation: 0,
            stream,
        }
    }

    #[test]
    fn the_first_calls_work_is_placed_against_the_markers_stream() {
        let marker = record(DelayKernel::NAME, 7);
        let on = |n: &str| record(n, 7);
        let off = |n: &str| record(n, 13);
        let all_on = call_streams(&[marker.clone(), on("npp_kernel"), on(nppbench_gpu::FILL_RECORD)]).unwrap();
        assert_eq!(
            all_on,
            CallStreams {
                on_caller: 2,
                elsewhere: 0
            }
        );
        assert!(all_on.all_on_caller());
        // One kernel, or one copy, on another stream: split.
        let split = call_streams(&[on("a"), marker.clone(), off("b")]).unwrap();
        assert_eq!(
            split,
            CallStreams {
                on_caller: 1,
                elsewhere: 1
            }
        );
        assert!(!split.all_on_caller());
        assert!(
            !call_streams(&[marker.clone(), off(nppbench_gpu::COPY_RECORD)])
                .unwrap()
                .all_on_caller()
        );
        // No work at all is not ordered by the stream: the rounds are made.
        assert!(!call_streams(std::slice::from_ref(&marker)).unwrap().all_on_caller());
        // Without exactly one marker, the caller's stream is not known.
        assert_eq!(call_streams(&[on("a")]), None);
        assert_eq!(call_streams(&[marker.clone(), marker, on("a")]), None);
    }

    #[test]
    fn spares_keep_the_most_recently_used_within_their_bound() {
        let mut spares = Spares::new(100);
        for (bytes, name) in [(40, "a"), (30, "b"), (20, "c")] {
            assert!(spares.keep(bytes, name).is_empty());
        }
        assert_eq!(spares.held_bytes(), 90);
        // "a" is the least recently kept: it goes when "d" would pass the bound.
        assert_eq!(spares.keep(30, "d"), ["a"]);
        assert_eq!(spares.held_bytes(), 80);
        // Taken by exact size, the most recently kept first.
        assert_eq!(spares.take(30), Some("d"));
        assert_eq!(spares.take(30), Some("b"));
        assert_eq!(spares.take(30), None);
        assert_eq!(spares.take(40), None);
        assert_eq!(spares.held_bytes(), 20);
        // Larger than the bound alone: handed straight back.
        assert_eq!(spares.keep(101, "huge"), ["huge"]);
        // However many come, what is kept stays within the bound.
        for i in 0..1000u64 {
            let _ = spares.keep(1 + i % 37, "x");
            assert!(spares.held_bytes() <= 100);
        }
    }
}
