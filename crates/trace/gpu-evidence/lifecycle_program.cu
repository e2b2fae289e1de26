// How services live and end, for the interposer's lifecycle checks on the GPU (#32):
//   lifecycle_program fork N     N calls, then fork; parent and child each make N more calls
//                                and exit (the parent on new threads; the child with null
//                                pointers, since CUDA cannot be used in a forked child); the
//                                parent waits for the child.
//   lifecycle_program term N     a call on a new thread every 10 ms, N calls (about a second for
//                                N = 100), then raise(SIGTERM) with its default action.
//   lifecycle_program threads N  N new threads, one after another, each creating a stream,
//                                making one call on it and destroying it.
// Every call is nppiConvert_8u32f_C1R_Ctx 31x31 (strides 32/128) on a blocking stream, context
// from the stream (it leaks: a thread per call keeps NPP's streams), except in `threads`, which
// converts 32x32 (aligned: NPP keeps nothing) so that 10,000 threads fit in device memory.
// Each mode prints the calls it made, per process.
#include <csignal>
#include <cstring>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

static void call(int w, bool own_stream) {
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    Npp8u* src;
    Npp32f* dst;
    CHECK(cudaMalloc(&src, 32 * 32));
    CHECK(cudaMalloc(&dst, 128 * 32));
    NppStreamContext ctx = context_from_stream(stream);
    NppStatus s = nppiConvert_8u32f_C1R_Ctx(src, 32, dst, 128, NppiSize{w, w}, ctx);
    if (s != NPP_SUCCESS) std::fprintf(stderr, "convert: %d\n", s);
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    if (own_stream) CHECK(cudaStreamDestroy(stream));
}

static void on_new_threads(int n, int w, bool own_stream) {
    for (int i = 0; i < n; ++i) {
        std::thread t([=] { call(w, own_stream); });
        t.join();
    }
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "fork";
    int n = argc > 2 ? std::atoi(argv[2]) : 20;
    CHECK(cudaFree(nullptr));
    if (!std::strcmp(mode, "fork")) {
        on_new_threads(n, 31, false);
        std::fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            // CUDA cannot be used in a forked child: it calls NPP with null pointers (NPP
            // answers NPP_NULL_POINTER_ERROR before touching CUDA), through the interposer,
            // which must neither crash nor record.
            int failed = 0;
            for (int i = 0; i < n; ++i) {
                NppStreamContext ctx{};
                failed += nppiConvert_8u32f_C1R_Ctx(nullptr, 32, nullptr, 128, NppiSize{31, 31}, ctx) != NPP_SUCCESS;
            }
            std::printf("child %d: made %d calls after the fork, %d refused\n", getpid(), n, failed);
            std::fflush(stdout);
            _exit(0);
        }
        on_new_threads(n, 31, false);
        int status = 0;
        waitpid(child, &status, 0);
        std::printf("parent %d: %d calls, the child exited %d\n", getpid(), 2 * n, status);
    } else if (!std::strcmp(mode, "term")) {
        for (int i = 0; i < n; ++i) {
            std::thread t([] { call(31, false); });
            t.join();
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        std::printf("made %d calls; raising SIGTERM\n", n);
        std::fflush(stdout);
        std::raise(SIGTERM);
        std::this_thread::sleep_for(std::chrono::seconds(10));
        std::printf("still running after SIGTERM\n");
    } else if (!std::strcmp(mode, "threads")) {
        on_new_threads(n, 32, true);
        std::printf("%d threads, each a stream and a call\n", n);
    }
    return 0;
}
