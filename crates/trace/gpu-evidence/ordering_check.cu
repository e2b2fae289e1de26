// Does NPP's remainder kernel wait for the caller's stream? For an image whose width is not a
// multiple of 16, nppiConvert_8u32f_C1R_Ctx runs a second kernel (the last columns) on a stream of
// NPP's own where the context declares a blocking stream. Here a slow kernel on the caller's
// stream writes the source first; if NPP's stream does not wait for it, the last columns of the
// output are converted from the old source. Prints, per stream kind, the wrong pixels in the
// main part and in the last 15 columns. Usage: ordering_check [spin_ms=2]
#include <vector>
#include "common.h"

__global__ void slow_fill(unsigned char* p, size_t n, unsigned char v, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = v;
}

int main(int argc, char** argv) {
    double spin_ms = argc > 1 ? std::atof(argv[1]) : 2.0;
    int clock_khz = 0;
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    long long cycles = (long long)(spin_ms * clock_khz);
    const int w = 1918, h = 1080, ss = 1920, ds = 7680;
    struct Kind { const char* name; unsigned flags; int special; } kinds[] = {
        {"blocking", cudaStreamDefault, 0},
        {"non_blocking", cudaStreamNonBlocking, 0},
        {"legacy_default", 0, 1},
        {"per_thread", 0, 2}};
    for (const Kind& k : kinds) {
        cudaStream_t s = k.special == 2 ? cudaStreamPerThread : nullptr;
        if (k.special == 0) CHECK(cudaStreamCreateWithFlags(&s, k.flags));
        NppStreamContext ctx = context_from_stream(s);
        Npp8u* src;
        Npp32f* dst;
        CHECK(cudaMalloc(&src, size_t(ss) * h));
        CHECK(cudaMalloc(&dst, size_t(ds) * h));
        int wrong_main = 0, wrong_tail = 0, rounds = 20;
        std::vector<float> out(size_t(ds / 4) * h);
        for (int r = 0; r < rounds; ++r) {
            unsigned char v = (unsigned char)(10 + r);
            CHECK(cudaMemset(src, 0, size_t(ss) * h));
            CHECK(cudaMemset(dst, 0, size_t(ds) * h));
            CHECK(cudaDeviceSynchronize());
            slow_fill<<<264, 256, 0, s>>>(src, size_t(ss) * h, v, cycles);
            NppStatus st = nppiConvert_8u32f_C1R_Ctx(src, ss, dst, ds, NppiSize{w, h}, ctx);
            if (st != NPP_SUCCESS) std::fprintf(stderr, "%s: status %d\n", k.name, st);
            CHECK(cudaStreamSynchronize(s));
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(out.data(), dst, size_t(ds) * h, cudaMemcpyDeviceToHost));
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x)
                    if (out[size_t(y) * (ds / 4) + x] != float(v)) (x >= w - 15 ? wrong_tail : wrong_main)++;
        }
        std::printf("%-15s rounds %d: wrong pixels in the main part %d, in the last 15 columns %d\n", k.name, rounds,
                    wrong_main, wrong_tail);
        CHECK(cudaFree(src));
        CHECK(cudaFree(dst));
        if (k.special == 0) CHECK(cudaStreamDestroy(s));
    }
    return 0;
}
