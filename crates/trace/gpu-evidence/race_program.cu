// A program of nppbench's own that uploads with cudaMemcpyAsync and converts, to check that a
// trace names every call site called with work pending in a racing configuration, and no other
// (#29 item 5). Each phase uploads a 1918x1080 (or 1920x1080) 8-bit frame from page-locked memory
// on its stream, then calls nppiConvert_8u32f_C1R_Ctx on the same stream, from `n` new threads
// one after another, and counts the frames whose output is wrong (read back after a device-wide
// synchronise):
//   P1. blocking stream, context from the stream, 1918x1080: work pending, races (named);
//   P2. as P1 at 1918x1000 (a call site of its own), with cudaStreamSynchronize between the
//       upload and the call: nothing pending;
//   P3. as P1, the context declaring cudaStreamNonBlocking: cannot race (not asked);
//   P4. the legacy default stream: cannot race (not asked);
//   P5. as P1 at 1920x1080: work pending, but the width is whole chunks: ordered (not named
//       where the atlas is given).
// The upload is preceded by a 64 MiB page-locked copy on the same stream, so that the frame's
// upload is still queued when NPP is called.
// Usage: race_program [threads per phase=20]
#include <cmath>
#include <thread>
#include <vector>
#include "common.h"

static constexpr int H = 1080;
static constexpr size_t BALLAST = size_t(64) << 20;

struct Phase {
    const char* name;
    int width;
    int height;
    bool legacy;
    bool sync_before_call;
    bool declare_non_blocking;
};

// One frame on a new thread: returns whether its output was wrong.
static bool frame(const Phase& p, const unsigned char* host, void* ballast_host) {
    int w = p.width, h = p.height, ss = 1920, ds = 1920 * 4;
    cudaStream_t stream = nullptr;
    if (!p.legacy) CHECK(cudaStreamCreate(&stream));
    Npp8u* src;
    Npp32f* dst;
    void* ballast;
    CHECK(cudaMalloc(&src, size_t(ss) * H));
    CHECK(cudaMalloc(&dst, size_t(ds) * H));
    CHECK(cudaMalloc(&ballast, BALLAST));
    CHECK(cudaMemset(src, 0, size_t(ss) * H));
    CHECK(cudaMemset(dst, 0, size_t(ds) * H));
    CHECK(cudaDeviceSynchronize());
    NppStreamContext ctx = context_from_stream(stream);
    if (p.declare_non_blocking) ctx.nStreamFlags = cudaStreamNonBlocking;
    CHECK(cudaMemcpyAsync(ballast, ballast_host, BALLAST, cudaMemcpyHostToDevice, stream));
    CHECK(cudaMemcpyAsync(src, host, size_t(ss) * H, cudaMemcpyHostToDevice, stream));
    if (p.sync_before_call) CHECK(cudaStreamSynchronize(stream));
    NppStatus s = nppiConvert_8u32f_C1R_Ctx(src, ss, dst, ds, NppiSize{w, h}, ctx);
    if (s != NPP_SUCCESS) std::fprintf(stderr, "%s: status %d\n", p.name, s);
    CHECK(cudaDeviceSynchronize());
    std::vector<float> out(size_t(ds / 4) * H);
    CHECK(cudaMemcpy(out.data(), dst, out.size() * 4, cudaMemcpyDeviceToHost));
    bool wrong = false;
    for (int y = 0; y < h && !wrong; ++y)
        for (int x = 0; x < w; ++x)
            if (out[size_t(y) * (ds / 4) + x] != float(host[size_t(y) * ss + x])) {
                wrong = true;
                break;
            }
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    CHECK(cudaFree(ballast));
    if (stream) CHECK(cudaStreamDestroy(stream));
    return wrong;
}

int main(int argc, char** argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 20;
    CHECK(cudaFree(nullptr));
    unsigned char* host;
    void* ballast_host;
    CHECK(cudaMallocHost(&host, size_t(1920) * H));
    CHECK(cudaMallocHost(&ballast_host, BALLAST));
    for (size_t i = 0; i < size_t(1920) * H; ++i) host[i] = static_cast<unsigned char>(1 + i % 251);
    const Phase phases[] = {
        {"P1 blocking, from the stream, 1918x1080", 1918, 1080, false, false, false},
        {"P2 as P1 at 1918x1000, synchronised before the call", 1918, 1000, false, true, false},
        {"P3 as P1, declared non-blocking", 1918, 1080, false, false, true},
        {"P4 legacy default stream", 1918, 1080, true, false, false},
        {"P5 as P1 at 1920x1080", 1920, 1080, false, false, false},
    };
    for (const Phase& p : phases) {
        int wrong = 0;
        for (int i = 0; i < n; ++i) {
            bool w = false;
            std::thread t([&] { w = frame(p, host, ballast_host); });
            t.join();
            wrong += w;
        }
        std::printf("%s: %d of %d frames wrong, %zu MiB used\n", p.name, wrong, n, used_mib());
    }
    return 0;
}
