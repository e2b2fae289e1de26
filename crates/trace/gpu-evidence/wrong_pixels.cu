// Wrong pixels at unaligned source strides (#44, #47): calls NPP's exact 8-bit functions on
// images whose source rows are 512..527 bytes apart (a destination step of 896, a multiple of 128,
// rows of 500 pixels), each call synchronised, and compares every pixel with the CPU's answer.
// Run bare, NPP 13.0.1 computes some of them wrong; run under `nppbench shield`, the shield must
// stage them and every pixel must be right. Two streams: a created non-blocking stream declared
// as such, and the legacy default stream with a zeroed nStreamFlags (the shield then also declares
// non-blocking for the staged calls).
// Usage: wrong_pixels [ROUNDS]; prints one line per function, stream and step that was wrong, and
// last "wrong pixels: N in C of T calls".
#include <cstring>
#include <vector>

#include "common.h"

static const int W = 500, H = 64, DST_STEP = 896;

static unsigned char pixel(int which, int x, int y) { return (unsigned char)((x * 7 + y * 13 + which * 101) & 0xff); }

enum Fn { COPY, ADDC, ADD, ABSDIFF, AND, THRESHOLD, FUNCTIONS };
static const char *NAMES[] = {"Copy_8u_C1R", "AddC_8u_C1RSfs", "Add_8u_C1RSfs", "AbsDiff_8u_C1R", "And_8u_C1R",
                              "Threshold_8u_C1R"};

static unsigned char expected(Fn f, unsigned char a, unsigned char b) {
    switch (f) {
    case COPY: return a;
    case ADDC: return a + 3 > 255 ? 255 : a + 3;
    case ADD: return a + b > 255 ? 255 : a + b;
    case ABSDIFF: return a > b ? a - b : b - a;
    case AND: return a & b;
    case THRESHOLD: return a > 128 ? 128 : a;
    default: return 0;
    }
}

static NppStatus call(Fn f, const Npp8u *s1, const Npp8u *s2, int step, Npp8u *d, NppiSize roi, NppStreamContext c) {
    switch (f) {
    case COPY: return nppiCopy_8u_C1R_Ctx(s1, step, d, DST_STEP, roi, c);
    case ADDC: return nppiAddC_8u_C1RSfs_Ctx(s1, step, 3, d, DST_STEP, roi, 0, c);
    case ADD: return nppiAdd_8u_C1RSfs_Ctx(s1, step, s2, step, d, DST_STEP, roi, 0, c);
    case ABSDIFF: return nppiAbsDiff_8u_C1R_Ctx(s1, step, s2, step, d, DST_STEP, roi, c);
    case AND: return nppiAnd_8u_C1R_Ctx(s1, step, s2, step, d, DST_STEP, roi, c);
    case THRESHOLD: return nppiThreshold_8u_C1R_Ctx(s1, step, d, DST_STEP, roi, 128, NPP_CMP_GREATER, c);
    default: return NPP_ERROR;
    }
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 1;
    cudaStream_t created;
    CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));
    NppStreamContext contexts[2] = {context_from_stream(created), context_from_stream(0)};
    const char *stream_names[2] = {"non-blocking", "legacy"};
    contexts[1].nStreamFlags = 0;
    const int max_step = 527;
    Npp8u *src[2], *dst;
    CHECK(cudaMalloc(&src[0], (size_t)max_step * H));
    CHECK(cudaMalloc(&src[1], (size_t)max_step * H));
    CHECK(cudaMalloc(&dst, (size_t)DST_STEP * H));
    std::vector<unsigned char> host(max_step * H), host2(max_step * H), out(DST_STEP * H);
    long wrong_pixels = 0, wrong_calls = 0, calls = 0, failed = 0;
    for (int r = 0; r < rounds; r++)
        for (int si = 0; si < 2; si++)
            for (int step = 512; step <= max_step; step++) {
                for (int y = 0; y < H; y++)
                    for (int x = 0; x < step; x++) {
                        host[y * step + x] = pixel(0, x, y);
                        host2[y * step + x] = pixel(1, x, y);
                    }
                CHECK(cudaMemcpy(src[0], host.data(), (size_t)step * H, cudaMemcpyHostToDevice));
                CHECK(cudaMemcpy(src[1], host2.data(), (size_t)step * H, cudaMemcpyHostToDevice));
                for (int f = 0; f < FUNCTIONS; f++) {
                    CHECK(cudaMemset(dst, 0xee, (size_t)DST_STEP * H));
                    CHECK(cudaDeviceSynchronize());
                    NppStatus st = call((Fn)f, src[0], src[1], step, dst, NppiSize{W, H}, contexts[si]);
                    CHECK(cudaDeviceSynchronize());
                    calls++;
                    if (st != NPP_SUCCESS) {
                        failed++;
                        std::printf("%s %s step %d: status %d\n", NAMES[f], stream_names[si], step, (int)st);
                        continue;
                    }
                    CHECK(cudaMemcpy(out.data(), dst, (size_t)DST_STEP * H, cudaMemcpyDeviceToHost));
                    long wrong = 0;
                    for (int y = 0; y < H; y++)
                        for (int x = 0; x < W; x++)
                            wrong += out[y * DST_STEP + x] != expected((Fn)f, pixel(0, x, y), pixel(1, x, y));
                    if (wrong > 0) {
                        wrong_calls++;
                        wrong_pixels += wrong;
                        if (r == 0)
                            std::printf("%s %s step %d: %ld wrong pixels\n", NAMES[f], stream_names[si], step,
                                        wrong);
                    }
                }
            }
    std::printf("failed calls: %ld\n", failed);
    std::printf("wrong pixels: %ld in %ld of %ld calls\n", wrong_pixels, wrong_calls, calls);
    return 0;
}
