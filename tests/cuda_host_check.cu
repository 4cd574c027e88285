// Host-side checks of CUDA kernel code, built as a shared library by tests/test_cuda.py (nvcc, no GPU).
//
// 1. fv_check_conv_gemm(): the implicit-GEMM index mapping of the convolution and GEMM kernels. The
//    tile kernel (igemm.cuh) only moves elements between the virtual matrices that a Problem defines
//    through a(z, m, k), b(z, k, n) and store(z, m, n, v); those loaders are host+device functions, so
//    the same Problems run through a plain host GEMM (with the kernel's split-K partition of K) and
//    are compared against direct convolution loops.
// 2. fv_unary / fv_unary_grad: the per-element math of the unary/activation kernels (elementwise.cu's
//    unop / unop_grad, host+device), compared with torch by the Python test.
// 4. fv_binary, fv_group_norm_bwd, fv_batch_norm_bwd: binary-op semantics and the normalisation
//    backward formulas (from per-channel sums that the Python test computes).
// 5. fv_softmax_cols / fv_reduce_cols: the column (inner > 1) softmax and reduction kernel bodies.
// 3. fv_pool / fv_interp / fv_roi_align: the per-element bodies of the pooling, interpolation and
//    roi_align kernels (host+device *_at functions), run over every element on the host and compared
//    with torch / torchvision (forward and backward) by the Python test.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "conv.cu"
#include "elementwise.cu"
#include "gemm.cu"
#include "interp_roi.cu"
#include "norm.cu"
#include "pool.cu"
#include "reduce.cu"
#include "softmax.cu"

using namespace fvcuda;

static std::mt19937 rng(0);
static std::vector<float> rand_vec(size_t n) {
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

// Exactly the K range igemm_kernel gives each split.
template <typename P> static void host_gemm(const P& p, int64_t batches, int splits) {
    for (int z = 0; z < batches; ++z)
        for (int split = 0; split < splits; ++split) {
            int64_t kchunk = ((p.K + splits - 1) / splits + TK - 1) / TK * TK;
            int64_t kb = split * kchunk, ke = std::min<int64_t>(p.K, kb + kchunk);
            for (int64_t m = 0; m < p.M; ++m)
                for (int64_t n = 0; n < p.N; ++n) {
                    double acc = 0;
                    for (int64_t k = kb; k < ke; ++k) acc += (double)p.a(z, m, k) * p.b(z, k, n);
                    p.store(z, m, n, (float)acc, splits > 1);
                }
        }
}

static int failures = 0;
static void expect_close(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, (double)std::fabs(got[i] - want[i]));
    bool ok = got.size() == want.size() && worst < 1e-4;
    if (!ok) ++failures;
    std::printf("%-60s %s (max abs err %.2e)\n", what, ok ? "ok" : "FAIL", worst);
}

static void check_conv(int n, int c, int h, int w, int k, int r, int s, int sh, int sw, int ph, int pw, int dh, int dw,
                       int groups) {
    Conv2d cv{};
    cv.n = n; cv.c = c; cv.h = h; cv.w = w; cv.k = k; cv.r = r; cv.s = s;
    cv.sh = sh; cv.sw = sw; cv.ph = ph; cv.pw = pw; cv.dh = dh; cv.dw = dw; cv.groups = groups;
    cv.p = (h + 2 * ph - dh * (r - 1) - 1) / sh + 1;
    cv.q = (w + 2 * pw - dw * (s - 1) - 1) / sw + 1;
    ConvGeom geo(cv);
    const int64_t cg = c / groups, kg = k / groups;
    auto x = rand_vec((size_t)n * c * h * w), wt = rand_vec((size_t)k * cg * r * s), bias = rand_vec(k);
    auto g = rand_vec((size_t)n * k * cv.p * cv.q);
    // direct loops
    std::vector<float> y_ref((size_t)n * k * cv.p * cv.q), dx_ref(x.size(), 0.f), dw_ref(wt.size(), 0.f);
    for (int b = 0; b < n; ++b)
        for (int oc = 0; oc < k; ++oc) {
            int gi = oc / kg;
            for (int p = 0; p < cv.p; ++p)
                for (int q = 0; q < cv.q; ++q) {
                    double acc = bias[oc];
                    size_t yi = (((size_t)b * k + oc) * cv.p + p) * cv.q + q;
                    for (int ci = 0; ci < cg; ++ci)
                        for (int rr = 0; rr < r; ++rr)
                            for (int ss = 0; ss < s; ++ss) {
                                int hh = p * sh - ph + rr * dh, ww = q * sw - pw + ss * dw;
                                if (hh < 0 || hh >= h || ww < 0 || ww >= w) continue;
                                size_t xi = (((size_t)b * c + gi * cg + ci) * h + hh) * w + ww;
                                size_t wi = (((size_t)oc * cg + ci) * r + rr) * s + ss;
                                acc += (double)x[xi] * wt[wi];
                                dx_ref[xi] += g[yi] * wt[wi];
                                dw_ref[wi] += g[yi] * x[xi];
                            }
                    y_ref[yi] = (float)acc;
                }
        }
    char name[160];
    std::snprintf(name, sizeof(name), "conv n%d c%d %dx%d k%d %dx%d s%d,%d p%d,%d d%d,%d g%d", n, c, h, w, k, r, s, sh,
                  sw, ph, pw, dh, dw, groups);
    std::vector<float> y(y_ref.size());
    ConvFwdProblem<float> fwd{x.data(), wt.data(), bias.data(), y.data(), geo, cv.n * geo.pq, geo.kg, geo.cg * geo.rs};
    host_gemm(fwd, groups, 1);
    expect_close((std::string(name) + " fwd").c_str(), y, y_ref);
    std::vector<float> dx(x.size());
    ConvBwdDataProblem bd{g.data(), wt.data(), dx.data(), geo, cv.n * geo.hw, geo.cg, geo.kg * geo.rs};
    host_gemm(bd, groups, 1);
    expect_close((std::string(name) + " bwd data").c_str(), dx, dx_ref);
    if (groups == c) {  // the direct depthwise kernels (forward, data gradient)
        std::vector<float> yd(y_ref.size()), dxd(x.size());
        for (int64_t i = 0; i < (int64_t)yd.size(); ++i) dw_fwd_at<float>(x.data(), wt.data(), bias.data(), yd.data(), cv, kg, i);
        for (int64_t i = 0; i < (int64_t)dxd.size(); ++i) dw_bwd_data_at(g.data(), wt.data(), dxd.data(), cv, kg, i);
        expect_close((std::string(name) + " depthwise fwd").c_str(), yd, y_ref);
        expect_close((std::string(name) + " depthwise bwd data").c_str(), dxd, dx_ref);
    }
    for (int splits : {1, 3}) {
        std::vector<float> dwv(wt.size(), 0.f);
        ConvBwdWeightProblem bw{g.data(), x.data(), dwv.data(), geo, geo.kg, geo.cg * geo.rs, cv.n * geo.pq};
        host_gemm(bw, groups, splits);
        expect_close((std::string(name) + (splits > 1 ? " bwd weight split-K" : " bwd weight")).c_str(), dwv, dw_ref);
    }
}

static void check_gemm(bool ta, bool tb, int64_t batch, bool shared_b) {
    const int64_t m = 37, n = 29, k = 45;
    auto a = rand_vec(batch * m * k), b = rand_vec((shared_b ? 1 : batch) * k * n), bias = rand_vec(n);
    Gemm gm{};
    gm.batch = batch; gm.m = m; gm.n = n; gm.k = k;
    gm.lda = ta ? m : k; gm.ldb = tb ? k : n; gm.ldc = n;
    gm.stride_a = m * k; gm.stride_b = shared_b ? 0 : k * n; gm.stride_c = m * n;
    gm.trans_a = ta; gm.trans_b = tb; gm.alpha = 0.5f;
    std::vector<float> c(batch * m * n), ref(batch * m * n);
    for (int64_t z = 0; z < batch; ++z)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double acc = 0;
                for (int64_t l = 0; l < k; ++l) {
                    float av = ta ? a[z * m * k + l * m + i] : a[z * m * k + i * k + l];
                    int64_t bz = shared_b ? 0 : z * k * n;
                    float bv = tb ? b[bz + j * k + l] : b[bz + l * n + j];
                    acc += (double)av * bv;
                }
                ref[(z * m + i) * n + j] = (float)(0.5 * acc + bias[j]);
            }
    GemmProblem<float> pr{a.data(), b.data(), bias.data(), c.data(), gm, m, n, k, !ta, tb};
    host_gemm(pr, batch, 1);
    char name[96];
    std::snprintf(name, sizeof(name), "gemm trans_a=%d trans_b=%d batch=%lld shared_b=%d", ta, tb, (long long)batch,
                  shared_b);
    expect_close(name, c, ref);
}

extern "C" void fv_unary(int op, const float* x, float* y, int64_t n, float p0, float p1) {
    for (int64_t i = 0; i < n; ++i) y[i] = fvcuda::unop(op, x[i], p0, p1);
}

extern "C" void fv_unary_grad(int op, const float* x, const float* y, float* dx, int64_t n, float p0, float p1) {
    for (int64_t i = 0; i < n; ++i) dx[i] = fvcuda::unop_grad(op, x[i], y[i], p0, p1);
}

// kind: 0 max fwd (y, idx), 1 max bwd (g, idx -> dx), 2 avg fwd, 3 avg bwd, 4 adaptive avg fwd,
// 5 adaptive avg bwd, 6 adaptive max fwd. dx buffers must be zeroed by the caller for scatter kinds.
extern "C" void fv_pool(int kind, const float* in, float* out, int64_t* idx, int64_t planes, int64_t h, int64_t w,
                        int64_t oh, int64_t ow, int kh, int kw, int sh, int sw, int ph, int pw, int dh, int dw,
                        bool cip, int divisor) {
    Pool2d p{planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw};
    int64_t n_out = planes * oh * ow, n_in = planes * h * w;
    switch (kind) {
        case 0: for (int64_t i = 0; i < n_out; ++i) max_pool_fwd_at<float>(in, out, idx, p, i); break;
        case 1: for (int64_t i = 0; i < n_out; ++i) max_pool_bwd_at(in, idx, out, h * w, oh * ow, i); break;
        case 2: for (int64_t i = 0; i < n_out; ++i) avg_pool_fwd_at<float>(in, out, p, cip, divisor, i); break;
        case 3: for (int64_t i = 0; i < n_in; ++i) avg_pool_bwd_at(in, out, p, cip, divisor, i); break;
        case 4: for (int64_t i = 0; i < n_out; ++i) adaptive_avg_fwd_at<float>(in, out, h, w, oh, ow, i); break;
        case 5: for (int64_t i = 0; i < n_out; ++i) adaptive_avg_bwd_at(in, out, h, w, oh, ow, i); break;
        case 6: for (int64_t i = 0; i < n_out; ++i) adaptive_max_fwd_at<float>(in, out, idx, h, w, oh, ow, i); break;
    }
}

// mode: 0 nearest, 1 nearest-exact, 2 bilinear; backward scatters into a zeroed dx.
extern "C" void fv_interp(int mode, bool backward, const float* in, float* out, int64_t planes, int64_t h, int64_t w,
                          int64_t oh, int64_t ow, bool align, float sh, float sw) {
    int64_t n_out = planes * oh * ow;
    Resize r{h, w, oh, ow, sh, sw, mode < 2 ? mode == 1 : align};
    for (int64_t i = 0; i < n_out; ++i) {
        if (mode < 2) {
            if (backward) Nearest::bwd_at(in, out, r, i);
            else Nearest::fwd_at<float>(in, out, r, i);
        } else {
            if (backward) Bilinear::bwd_at(in, out, r, i);
            else Bilinear::fwd_at<float>(in, out, r, i);
        }
    }
}

extern "C" void fv_roi_align(bool backward, const float* in, const float* rois, float* out, int64_t n, int64_t c,
                             int64_t h, int64_t w, int64_t k, int64_t ph, int64_t pw, float scale, int sampling,
                             bool aligned) {
    RoiAlign p{n, c, h, w, k, ph, pw, scale, sampling, aligned};
    for (int64_t i = 0; i < k * c * ph * pw; ++i) {
        if (backward) roi_align_bwd_kernel_at(in, rois, out, p, i);
        else roi_align_fwd_kernel_at<float>(in, rois, out, p, i);
    }
}

// Binary op `op` elementwise; is_int: int64 semantics (inputs/outputs as double for simplicity).
extern "C" void fv_binary(int op, bool is_int, const double* a, const double* b, double* y, int64_t n) {
    bool cmp = op >= B_EQ && op <= B_GE;
    for (int64_t i = 0; i < n; ++i) {
        if (is_int) {
            int64_t x = (int64_t)a[i], z = (int64_t)b[i];
            y[i] = cmp ? (double)compare<int64_t>(op, x, z) : (double)binop_int<int64_t>(op, x, z);
        } else {
            float x = (float)a[i], z = (float)b[i];
            y[i] = cmp ? (double)compare<float>(op, x, z) : (double)binop_float(op, x, z);
        }
    }
}

extern "C" void fv_group_norm_bwd(const float* g, const float* x, const float* w, const float* mean, const float* rstd,
                                  const float* sum_g, const float* sum_gx, float* dx, float* dw, float* db, int64_t n,
                                  int64_t c, int64_t hw, int64_t groups) {
    int64_t cpg = c / groups;
    std::vector<float> c2(n * groups), c3(n * groups);
    for (int64_t ng = 0; ng < n * groups; ++ng)
        group_norm_coeffs_at(w, mean, rstd, sum_g, sum_gx, c2.data(), c3.data(), c, cpg, hw, ng);
    for (int64_t i = 0; i < n * c * hw; ++i) group_norm_dx_at<float>(g, x, w, rstd, c2.data(), c3.data(), dx, c, hw, cpg, i);
    for (int64_t ch = 0; ch < c; ++ch) group_norm_params_at(mean, rstd, sum_g, sum_gx, dw, db, n, c, cpg, ch);
}

extern "C" void fv_batch_norm_bwd(const float* g, const float* x, const float* mean, const float* invstd, const float* w,
                                  const float* sum_dy, const float* sum_dy_xmu, float* dx, int64_t n, int64_t c,
                                  int64_t hw, bool training) {
    for (int64_t i = 0; i < n * c * hw; ++i)
        bn_bwd_apply_at<float>(g, x, mean, invstd, w, sum_dy, sum_dy_xmu, dx, n, c, hw, training, i);
}

extern "C" void fv_softmax_cols(bool backward, const float* a, const float* b, float* out, int64_t outer, int64_t d,
                                int64_t inner, bool log) {
    for (int64_t t = 0; t < outer * inner; ++t) {
        if (backward) softmax_bwd_cols_at<float>(a, b, out, outer, d, inner, log, t);  // a = grad, b = y
        else softmax_cols_at<float>(a, out, outer, d, inner, log, t);
    }
}

extern "C" void fv_reduce_cols(int op, const float* x, float* y, int64_t* idx, int64_t outer, int64_t r, int64_t inner) {
    for (int64_t t = 0; t < outer * inner; ++t) reduce_cols_kernel_at<float>(op, x, y, idx, outer, r, inner, t);
}

extern "C" int fv_check_conv_gemm() {
    check_conv(2, 3, 9, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1);
    check_conv(2, 4, 9, 9, 6, 3, 3, 2, 2, 0, 0, 1, 1, 1);
    check_conv(1, 6, 11, 10, 6, 3, 2, 2, 1, 1, 2, 2, 1, 3);    // grouped, rectangular kernel, mixed stride
    check_conv(2, 4, 10, 11, 8, 5, 5, 2, 2, 2, 2, 1, 1, 4);    // depthwise-like grouping through the GEMM
    check_conv(1, 3, 17, 15, 7, 7, 7, 2, 2, 3, 3, 1, 1, 1);    // stem
    check_conv(2, 8, 5, 5, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1);     // 1x1
    check_conv(1, 4, 12, 12, 4, 3, 3, 3, 3, 1, 1, 2, 2, 2);    // stride 3 + dilation 2
    check_conv(2, 5, 9, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5);      // depthwise 3x3
    check_conv(1, 6, 13, 12, 6, 5, 3, 2, 3, 2, 1, 2, 1, 6);    // depthwise, strided, dilated, rectangular
    for (bool ta : {false, true})
        for (bool tb : {false, true}) check_gemm(ta, tb, 3, false);
    check_gemm(false, true, 4, true);
    std::printf("%s\n", failures ? "FAILED" : "ALL OK");
    std::fflush(stdout);
    return failures;
}
