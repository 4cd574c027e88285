// conv2d forward / data gradient / weight gradient as implicit GEMMs on the shared tile kernel
// (igemm.cuh), plus direct kernels for depthwise convolutions (C/groups == 1), where a GEMM with
// N = channel multiplier would leave the tile almost empty. Forward takes fp32/fp16/bf16 storage;
// the gradients are fp32 (the Python side upcasts half gradients).
#include <cuda_runtime.h>

#include <algorithm>

#include "runtime.h"

#include "igemm.cuh"

namespace fvcuda {
namespace {

struct ConvGeom {
    Conv2d cv;
    int64_t cg, kg, pq, hw, rs;
    explicit ConvGeom(const Conv2d& c)
        : cv(c), cg(c.c / c.groups), kg(c.k / c.groups), pq(c.p * c.q), hw(c.h * c.w), rs((int64_t)c.r * c.s) {}

    // Tap index (channel within the group, kernel row, kernel column) of column `tap` of a group's filters.
    FV_HD void split_tap(int64_t tap, int64_t& c, int& r, int& s) const {
        c = tap / rs;
        int rr = (int)(tap - c * rs);
        r = rr / cv.s;
        s = rr - r * cv.s;
    }

    // The im2col element x[n, z*cg + c, p*sh - ph + r*dh, q*sw - pw + s*dw] for output pixel `pix` = (p, q) of
    // image n and tap (c, r, s) of group z; 0 in the padding.
    template <typename T>
    FV_HD float im2col(const T* x, int z, int64_t n, int64_t pix, int64_t tap) const {
        int p = (int)(pix / cv.q), q = (int)(pix - (int64_t)p * cv.q);
        int64_t c;
        int r, s;
        split_tap(tap, c, r, s);
        int64_t h = (int64_t)p * cv.sh - cv.ph + (int64_t)r * cv.dh, wi = (int64_t)q * cv.sw - cv.pw + (int64_t)s * cv.dw;
        if (h < 0 || h >= cv.h || wi < 0 || wi >= cv.w) return 0.f;
        return to_f(x[((n * cv.c + z * cg + c) * cv.h + h) * cv.w + wi]);
    }
};

// y[n, k, p, q] = sum_{c, r, s} x[n, c, p*sh - ph + r*dh, q*sw - pw + s*dw] * w[k, c, r, s] (+ bias[k])
// GEMM per group: M = N*P*Q pixels, N = K/groups filters, K = C/groups*R*S taps.
template <typename T> struct ConvFwdProblem {
    const T *x, *w, *bias;
    T* y;
    ConvGeom g;
    int64_t M, N, K;
    bool a_k_fast = false, b_k_fast = true, c_m_fast = true;
    FV_HD float a(int z, int64_t m, int64_t k) const {
        int64_t n = m / g.pq;
        return g.im2col(x, z, n, m - n * g.pq, k);
    }
    FV_HD float b(int z, int64_t k, int64_t n) const { return to_f(w[(z * g.kg + n) * K + k]); }
    FV_HD void store(int z, int64_t m, int64_t n, float v, bool) const {
        int64_t img = m / g.pq, pix = m - img * g.pq, oc = z * g.kg + n;
        if (bias) v += to_f(bias[oc]);
        y[(img * g.cv.k + oc) * g.pq + pix] = from_f<T>(v);
    }
};

// dx[n, c, h, w] = sum_{k, r, s} dy[n, k, p, q] * w[k, c, r, s] over the (p, q) that read (h, w):
// p = (h + ph - r*dh) / sh when divisible and in range. GEMM per group: M = N*H*W, N = C/groups,
// K = K/groups*R*S.
struct ConvBwdDataProblem {
    const float *g_, *w;
    float* dx;
    ConvGeom g;
    int64_t M, N, K;
    bool a_k_fast = false, b_k_fast = true, c_m_fast = true;
    FV_HD float a(int z, int64_t m, int64_t k) const {
        const Conv2d& cv = g.cv;
        int64_t n = m / g.hw, pix = m - n * g.hw;
        int h = (int)(pix / cv.w), wi = (int)(pix - (int64_t)h * cv.w);
        int64_t kk;
        int r, s;
        g.split_tap(k, kk, r, s);
        int hp = h + cv.ph - r * cv.dh, wp = wi + cv.pw - s * cv.dw;
        if (hp < 0 || wp < 0 || hp % cv.sh || wp % cv.sw) return 0.f;
        int p = hp / cv.sh, q = wp / cv.sw;
        if (p >= cv.p || q >= cv.q) return 0.f;
        return g_[((n * cv.k + z * g.kg + kk) * cv.p + p) * cv.q + q];
    }
    FV_HD float b(int z, int64_t k, int64_t c) const {
        int64_t kk = k / g.rs, rr = k - kk * g.rs;
        return w[((z * g.kg + kk) * g.cg + c) * g.rs + rr];
    }
    FV_HD void store(int z, int64_t m, int64_t c, float v, bool) const {
        int64_t n = m / g.hw, pix = m - n * g.hw;
        dx[(n * g.cv.c + z * g.cg + c) * g.hw + pix] = v;
    }
};

// dw[k, c, r, s] = sum_{n, p, q} dy[n, k, p, q] * x[n, c, p*sh - ph + r*dh, q*sw - pw + s*dw]
// GEMM per group: M = K/groups, N = C/groups*R*S, K = N*P*Q (split-K with atomics).
struct ConvBwdWeightProblem {
    const float *g_, *x;
    float* dw;
    ConvGeom g;
    int64_t M, N, K;
    bool a_k_fast = true, b_k_fast = true, c_m_fast = false;
    FV_HD float a(int z, int64_t m, int64_t k) const {
        int64_t n = k / g.pq, pix = k - n * g.pq;
        return g_[(n * g.cv.k + z * g.kg + m) * g.pq + pix];
    }
    FV_HD float b(int z, int64_t k, int64_t j) const {
        int64_t n = k / g.pq;
        return g.im2col(x, z, n, k - n * g.pq, j);
    }
    FV_HD void store(int z, int64_t m, int64_t j, float v, bool atomic) const {
        float* dst = dw + (z * g.kg + m) * N + j;
        if (atomic) atomic_add_f(dst, v);
        else *dst = v;
    }
};

// ---------------------------------------------------------------- depthwise (C/groups == 1)
template <typename T>
FV_HD void dw_fwd_at(const T* x, const T* w, const T* bias, T* y, Conv2d cv, int64_t mult, int64_t i) {
    int q = (int)(i % cv.q), p = (int)((i / cv.q) % cv.p);
    int64_t oc = (i / ((int64_t)cv.q * cv.p)) % cv.k, n = i / ((int64_t)cv.q * cv.p * cv.k);
    int64_t ic = oc / mult;
    const T* xp = x + (n * cv.c + ic) * cv.h * cv.w;
    const T* wp = w + oc * cv.r * cv.s;
    float acc = bias ? to_f(bias[oc]) : 0.f;
    for (int r = 0; r < cv.r; ++r) {
        int h = p * cv.sh - cv.ph + r * cv.dh;
        if (h < 0 || h >= cv.h) continue;
        for (int s = 0; s < cv.s; ++s) {
            int wi = q * cv.sw - cv.pw + s * cv.dw;
            if (wi < 0 || wi >= cv.w) continue;
            acc = fmaf(to_f(xp[(int64_t)h * cv.w + wi]), to_f(wp[r * cv.s + s]), acc);
        }
    }
    y[i] = from_f<T>(acc);
}

template <typename T>
__global__ void dw_fwd(const T* x, const T* w, const T* bias, T* y, Conv2d cv, int64_t mult, int64_t total) {
    FV_GRID_LOOP(i, total) dw_fwd_at(x, w, bias, y, cv, mult, i);
}

FV_HD void dw_bwd_data_at(const float* g, const float* w, float* dx, Conv2d cv, int64_t mult, int64_t i) {
    int wi = (int)(i % cv.w), h = (int)((i / cv.w) % cv.h);
    int64_t ic = (i / ((int64_t)cv.w * cv.h)) % cv.c, n = i / ((int64_t)cv.w * cv.h * cv.c);
    float acc = 0.f;
    for (int64_t oc = ic * mult; oc < (ic + 1) * mult; ++oc) {
        const float* gp = g + (n * cv.k + oc) * cv.p * cv.q;
        for (int r = 0; r < cv.r; ++r) {
            int hp = h + cv.ph - r * cv.dh;
            if (hp < 0 || hp % cv.sh) continue;
            int p = hp / cv.sh;
            if (p >= cv.p) continue;
            for (int s = 0; s < cv.s; ++s) {
                int wp = wi + cv.pw - s * cv.dw;
                if (wp < 0 || wp % cv.sw) continue;
                int q = wp / cv.sw;
                if (q >= cv.q) continue;
                acc = fmaf(gp[(int64_t)p * cv.q + q], w[(oc * cv.r + r) * cv.s + s], acc);
            }
        }
    }
    dx[i] = acc;
}

__global__ void dw_bwd_data(const float* g, const float* w, float* dx, Conv2d cv, int64_t mult, int64_t total) {
    FV_GRID_LOOP(i, total) dw_bwd_data_at(g, w, dx, cv, mult, i);
}

// One block per weight element (oc, r, s), reducing over N*P*Q.
__global__ void dw_bwd_weight(const float* g, const float* x, float* dw, Conv2d cv, int64_t mult) {
    int64_t e = blockIdx.x;
    int s = (int)(e % cv.s), r = (int)((e / cv.s) % cv.r);
    int64_t oc = e / ((int64_t)cv.s * cv.r), ic = oc / mult, pq = (int64_t)cv.p * cv.q;
    float acc = 0.f;
    for (int64_t t = threadIdx.x; t < cv.n * pq; t += blockDim.x) {
        int64_t n = t / pq, pix = t - n * pq;
        int p = (int)(pix / cv.q), q = (int)(pix - (int64_t)p * cv.q);
        int h = p * cv.sh - cv.ph + r * cv.dh, wi = q * cv.sw - cv.pw + s * cv.dw;
        if (h < 0 || h >= cv.h || wi < 0 || wi >= cv.w) continue;
        acc = fmaf(g[(n * cv.k + oc) * pq + pix], x[((n * cv.c + ic) * cv.h + h) * cv.w + wi], acc);
    }
    acc = block_sum2(acc, 0.f).x;
    if (threadIdx.x == 0) dw[e] = acc;
}

void validate(const Conv2d& cv) {
    if (cv.groups <= 0 || cv.c % cv.groups || cv.k % cv.groups) fail("conv2d: channels must be divisible by groups");
    if (cv.sh <= 0 || cv.sw <= 0 || cv.dh <= 0 || cv.dw <= 0 || cv.r <= 0 || cv.s <= 0)
        fail("conv2d: kernel size, stride and dilation must be positive");
    if (cv.p <= 0 || cv.q <= 0) fail("conv2d: output size is not positive");
}

bool is_depthwise(const Conv2d& cv) { return cv.groups > 1 && cv.groups == cv.c; }

template <typename Problem> void run(const Problem& pr, int64_t groups, int splits, bool tf32, cudaStream_t s) {
    dim3 grid = igemm_grid(pr.M, pr.N, groups, splits);
    if (tf32) igemm_kernel<Problem, true><<<grid, TTHREADS, 0, s>>>(pr, splits);
    else igemm_kernel<Problem, false><<<grid, TTHREADS, 0, s>>>(pr, splits);
}

int sm_count() {
    int dev = 0, n = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    return n > 0 ? n : 80;
}

}  // namespace

bool device_supports_tf32() {
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) !=
                                                  cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return major >= 8;
}

void conv2d_fwd(DType dt, const void* x, const void* w, const void* bias, void* y, const Conv2d& cv, bool tf32,
                void* stream) {
    validate(cv);
    if (cv.n == 0 || cv.k == 0) return;
    cudaStream_t s = as_stream(stream);
    tf32 = tf32 && device_supports_tf32();
    ConvGeom geo(cv);
    if (is_depthwise(cv)) {
        int64_t total = cv.n * cv.k * geo.pq;
        FV_DISPATCH_FLOAT(dt, T, dw_fwd<T><<<blocks_for(total), kThreads, 0, s>>>(
                                     (const T*)x, (const T*)w, (const T*)bias, (T*)y, cv, geo.kg, total));
    } else {
        FV_DISPATCH_FLOAT(dt, T, {
            ConvFwdProblem<T> pr{(const T*)x, (const T*)w, (const T*)bias, (T*)y, geo, cv.n * geo.pq, geo.kg,
                                 geo.cg * geo.rs};
            run(pr, cv.groups, 1, tf32, s);
        });
    }
    check_launch("conv2d");
}

void conv2d_bwd_data(const float* g, const float* w, float* dx, const Conv2d& cv, bool tf32, void* stream) {
    validate(cv);
    if (cv.n == 0 || cv.c == 0) return;
    cudaStream_t s = as_stream(stream);
    ConvGeom geo(cv);
    if (is_depthwise(cv)) {
        int64_t total = cv.n * cv.c * geo.hw;
        dw_bwd_data<<<blocks_for(total), kThreads, 0, s>>>(g, w, dx, cv, geo.kg, total);
    } else {
        ConvBwdDataProblem pr{g, w, dx, geo, cv.n * geo.hw, geo.cg, geo.kg * geo.rs};
        run(pr, cv.groups, 1, tf32 && device_supports_tf32(), s);
    }
    check_launch("conv2d_backward_data");
}

void conv2d_bwd_weight(const float* g, const float* x, float* dw, const Conv2d& cv, bool tf32, void* stream) {
    validate(cv);
    ConvGeom geo(cv);
    int64_t wcount = cv.k * geo.cg * geo.rs;
    if (wcount == 0) return;
    cudaStream_t s = as_stream(stream);
    if (is_depthwise(cv)) {
        dw_bwd_weight<<<(unsigned)wcount, kThreads, 0, s>>>(g, x, dw, cv, geo.kg);
    } else {
        check(cudaMemsetAsync(dw, 0, sizeof(float) * wcount, s), "conv2d_backward_weight memset");
        ConvBwdWeightProblem pr{g, x, dw, geo, geo.kg, geo.cg * geo.rs, cv.n * geo.pq};
        int64_t tiles = ((pr.M + TM - 1) / TM) * ((pr.N + TN - 1) / TN) * cv.groups;
        int64_t want = (4 * (int64_t)sm_count() + tiles - 1) / tiles;
        int64_t most = pr.K / (TK * 8);
        int splits = (int)std::max<int64_t>(1, std::min<int64_t>({want, most, 65535 / cv.groups}));
        run(pr, cv.groups, splits, tf32 && device_supports_tf32(), s);
    }
    check_launch("conv2d_backward_weight");
}

}  // namespace fvcuda
