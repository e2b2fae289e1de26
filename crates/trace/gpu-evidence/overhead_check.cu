// What tracing adds to a program's NPP calls, seen from the program: the host time of
// nppiConvert_8u32f_C1R_Ctx 64x64 (aligned, strides 64/256), called in a loop by a pool of
// threads, each on a non-blocking stream of its own (no call waits for the GPU: the host time is
// the call's own). run.sh runs it bare and traced, alternately, and the interposer's own figure is
// in the trace. Usage: overhead_check [threads=8] [calls per thread=20000]
#include <chrono>
#include <thread>
#include <vector>
#include "common.h"

int main(int argc, char** argv) {
    int threads = argc > 1 ? std::atoi(argv[1]) : 8;
    int calls = argc > 2 ? std::atoi(argv[2]) : 20000;
    CHECK(cudaFree(nullptr));
    const int w = 64, h = 64, src_step = 64, dst_step = 256;
    std::vector<double> per_call(threads);
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) {
        pool.emplace_back([&, i] {
            cudaStream_t stream;
            CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
            NppStreamContext ctx = context_from_stream(stream);
            Npp8u* src;
            Npp32f* dst;
            CHECK(cudaMalloc(&src, size_t(src_step) * h));
            CHECK(cudaMalloc(&dst, size_t(dst_step) * h));
            CHECK(cudaMemsetAsync(src, 7, size_t(src_step) * h, stream));
            // A warm-up call, then the timed loop; the GPU is waited for once, after it.
            nppiConvert_8u32f_C1R_Ctx(src, src_step, dst, dst_step, NppiSize{w, h}, ctx);
            CHECK(cudaStreamSynchronize(stream));
            auto start = std::chrono::steady_clock::now();
            for (int c = 0; c < calls; ++c) {
                NppStatus s = nppiConvert_8u32f_C1R_Ctx(src, src_step, dst, dst_step, NppiSize{w, h}, ctx);
                if (s != NPP_SUCCESS) std::fprintf(stderr, "status %d\n", s);
            }
            auto end = std::chrono::steady_clock::now();
            per_call[i] = std::chrono::duration<double, std::nano>(end - start).count() / calls;
            CHECK(cudaStreamSynchronize(stream));
            CHECK(cudaFree(src));
            CHECK(cudaFree(dst));
            CHECK(cudaStreamDestroy(stream));
        });
    }
    for (auto& t : pool) t.join();
    double sum = 0;
    for (double v : per_call) sum += v;
    std::printf("host time per call: %.0f ns (mean of %d threads, %d calls each)\n", sum / threads, threads, calls);
    return 0;
}
