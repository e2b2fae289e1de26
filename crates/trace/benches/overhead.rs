//! What the interposer adds to each NPP call: `record::call` around a function that returns at
//! once (so the time is all recording), on one thread, on eight threads calling at once (each
//! appending to its own feed: no lock shared on the call path), and as the first call of a new
//! thread (which registers the thread: programs that start a thread per frame make only such
//! calls), and that same first call made after the thread has swept more memory than the
//! processor's caches hold (as the race program's threads check an 8 MB frame between their
//! calls: on the GPU machines its calls cost about twice what others' do, `reports/trace/
//! cold-calls/`), on a stream of the program's own, so that it asks what such a call asks.
//! The target is under 1 µs a call. Without the preloaded library the process has no
//! CUDA driver: the first call's question for a stream's flags ends at the loader's list. A
//! thread of the bench's own reads the records every few milliseconds, as the writer does in
//! the preloaded library (so chunks are given back and taken again, as they are there).

use std::hint::black_box;
use std::sync::{Barrier, Once};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use nppbench_npp_sys::{NppStreamContext, NppiSize};
use nppbench_trace::record;
use nppbench_trace::site::Site;

const THREADS: usize = 8;

/// Starts the bench's reader (once).
fn read_beside() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        nppbench_trace::start_recorder();
        nppbench_trace::refill_spares();
        std::thread::spawn(|| {
            loop {
                nppbench_trace::drain();
                nppbench_trace::refill_spares();
                std::thread::sleep(Duration::from_millis(5));
            }
        });
    });
}

fn site(ctx: &NppStreamContext) -> Site<'_> {
    Site {
        symbol: 0,
        roi: NppiSize {
            width: 1920,
            height: 1080,
        },
        src_step: Some(2048),
        dst_step: Some(8192),
        ctx,
        images: None,
    }
}

fn one_thread(c: &mut Criterion) {
    read_beside();
    let ctx = NppStreamContext::zeroed();
    let site = site(&ctx);
    c.bench_function("record_call/1_thread", |b| {
        b.iter(|| record::call(black_box(&site), || black_box(0)))
    });
}

/// `iters` calls on each of [`THREADS`] threads started together: the wall time, so a lock the
/// threads shared would show as time growing with the thread count.
fn many_threads(iters: u64) -> Duration {
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    let ctx = NppStreamContext::zeroed();
                    let site = site(&ctx);
                    record::call(&site, || 0);
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..iters {
                        record::call(black_box(&site), || black_box(0));
                    }
                    start.elapsed()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).max().unwrap_or_default()
    })
}

fn eight_threads(c: &mut Criterion) {
    read_beside();
    c.bench_function("record_call/8_threads", |b| b.iter_custom(many_threads));
}

/// One recorded call on `stream` from the calling thread, timed.
fn one_call(stream: *mut std::ffi::c_void) -> Duration {
    let mut ctx = NppStreamContext::zeroed();
    ctx.h_stream = stream;
    let site = site(&ctx);
    let start = Instant::now();
    record::call(black_box(&site), || black_box(0));
    start.elapsed()
}

/// `iters` new threads, one after another, each timing its first call only. Each has allocated
/// and used its stack before, as a program's thread has by its first NPP call, so that the time
/// is the interposer's; spare feeds are kept registered, as the preloaded library's writer
/// keeps them (outside the timing).
fn first_calls(iters: u64) -> Duration {
    (0..iters)
        .map(|_| {
            nppbench_trace::refill_spares();
            std::thread::spawn(|| {
                black_box(&mut [0u8; 64 << 10]);
                black_box(vec![0u8; 256]);
                one_call(std::ptr::null_mut())
            })
            .join()
            .unwrap()
        })
        .sum()
}

fn new_thread(c: &mut Criterion) {
    read_beside();
    c.bench_function("record_call/first_on_a_new_thread", |b| b.iter_custom(first_calls));
}

/// Bytes a thread sweeps before its call: more than the last-level cache of the GPU machines'
/// processors holds for one core's share (the race program's threads sweep an 8 MB frame and
/// its 2 MB source).
const SWEPT: usize = 64 << 20;

/// A stream handle of the program's own (not 0, 1 or 2, the default streams'), on a context
/// declaring a blocking stream: a call that can race (`site::can_race`).
const STREAM: usize = 0x7f00_dead_b000;

/// As [`first_calls`], each thread first writing and reading [`SWEPT`] bytes, on [`STREAM`].
fn cold_first_calls(iters: u64) -> Duration {
    let mut swept = vec![0u8; SWEPT];
    (0..iters)
        .map(|i| {
            nppbench_trace::refill_spares();
            std::thread::scope(|s| {
                s.spawn(|| {
                    for line in swept.chunks_mut(64) {
                        line[0] = line[0].wrapping_add(i as u8);
                    }
                    black_box(swept.iter().step_by(64).map(|&b| u64::from(b)).sum::<u64>());
                    one_call(STREAM as _)
                })
                .join()
                .unwrap()
            })
        })
        .sum()
}

fn cold_new_thread(c: &mut Criterion) {
    read_beside();
    let mut group = c.benchmark_group("record_call");
    group.sample_size(20);
    group.bench_function("first_on_a_new_thread_after_sweeping_its_caches", |b| {
        b.iter_custom(cold_first_calls)
    });
    group.finish();
}

criterion_group!(benches, one_thread, eight_threads, new_thread, cold_new_thread);
criterion_main!(benches);
