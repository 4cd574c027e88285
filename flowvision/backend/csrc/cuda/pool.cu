// Pooling on NCHW planes: max (with the argmax index torch returns: flat position in the input
// plane), average (count_include_pad / divisor_override) and adaptive average/max, forward and
// backward. One thread per output element; the backward of average pooling gathers (no atomics).
#include <math.h>

#include "common.cuh"

namespace fvcuda {
namespace {

FV_HD int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
FV_HD int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

template <typename T>
FV_HD void max_pool_fwd_at(const T* x, T* y, int64_t* idx, Pool2d p, int64_t i) {
    int64_t ow = i % p.ow, oh = (i / p.ow) % p.oh, plane = i / (p.ow * p.oh);
    const T* xp = x + plane * p.h * p.w;
    float best = -INFINITY;
    int64_t bi = -1;
    for (int r = 0; r < p.kh; ++r) {
        int64_t h = oh * p.sh - p.ph + (int64_t)r * p.dh;
        if (h < 0 || h >= p.h) continue;
        for (int s = 0; s < p.kw; ++s) {
            int64_t w = ow * p.sw - p.pw + (int64_t)s * p.dw;
            if (w < 0 || w >= p.w) continue;
            float v = to_f(xp[h * p.w + w]);
            if (v > best || v != v || bi < 0) {  // NaN propagates like torch
                best = v;
                bi = h * p.w + w;
                if (v != v) { r = p.kh; break; }
            }
        }
    }
    y[i] = from_f<T>(best);
    if (idx) idx[i] = bi < 0 ? 0 : bi;
}

template <typename T>
__global__ void max_pool_fwd(const T* x, T* y, int64_t* idx, Pool2d p, int64_t total) {
    FV_GRID_LOOP(i, total) max_pool_fwd_at(x, y, idx, p, i);
}

FV_HD void max_pool_bwd_at(const float* g, const int64_t* idx, float* dx, int64_t in_plane, int64_t out_plane, int64_t i) {
    atomic_add_f(dx + (i / out_plane) * in_plane + idx[i], g[i]);
}

__global__ void max_pool_bwd(const float* g, const int64_t* idx, float* dx, int64_t in_plane, int64_t out_plane, int64_t total) {
    FV_GRID_LOOP(i, total) max_pool_bwd_at(g, idx, dx, in_plane, out_plane, i);
}

FV_HD float avg_divisor(const Pool2d& p, int64_t oh, int64_t ow, bool cip, int divisor) {
    if (divisor > 0) return static_cast<float>(divisor);
    int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
    int64_t h1 = imin(h0 + p.kh, p.h + p.ph), w1 = imin(w0 + p.kw, p.w + p.pw);
    int64_t pool = (h1 - h0) * (w1 - w0);
    if (cip) return static_cast<float>(pool);
    h0 = imax(h0, 0);
    w0 = imax(w0, 0);
    h1 = imin(h1, p.h);
    w1 = imin(w1, p.w);
    return static_cast<float>((h1 - h0) * (w1 - w0));
}

template <typename T>
FV_HD void avg_pool_fwd_at(const T* x, T* y, Pool2d p, bool cip, int divisor, int64_t i) {
    int64_t ow = i % p.ow, oh = (i / p.ow) % p.oh, plane = i / (p.ow * p.oh);
    const T* xp = x + plane * p.h * p.w;
    int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
    float acc = 0.f;
    for (int64_t h = imax(h0, 0); h < imin(h0 + p.kh, p.h); ++h)
        for (int64_t w = imax(w0, 0); w < imin(w0 + p.kw, p.w); ++w) acc += to_f(xp[h * p.w + w]);
    y[i] = from_f<T>(acc / avg_divisor(p, oh, ow, cip, divisor));
}

template <typename T>
__global__ void avg_pool_fwd(const T* x, T* y, Pool2d p, bool cip, int divisor, int64_t total) {
    FV_GRID_LOOP(i, total) avg_pool_fwd_at(x, y, p, cip, divisor, i);
}

FV_HD void avg_pool_bwd_at(const float* g, float* dx, Pool2d p, bool cip, int divisor, int64_t i) {
    int64_t w = i % p.w, h = (i / p.w) % p.h, plane = i / (p.w * p.h);
    const float* gp = g + plane * p.oh * p.ow;
    // windows oh with oh*sh - ph <= h < oh*sh - ph + kh
    int64_t oh_lo = imax(0, (h + p.ph - p.kh + p.sh) / p.sh), oh_hi = imin(p.oh - 1, (h + p.ph) / p.sh);
    int64_t ow_lo = imax(0, (w + p.pw - p.kw + p.sw) / p.sw), ow_hi = imin(p.ow - 1, (w + p.pw) / p.sw);
    if (h + p.ph - p.kh + p.sh < 0) oh_lo = 0;
    if (w + p.pw - p.kw + p.sw < 0) ow_lo = 0;
    float acc = 0.f;
    for (int64_t oh = oh_lo; oh <= oh_hi; ++oh) {
        int64_t h0 = oh * p.sh - p.ph;
        if (h < h0 || h >= h0 + p.kh) continue;
        for (int64_t ow = ow_lo; ow <= ow_hi; ++ow) {
            int64_t w0 = ow * p.sw - p.pw;
            if (w < w0 || w >= w0 + p.kw) continue;
            acc += gp[oh * p.ow + ow] / avg_divisor(p, oh, ow, cip, divisor);
        }
    }
    dx[i] = acc;
}

__global__ void avg_pool_bwd(const float* g, float* dx, Pool2d p, bool cip, int divisor, int64_t total) {
    FV_GRID_LOOP(i, total) avg_pool_bwd_at(g, dx, p, cip, divisor, i);
}

// torch's adaptive windows: [floor(o*in/out), ceil((o+1)*in/out))
FV_HD int64_t start_index(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
FV_HD int64_t end_index(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

template <typename T>
FV_HD void adaptive_avg_fwd_at(const T* x, T* y, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t i) {
    int64_t ox = i % ow, oy = (i / ow) % oh, plane = i / (ow * oh);
    int64_t h0 = start_index(oy, oh, h), h1 = end_index(oy, oh, h);
    int64_t w0 = start_index(ox, ow, w), w1 = end_index(ox, ow, w);
    const T* xp = x + plane * h * w;
    float acc = 0.f;
    for (int64_t a = h0; a < h1; ++a)
        for (int64_t b = w0; b < w1; ++b) acc += to_f(xp[a * w + b]);
    y[i] = from_f<T>(acc / static_cast<float>((h1 - h0) * (w1 - w0)));
}

template <typename T>
__global__ void adaptive_avg_fwd(const T* x, T* y, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t total) {
    FV_GRID_LOOP(i, total) adaptive_avg_fwd_at(x, y, h, w, oh, ow, i);
}

FV_HD void adaptive_avg_bwd_at(const float* g, float* dx, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t i) {
    int64_t ox = i % ow, oy = (i / ow) % oh, plane = i / (ow * oh);
    int64_t h0 = start_index(oy, oh, h), h1 = end_index(oy, oh, h);
    int64_t w0 = start_index(ox, ow, w), w1 = end_index(ox, ow, w);
    float v = g[i] / static_cast<float>((h1 - h0) * (w1 - w0));
    for (int64_t a = h0; a < h1; ++a)
        for (int64_t b = w0; b < w1; ++b) atomic_add_f(dx + plane * h * w + a * w + b, v);
}

__global__ void adaptive_avg_bwd(const float* g, float* dx, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t total) {
    FV_GRID_LOOP(i, total) adaptive_avg_bwd_at(g, dx, h, w, oh, ow, i);
}

template <typename T>
FV_HD void adaptive_max_fwd_at(const T* x, T* y, int64_t* idx, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t i) {
    int64_t ox = i % ow, oy = (i / ow) % oh, plane = i / (ow * oh);
    int64_t h0 = start_index(oy, oh, h), h1 = end_index(oy, oh, h);
    int64_t w0 = start_index(ox, ow, w), w1 = end_index(ox, ow, w);
    const T* xp = x + plane * h * w;
    float best = -INFINITY;
    int64_t bi = h0 * w + w0;
    for (int64_t a = h0; a < h1; ++a)
        for (int64_t b = w0; b < w1; ++b) {
            float v = to_f(xp[a * w + b]);
            if (v > best || v != v) { best = v; bi = a * w + b; }
            if (v != v) { a = h1; break; }
        }
    y[i] = from_f<T>(best);
    if (idx) idx[i] = bi;
}

template <typename T>
__global__ void adaptive_max_fwd(const T* x, T* y, int64_t* idx, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t total) {
    FV_GRID_LOOP(i, total) adaptive_max_fwd_at(x, y, idx, h, w, oh, ow, i);
}

}  // namespace

void max_pool2d_fwd(DType dt, const void* x, void* y, int64_t* idx, const Pool2d& p, void* stream) {
    int64_t total = p.planes * p.oh * p.ow;
    if (total == 0) return;
    FV_DISPATCH_FLOAT(dt, T, max_pool_fwd<T><<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(
                                 (const T*)x, (T*)y, idx, p, total));
    check_launch("max_pool2d");
}

void max_pool2d_bwd(const float* g, const int64_t* idx, float* dx, int64_t planes, int64_t in_plane, int64_t out_plane,
                    void* stream) {
    cudaStream_t s = as_stream(stream);
    if (planes * in_plane) cudaMemsetAsync(dx, 0, sizeof(float) * planes * in_plane, s);
    int64_t total = planes * out_plane;
    if (total == 0) return;
    max_pool_bwd<<<blocks_for(total), kThreads, 0, s>>>(g, idx, dx, in_plane, out_plane, total);
    check_launch("max_pool2d_backward");
}

void avg_pool2d_fwd(DType dt, const void* x, void* y, const Pool2d& p, bool cip, int divisor, void* stream) {
    int64_t total = p.planes * p.oh * p.ow;
    if (total == 0) return;
    FV_DISPATCH_FLOAT(dt, T, avg_pool_fwd<T><<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(
                                 (const T*)x, (T*)y, p, cip, divisor, total));
    check_launch("avg_pool2d");
}

void avg_pool2d_bwd(const float* g, float* dx, const Pool2d& p, bool cip, int divisor, void* stream) {
    int64_t total = p.planes * p.h * p.w;
    if (total == 0) return;
    avg_pool_bwd<<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(g, dx, p, cip, divisor, total);
    check_launch("avg_pool2d_backward");
}

void adaptive_avg_pool2d_fwd(DType dt, const void* x, void* y, int64_t planes, int64_t h, int64_t w, int64_t oh,
                             int64_t ow, void* stream) {
    int64_t total = planes * oh * ow;
    if (total == 0) return;
    FV_DISPATCH_FLOAT(dt, T, adaptive_avg_fwd<T><<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(
                                 (const T*)x, (T*)y, h, w, oh, ow, total));
    check_launch("adaptive_avg_pool2d");
}

void adaptive_avg_pool2d_bwd(const float* g, float* dx, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow,
                             void* stream) {
    cudaStream_t s = as_stream(stream);
    if (planes * h * w) cudaMemsetAsync(dx, 0, sizeof(float) * planes * h * w, s);
    int64_t total = planes * oh * ow;
    if (total == 0) return;
    adaptive_avg_bwd<<<blocks_for(total), kThreads, 0, s>>>(g, dx, h, w, oh, ow, total);
    check_launch("adaptive_avg_pool2d_backward");
}

void adaptive_max_pool2d_fwd(DType dt, const void* x, void* y, int64_t* idx, int64_t planes, int64_t h, int64_t w,
                             int64_t oh, int64_t ow, void* stream) {
    int64_t total = planes * oh * ow;
    if (total == 0) return;
    FV_DISPATCH_FLOAT(dt, T, adaptive_max_fwd<T><<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(
                                 (const T*)x, (T*)y, idx, h, w, oh, ow, total));
    check_launch("adaptive_max_pool2d");
}

}  // namespace fvcuda
