// conv2d forward/backward (im2col + GEMM, direct 1x1, dedicated depthwise path), im2col/col2im.
#include "cpu/common.h"
#include "cpu/conv_batched.h"
#include "cpu/conv_nhwc.h"
#include "cpu/conv_winograd.h"
#include "cpu/im2col.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

// im2col of one image, rows [r0, r1) of the (C*kh*kw, OH*OW) matrix.
template <class T>
void im2col_rows(const T* x, T* cols, const ConvParams& p, int64_t r0, int64_t r1) {
    const int64_t L = p.OH * p.OW;
    for (int64_t r = r0; r < r1; ++r) im2col_row(x, cols + r * L, p, r);
}

// col2im of one image, channels [c0, c1): x[c] += fold(cols rows of c). x must be pre-zeroed.
template <class T>
void col2im_channels(const T* cols, T* x, const ConvParams& p, int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) col2im_channel(cols, p.OH * p.OW, x, p, c);
}

template <class T>
void im2col_image(const T* x, T* cols, const ConvParams& p) {
    const int64_t rows = p.C * p.kh * p.kw;
    parallel_for(0, rows, grain_for(p.OH * p.OW), [&](int64_t r0, int64_t r1) { im2col_rows(x, cols, p, r0, r1); });
}

template <class T>
void col2im_image(const T* cols, T* x, const ConvParams& p) {
    memset(x, 0, sizeof(T) * p.C * p.H * p.W);
    parallel_for(0, p.C, grain_for(p.kh * p.kw * p.OH * p.OW),
                 [&](int64_t c0, int64_t c1) { col2im_channels(cols, x, p, c0, c1); });
}

constexpr int64_t kWeightChunks = 8;

static inline bool is_pointwise(const ConvParams& p) {
    return p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1 && p.ph == 0 && p.pw == 0;
}
static inline bool is_depthwise(const ConvParams& p) { return p.groups == p.C && p.O == p.C && p.C > 1; }

// Per-thread im2col scratch kept between calls (freed at thread exit), so images can be
// handed out one at a time without paying page faults for a fresh buffer each time.
struct ScratchTLS {
    void* p = nullptr;
    size_t cap = 0;
    ~ScratchTLS() { free(p); }
};
thread_local ScratchTLS t_scratch;
constexpr size_t kMaxCachedScratch = size_t(32) << 20;  // larger buffers are not kept

template <class T>
T* cached_scratch(int64_t n) {
    const size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(T) + 63) & ~(size_t)63;
    if (bytes > t_scratch.cap) {
        free(t_scratch.p);
        t_scratch.p = aligned_alloc(64, bytes);
        t_scratch.cap = t_scratch.p ? bytes : 0;
        if (!t_scratch.p) fv::throw_bad_alloc();
    }
    return static_cast<T*>(t_scratch.p);
}

// Runs fn(n, scratch) for every image. With several images and threads, images are handed
// out one at a time to whichever thread is free (serial inner GEMMs); otherwise images run
// one after the other with parallel inner work.
template <class T, class F>
void for_each_image(int64_t N, int64_t scratch_elems, const F& fn) {
    const int nt = in_parallel_region() ? 1 : get_num_threads();
    if (N >= 2 && nt > 1 && size_t(scratch_elems) * sizeof(T) <= kMaxCachedScratch) {
        parallel_for_dynamic(0, N, [&](int64_t n0, int64_t n1) {
            T* scratch = cached_scratch<T>(scratch_elems);
            for (int64_t n = n0; n < n1; ++n) fn(n, scratch);
        });
    } else if (N >= 2 && nt > 1) {
        const int64_t nch = mn<int64_t>(nt, N);
        parallel_for(0, nch, 1, [&](int64_t c0, int64_t c1) {
            Buf<T> scratch(scratch_elems);
            for (int64_t c = c0; c < c1; ++c)
                for (int64_t n = N * c / nch; n < N * (c + 1) / nch; ++n) fn(n, scratch.get());
        });
    } else {
        Buf<T> scratch(scratch_elems);
        for (int64_t n = 0; n < N; ++n) fn(n, scratch.get());
    }
}

// ---------------- depthwise ----------------
template <class T>
void dw_forward(const T* x, const T* w, const T* bias, T* y, const ConvParams& p) {
    const int64_t HW = p.H * p.W, L = p.OH * p.OW, kk = p.kh * p.kw;
    parallel_for(0, p.N * p.C, grain_for(L * kk), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t c = q % p.C;
            const T* xp = x + q * HW;
            const T* wp = w + c * kk;
            T* yp = y + q * L;
            const T b = bias ? bias[c] : T(0);
            for (int64_t i = 0; i < L; ++i) yp[i] = b;
            for (int64_t kj = 0; kj < p.kw; ++kj) {
                int64_t lo, hi;
                valid_cols(p.W, p.OW, p.sw, p.pw, kj * p.dw, lo, hi);
                if (lo == hi) continue;
                for (int64_t oh = 0; oh < p.OH; ++oh) {
                    T* yo = yp + oh * p.OW;
                    for (int64_t ki = 0; ki < p.kh; ++ki) {
                        const int64_t ih = oh * p.sh - p.ph + ki * p.dh;
                        if (ih < 0 || ih >= p.H) continue;
                        const T wv = wp[ki * p.kw + kj];
                        const T* row = xp + ih * p.W + (lo * p.sw - p.pw + kj * p.dw);
                        if (p.sw == 1) {
                            for (int64_t ow = lo; ow < hi; ++ow) yo[ow] += wv * row[ow - lo];
                        } else {
                            for (int64_t ow = lo; ow < hi; ++ow) yo[ow] += wv * row[(ow - lo) * p.sw];
                        }
                    }
                }
            }
        }
    });
}

template <class T>
void dw_backward_input(const T* gy, const T* w, T* gx, const ConvParams& p) {
    const int64_t HW = p.H * p.W, L = p.OH * p.OW, kk = p.kh * p.kw;
    parallel_for(0, p.N * p.C, grain_for(L * kk), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t c = q % p.C;
            T* xp = gx + q * HW;
            const T* wp = w + c * kk;
            const T* gp = gy + q * L;
            for (int64_t i = 0; i < HW; ++i) xp[i] = T(0);
            for (int64_t kj = 0; kj < p.kw; ++kj) {
                int64_t lo, hi;
                valid_cols(p.W, p.OW, p.sw, p.pw, kj * p.dw, lo, hi);
                if (lo == hi) continue;
                for (int64_t oh = 0; oh < p.OH; ++oh) {
                    const T* go = gp + oh * p.OW;
                    for (int64_t ki = 0; ki < p.kh; ++ki) {
                        const int64_t ih = oh * p.sh - p.ph + ki * p.dh;
                        if (ih < 0 || ih >= p.H) continue;
                        const T wv = wp[ki * p.kw + kj];
                        T* row = xp + ih * p.W + (lo * p.sw - p.pw + kj * p.dw);
                        if (p.sw == 1) {
                            for (int64_t ow = lo; ow < hi; ++ow) row[ow - lo] += wv * go[ow];
                        } else {
                            for (int64_t ow = lo; ow < hi; ++ow) row[(ow - lo) * p.sw] += wv * go[ow];
                        }
                    }
                }
            }
        }
    });
}

template <class T>
void dw_backward_weight(const T* gy, const T* x, T* gw, const ConvParams& p) {
    const int64_t HW = p.H * p.W, L = p.OH * p.OW, kk = p.kh * p.kw;
    parallel_for(0, p.C, grain_for(p.N * L * kk), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            for (int64_t t = 0; t < kk; ++t) {
                const int64_t ki = t / p.kw, kj = t % p.kw;
                int64_t lo, hi;
                valid_cols(p.W, p.OW, p.sw, p.pw, kj * p.dw, lo, hi);
                T total = T(0);
                for (int64_t n = 0; n < p.N && lo < hi; ++n) {
                    const T* xp = x + (n * p.C + c) * HW;
                    const T* gp = gy + (n * p.C + c) * L;
                    for (int64_t oh = 0; oh < p.OH; ++oh) {
                        const int64_t ih = oh * p.sh - p.ph + ki * p.dh;
                        if (ih < 0 || ih >= p.H) continue;
                        const T* go = gp + oh * p.OW;
                        const T* row = xp + ih * p.W + (lo * p.sw - p.pw + kj * p.dw);
                        T s = T(0);
                        if (p.sw == 1) {
                            typedef vec_t<T> V;
                            constexpr int Wd = vec_width<T>();
                            V acc = V{};
                            int64_t ow = lo;
                            for (; ow + Wd <= hi; ow += Wd) acc += vload<V>(go + ow) * vload<V>(row + (ow - lo));
                            for (int j = 0; j < Wd; ++j) s += acc[j];
                            for (; ow < hi; ++ow) s += go[ow] * row[ow - lo];
                        } else {
                            for (int64_t ow = lo; ow < hi; ++ow) s += go[ow] * row[(ow - lo) * p.sw];
                        }
                        total += s;
                    }
                }
                gw[c * kk + t] = total;
            }
        }
    });
}

// dst (rows x xw) <- the H x W plane src at row ph, column pw, zeros around it (the depthwise rows kernels read
// every tap of a whole output vector from it without bounds checks)
template <class T>
void copy_padded_plane(const T* src, T* dst, const ConvParams& p, int64_t rows, int64_t xw) {
    memset(dst, 0, sizeof(T) * rows * xw);
    for (int64_t ih = 0; ih < p.H && ih + p.ph < rows; ++ih)
        memcpy(dst + (ih + p.ph) * xw + p.pw, src + ih * p.W, sizeof(T) * p.W);
}

// Depthwise weight gradient of a unit-stride, undilated conv with a KW-wide kernel: per channel,
// gw[c][kh][kw] = sum over images and output pixels of gy * (x shifted by (kh, kw)). The channel's planes are first
// copied with their padding as zeros (gy rows rounded up to whole vectors, x rows wide enough for the last vector's
// KW shifts), so the inner loop is KW FMAs per gy vector without bounds checks and a kernel row's KW sums stay in
// registers over every image and row. The channels are split between threads; each is summed by one thread in a
// fixed order, so the result is bit-identical for any thread count.
template <class T, int KW>
void dw_backward_weight_rows(const T* gy, const T* x, T* gw, const ConvParams& p) {
    typedef vec_t<T> V;
    constexpr int Wd = vec_width<T>();
    const int64_t HW = p.H * p.W, L = p.OH * p.OW;
    const int64_t owv = ceil_div(p.OW, int64_t(Wd)) * Wd;  // gy row, zero padded to whole vectors
    const int64_t xw = owv + KW - 1;                        // x row: column j holds input column j - pw
    const int64_t xh = p.OH + p.kh - 1;                     // x rows: row i holds input row i - ph
    parallel_for(0, p.C, 1, [&](int64_t c0, int64_t c1) {
        Buf<T> xs(p.N * xh * xw), gs(p.N * p.OH * owv);
        for (int64_t c = c0; c < c1; ++c) {
            for (int64_t n = 0; n < p.N; ++n) {
                copy_padded_plane(x + (n * p.C + c) * HW, xs.get() + n * xh * xw, p, xh, xw);
                const T* gsrc = gy + (n * p.C + c) * L;
                T* gd = gs.get() + n * p.OH * owv;
                for (int64_t oh = 0; oh < p.OH; ++oh) {
                    memcpy(gd + oh * owv, gsrc + oh * p.OW, sizeof(T) * p.OW);
                    for (int64_t j = p.OW; j < owv; ++j) gd[oh * owv + j] = T(0);
                }
            }
            for (int64_t kh = 0; kh < p.kh; ++kh) {
                V acc[KW];
#pragma GCC unroll 8
                for (int k = 0; k < KW; ++k) acc[k] = V{};
                for (int64_t n = 0; n < p.N; ++n)
                    for (int64_t oh = 0; oh < p.OH; ++oh) {
                        const T* g = gs.get() + (n * p.OH + oh) * owv;
                        const T* xr = xs.get() + (n * xh + oh + kh) * xw;
                        for (int64_t v = 0; v < owv; v += Wd) {
                            const V gv = vload<V>(g + v);
#pragma GCC unroll 8
                            for (int k = 0; k < KW; ++k) acc[k] += gv * vload<V>(xr + v + k);
                        }
                    }
                for (int k = 0; k < KW; ++k) gw[(c * p.kh + kh) * KW + k] = hsum<T>(acc[k]);
            }
        }
    });
}

// The depthwise weight gradient by rows (above) where it applies: unit stride and dilation, a 3, 5 or 7 wide kernel.
template <class T>
bool dw_backward_weight_by_rows(const T* gy, const T* x, T* gw, const ConvParams& p) {
    if (p.sh != 1 || p.sw != 1 || p.dh != 1 || p.dw != 1 || p.ph > p.kh - 1 || p.pw > p.kw - 1) return false;
    switch (p.kw) {
        case 3: dw_backward_weight_rows<T, 3>(gy, x, gw, p); return true;
        case 5: dw_backward_weight_rows<T, 5>(gy, x, gw, p); return true;
        case 7: dw_backward_weight_rows<T, 7>(gy, x, gw, p); return true;
        default: return false;
    }
}

// Depthwise forward of a unit-stride, undilated conv with a KW-wide kernel (the same kernel computes the input
// gradient: a conv of gy with the flipped weight): each plane is copied once with its padding as zeros (rows wide
// enough for the last output vector's KW shifts, plus spare zero rows below), then kRows output rows x one vector of
// output columns are summed over the KH x KW taps, each tap's weight broadcast once for the kRows rows: no bounds
// checks, no NHWC transposes (which cost more than the 7x7 ConvNeXt convolution itself on 14x14 maps). Each output
// element is summed in the same order for any thread count.
constexpr int64_t kDwRows = 8;

template <class T, int KW>
void dw_forward_rows(const T* x, const T* w, const T* bias, T* y, const ConvParams& p) {
    typedef vec_t<T> V;
    constexpr int Wd = vec_width<T>();
    const int64_t HW = p.H * p.W, L = p.OH * p.OW, KK = p.kh * KW;
    const int64_t owv = ceil_div(p.OW, int64_t(Wd)) * Wd;
    const int64_t xw = owv + KW - 1;
    const int64_t rows = ceil_div(p.OH, kDwRows) * kDwRows + p.kh - 1;  // x row i holds input row i - ph
    parallel_for(0, p.N * p.C, grain_for(L * KK), [&](int64_t q0, int64_t q1) {
        Buf<T> xs(rows * xw);
        alignas(64) T tail[kDwRows][Wd];
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t c = q % p.C;
            const T* src = x + q * HW;
            copy_padded_plane(src, xs.get(), p, rows, xw);
            const T* wc = w + c * KK;
            const T b = bias ? bias[c] : T(0);
            T* yq = y + q * L;
            for (int64_t oh = 0; oh < p.OH; oh += kDwRows) {
                for (int64_t v = 0; v < owv; v += Wd) {
                    V acc[kDwRows];
#pragma GCC unroll 8
                    for (int r = 0; r < kDwRows; ++r) acc[r] = V{} + b;
                    for (int64_t kh = 0; kh < p.kh; ++kh) {
                        const T* xr = xs.get() + (oh + kh) * xw + v;
#pragma GCC unroll 7
                        for (int k = 0; k < KW; ++k) {
                            const V wv = V{} + wc[kh * KW + k];
#pragma GCC unroll 8
                            for (int r = 0; r < kDwRows; ++r) acc[r] += wv * vload<V>(xr + r * xw + k);
                        }
                    }
                    const int64_t nr = mn<int64_t>(kDwRows, p.OH - oh), nc = mn<int64_t>(Wd, p.OW - v);
                    for (int64_t r = 0; r < nr; ++r) {
                        T* dst = yq + (oh + r) * p.OW + v;
                        if (nc == Wd) {
                            memcpy(dst, &acc[r], sizeof(V));
                        } else {
                            memcpy(tail[r], &acc[r], sizeof(V));
                            memcpy(dst, tail[r], sizeof(T) * nc);
                        }
                    }
                }
            }
        }
    });
}

// The rows kernel where it applies: unit stride and dilation, a 3, 5 or 7 wide kernel.
template <class T>
bool dw_forward_by_rows(const T* x, const T* w, const T* bias, T* y, const ConvParams& p) {
    if (p.sh != 1 || p.sw != 1 || p.dh != 1 || p.dw != 1) return false;
    switch (p.kw) {
        case 3: dw_forward_rows<T, 3>(x, w, bias, y, p); return true;
        case 5: dw_forward_rows<T, 5>(x, w, bias, y, p); return true;
        case 7: dw_forward_rows<T, 7>(x, w, bias, y, p); return true;
        default: return false;
    }
}

// The input gradient of a unit-stride depthwise conv: the rows kernel over gy with the flipped weight, padded by
// (k - 1) - p (needs p <= k - 1).
template <class T>
bool dw_backward_input_by_rows(const T* gy, const T* w, T* gx, const ConvParams& p) {
    if (p.sh != 1 || p.sw != 1 || p.dh != 1 || p.dw != 1 || p.ph > p.kh - 1 || p.pw > p.kw - 1) return false;
    const int64_t KK = p.kh * p.kw;
    Buf<T> flipped(p.C * KK);
    for (int64_t c = 0; c < p.C; ++c)
        for (int64_t t = 0; t < KK; ++t) flipped.get()[c * KK + t] = w[c * KK + KK - 1 - t];
    ConvParams q = p;
    q.H = p.OH; q.W = p.OW;
    q.OH = p.H; q.OW = p.W;
    q.ph = p.kh - 1 - p.ph;
    q.pw = p.kw - 1 - p.pw;
    return dw_forward_by_rows<T>(gy, flipped.get(), nullptr, gx, q);
}

// Whether the forward runs the NHWC direct kernel: float32 ungrouped KxK convs with at least 16 input channels.
// It needs no im2col matrix and reaches ~1.3-1.7x the im2col + GEMM rate on ResNet's 3x3 convs (transposing x
// and packing the weight included); on the 3-channel stem the transpose costs more than it saves.
template <class T>
static inline bool direct_forward_suits(const ConvParams& p) {
    return std::is_same<T, float>::value && p.groups == 1 && p.kh * p.kw > 1 && p.C >= 16;
}

// ---------------- general (grouped) conv ----------------
template <class T>
void conv_forward(const T* x, const T* w, const T* bias, T* y, const ConvParams& p) {
    if (is_depthwise(p)) {
        if (dw_forward_by_rows(x, w, bias, y, p)) return;
        return dw_forward(x, w, bias, y, p);
    }
    if constexpr (std::is_same<T, float>::value) {
        if (winograd_suits(p) && winograd_pays_for_filters(p)) return conv_forward_winograd(x, w, bias, y, p);
        if (direct_forward_suits<T>(p)) return conv_forward_nchw_direct(x, w, bias, y, p);
    }
    if (conv_blocked_forward(x, w, bias, y, p)) return;
    const int64_t G = p.groups, Cg = p.C / G, Og = p.O / G, kk = p.kh * p.kw, Kd = Cg * kk;
    const int64_t L = p.OH * p.OW, HW = p.H * p.W;
    const bool pw1 = is_pointwise(p);
    for_each_image<T>(p.N, pw1 ? 1 : p.C * kk * L, [&](int64_t n, T* scratch) {
        const T* xn = x + n * p.C * HW;
        T* yn = y + n * p.O * L;
        const T* cols = xn;
        if (!pw1) {
            im2col_image(xn, scratch, p);
            cols = scratch;
        }
        for (int64_t g = 0; g < G; ++g)
            gemm_strided<T>(Og, L, Kd, w + g * Og * Kd, Kd, 1, cols + g * Kd * L, L, 1, yn + g * Og * L, L, false);
        if (bias) {
            for (int64_t o = 0; o < p.O; ++o) {
                const T b = bias[o];
                T* yo = yn + o * L;
                for (int64_t i = 0; i < L; ++i) yo[i] += b;
            }
        }
    });
}

// The input gradient of a unit-stride conv is a forward conv of gy with the weight transposed (O <-> C) and
// flipped, padded by d * (k - 1) - p: it runs the direct kernel when that conv suits it (gy has >= 16 channels),
// with no (C*kh*kw, OH*OW) column matrix and no col2im pass.
template <class T>
static inline bool direct_backward_input_suits(const ConvParams& p) {
    return std::is_same<T, float>::value && p.groups == 1 && p.kh * p.kw > 1 && p.sh == 1 && p.sw == 1 &&
           p.O >= 16 && p.dh * (p.kh - 1) >= p.ph && p.dw * (p.kw - 1) >= p.pw;
}

static void conv_backward_input_direct(const float* gy, const float* w, float* gx, const ConvParams& p) {
    ConvParams q = p;
    q.C = p.O; q.H = p.OH; q.W = p.OW;
    q.O = p.C; q.OH = p.H; q.OW = p.W;
    q.ph = p.dh * (p.kh - 1) - p.ph;
    q.pw = p.dw * (p.kw - 1) - p.pw;
    if (winograd_suits(q) && winograd_pays_for_filters(q)) return conv_forward_winograd(gy, w, nullptr, gx, q, true);
    conv_forward_nchw_direct(gy, w, nullptr, gx, q, true);
}

template <class T>
void conv_backward_input(const T* gy, const T* w, T* gx, const ConvParams& p) {
    if (is_depthwise(p)) {
        if (dw_backward_input_by_rows(gy, w, gx, p)) return;
        return dw_backward_input(gy, w, gx, p);
    }
    if constexpr (std::is_same<T, float>::value) {
        if (direct_backward_input_suits<T>(p)) return conv_backward_input_direct(gy, w, gx, p);
    }
    if (conv_blocked_backward_input(gy, w, gx, p)) return;
    const int64_t G = p.groups, Cg = p.C / G, Og = p.O / G, kk = p.kh * p.kw, Kd = Cg * kk;
    const int64_t L = p.OH * p.OW, HW = p.H * p.W;
    const bool pw1 = is_pointwise(p);
    for_each_image<T>(p.N, pw1 ? 1 : p.C * kk * L, [&](int64_t n, T* scratch) {
        const T* gyn = gy + n * p.O * L;
        T* gxn = gx + n * p.C * HW;
        T* cols = pw1 ? gxn : scratch;
        // cols_g (Kd x L) = W_g^T (Kd x Og) @ gy_g (Og x L)
        for (int64_t g = 0; g < G; ++g)
            gemm_strided<T>(Kd, L, Og, w + g * Og * Kd, 1, Kd, gyn + g * Og * L, L, 1, cols + g * Kd * L, L, false);
        if (!pw1) col2im_image(scratch, gxn, p);
    });
}

template <class T>
void conv_backward_weight(const T* gy, const T* x, T* gw, const ConvParams& p) {
    if (is_depthwise(p)) {
        if (dw_backward_weight_by_rows(gy, x, gw, p)) return;
        return dw_backward_weight(gy, x, gw, p);
    }
    if constexpr (std::is_same<T, float>::value) {
        if (winograd_suits(p)) return conv_backward_weight_winograd(gy, x, gw, p);
    }
    if (conv_blocked_backward_weight(gy, x, gw, p)) return;
    const int64_t G = p.groups, Cg = p.C / G, Og = p.O / G, kk = p.kh * p.kw, Kd = Cg * kk;
    const int64_t L = p.OH * p.OW, HW = p.H * p.W;
    const bool pw1 = is_pointwise(p);
    const int64_t wsize = p.O * Kd;
    const int nt = in_parallel_region() ? 1 : get_num_threads();
    const bool trans = weight_grad_transposed(Og, Kd);
    Buf<T> gwt(trans ? wsize : 1);
    T* const result = trans ? gwt.get() : gw;  // the chunks' sums, transposed when the GEMM runs transposed
    // gw_g (Og x Kd) += gy_g (Og x L) @ cols_g^T (L x Kd)
    auto one_image = [&](int64_t n, T* scratch, T* out, bool acc) {
        const T* xn = x + n * p.C * HW;
        const T* gyn = gy + n * p.O * L;
        const T* cols = xn;
        if (!pw1) {
            im2col_image(xn, scratch, p);
            cols = scratch;
        }
        for (int64_t g = 0; g < G; ++g)
            weight_grad_gemm<T>(Og, Kd, L, gyn + g * Og * L, cols + g * Kd * L, L, out + g * Og * Kd, acc);
    };
    const int64_t scratch_elems = pw1 ? 1 : p.C * kk * L;
    // The batch is cut into a fixed number of chunks (independent of the thread count, so
    // results are bit-identical for any number of threads); partial sums are added in order.
    if (p.N >= 2) {
        const int64_t nch = mn<int64_t>(kWeightChunks, p.N);
        Buf<T> partial((nch - 1) * wsize);
        auto chunk_fn = [&](int64_t c0, int64_t c1) {
            const bool cache = size_t(scratch_elems) * sizeof(T) <= kMaxCachedScratch;
            Buf<T> own(cache ? 1 : scratch_elems);
            T* scratch = cache ? cached_scratch<T>(scratch_elems) : own.get();
            for (int64_t c = c0; c < c1; ++c) {
                T* out = c == 0 ? result : partial.get() + (c - 1) * wsize;
                const int64_t nb = p.N * c / nch, ne = p.N * (c + 1) / nch;
                for (int64_t n = nb; n < ne; ++n) one_image(n, scratch, out, n > nb);
            }
        };
        if (nt > 1) parallel_for_dynamic(0, nch, chunk_fn);
        else chunk_fn(0, nch);
        for (int64_t c = 1; c < nch; ++c) {
            const T* src = partial.get() + (c - 1) * wsize;
            for (int64_t i = 0; i < wsize; ++i) result[i] += src[i];
        }
    } else {
        Buf<T> scratch(scratch_elems);
        if (p.N == 0) memset(result, 0, sizeof(T) * wsize);
        for (int64_t n = 0; n < p.N; ++n) one_image(n, scratch.get(), result, n > 0);
    }
    if (trans) weight_grad_finish(result, gw, G, Og, Kd);
}

template <class T>
void im2col_k(const T* x, T* cols, const ConvParams& p) {
    const int64_t rows = p.C * p.kh * p.kw, L = p.OH * p.OW, HW = p.H * p.W;
    parallel_for(0, p.N * rows, grain_for(L), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1;) {
            const int64_t n = r / rows, rb = r % rows;
            const int64_t re = mn<int64_t>(rows, rb + (r1 - r));
            im2col_rows(x + n * p.C * HW, cols + n * rows * L, p, rb, re);
            r += re - rb;
        }
    });
}

template <class T>
void col2im_k(const T* cols, T* x, const ConvParams& p) {
    const int64_t rows = p.C * p.kh * p.kw, L = p.OH * p.OW, HW = p.H * p.W;
    memset(x, 0, sizeof(T) * p.N * p.C * HW);
    parallel_for(0, p.N * p.C, grain_for(p.kh * p.kw * L), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1;) {
            const int64_t n = q / p.C, cb = q % p.C;
            const int64_t ce = mn<int64_t>(p.C, cb + (q1 - q));
            col2im_channels(cols + n * rows * L, x + n * p.C * HW, p, cb, ce);
            q += ce - cb;
        }
    });
}

}  // namespace

FV_REGISTRATION void fill_conv(KernelTable& t) {
    FV_FILL_F32_F64(t, conv2d_forward, conv_forward);
    FV_FILL_F32_F64(t, conv2d_backward_input, conv_backward_input);
    FV_FILL_F32_F64(t, conv2d_backward_weight, conv_backward_weight);
    FV_FILL_F32_F64(t, im2col, im2col_k);
    FV_FILL_F32_F64(t, col2im, col2im_k);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
