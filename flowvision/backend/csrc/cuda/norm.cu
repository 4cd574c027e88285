// Normalisation kernels: layer norm (one block per row), group norm (one block per (n, group)) and
// batch norm (one block per channel), all with Welford statistics combined by warp shuffles, plus
// their backward passes. Statistics and affine parameters are fp32.
#include <math.h>

#include <algorithm>

#include "common.cuh"
#include "runtime.h"

namespace fvcuda {
namespace {

template <typename T>
__global__ void layer_norm_fwd_kernel(const T* x, const float* w, const float* b, T* y, float* mean, float* rstd,
                                      int64_t cols, float eps) {
    const T* row = x + blockIdx.x * cols;
    Welford acc{0.f, 0.f, 0.f};
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) acc.push(to_f(row[j]));
    acc = block_welford(acc);
    float mu = acc.mean, rs = rsqrtf(fmaxf(acc.m2 / acc.count, 0.f) + eps);
    if (threadIdx.x == 0) { mean[blockIdx.x] = mu; rstd[blockIdx.x] = rs; }
    T* out = y + blockIdx.x * cols;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float v = (to_f(row[j]) - mu) * rs;
        if (w) v *= w[j];
        if (b) v += b[j];
        out[j] = from_f<T>(v);
    }
}

// dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * w
template <typename T>
__global__ void layer_norm_bwd_dx(const T* g, const T* x, const float* w, const float* mean, const float* rstd, T* dx,
                                  int64_t cols) {
    int64_t base = blockIdx.x * cols;
    float mu = mean[blockIdx.x], rs = rstd[blockIdx.x];
    float s1 = 0.f, s2 = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float gw = to_f(g[base + j]) * (w ? w[j] : 1.f);
        s1 += gw;
        s2 += gw * (to_f(x[base + j]) - mu) * rs;
    }
    float2 s = block_sum2(s1, s2);
    float m1 = s.x / cols, m2 = s.y / cols;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float gw = to_f(g[base + j]) * (w ? w[j] : 1.f), xh = (to_f(x[base + j]) - mu) * rs;
        dx[base + j] = from_f<T>(rs * (gw - m1 - xh * m2));
    }
}

// dw[j] += sum_rows g * xhat, db[j] += sum_rows g over a chunk of rows (atomics combine the chunks).
template <typename T>
__global__ void layer_norm_bwd_params(const T* g, const T* x, const float* mean, const float* rstd, float* dw,
                                      float* db, int64_t rows, int64_t cols, int64_t rows_per_block) {
    int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (j >= cols) return;
    int64_t r0 = blockIdx.y * rows_per_block, r1 = min(rows, r0 + rows_per_block);
    float sw = 0.f, sb = 0.f;
    for (int64_t r = r0; r < r1; ++r) {
        float gv = to_f(g[r * cols + j]);
        sb += gv;
        sw += gv * (to_f(x[r * cols + j]) - mean[r]) * rstd[r];
    }
    if (dw) atomicAdd(dw + j, sw);
    if (db) atomicAdd(db + j, sb);
}

template <typename T>
__global__ void group_norm_stats(const T* x, float* mean, float* rstd, int64_t group_size, float eps) {
    const T* p = x + blockIdx.x * group_size;
    Welford acc{0.f, 0.f, 0.f};
    for (int64_t j = threadIdx.x; j < group_size; j += blockDim.x) acc.push(to_f(p[j]));
    acc = block_welford(acc);
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = acc.mean;
        rstd[blockIdx.x] = rsqrtf(fmaxf(acc.m2 / acc.count, 0.f) + eps);
    }
}

template <typename T>
__global__ void group_norm_apply(const T* x, const float* w, const float* b, const float* mean, const float* rstd, T* y,
                                 int64_t c, int64_t hw, int64_t cpg, int64_t total) {
    FV_GRID_LOOP(i, total) {
        int64_t nc = i / hw, ch = nc % c, ng = (nc / c) * (c / cpg) + ch / cpg;
        float v = (to_f(x[i]) - mean[ng]) * rstd[ng];
        if (w) v *= w[ch];
        if (b) v += b[ch];
        y[i] = from_f<T>(v);
    }
}

// Per (n, c) plane: sum(g) and sum(g * x).
template <typename T> __global__ void plane_sums(const T* g, const T* x, float* sum_g, float* sum_gx, int64_t hw) {
    int64_t base = blockIdx.x * hw;
    float a = 0.f, b = 0.f;
    for (int64_t j = threadIdx.x; j < hw; j += blockDim.x) {
        float gv = to_f(g[base + j]);
        a += gv;
        b += gv * to_f(x[base + j]);
    }
    float2 s = block_sum2(a, b);
    if (threadIdx.x == 0) { sum_g[blockIdx.x] = s.x; sum_gx[blockIdx.x] = s.y; }
}

// Per (n, g): dx = rstd * w * g + c2 * x + c3 (see group_norm_bwd for c2, c3).
FV_HD void group_norm_coeffs_at(const float* w, const float* mean, const float* rstd, const float* sum_g,
                                const float* sum_gx, float* c2, float* c3, int64_t c, int64_t cpg, int64_t hw,
                                int64_t ng) {
    int64_t groups = c / cpg, n = ng / groups, gi = ng % groups;
    float A = 0.f, B = 0.f;
    for (int64_t k = 0; k < cpg; ++k) {
        int64_t ch = gi * cpg + k;
        float wv = w ? w[ch] : 1.f;
        A += wv * sum_g[n * c + ch];
        B += wv * sum_gx[n * c + ch];
    }
    float mu = mean[ng], rs = rstd[ng], D = static_cast<float>(cpg * hw);
    float k2 = rs * rs * rs * (mu * A - B) / D;
    c2[ng] = k2;
    c3[ng] = -k2 * mu - rs * A / D;
}

__global__ void group_norm_coeffs(const float* w, const float* mean, const float* rstd, const float* sum_g,
                                  const float* sum_gx, float* c2, float* c3, int64_t c, int64_t cpg, int64_t hw,
                                  int64_t ngroups_total) {
    FV_GRID_LOOP(ng, ngroups_total) group_norm_coeffs_at(w, mean, rstd, sum_g, sum_gx, c2, c3, c, cpg, hw, ng);
}

template <typename T>
FV_HD void group_norm_dx_at(const T* g, const T* x, const float* w, const float* rstd, const float* c2, const float* c3,
                            T* dx, int64_t c, int64_t hw, int64_t cpg, int64_t i) {
    int64_t nc = i / hw, ch = nc % c, ng = (nc / c) * (c / cpg) + ch / cpg;
    dx[i] = from_f<T>(rstd[ng] * (w ? w[ch] : 1.f) * to_f(g[i]) + c2[ng] * to_f(x[i]) + c3[ng]);
}

template <typename T>
__global__ void group_norm_dx(const T* g, const T* x, const float* w, const float* rstd, const float* c2,
                              const float* c3, T* dx, int64_t c, int64_t hw, int64_t cpg, int64_t total) {
    FV_GRID_LOOP(i, total) group_norm_dx_at(g, x, w, rstd, c2, c3, dx, c, hw, cpg, i);
}

// dw[c] = sum_n rstd * (sum_gx - mean * sum_g), db[c] = sum_n sum_g
FV_HD void group_norm_params_at(const float* mean, const float* rstd, const float* sum_g, const float* sum_gx,
                                float* dw, float* db, int64_t n, int64_t c, int64_t cpg, int64_t ch) {
    float a = 0.f, b = 0.f;
    for (int64_t i = 0; i < n; ++i) {
        int64_t ng = i * (c / cpg) + ch / cpg;
        a += rstd[ng] * (sum_gx[i * c + ch] - mean[ng] * sum_g[i * c + ch]);
        b += sum_g[i * c + ch];
    }
    if (dw) dw[ch] = a;
    if (db) db[ch] = b;
}

__global__ void group_norm_params(const float* mean, const float* rstd, const float* sum_g, const float* sum_gx,
                                  float* dw, float* db, int64_t n, int64_t c, int64_t cpg) {
    FV_GRID_LOOP(ch, c) group_norm_params_at(mean, rstd, sum_g, sum_gx, dw, db, n, c, cpg, ch);
}

// One block per channel; reads N planes of HW contiguous elements.
template <typename T>
__global__ void bn_stats_kernel(const T* x, float* mean, float* invstd, float* var_unbiased, int64_t n, int64_t c,
                                int64_t hw, float eps) {
    int64_t ch = blockIdx.x;
    Welford acc{0.f, 0.f, 0.f};
    for (int64_t i = 0; i < n; ++i) {
        const T* p = x + (i * c + ch) * hw;
        for (int64_t j = threadIdx.x; j < hw; j += blockDim.x) acc.push(to_f(p[j]));
    }
    acc = block_welford(acc);
    if (threadIdx.x == 0) {
        float var = fmaxf(acc.m2 / acc.count, 0.f);
        mean[ch] = acc.mean;
        invstd[ch] = rsqrtf(var + eps);
        if (var_unbiased) var_unbiased[ch] = acc.count > 1.f ? acc.m2 / (acc.count - 1.f) : NAN;
    }
}

template <typename T>
__global__ void bn_apply_kernel(const T* x, const float* mean, const float* invstd, const float* w, const float* b, T* y,
                                int64_t c, int64_t hw, int64_t total) {
    FV_GRID_LOOP(i, total) {
        int64_t ch = (i / hw) % c;
        float v = (to_f(x[i]) - mean[ch]) * invstd[ch];
        if (w) v *= w[ch];
        if (b) v += b[ch];
        y[i] = from_f<T>(v);
    }
}

template <typename T>
__global__ void bn_bwd_reduce_kernel(const T* g, const T* x, const float* mean, float* sum_dy, float* sum_dy_xmu,
                                     int64_t n, int64_t c, int64_t hw) {
    int64_t ch = blockIdx.x;
    float mu = mean[ch], a = 0.f, b = 0.f;
    for (int64_t i = 0; i < n; ++i) {
        int64_t base = (i * c + ch) * hw;
        for (int64_t j = threadIdx.x; j < hw; j += blockDim.x) {
            float gv = to_f(g[base + j]);
            a += gv;
            b += gv * (to_f(x[base + j]) - mu);
        }
    }
    float2 s = block_sum2(a, b);
    if (threadIdx.x == 0) { sum_dy[ch] = s.x; sum_dy_xmu[ch] = s.y; }
}

template <typename T>
FV_HD void bn_bwd_apply_at(const T* g, const T* x, const float* mean, const float* invstd, const float* w,
                           const float* sum_dy, const float* sum_dy_xmu, T* dx, int64_t n, int64_t c, int64_t hw,
                           bool training, int64_t i) {
    float inv_m = 1.f / static_cast<float>(n * hw);
    int64_t ch = (i / hw) % c;
    float is = invstd[ch], scale = is * (w ? w[ch] : 1.f), gv = to_f(g[i]);
    if (training) {
        float xmu = to_f(x[i]) - mean[ch];
        gv = gv - sum_dy[ch] * inv_m - xmu * is * is * sum_dy_xmu[ch] * inv_m;
    }
    dx[i] = from_f<T>(gv * scale);
}

template <typename T>
__global__ void bn_bwd_apply_kernel(const T* g, const T* x, const float* mean, const float* invstd, const float* w,
                                    const float* sum_dy, const float* sum_dy_xmu, T* dx, int64_t n, int64_t c,
                                    int64_t hw, bool training, int64_t total) {
    FV_GRID_LOOP(i, total) bn_bwd_apply_at(g, x, mean, invstd, w, sum_dy, sum_dy_xmu, dx, n, c, hw, training, i);
}

unsigned threads_for(int64_t len) { return len >= 1024 ? 512 : (len >= 256 ? 256 : 128); }

}  // namespace

void layer_norm_fwd(DType dt, const void* x, const float* w, const float* b, void* y, float* mean, float* rstd,
                    int64_t rows, int64_t cols, float eps, void* stream) {
    if (rows == 0) return;
    FV_DISPATCH_FLOAT(dt, T, layer_norm_fwd_kernel<T><<<(unsigned)rows, threads_for(cols), 0, as_stream(stream)>>>(
                                 (const T*)x, w, b, (T*)y, mean, rstd, cols, eps));
    check_launch("layer_norm");
}

void layer_norm_bwd(DType dt, const void* g, const void* x, const float* w, const float* mean, const float* rstd,
                    void* dx, float* dw, float* db, int64_t rows, int64_t cols, void* stream) {
    if (rows == 0) return;
    cudaStream_t s = as_stream(stream);
    if (dx)
        FV_DISPATCH_FLOAT(dt, T, layer_norm_bwd_dx<T><<<(unsigned)rows, threads_for(cols), 0, s>>>(
                                     (const T*)g, (const T*)x, w, mean, rstd, (T*)dx, cols));
    if (dw || db) {
        if (dw) cudaMemsetAsync(dw, 0, sizeof(float) * cols, s);
        if (db) cudaMemsetAsync(db, 0, sizeof(float) * cols, s);
        // 64 rows per block, more when gridDim.y would exceed its 65535 limit
        const int64_t rows_per_block = std::max<int64_t>(64, (rows + 65534) / 65535);
        dim3 grid((unsigned)((cols + 127) / 128), (unsigned)((rows + rows_per_block - 1) / rows_per_block));
        FV_DISPATCH_FLOAT(dt, T, layer_norm_bwd_params<T><<<grid, 128, 0, s>>>(
                                     (const T*)g, (const T*)x, mean, rstd, dw, db, rows, cols, rows_per_block));
    }
    check_launch("layer_norm_backward");
}

void group_norm_fwd(DType dt, const void* x, const float* w, const float* b, void* y, float* mean, float* rstd,
                    int64_t n, int64_t c, int64_t hw, int64_t groups, float eps, void* stream) {
    if (n * c * hw == 0) return;
    if (groups <= 0 || c % groups) fail("group_norm: channels must be divisible by groups");
    cudaStream_t s = as_stream(stream);
    int64_t cpg = c / groups, gsize = cpg * hw, total = n * c * hw;
    FV_DISPATCH_FLOAT(dt, T, {
        group_norm_stats<T><<<(unsigned)(n * groups), threads_for(gsize), 0, s>>>((const T*)x, mean, rstd, gsize, eps);
        group_norm_apply<T><<<blocks_for(total), kThreads, 0, s>>>((const T*)x, w, b, mean, rstd, (T*)y, c, hw, cpg,
                                                                    total);
    });
    check_launch("group_norm");
}

void group_norm_bwd(DType dt, const void* g, const void* x, const float* w, const float* mean, const float* rstd,
                    void* dx, float* dw, float* db, int64_t n, int64_t c, int64_t hw, int64_t groups, void* stream) {
    if (n * c * hw == 0) return;
    cudaStream_t s = as_stream(stream);
    int64_t cpg = c / groups, total = n * c * hw;
    Scratch scratch(sizeof(float) * (2 * n * c + 2 * n * groups), stream);
    float* sum_g = static_cast<float*>(scratch.ptr);
    float *sum_gx = sum_g + n * c, *c2 = sum_gx + n * c, *c3 = c2 + n * groups;
    FV_DISPATCH_FLOAT(dt, T, {
        plane_sums<T><<<(unsigned)(n * c), threads_for(hw), 0, s>>>((const T*)g, (const T*)x, sum_g, sum_gx, hw);
        if (dx) {
            group_norm_coeffs<<<blocks_for(n * groups), kThreads, 0, s>>>(w, mean, rstd, sum_g, sum_gx, c2, c3, c, cpg,
                                                                           hw, n * groups);
            group_norm_dx<T><<<blocks_for(total), kThreads, 0, s>>>((const T*)g, (const T*)x, w, rstd, c2, c3, (T*)dx,
                                                                     c, hw, cpg, total);
        }
        if (dw || db)
            group_norm_params<<<blocks_for(c), kThreads, 0, s>>>(mean, rstd, sum_g, sum_gx, dw, db, n, c, cpg);
    });
    check_launch("group_norm_backward");
}

void batch_norm_stats(DType dt, const void* x, float* mean, float* invstd, float* var_unbiased, int64_t n, int64_t c,
                      int64_t hw, float eps, void* stream) {
    if (c == 0) return;
    if (n * hw == 0) fail("batch_norm: expected more than 0 values per channel");
    FV_DISPATCH_FLOAT(dt, T, bn_stats_kernel<T><<<(unsigned)c, threads_for(hw), 0, as_stream(stream)>>>(
                                 (const T*)x, mean, invstd, var_unbiased, n, c, hw, eps));
    check_launch("batch_norm_stats");
}

void batch_norm_apply(DType dt, const void* x, const float* mean, const float* invstd, const float* w, const float* b,
                      void* y, int64_t n, int64_t c, int64_t hw, void* stream) {
    int64_t total = n * c * hw;
    if (total == 0) return;
    FV_DISPATCH_FLOAT(dt, T, bn_apply_kernel<T><<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(
                                 (const T*)x, mean, invstd, w, b, (T*)y, c, hw, total));
    check_launch("batch_norm_apply");
}

void batch_norm_bwd_reduce(DType dt, const void* g, const void* x, const float* mean, float* sum_dy,
                           float* sum_dy_xmu, int64_t n, int64_t c, int64_t hw, void* stream) {
    if (c == 0) return;
    FV_DISPATCH_FLOAT(dt, T, bn_bwd_reduce_kernel<T><<<(unsigned)c, threads_for(hw), 0, as_stream(stream)>>>(
                                 (const T*)g, (const T*)x, mean, sum_dy, sum_dy_xmu, n, c, hw));
    check_launch("batch_norm_backward_reduce");
}

void batch_norm_bwd_apply(DType dt, const void* g, const void* x, const float* mean, const float* invstd,
                          const float* w, const float* sum_dy, const float* sum_dy_xmu, void* dx, int64_t n, int64_t c,
                          int64_t hw, bool training, void* stream) {
    int64_t total = n * c * hw;
    if (total == 0) return;
    FV_DISPATCH_FLOAT(dt, T, bn_bwd_apply_kernel<T><<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(
                                 (const T*)g, (const T*)x, mean, invstd, w, sum_dy, sum_dy_xmu, (T*)dx, n, c, hw,
                                 training, total));
    check_launch("batch_norm_backward_apply");
}

}  // namespace fvcuda
