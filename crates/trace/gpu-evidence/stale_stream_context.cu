// Does nppGetStreamContext report the flags of the stream set, or of an earlier stream whose
// handle the new one reuses? For `rounds` rounds: create a blocking stream, nppSetStream it and
// read nppGetStreamContext; destroy it; create a non-blocking stream (the driver often hands back
// the same handle), nppSetStream it and read again. Prints each round's handles and the
// nStreamFlags NPP declared against the stream's real flags, and a count of stale answers.
// Usage: stale_stream_context [rounds=20]
#include "common.h"

// Declared here: NPP 13's headers may no longer declare the legacy stream API libnppc exports.
extern "C" NppStatus nppSetStream(cudaStream_t hStream);
extern "C" NppStatus nppGetStreamContext(NppStreamContext* pNppStreamContext);

static unsigned declared(cudaStream_t s) {
    if (nppSetStream(s) != NPP_SUCCESS) std::fprintf(stderr, "nppSetStream failed\n");
    NppStreamContext ctx{};
    if (nppGetStreamContext(&ctx) != NPP_SUCCESS) std::fprintf(stderr, "nppGetStreamContext failed\n");
    return ctx.nStreamFlags;
}

int main(int argc, char** argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
    CHECK(cudaFree(nullptr));
    int stale = 0, reused = 0;
    for (int i = 0; i < rounds; ++i) {
        cudaStream_t a, b;
        CHECK(cudaStreamCreateWithFlags(&a, cudaStreamDefault));
        unsigned da = declared(a);
        CHECK(cudaStreamDestroy(a));
        CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
        unsigned db = declared(b);
        unsigned real = 0;
        CHECK(cudaStreamGetFlags(b, &real));
        bool same = a == b;
        reused += same;
        stale += db != real;
        std::printf("round %d: blocking %p declared %u; non-blocking %p declared %u (real %u)%s\n", i, (void*)a, da,
                    (void*)b, db, real, same ? " same handle" : "");
        CHECK(cudaStreamDestroy(b));
    }
    std::printf("%d rounds: %d reused the handle, %d stale nStreamFlags\n", rounds, reused, stale);
    return 0;
}
