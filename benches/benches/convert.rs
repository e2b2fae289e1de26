//! NPP's `nppiConvert_8u32f_C1R_Ctx` and nppbench's reference kernel, timed with CUDA events
//! around batches of launches, at the public report's size, 1080p and 4K, on a blocking and a
//! non-blocking stream. Criterion reports time per call and, from the bytes moved, GB/s.

#![forbid(unsafe_code)]

use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput};
use nppbench_engine::{CudaEventTime, gpu_available};
use nppbench_gpu::{DeviceBuffer, Gpu, ReferenceConvert, Stream};
use nppbench_model::{Geometry, Primitive, StreamKind};
use nppbench_npp::{Npp, NppSearch, StreamContext};

const P: Primitive = Primitive::Convert8u32fC1;

fn geometries() -> [Geometry; 3] {
    [
        Geometry::new(P, 31, 31, 32),
        Geometry::new(P, 1918, 1080, 1920),
        Geometry::new(P, 3840, 2160, 3840),
    ]
}

fn convert(c: &mut Criterion<CudaEventTime>, gpu: &Gpu, stream: &Arc<Stream>) {
    let npp = Npp::load(&NppSearch::new(None)).expect("the guard loaded NPP");
    let reference = ReferenceConvert::compile(gpu).ok();
    let ctx = StreamContext::new(stream, gpu.props());
    let mut group = c.benchmark_group(format!("convert_8u32f/{}", stream.kind()));
    for g in geometries() {
        let mut src = DeviceBuffer::alloc(gpu, g.src_bytes()).unwrap();
        src.upload(&nppbench_npp::source_pattern(&g)).unwrap();
        let mut dst = DeviceBuffer::alloc(gpu, g.dst_bytes()).unwrap();
        group.throughput(Throughput::Bytes(g.pixels() * P.bytes_moved_per_pixel()));
        group.bench_function(BenchmarkId::new("npp", g.label()), |b| {
            b.iter(|| npp.run(P, &g, &src, &mut dst, &ctx).unwrap())
        });
        if let Some(k) = &reference {
            group.bench_function(BenchmarkId::new("reference", g.label()), |b| {
                b.iter(|| k.launch(&g, &src, &mut dst, stream).unwrap())
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
    for kind in [StreamKind::Blocking, StreamKind::NonBlocking] {
        let stream = Arc::new(Stream::new(&gpu, kind).unwrap());
        let mut c = Criterion::default()
            .with_measurement(CudaEventTime::new(&gpu, stream.clone()))
            .configure_from_args();
        convert(&mut c, &gpu, &stream);
        c.final_summary();
    }
}

fn main() {
    benches();
}
