// The seed report's case, rebuilt from its description: a new host thread for every frame, each
// creating a blocking stream and converting two images with nppiConvert_8u32f_C1R_Ctx — 31x31
// (source stride 32, destination stride 128: the width is not a multiple of 16, the strides are
// aligned) and 32x35 (source stride 36, destination stride 144). Device memory grows with every
// thread. Usage: seed_repro [threads=100]
#include <thread>
#include "common.h"

static void frame() {
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));  // blocking
    NppStreamContext ctx = context_from_stream(stream);
    struct Case { int w, h, src_step, dst_step; } cases[2] = {{31, 31, 32, 128}, {32, 35, 36, 144}};
    for (const Case& k : cases) {
        Npp8u* src;
        Npp32f* dst;
        CHECK(cudaMalloc(&src, size_t(k.src_step) * k.h));
        CHECK(cudaMalloc(&dst, size_t(k.dst_step) * k.h));
        CHECK(cudaMemsetAsync(src, 7, size_t(k.src_step) * k.h, stream));
        NppStatus s = nppiConvert_8u32f_C1R_Ctx(src, k.src_step, dst, k.dst_step, NppiSize{k.w, k.h}, ctx);
        if (s != NPP_SUCCESS) std::fprintf(stderr, "nppiConvert_8u32f_C1R_Ctx %dx%d: status %d\n", k.w, k.h, s);
        CHECK(cudaStreamSynchronize(stream));
        CHECK(cudaFree(src));
        CHECK(cudaFree(dst));
    }
    CHECK(cudaStreamDestroy(stream));
}

int main(int argc, char** argv) {
    int threads = argc > 1 ? std::atoi(argv[1]) : 100;
    CHECK(cudaFree(nullptr));
    size_t before = used_mib();
    for (int i = 0; i < threads; ++i) {
        std::thread t(frame);
        t.join();
        if ((i + 1) % 25 == 0) std::printf("%d threads: %zu MiB used (started at %zu)\n", i + 1, used_mib(), before);
    }
    return 0;
}
