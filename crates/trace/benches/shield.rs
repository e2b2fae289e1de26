//! What the shield's decision costs a call (`shield::enter` and `leave`: the knowledge in use,
//! the function's rules, the call's facts, a few integer tests, one atomic count): with the
//! shield off (no plan: one load), for a function the plan does not know, a configuration the
//! rules call safe, one they call leaking and racing (the context copied with its flags
//! rewritten), one whose rule reads the stream's flags on a created stream (no CUDA driver here:
//! the question ends at the loader's list), and the hazardous call on eight threads at once (one
//! site's count shared). NPP's call itself is not in it. The GPU measurement of a whole call
//! shielded against the same call unshielded is separate (docs/shield.md).

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use nppbench_model::{
    Condition, Hazard, HazardRule, SHIELD_SCHEMA_VERSION, ShieldFunction, ShieldKnowledge, ShieldPlan, ShieldTest,
    StreamKind,
};
use nppbench_npp_sys::{NppStreamContext, NppiSize};
use nppbench_trace::SYMBOLS;
use nppbench_trace::shield;
use nppbench_trace::site::{Images, Site};

const THREADS: usize = 8;

fn test(condition: Condition, holds: bool) -> ShieldTest {
    ShieldTest { condition, holds }
}

/// The shape of the atlas's rules for Convert_8u32f_C1R on NPP 12.2.3: four or five tests.
fn plan() -> ShieldPlan {
    let rules = |race_stream: bool| ShieldFunction {
        symbol: String::new(),
        src_bytes_per_pixel: 1,
        dst_bytes_per_pixel: 4,
        leak: HazardRule::When(vec![
            test(Condition::SrcRowBytesMultiple(8), false),
            test(Condition::DstStepMultiple(64), true),
            test(Condition::DeclaresNonBlocking, false),
            test(Condition::SrcRowBytesAtLeast(16), true),
        ]),
        race: HazardRule::When(if race_stream {
            vec![
                test(Condition::StreamIn(vec![StreamKind::Blocking]), true),
                test(Condition::SrcRowBytesAtLeast(16), true),
            ]
        } else {
            vec![
                test(Condition::SrcRowBytesMultiple(16), false),
                test(Condition::StreamIn(vec![StreamKind::LegacyDefault]), false),
                test(Condition::SrcRowBytesAtLeast(16), true),
            ]
        }),
        // NPP 13's rule for the functions it computes wrong; never holds at these strides.
        wrong: HazardRule::When(vec![
            test(Condition::DstStepMultiple(128), true),
            test(Condition::SrcRowStartsIn(9, 11), true),
        ]),
    };
    ShieldPlan {
        schema_version: SHIELD_SCHEMA_VERSION,
        hazards: vec![Hazard::Leak, Hazard::Race, Hazard::Wrong],
        knowledge: vec![ShieldKnowledge {
            npp_version: "12.2.3".into(),
            gpu: "bench".into(),
            runs: 1,
            functions: vec![
                ShieldFunction {
                    symbol: SYMBOLS[0].into(),
                    ..rules(false)
                },
                ShieldFunction {
                    symbol: SYMBOLS[1].into(),
                    ..rules(true)
                },
            ],
        }],
    }
}

fn site(symbol: u16, width: i32, ctx: &NppStreamContext) -> Site<'_> {
    Site {
        symbol,
        roi: NppiSize { width, height: 1080 },
        src_step: Some(2048),
        dst_step: Some(8192),
        ctx,
        // Aligned images: every source row starts on 16 bytes.
        images: Some(Images {
            src: 0x7f00_0000_0000,
            src_step: 2048,
            src2: None,
            dst: 0x7f00_1000_0000,
            dst_step: 8192,
            transposed: false,
            stageable: true,
        }),
    }
}

/// One decision, as the seam makes it: the context NPP would be passed.
#[inline]
fn decide(site: &Site<'_>) -> NppStreamContext {
    match shield::enter(site) {
        Some(s) => {
            let ctx = s.context;
            s.leave(0);
            ctx
        }
        None => *site.ctx,
    }
}

fn decisions(c: &mut Criterion) {
    let mut per_thread = NppStreamContext::zeroed();
    per_thread.h_stream = 2 as _;
    let mut created = NppStreamContext::zeroed();
    created.h_stream = 0x7d00_0000_0000_usize as _;
    let (leaking, safe, unknown) = (
        site(0, 1921, &per_thread),
        site(0, 1920, &per_thread),
        site(2, 1921, &per_thread),
    );
    c.bench_function("shield/off", |b| b.iter(|| decide(black_box(&leaking))));
    assert!(shield::install(&plan()));
    shield::pin_knowledge(Some(0));
    c.bench_function("shield/unknown_function", |b| b.iter(|| decide(black_box(&unknown))));
    c.bench_function("shield/not_hazardous", |b| b.iter(|| decide(black_box(&safe))));
    c.bench_function("shield/rewritten", |b| b.iter(|| decide(black_box(&leaking))));
    let asks = site(1, 1921, &created);
    c.bench_function("shield/stream_flags_needed", |b| b.iter(|| decide(black_box(&asks))));
    c.bench_function(&format!("shield/rewritten/{THREADS}_threads"), |b| {
        b.iter_custom(|iters| {
            let barrier = Barrier::new(THREADS);
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..THREADS)
                    .map(|_| {
                        let barrier = &barrier;
                        s.spawn(move || {
                            let mut ctx = NppStreamContext::zeroed();
                            ctx.h_stream = 2 as _;
                            let site = site(0, 1921, &ctx);
                            barrier.wait();
                            let t = Instant::now();
                            for _ in 0..iters {
                                black_box(decide(black_box(&site)));
                            }
                            t.elapsed()
                        })
                    })
                    .collect();
                let total: Duration = handles.into_iter().map(|h| h.join().unwrap()).sum();
                total / THREADS as u32
            })
        })
    });
}

criterion_group!(benches, decisions);
criterion_main!(benches);
