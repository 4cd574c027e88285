// max/avg/adaptive pooling with torch's index and divisor semantics.
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

template <class T>
void max_pool_fwd(const T* x, T* y, int64_t* idx, const PoolParams& p) {
    const int64_t HW = p.H * p.W, L = p.OH * p.OW;
    parallel_for(0, p.planes, grain_for(L * p.kh * p.kw), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const T* xp = x + q * HW;
            T* yp = y + q * L;
            int64_t* ip = idx + q * L;
            for (int64_t oh = 0; oh < p.OH; ++oh) {
                int64_t h0 = oh * p.sh - p.ph;
                const int64_t h1 = mn<int64_t>(h0 + (p.kh - 1) * p.dh + 1, p.H);
                while (h0 < 0) h0 += p.dh;
                for (int64_t ow = 0; ow < p.OW; ++ow) {
                    int64_t w0 = ow * p.sw - p.pw;
                    const int64_t w1 = mn<int64_t>(w0 + (p.kw - 1) * p.dw + 1, p.W);
                    while (w0 < 0) w0 += p.dw;
                    int64_t best = h0 * p.W + w0;
                    T m = -__builtin_inf();
                    for (int64_t ih = h0; ih < h1; ih += p.dh)
                        for (int64_t iw = w0; iw < w1; iw += p.dw) {
                            const T v = xp[ih * p.W + iw];
                            if (v > m || v != v) {
                                m = v;
                                best = ih * p.W + iw;
                            }
                        }
                    yp[oh * p.OW + ow] = m;
                    ip[oh * p.OW + ow] = best;
                }
            }
        }
    });
}

template <class T>
void max_pool_bwd(const T* gy, const int64_t* idx, T* gx, int64_t planes, int64_t in_plane, int64_t out_plane) {
    parallel_for(0, planes, grain_for(in_plane + out_plane), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            T* gp = gx + q * in_plane;
            memset(gp, 0, sizeof(T) * in_plane);
            const T* g = gy + q * out_plane;
            const int64_t* ip = idx + q * out_plane;
            for (int64_t o = 0; o < out_plane; ++o) {
                const int64_t i = ip[o];
                if (i >= 0 && i < in_plane) gp[i] += g[o];
            }
        }
    });
}

// Window [h0,h1) x [w0,w1) clipped to the input and its divisor, torch's avg_pool2d rules.
struct AvgWin {
    int64_t h0, h1, w0, w1, div;
};
static inline AvgWin avg_window(const PoolParams& p, int64_t oh, int64_t ow) {
    AvgWin a;
    a.h0 = oh * p.sh - p.ph;
    a.w0 = ow * p.sw - p.pw;
    a.h1 = mn<int64_t>(a.h0 + p.kh, p.H + p.ph);
    a.w1 = mn<int64_t>(a.w0 + p.kw, p.W + p.pw);
    const int64_t pool_size = (a.h1 - a.h0) * (a.w1 - a.w0);
    a.h0 = mx<int64_t>(a.h0, 0);
    a.w0 = mx<int64_t>(a.w0, 0);
    a.h1 = mn<int64_t>(a.h1, p.H);
    a.w1 = mn<int64_t>(a.w1, p.W);
    if (p.divisor_override) a.div = p.divisor_override;
    else if (p.count_include_pad) a.div = pool_size;
    else a.div = (a.h1 - a.h0) * (a.w1 - a.w0);
    return a;
}

template <class T>
void avg_pool_fwd(const T* x, T* y, const PoolParams& p) {
    const int64_t HW = p.H * p.W, L = p.OH * p.OW;
    parallel_for(0, p.planes, grain_for(L * p.kh * p.kw), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const T* xp = x + q * HW;
            T* yp = y + q * L;
            for (int64_t oh = 0; oh < p.OH; ++oh)
                for (int64_t ow = 0; ow < p.OW; ++ow) {
                    const AvgWin a = avg_window(p, oh, ow);
                    if (a.h0 >= a.h1 || a.w0 >= a.w1) {
                        yp[oh * p.OW + ow] = T(0);
                        continue;
                    }
                    T s = T(0);
                    for (int64_t ih = a.h0; ih < a.h1; ++ih)
                        for (int64_t iw = a.w0; iw < a.w1; ++iw) s += xp[ih * p.W + iw];
                    yp[oh * p.OW + ow] = s / T(a.div);
                }
        }
    });
}

template <class T>
void avg_pool_bwd(const T* gy, T* gx, const PoolParams& p) {
    const int64_t HW = p.H * p.W, L = p.OH * p.OW;
    parallel_for(0, p.planes, grain_for(L * p.kh * p.kw), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            T* gp = gx + q * HW;
            const T* g = gy + q * L;
            memset(gp, 0, sizeof(T) * HW);
            for (int64_t oh = 0; oh < p.OH; ++oh)
                for (int64_t ow = 0; ow < p.OW; ++ow) {
                    const AvgWin a = avg_window(p, oh, ow);
                    if (a.h0 >= a.h1 || a.w0 >= a.w1) continue;
                    const T v = g[oh * p.OW + ow] / T(a.div);
                    for (int64_t ih = a.h0; ih < a.h1; ++ih)
                        for (int64_t iw = a.w0; iw < a.w1; ++iw) gp[ih * p.W + iw] += v;
                }
        }
    });
}

static inline int64_t a_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
static inline int64_t a_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

template <class T>
void adaptive_avg_fwd(const T* x, T* y, int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW) {
    parallel_for(0, planes, grain_for(H * W + OH * OW), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const T* xp = x + q * H * W;
            T* yp = y + q * OH * OW;
            for (int64_t oh = 0; oh < OH; ++oh) {
                const int64_t h0 = a_start(oh, H, OH), h1 = a_end(oh, H, OH);
                for (int64_t ow = 0; ow < OW; ++ow) {
                    const int64_t w0 = a_start(ow, W, OW), w1 = a_end(ow, W, OW);
                    T s = T(0);
                    for (int64_t ih = h0; ih < h1; ++ih)
                        for (int64_t iw = w0; iw < w1; ++iw) s += xp[ih * W + iw];
                    yp[oh * OW + ow] = s / T((h1 - h0) * (w1 - w0));
                }
            }
        }
    });
}

template <class T>
void adaptive_avg_bwd(const T* gy, T* gx, int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW) {
    parallel_for(0, planes, grain_for(H * W + OH * OW), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            T* gp = gx + q * H * W;
            const T* g = gy + q * OH * OW;
            memset(gp, 0, sizeof(T) * H * W);
            for (int64_t oh = 0; oh < OH; ++oh) {
                const int64_t h0 = a_start(oh, H, OH), h1 = a_end(oh, H, OH);
                for (int64_t ow = 0; ow < OW; ++ow) {
                    const int64_t w0 = a_start(ow, W, OW), w1 = a_end(ow, W, OW);
                    const T v = g[oh * OW + ow] / T((h1 - h0) * (w1 - w0));
                    for (int64_t ih = h0; ih < h1; ++ih)
                        for (int64_t iw = w0; iw < w1; ++iw) gp[ih * W + iw] += v;
                }
            }
        }
    });
}

template <class T>
void adaptive_max_fwd(const T* x, T* y, int64_t* idx, int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW) {
    parallel_for(0, planes, grain_for(H * W + OH * OW), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const T* xp = x + q * H * W;
            T* yp = y + q * OH * OW;
            int64_t* ip = idx + q * OH * OW;
            for (int64_t oh = 0; oh < OH; ++oh) {
                const int64_t h0 = a_start(oh, H, OH), h1 = a_end(oh, H, OH);
                for (int64_t ow = 0; ow < OW; ++ow) {
                    const int64_t w0 = a_start(ow, W, OW), w1 = a_end(ow, W, OW);
                    T m = -__builtin_inf();
                    int64_t best = h0 * W + w0;
                    for (int64_t ih = h0; ih < h1; ++ih)
                        for (int64_t iw = w0; iw < w1; ++iw) {
                            const T v = xp[ih * W + iw];
                            if (v > m || v != v) {
                                m = v;
                                best = ih * W + iw;
                            }
                        }
                    yp[oh * OW + ow] = m;
                    ip[oh * OW + ow] = best;
                }
            }
        }
    });
}

}  // namespace

// one row per pool: forward, backward (adaptive max pool: forward only)
FV_REGISTRATION void fill_pool(KernelTable& t) {
    FV_FILL_F32_F64(t, max_pool2d_forward, max_pool_fwd), FV_FILL_F32_F64(t, max_pool2d_backward, max_pool_bwd);
    FV_FILL_F32_F64(t, avg_pool2d_forward, avg_pool_fwd), FV_FILL_F32_F64(t, avg_pool2d_backward, avg_pool_bwd);
    FV_FILL_F32_F64(t, adaptive_avg_pool2d_forward, adaptive_avg_fwd),
        FV_FILL_F32_F64(t, adaptive_avg_pool2d_backward, adaptive_avg_bwd);
    FV_FILL_F32_F64(t, adaptive_max_pool2d_forward, adaptive_max_fwd);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
