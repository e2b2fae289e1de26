// A service-like program of nppbench's own, to check that a trace attributes every stream NPP
// keeps to the call site that made it. Four patterns, one after another, in one process:
//   A. a thread per call: nppiConvert_8u32f_C1R_Ctx 31x31 (strides 32/128), blocking stream,
//      context from the stream;
//   B. a thread per call: nppiCopy_8u_C1R_Ctx 1918x64 (strides 1920/1920) on a NON-blocking
//      stream whose context is memset to zero but for hStream (it declares a blocking stream);
//   C. a pool of 4 threads: nppiConvert_8u32f_C1R_Ctx 1918x1080 (strides 1920/7680), blocking;
//   D. functions nppbench's catalogue lacks, so the trace can name NPP's streams only by the
//      creating stack: each in a group of its own, a thread per call, blocking stream, context
//      from the stream, device memory printed after each group:
//      D1. nppiConvert_8u32f_AC4R_Ctx 31x31 (strides 128/512),
//      D2. nppiCopy_32f_C4R_Ctx 31x31 (strides 512/512),
//      D3. nppiAddC_8u_C4RSfs_Ctx 31x31 (strides 128/128), constants {1,2,3,4}, scale 0,
//      D4. nppiSubC_8u_C1RSfs_Ctx 31x31 (strides 32/128), constant 1, scale 0,
//      D5. nppiCopy_16u_C1R_Ctx 31x31 (strides 64/128),
//      D6. nppiSubC_8u_C1RSfs_Ctx 1918x64 (strides 1920/1920), D7. nppiCopy_16u_C1R_Ctx 1918x64
//      (strides 3840/3840), D8. nppiNot_8u_C1R_Ctx 1918x64 (strides 1920/1920);
//   E. a thread per call: nppiConvert_8u32f_C1R_Ctx 32x32 (strides 32/128): aligned.
// Build with -lnppial beside -lnppidei (AddC is in the arithmetic library).
// Usage: own_program [threads per pattern=40]
#include <cstring>
#include <thread>
#include <vector>
#include "common.h"

template <class F>
static void on_new_threads(int n, F f) {
    for (int i = 0; i < n; ++i) {
        std::thread t(f);
        t.join();
    }
}

static void convert(cudaStream_t stream, const NppStreamContext& ctx, int w, int h, int ss, int ds) {
    Npp8u* src;
    Npp32f* dst;
    CHECK(cudaMalloc(&src, size_t(ss) * h));
    CHECK(cudaMalloc(&dst, size_t(ds) * h));
    NppStatus s = nppiConvert_8u32f_C1R_Ctx(src, ss, dst, ds, NppiSize{w, h}, ctx);
    if (s != NPP_SUCCESS) std::fprintf(stderr, "convert %dx%d: %d\n", w, h, s);
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
}

// One call of an uncatalogued function on `rows` rows (31 by default): source and destination of
// these strides, the call made by `call(src, dst)`, its status checked, then synchronised and
// freed.
template <class Call>
static void uncatalogued(cudaStream_t stream, int src_step, int dst_step, Call call, const char* name, int rows = 31) {
    void *src, *dst;
    CHECK(cudaMalloc(&src, size_t(src_step) * rows));
    CHECK(cudaMalloc(&dst, size_t(dst_step) * rows));
    CHECK(cudaMemsetAsync(src, 7, size_t(src_step) * rows, stream));
    NppStatus st = call(src, dst);
    if (st != NPP_SUCCESS) std::fprintf(stderr, "%s (%d rows): %d\n", name, rows, st);
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
}

template <class Call>
static void with_stream(unsigned flags, bool zeroed, Call call) {
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, flags));
    NppStreamContext ctx;
    if (zeroed) {
        std::memset(&ctx, 0, sizeof ctx);
        ctx.hStream = stream;
    } else {
        ctx = context_from_stream(stream);
    }
    call(stream, ctx);
    CHECK(cudaStreamDestroy(stream));
}

int main(int argc, char** argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 40;
    CHECK(cudaFree(nullptr));
    std::printf("start: %zu MiB\n", used_mib());
    on_new_threads(n, [] {
        with_stream(cudaStreamDefault, false, [](cudaStream_t s, const NppStreamContext& c) { convert(s, c, 31, 31, 32, 128); });
    });
    std::printf("A: %zu MiB\n", used_mib());
    on_new_threads(n, [] {
        with_stream(cudaStreamNonBlocking, true, [](cudaStream_t s, const NppStreamContext& c) {
            Npp8u *src, *dst;
            CHECK(cudaMalloc(&src, 1920 * 64));
            CHECK(cudaMalloc(&dst, 1920 * 64));
            NppStatus st = nppiCopy_8u_C1R_Ctx(src, 1920, dst, 1920, NppiSize{1918, 64}, c);
            if (st != NPP_SUCCESS) std::fprintf(stderr, "copy: %d\n", st);
            CHECK(cudaStreamSynchronize(s));
            CHECK(cudaFree(src));
            CHECK(cudaFree(dst));
        });
    });
    std::printf("B: %zu MiB\n", used_mib());
    {
        std::vector<std::thread> pool;
        for (int t = 0; t < 4; ++t)
            pool.emplace_back([n] {
                with_stream(cudaStreamDefault, false, [n](cudaStream_t s, const NppStreamContext& c) {
                    for (int i = 0; i < n / 4; ++i) convert(s, c, 1918, 1080, 1920, 7680);
                });
            });
        for (auto& t : pool) t.join();
    }
    std::printf("C: %zu MiB\n", used_mib());
    // D: each uncatalogued function on new threads, with the memory after its group.
    on_new_threads(n, [] {
        with_stream(cudaStreamDefault, false, [](cudaStream_t s, const NppStreamContext& c) {
            uncatalogued(s, 128, 512, [&](void* src, void* dst) {
                return nppiConvert_8u32f_AC4R_Ctx(static_cast<const Npp8u*>(src), 128, static_cast<Npp32f*>(dst), 512,
                                                  NppiSize{31, 31}, c);
            }, "nppiConvert_8u32f_AC4R_Ctx");
        });
    });
    std::printf("D1 nppiConvert_8u32f_AC4R_Ctx: %zu MiB\n", used_mib());
    on_new_threads(n, [] {
        with_stream(cudaStreamDefault, false, [](cudaStream_t s, const NppStreamContext& c) {
            uncatalogued(s, 512, 512, [&](void* src, void* dst) {
                return nppiCopy_32f_C4R_Ctx(static_cast<const Npp32f*>(src), 512, static_cast<Npp32f*>(dst), 512,
                                            NppiSize{31, 31}, c);
            }, "nppiCopy_32f_C4R_Ctx");
        });
    });
    std::printf("D2 nppiCopy_32f_C4R_Ctx: %zu MiB\n", used_mib());
    on_new_threads(n, [] {
        with_stream(cudaStreamDefault, false, [](cudaStream_t s, const NppStreamContext& c) {
            uncatalogued(s, 128, 128, [&](void* src, void* dst) {
                const Npp8u constants[4] = {1, 2, 3, 4};
                return nppiAddC_8u_C4RSfs_Ctx(static_cast<const Npp8u*>(src), 128, constants, static_cast<Npp8u*>(dst),
                                              128, NppiSize{31, 31}, 0, c);
            }, "nppiAddC_8u_C4RSfs_Ctx");
        });
    });
    std::printf("D3 nppiAddC_8u_C4RSfs_Ctx: %zu MiB\n", used_mib());
    on_new_threads(n, [] {
        with_stream(cudaStreamDefault, false, [](cudaStream_t s, const NppStreamContext& c) {
            uncatalogued(s, 32, 128, [&](void* src, void* dst) {
                return nppiSubC_8u_C1RSfs_Ctx(static_cast<const Npp8u*>(src), 32, 1, static_cast<Npp8u*>(dst), 128,
                                              NppiSize{31, 31}, 0, c);
            }, "nppiSubC_8u_C1RSfs_Ctx");
        });
    });
    std::printf("D4 nppiSubC_8u_C1RSfs_Ctx: %zu MiB\n", used_mib());
    on_new_threads(n, [] {
        with_stream(cudaStreamDefault, false, [](cudaStream_t s, const NppStreamContext& c) {
            uncatalogued(s, 64, 128, [&](void* src, void* dst) {
                return nppiCopy_16u_C1R_Ctx(static_cast<const Npp16u*>(src), 64, static_cast<Npp16u*>(dst), 128,
                                            NppiSize{31, 31}, c);
            }, "nppiCopy_16u_C1R_Ctx");
        });
    });
    std::printf("D5 nppiCopy_16u_C1R_Ctx: %zu MiB\n", used_mib());
    // The same two at 1918x64, where the catalogued Copy_8u_C1R keeps NPP's streams (pattern B).
    on_new_threads(n, [] {
        with_stream(cudaStreamDefault, false, [](cudaStream_t s, const NppStreamContext& c) {
            uncatalogued(s, 1920, 1920, [&](void* src, void* dst) {
                return nppiSubC_8u_C1RSfs_Ctx(static_cast<const Npp8u*>(src), 1920, 1, static_cast<Npp8u*>(dst), 1920,
                                              NppiSize{1918, 64}, 0, c);
            }, "nppiSubC_8u_C1RSfs_Ctx", 64);
        });
    });
    std::printf("D6 nppiSubC_8u_C1RSfs_Ctx 1918x64: %zu MiB\n", used_mib());
    on_new_threads(n, [] {
        with_stream(cudaStreamDefault, false, [](cudaStream_t s, const NppStreamContext& c) {
            uncatalogued(s, 3840, 3840, [&](void* src, void* dst) {
                return nppiCopy_16u_C1R_Ctx(static_cast<const Npp16u*>(src), 3840, static_cast<Npp16u*>(dst), 3840,
                                            NppiSize{1918, 64}, c);
            }, "nppiCopy_16u_C1R_Ctx", 64);
        });
    });
    std::printf("D7 nppiCopy_16u_C1R_Ctx 1918x64: %zu MiB\n", used_mib());
    on_new_threads(n, [] {
        with_stream(cudaStreamDefault, false, [](cudaStream_t s, const NppStreamContext& c) {
            uncatalogued(s, 1920, 1920, [&](void* src, void* dst) {
                return nppiNot_8u_C1R_Ctx(static_cast<const Npp8u*>(src), 1920, static_cast<Npp8u*>(dst), 1920,
                                          NppiSize{1918, 64}, c);
            }, "nppiNot_8u_C1R_Ctx", 64);
        });
    });
    std::printf("D8 nppiNot_8u_C1R_Ctx 1918x64: %zu MiB\n", used_mib());
    on_new_threads(n, [] {
        with_stream(cudaStreamDefault, false, [](cudaStream_t s, const NppStreamContext& c) { convert(s, c, 32, 32, 32, 128); });
    });
    std::printf("E: %zu MiB\n", used_mib());
    return 0;
}
