// Issue #50's program: `total` new host threads, at most `alive` of them alive at once, each
// creating a blocking stream, making one nppiConvert_8u32f_C1R_Ctx call (its thread's first NPP
// call) on it, synchronising and destroying the stream: half at 31x31 (source stride 32,
// destination stride 128: the leaking case), half at 32x32. The threads of a wave are released
// together, so that `alive` first calls meet in NPP and in an interposer at the same time.
// Prints the calls made, the ones NPP refused, and the wall time.
// Usage: concurrent_first_calls [total=10000] [alive=100]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>
#include "common.h"

int main(int argc, char** argv) {
    int total = argc > 1 ? std::atoi(argv[1]) : 10000;
    int alive = argc > 2 ? std::atoi(argv[2]) : 100;
    if (total < 1 || alive < 1) {
        std::fprintf(stderr, "usage: concurrent_first_calls [total>=1] [alive>=1]\n");
        return 2;
    }
    CHECK(cudaFree(nullptr));
    // One source and destination per size, shared: the calls write the same pixels.
    struct Case { int w, h, src_step, dst_step; Npp8u* src; Npp32f* dst; } cases[2] = {
        {31, 31, 32, 128, nullptr, nullptr}, {32, 32, 32, 128, nullptr, nullptr}};
    for (Case& k : cases) {
        CHECK(cudaMalloc(&k.src, size_t(k.src_step) * k.h));
        CHECK(cudaMalloc(&k.dst, size_t(k.dst_step) * k.h));
        CHECK(cudaMemset(k.src, 7, size_t(k.src_step) * k.h));
    }
    size_t before = used_mib();
    std::atomic<int> refused{0};
    auto start = std::chrono::steady_clock::now();
    for (int made = 0; made < total;) {
        int wave = std::min(alive, total - made);
        std::atomic<int> ready{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> threads;
        threads.reserve(wave);
        for (int i = 0; i < wave; ++i) {
            const Case& k = cases[(made + i) % 2];
            threads.emplace_back([&, k] {
                cudaStream_t stream;
                CHECK(cudaStreamCreate(&stream));
                NppStreamContext ctx = context_from_stream(stream);
                ready.fetch_add(1);
                while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
                NppStatus s = nppiConvert_8u32f_C1R_Ctx(k.src, k.src_step, k.dst, k.dst_step, NppiSize{k.w, k.h}, ctx);
                if (s != NPP_SUCCESS) refused.fetch_add(1);
                CHECK(cudaStreamSynchronize(stream));
                CHECK(cudaStreamDestroy(stream));
            });
        }
        while (ready.load() < wave) std::this_thread::yield();
        go.store(true, std::memory_order_release);
        for (std::thread& t : threads) t.join();
        made += wave;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%d calls on %d threads, %d alive at once: %d refused, %.2f s, %zu MiB used (started at %zu)\n", total,
                total, alive, refused.load(), s, used_mib(), before);
    return 0;
}
