// A thread's first call when the thread made no stream before it (so the interposer registers
// the thread on the call itself): threads started one after another, each making one
// nppiConvert_8u32f_C1R_Ctx 64x64 call (aligned, strides 64/256: NPP makes no stream) on a
// non-blocking stream the main thread created, as a service with a thread per request and a
// shared stream would. run.sh runs it bare and traced; the interposer's own figure is in the
// trace, and the program prints the host time of the calls. With a second argument, each thread
// first touches that many KiB of its stack, as a thread that ran deeper code before its first
// NPP call has (a new thread's stack pages are otherwise first touched, and faulted in, by the
// call itself). Usage: first_calls [threads=200] [stack KiB touched first=0]
#include <alloca.h>
#include <chrono>
#include <thread>
#include "common.h"

int main(int argc, char** argv) {
    int threads = argc > 1 ? std::atoi(argv[1]) : 200;
    int touch_kib = argc > 2 ? std::atoi(argv[2]) : 0;
    const int w = 64, h = 64, src_step = 64, dst_step = 256;
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    NppStreamContext ctx = context_from_stream(stream);
    Npp8u* src;
    Npp32f* dst;
    CHECK(cudaMalloc(&src, size_t(src_step) * h));
    CHECK(cudaMalloc(&dst, size_t(dst_step) * h));
    CHECK(cudaMemsetAsync(src, 7, size_t(src_step) * h, stream));
    // Loads NPP's code and the kernel on the main thread first.
    nppiConvert_8u32f_C1R_Ctx(src, src_step, dst, dst_step, NppiSize{w, h}, ctx);
    CHECK(cudaStreamSynchronize(stream));
    double total_ns = 0;
    for (int i = 0; i < threads; ++i) {
        std::thread t([&] {
            if (touch_kib > 0) {
                volatile char* stack = static_cast<volatile char*>(alloca(size_t(touch_kib) << 10));
                for (size_t b = 0; b < (size_t(touch_kib) << 10); b += 4096) stack[b] = 0;
            }
            auto start = std::chrono::steady_clock::now();
            NppStatus s = nppiConvert_8u32f_C1R_Ctx(src, src_step, dst, dst_step, NppiSize{w, h}, ctx);
            auto end = std::chrono::steady_clock::now();
            if (s != NPP_SUCCESS) std::fprintf(stderr, "status %d\n", s);
            total_ns += std::chrono::duration<double, std::nano>(end - start).count();
        });
        t.join();
    }
    CHECK(cudaStreamSynchronize(stream));
    std::printf("host time of a thread's first call: %.0f ns (mean of %d threads, one after another)\n",
                total_ns / threads, threads);
    return 0;
}
