//! What the interposer adds to each NPP call: `record::call` around a function that returns at
//! once (so the time is all recording), on one thread, on eight threads calling at once (each
//! appending to its own feed: no lock shared on the call path), and as the first call of a new
//! thread (which registers the thread: programs that start a thread per frame make only such
//! calls). The target is under 1 µs a call. Without the preloaded library the process has no
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
                let ctx = NppStreamContext::zeroed();
                let site = site(&ctx);
                let start = Instant::now();
                record::call(black_box(&site), || black_box(0));
                start.elapsed()
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

criterion_group!(benches, one_thread, eight_threads, new_thread);
criterion_main!(benches);
