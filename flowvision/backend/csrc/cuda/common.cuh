// Shared device helpers for the flowvision CUDA kernels: storage <-> float conversion for
// fp32/fp16/bf16 (all arithmetic is fp32), launch geometry and Welford combination.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels.h"

namespace fvcuda {

// Host-and-device where the GEMM problems use them, so their index mapping can be checked on the host
// (tests/cuda_host_check.cu).
#define FV_HD __host__ __device__ __forceinline__

FV_HD float to_f(float v) { return v; }
FV_HD float to_f(__half v) { return __half2float(v); }
FV_HD float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> FV_HD T from_f(float v);
template <> FV_HD float from_f<float>(float v) { return v; }
template <> FV_HD __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> FV_HD __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

FV_HD void atomic_add_f(float* p, float v) {
#ifdef __CUDA_ARCH__
    atomicAdd(p, v);
#else
    *p += v;
#endif
}

constexpr int kThreads = 256;

inline unsigned blocks_for(int64_t n, int threads = kThreads) {
    int64_t b = (n + threads - 1) / threads;
    // grid-stride loops cover the rest; 2^20 blocks is plenty for any device
    return static_cast<unsigned>(b < 1 ? 1 : (b > (1 << 20) ? (1 << 20) : b));
}

#define FV_GRID_LOOP(i, n) \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)blockDim.x * gridDim.x)

inline cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

// Welford triple; combine() is Chan et al.'s parallel update (numerically stable, order-free).
struct Welford {
    float mean, m2, count;
    __device__ void push(float x) {
        count += 1.f;
        float d = x - mean;
        mean += d / count;
        m2 += d * (x - mean);
    }
    __device__ void combine(const Welford& o) {
        if (o.count == 0.f) return;
        if (count == 0.f) { *this = o; return; }
        float n = count + o.count, d = o.mean - mean;
        mean += d * (o.count / n);
        m2 += o.m2 + d * d * (count * o.count / n);
        count = n;
    }
};

__device__ __forceinline__ Welford warp_welford(Welford w) {
    for (int off = 16; off > 0; off >>= 1) {
        Welford o{__shfl_down_sync(0xffffffffu, w.mean, off), __shfl_down_sync(0xffffffffu, w.m2, off),
                  __shfl_down_sync(0xffffffffu, w.count, off)};
        w.combine(o);
    }
    return w;
}

// Block-wide Welford (blockDim.x a multiple of 32, <= 1024); the result is valid in every thread.
__device__ __forceinline__ Welford block_welford(Welford w) {
    __shared__ float sm[3][32];
    __shared__ Welford result;
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    w = warp_welford(w);
    if (lane == 0) { sm[0][wid] = w.mean; sm[1][wid] = w.m2; sm[2][wid] = w.count; }
    __syncthreads();
    if (wid == 0) {
        Welford v = lane < nw ? Welford{sm[0][lane], sm[1][lane], sm[2][lane]} : Welford{0.f, 0.f, 0.f};
        v = warp_welford(v);
        if (lane == 0) result = v;
    }
    __syncthreads();
    Welford r = result;
    __syncthreads();
    return r;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// Block-wide sum of up to two values; the result is valid in every thread.
__device__ __forceinline__ float2 block_sum2(float a, float b) {
    __shared__ float sm[2][32];
    __shared__ float2 result;
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    a = warp_sum(a);
    b = warp_sum(b);
    if (lane == 0) { sm[0][wid] = a; sm[1][wid] = b; }
    __syncthreads();
    if (wid == 0) {
        float x = lane < nw ? sm[0][lane] : 0.f, y = lane < nw ? sm[1][lane] : 0.f;
        x = warp_sum(x);
        y = warp_sum(y);
        if (lane == 0) result = make_float2(x, y);
    }
    __syncthreads();
    float2 r = result;
    __syncthreads();
    return r;
}

// Launch a kernel templated on the float storage type chosen at run time.
#define FV_DISPATCH_FLOAT(dtype, T, ...)                                                   \
    switch (dtype) {                                                                       \
        case ::fvcuda::DType::F32: { using T = float; __VA_ARGS__; break; }                \
        case ::fvcuda::DType::F16: { using T = __half; __VA_ARGS__; break; }               \
        case ::fvcuda::DType::BF16: { using T = __nv_bfloat16; __VA_ARGS__; break; }       \
        default: ::fvcuda::fail("expected a float32/float16/bfloat16 tensor");             \
    }

inline void check_launch(const char* what) {
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace fvcuda
