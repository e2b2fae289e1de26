//! NPP's `nppiConvert_8u32f_C1R_Ctx` (with a copy, an arithmetic and a filter from the catalogue
//! beside it) and nppbench's reference kernel, timed with CUDA events around batches of launches,
//! at the public report's size, 1080p and 4K, on a blocking and a non-blocking stream. Criterion
//! reports time per call and, from the bytes moved, GB/s.

#![forbid(unsafe_code)]

use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput};
use nppbench_engine::{CudaEventTime, gpu_available};
use nppbench_gpu::{DeviceBuffer, Gpu, ReferenceConvert, Stream};
use nppbench_model::{ContextFill, Geometry, Primitive, StreamKind};
use nppbench_npp::{Npp, NppSearch};

/// The functions timed: Convert (the report's reference function) and one each of a copy, an
/// arithmetic and a filter.
const PRIMITIVES: [&str; 4] = [
    "Convert_8u32f_C1R",
    "Copy_8u_C1R",
    "AddC_8u_C1RSfs",
    "FilterGaussBorder_8u_C1R",
];

fn geometries(p: Primitive) -> [Geometry; 3] {
    [
        Geometry::new(p, 31, 31, 32),
        Geometry::new(p, 1918, 1080, 1920),
        Geometry::new(p, 3840, 2160, 3840),
    ]
}

fn bench(c: &mut Criterion<CudaEventTime>, gpu: &Gpu, stream: &Arc<Stream>, npp: &Npp, name: &str) {
    let p = Primitive::from_name(name).expect("a catalogued primitive");
    let convert = name == "Convert_8u32f_C1R";
    let reference = if convert {
        ReferenceConvert::compile(gpu).ok()
    } else {
        None
    };
    let ctx = npp.context(ContextFill::FromStream, stream, gpu.props()).unwrap();
    let mut group = c.benchmark_group(format!("{name}/{}", stream.kind()));
    for g in geometries(p) {
        let sources: Vec<DeviceBuffer> = nppbench_npp::source_buffers(p, &g)
            .iter()
            .map(|pattern| {
                let mut b = DeviceBuffer::alloc(gpu, g.src_bytes()).unwrap();
                b.upload(pattern).unwrap();
                b
            })
            .collect();
        let sources: Vec<&DeviceBuffer> = sources.iter().collect();
        let scratch = match npp.scratch_bytes(p, &g, &ctx).unwrap() {
            0 => None,
            bytes => Some(DeviceBuffer::alloc(gpu, bytes).unwrap()),
        };
        let mut dst = DeviceBuffer::alloc(gpu, g.dst_bytes(p)).unwrap();
        group.throughput(Throughput::Bytes(p.row().bytes_moved(g.width, g.height)));
        group.bench_function(BenchmarkId::new("npp", g.label()), |b| {
            b.iter(|| npp.run(p, &g, &sources, &mut dst, scratch.as_ref(), &ctx).unwrap())
        });
        if let Some(k) = &reference {
            group.bench_function(BenchmarkId::new("reference", g.label()), |b| {
                b.iter(|| k.launch(&g, sources[0], &mut dst, stream).unwrap())
            });
        }
    }
    group.finish();
}

/// One criterion run per stream kind, since the CUDA-event measurement belongs to a stream
/// (which is why this bench has its own `main` rather than `criterion_main!`).
fn benches() {
    if !gpu_available("benches/convert") {
        return;
    }
    let gpu = Gpu::open(0).unwrap();
    let npp = Npp::load(&NppSearch::new(None)).expect("the guard loaded NPP");
    for kind in [StreamKind::Blocking, StreamKind::NonBlocking] {
        let stream = Arc::new(Stream::new(&gpu, kind).unwrap());
        let mut c = Criterion::default()
            .with_measurement(CudaEventTime::new(&gpu, stream.clone()))
            .configure_from_args();
        for name in PRIMITIVES {
            bench(&mut c, &gpu, &stream, &npp, name);
        }
        c.final_summary();
    }
}

fn main() {
    benches();
}
