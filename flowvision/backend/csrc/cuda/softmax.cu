// softmax / log_softmax over the middle axis of (outer, d, inner), forward and backward.
// inner == 1 (the last dim): one block per row with block reductions; otherwise one thread per
// (outer, inner) column (coalesced across threads).
#include <math.h>

#include "common.cuh"

namespace fvcuda {
namespace {

__device__ __forceinline__ float block_max(float v) {
    __shared__ float sm[32];
    __shared__ float result;
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, off));
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if (lane == 0) sm[wid] = v;
    __syncthreads();
    if (wid == 0) {
        float x = lane < nw ? sm[lane] : -INFINITY;
        for (int off = 16; off > 0; off >>= 1) x = fmaxf(x, __shfl_down_sync(0xffffffffu, x, off));
        if (lane == 0) result = x;
    }
    __syncthreads();
    float r = result;
    __syncthreads();
    return r;
}

template <typename T> __global__ void softmax_rows(const T* x, T* y, int64_t d, bool log) {
    const T* row = x + blockIdx.x * d;
    T* out = y + blockIdx.x * d;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) m = fmaxf(m, to_f(row[j]));
    m = block_max(m);
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) s += expf(to_f(row[j]) - m);
    s = block_sum2(s, 0.f).x;
    float ls = logf(s), inv = 1.f / s;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
        float v = to_f(row[j]) - m;
        out[j] = from_f<T>(log ? v - ls : expf(v) * inv);
    }
}

template <typename T>
FV_HD void softmax_cols_at(const T* x, T* y, int64_t outer, int64_t d, int64_t inner, bool log, int64_t t) {
    int64_t o = t / inner, in = t % inner;
    const T* b = x + o * d * inner + in;
    T* out = y + o * d * inner + in;
    float m = -INFINITY, s = 0.f;
    for (int64_t j = 0; j < d; ++j) m = fmaxf(m, to_f(b[j * inner]));
    for (int64_t j = 0; j < d; ++j) s += expf(to_f(b[j * inner]) - m);
    float ls = logf(s), inv = 1.f / s;
    for (int64_t j = 0; j < d; ++j) {
        float v = to_f(b[j * inner]) - m;
        out[j * inner] = from_f<T>(log ? v - ls : expf(v) * inv);
    }
}

template <typename T>
__global__ void softmax_cols(const T* x, T* y, int64_t outer, int64_t d, int64_t inner, bool log) {
    FV_GRID_LOOP(t, outer * inner) softmax_cols_at(x, y, outer, d, inner, log, t);
}

// softmax: dx = y * (g - sum(g*y)); log_softmax: dx = g - exp(y) * sum(g)
template <typename T> __global__ void softmax_bwd_rows(const T* g, const T* y, T* dx, int64_t d, bool log) {
    int64_t base = blockIdx.x * d;
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
        s += log ? to_f(g[base + j]) : to_f(g[base + j]) * to_f(y[base + j]);
    s = block_sum2(s, 0.f).x;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
        float gv = to_f(g[base + j]), yv = to_f(y[base + j]);
        dx[base + j] = from_f<T>(log ? gv - expf(yv) * s : yv * (gv - s));
    }
}

template <typename T>
FV_HD void softmax_bwd_cols_at(const T* g, const T* y, T* dx, int64_t outer, int64_t d, int64_t inner, bool log, int64_t t) {
    int64_t base = (t / inner) * d * inner + t % inner;
    float s = 0.f;
    for (int64_t j = 0; j < d; ++j)
        s += log ? to_f(g[base + j * inner]) : to_f(g[base + j * inner]) * to_f(y[base + j * inner]);
    for (int64_t j = 0; j < d; ++j) {
        float gv = to_f(g[base + j * inner]), yv = to_f(y[base + j * inner]);
        dx[base + j * inner] = from_f<T>(log ? gv - expf(yv) * s : yv * (gv - s));
    }
}

template <typename T>
__global__ void softmax_bwd_cols(const T* g, const T* y, T* dx, int64_t outer, int64_t d, int64_t inner, bool log) {
    FV_GRID_LOOP(t, outer * inner) softmax_bwd_cols_at(g, y, dx, outer, d, inner, log, t);
}

unsigned row_threads(int64_t d) { return d >= 1024 ? 1024 : (d >= 256 ? 256 : (d > 64 ? 128 : 64)); }

}  // namespace

void softmax_fwd(DType dt, const void* x, void* y, int64_t outer, int64_t d, int64_t inner, bool log, void* stream) {
    if (outer * d * inner == 0) return;
    cudaStream_t s = as_stream(stream);
    if (inner == 1) {
        FV_DISPATCH_FLOAT(dt, T, softmax_rows<T><<<(unsigned)outer, row_threads(d), 0, s>>>((const T*)x, (T*)y, d, log));
    } else {
        FV_DISPATCH_FLOAT(dt, T, softmax_cols<T><<<blocks_for(outer * inner), kThreads, 0, s>>>(
                                     (const T*)x, (T*)y, outer, d, inner, log));
    }
    check_launch("softmax");
}

void softmax_bwd(DType dt, const void* g, const void* y, void* dx, int64_t outer, int64_t d, int64_t inner, bool log,
                 void* stream) {
    if (outer * d * inner == 0) return;
    cudaStream_t s = as_stream(stream);
    if (inner == 1) {
        FV_DISPATCH_FLOAT(dt, T, softmax_bwd_rows<T><<<(unsigned)outer, row_threads(d), 0, s>>>(
                                     (const T*)g, (const T*)y, (T*)dx, d, log));
    } else {
        FV_DISPATCH_FLOAT(dt, T, softmax_bwd_cols<T><<<blocks_for(outer * inner), kThreads, 0, s>>>(
                                     (const T*)g, (const T*)y, (T*)dx, outer, d, inner, log));
    }
    check_launch("softmax_backward");
}

}  // namespace fvcuda
