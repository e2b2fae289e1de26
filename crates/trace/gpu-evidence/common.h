// What both evidence programs share: checked CUDA calls and a stream context filled the way
// NVIDIA documents it (every field from the device, nStreamFlags from the stream).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <npp.h>

#define CHECK(x)                                                                         \
    do {                                                                                 \
        cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,               \
                         cudaGetErrorString(e_));                                        \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

static NppStreamContext context_from_stream(cudaStream_t stream) {
    NppStreamContext c{};
    c.hStream = stream;
    CHECK(cudaGetDevice(&c.nCudaDeviceId));
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, c.nCudaDeviceId));
    c.nMultiProcessorCount = p.multiProcessorCount;
    c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
    c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
    c.nSharedMemPerBlock = p.sharedMemPerBlock;
    c.nCudaDevAttrComputeCapabilityMajor = p.major;
    c.nCudaDevAttrComputeCapabilityMinor = p.minor;
    unsigned int flags = 0;
    CHECK(cudaStreamGetFlags(stream, &flags));
    c.nStreamFlags = flags;
    return c;
}

static size_t used_mib() {
    size_t free_b = 0, total_b = 0;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    return (total_b - free_b) >> 20;
}
