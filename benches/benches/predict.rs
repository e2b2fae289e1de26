//! One `predict` question from the knowledge built into nppbench (target: under 50 ms): the
//! knowledge file of NPP 13.0.1 on sm90 (`knowledge/npp-13.0.1-sm90.json.gz`, made from the
//! committed atlas runs) read from its bytes, as the binary embeds them, and the seed report's
//! case answered (its class, race and wrong pixels), as `predict` does with no `--atlas`. The
//! read alone and the answer alone are timed apart. Then a function known from its headers alone
//! (Dilate_8u_C3R, in the designs built in: `knowledge/designs/npp-13.0.1-sm90.*`): its lines read
//! through the index, its rules fitted on them, and a scenario answered, as `predict` does for it.

#![forbid(unsafe_code)]

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use nppbench_analysis::calls::design;
use nppbench_analysis::knowledge::Knowledge;
use nppbench_analysis::predict::{answer, answer_race, answer_wrong, query};
use nppbench_model::{ContextFill, Geometry, Primitive, StreamKind, Threading};

fn bytes() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge/npp-13.0.1-sm90.json.gz")).unwrap()
}

fn seed_case() -> nppbench_analysis::rules::Case {
    let p = Primitive::from_name("Convert_8u32f_C1R").unwrap();
    let g = Geometry {
        dst_stride: 128,
        ..Geometry::new(p, 31, 31, 32)
    };
    query(
        p,
        g,
        StreamKind::Blocking,
        ContextFill::FromStream,
        Threading::ThreadPerCall,
    )
}

fn bench(c: &mut Criterion) {
    let bytes = bytes();
    let q = seed_case();
    let mut g = c.benchmark_group("predict");
    g.sample_size(20);
    g.bench_function("read the knowledge and answer", |b| {
        b.iter(|| {
            let k = Knowledge::from_bytes(&bytes, "bench").unwrap();
            let a = answer(&k.evidence, &k.rules, &q);
            (
                a.class,
                answer_race(&k.evidence, &k.rules, &q).races,
                answer_wrong(&k.evidence, &k.rules, &q).wrong,
            )
        })
    });
    g.bench_function("read the knowledge", |b| {
        b.iter(|| Knowledge::from_bytes(&bytes, "bench").unwrap())
    });
    let k = Knowledge::from_bytes(&bytes, "bench").unwrap();
    g.bench_function("answer", |b| b.iter(|| answer(&k.evidence, &k.rules, &q).class));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge/designs");
    let designs = std::fs::read(dir.join("npp-13.0.1-sm90.jsonl.gz")).unwrap();
    let index = std::fs::read_to_string(dir.join("npp-13.0.1-sm90.index.tsv")).unwrap();
    g.bench_function("a designed function: its lines read, its rules fitted, answered", |b| {
        b.iter(|| {
            let lines = design::lines_indexed(&designs, &index, "nppiDilate_8u_C3R_Ctx").unwrap();
            let evidence = design::evidence(&lines).unwrap();
            let rules = evidence.rules();
            let p = rules[0].primitive;
            let g = Geometry {
                width: 1000,
                height: 31,
                src_stride: 3072,
                dst_stride: 3072,
                padded_from: None,
            };
            let q = query(
                p,
                g,
                StreamKind::Blocking,
                ContextFill::FromStream,
                Threading::ThreadPerCall,
            );
            answer(&evidence, &rules, &q).class
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
