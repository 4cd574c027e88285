// interpolate (nearest, nearest-exact, bilinear, bicubic, antialiased bilinear/bicubic),
// forward and backward, with torch's coordinate rules. Every mode is expressed as a
// separable per-axis tap table (index + weight per output position), applied W then H.
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

template <class T>
struct Taps {
    int64_t ntaps = 1;
    int64_t* idx = nullptr;  // out * ntaps
    T* wt = nullptr;         // out * ntaps
    int64_t* cnt = nullptr;  // out (taps actually used)
    ~Taps() {
        free(idx);
        free(wt);
        free(cnt);
    }
    void alloc(int64_t out, int64_t nt) {
        ntaps = nt;
        idx = static_cast<int64_t*>(malloc(sizeof(int64_t) * out * nt + 8));
        wt = static_cast<T*>(malloc(sizeof(T) * out * nt + 8));
        cnt = static_cast<int64_t*>(malloc(sizeof(int64_t) * out + 8));
        if (!idx || !wt || !cnt) fv::throw_bad_alloc();
    }
};

template <class T>
static inline T area_scale(int64_t in, int64_t out, bool align_corners, double user_scale) {
    if (align_corners) return out > 1 ? T(in - 1) / T(out - 1) : T(0);
    return user_scale > 0 ? T(1.0 / user_scale) : T(in) / T(out);
}

template <class T>
static inline T src_index(T scale, int64_t dst, bool align_corners, bool cubic) {
    if (align_corners) return scale * T(dst);
    const T s = scale * (T(dst) + T(0.5)) - T(0.5);
    return (!cubic && s < T(0)) ? T(0) : s;
}

static inline float ffloor(float v) { return floorf(v); }
static inline double ffloor(double v) { return floor(v); }

template <class T>
static inline T cc1(T x, T A) { return ((A + T(2)) * x - (A + T(3))) * x * x + T(1); }
template <class T>
static inline T cc2(T x, T A) { return ((A * x - T(5) * A) * x + T(8) * A) * x - T(4) * A; }

template <class T>
static inline T aa_filter(T x, bool cubic) {
    x = x < T(0) ? -x : x;
    if (!cubic) return x < T(1) ? T(1) - x : T(0);
    const T a = T(-0.5);
    if (x < T(1)) return cc1(x, a);
    if (x < T(2)) return cc2(x, a);
    return T(0);
}

template <class T>
void build_taps(Taps<T>& tp, int64_t in, int64_t out, const InterpParams& p, double user_scale) {
    const bool ac = p.align_corners;
    if (p.mode == kNearest || p.mode == kNearestExact) {
        tp.alloc(out, 1);
        const float sc = user_scale > 0 ? float(1.0 / user_scale) : float(in) / float(out);
        for (int64_t i = 0; i < out; ++i) {
            int64_t s;
            if (p.mode == kNearest) {
                if (out == in) s = i;
                else if (out == 2 * in) s = i >> 1;
                else s = mn<int64_t>(int64_t(floorf(float(i) * sc)), in - 1);
            } else {
                s = mn<int64_t>(int64_t(floorf((float(i) + 0.5f) * sc)), in - 1);
            }
            tp.idx[i] = s;
            tp.wt[i] = T(1);
            tp.cnt[i] = 1;
        }
        return;
    }
    const bool cubic = p.mode == kBicubic;
    const T scale = area_scale<T>(in, out, ac, user_scale);
    if (p.antialias) {
        const T interp = cubic ? T(4) : T(2);
        const T support = scale >= T(1) ? interp * T(0.5) * scale : interp * T(0.5);
        const int64_t maxn = int64_t(ceil(double(support))) * 2 + 1;
        tp.alloc(out, maxn);
        const T invscale = scale >= T(1) ? T(1) / scale : T(1);
        for (int64_t i = 0; i < out; ++i) {
            const T center = scale * (T(i) + T(0.5));
            const int64_t xmin = mx<int64_t>(int64_t(center - support + T(0.5)), 0);
            int64_t xsize = mn<int64_t>(int64_t(center + support + T(0.5)), in) - xmin;
            xsize = mn<int64_t>(mx<int64_t>(xsize, 0), maxn);
            T total = T(0);
            for (int64_t j = 0; j < xsize; ++j) {
                const T w = aa_filter<T>((T(j + xmin) - center + T(0.5)) * invscale, cubic);
                tp.wt[i * maxn + j] = w;
                total += w;
            }
            for (int64_t j = 0; j < maxn; ++j) {
                tp.idx[i * maxn + j] = mn<int64_t>(xmin + j, in - 1);
                if (j >= xsize) tp.wt[i * maxn + j] = T(0);
                else if (total != T(0)) tp.wt[i * maxn + j] /= total;
            }
            tp.cnt[i] = xsize;
        }
        return;
    }
    if (!cubic) {
        tp.alloc(out, 2);
        for (int64_t i = 0; i < out; ++i) {
            int64_t i0, i1;
            T l0, l1;
            if (out == in) {
                i0 = i1 = i;
                l0 = T(1);
                l1 = T(0);
            } else {
                const T r = src_index<T>(scale, i, ac, false);
                i0 = mn<int64_t>(int64_t(ffloor(r)), in - 1);
                T l = r - T(i0);
                l1 = l < T(0) ? T(0) : (l > T(1) ? T(1) : l);
                i1 = i0 + (i0 < in - 1 ? 1 : 0);
                l0 = T(1) - l1;
            }
            tp.idx[2 * i] = i0;
            tp.idx[2 * i + 1] = i1;
            tp.wt[2 * i] = l0;
            tp.wt[2 * i + 1] = l1;
            tp.cnt[i] = 2;
        }
        return;
    }
    tp.alloc(out, 4);
    const T A = T(-0.75);
    for (int64_t i = 0; i < out; ++i) {
        const T r = src_index<T>(scale, i, ac, true);
        const int64_t i0 = mn<int64_t>(int64_t(ffloor(r)), in - 1);
        T t = r - T(i0);
        t = t < T(0) ? T(0) : (t > T(1) ? T(1) : t);
        const T c[4] = {cc2<T>(t + T(1), A), cc1<T>(t, A), cc1<T>(T(1) - t, A), cc2<T>(T(2) - t, A)};
        for (int k = 0; k < 4; ++k) {
            tp.idx[4 * i + k] = mn<int64_t>(mx<int64_t>(i0 - 1 + k, 0), in - 1);
            tp.wt[4 * i + k] = c[k];
        }
        tp.cnt[i] = 4;
    }
}

template <class T>
void interp_fwd(const T* x, T* y, const InterpParams& p) {
    Taps<T> th, tw;
    build_taps(th, p.H, p.OH, p, p.scale_h);
    build_taps(tw, p.W, p.OW, p, p.scale_w);
    const int64_t HW = p.H * p.W, L = p.OH * p.OW;
    if (p.mode == kNearest || p.mode == kNearestExact) {  // direct gather
        parallel_for(0, p.planes, grain_for(L), [&](int64_t q0, int64_t q1) {
            for (int64_t q = q0; q < q1; ++q) {
                const T* xp = x + q * HW;
                T* yp = y + q * L;
                for (int64_t oh = 0; oh < p.OH; ++oh) {
                    const T* xr = xp + th.idx[oh] * p.W;
                    T* yr = yp + oh * p.OW;
                    for (int64_t ow = 0; ow < p.OW; ++ow) yr[ow] = xr[tw.idx[ow]];
                }
            }
        });
        return;
    }
    parallel_for(0, p.planes, grain_for(p.H * p.OW * tw.ntaps + L * th.ntaps), [&](int64_t q0, int64_t q1) {
        Buf<T> tmp(p.H * p.OW);
        for (int64_t q = q0; q < q1; ++q) {
            const T* xp = x + q * HW;
            T* yp = y + q * L;
            T* t = tmp.get();
            // horizontal pass: every input row -> OW columns
            for (int64_t h = 0; h < p.H; ++h) {
                const T* xr = xp + h * p.W;
                T* tr = t + h * p.OW;
                for (int64_t ow = 0; ow < p.OW; ++ow) {
                    const int64_t* ix = tw.idx + ow * tw.ntaps;
                    const T* wx = tw.wt + ow * tw.ntaps;
                    const int64_t n = tw.cnt[ow];
                    T s = T(0);
                    for (int64_t j = 0; j < n; ++j) s += wx[j] * xr[ix[j]];
                    tr[ow] = s;
                }
            }
            // vertical pass
            for (int64_t oh = 0; oh < p.OH; ++oh) {
                const int64_t* iy = th.idx + oh * th.ntaps;
                const T* wy = th.wt + oh * th.ntaps;
                const int64_t n = th.cnt[oh];
                T* yr = yp + oh * p.OW;
                for (int64_t ow = 0; ow < p.OW; ++ow) yr[ow] = T(0);
                for (int64_t i = 0; i < n; ++i) {
                    const T w = wy[i];
                    const T* tr = t + iy[i] * p.OW;
                    for (int64_t ow = 0; ow < p.OW; ++ow) yr[ow] += w * tr[ow];
                }
            }
        }
    });
}

template <class T>
void interp_bwd(const T* gy, T* gx, const InterpParams& p) {
    Taps<T> th, tw;
    build_taps(th, p.H, p.OH, p, p.scale_h);
    build_taps(tw, p.W, p.OW, p, p.scale_w);
    const int64_t HW = p.H * p.W, L = p.OH * p.OW;
    if (p.mode == kNearest || p.mode == kNearestExact) {  // direct scatter-add
        parallel_for(0, p.planes, grain_for(L + HW), [&](int64_t q0, int64_t q1) {
            for (int64_t q = q0; q < q1; ++q) {
                const T* gp = gy + q * L;
                T* xp = gx + q * HW;
                memset(xp, 0, sizeof(T) * HW);
                for (int64_t oh = 0; oh < p.OH; ++oh) {
                    T* xr = xp + th.idx[oh] * p.W;
                    const T* gr = gp + oh * p.OW;
                    for (int64_t ow = 0; ow < p.OW; ++ow) xr[tw.idx[ow]] += gr[ow];
                }
            }
        });
        return;
    }
    parallel_for(0, p.planes, grain_for(p.H * p.OW * tw.ntaps + L * th.ntaps), [&](int64_t q0, int64_t q1) {
        Buf<T> tmp(p.H * p.OW);
        for (int64_t q = q0; q < q1; ++q) {
            const T* gp = gy + q * L;
            T* xp = gx + q * HW;
            T* t = tmp.get();
            memset(t, 0, sizeof(T) * p.H * p.OW);
            for (int64_t oh = 0; oh < p.OH; ++oh) {
                const int64_t* iy = th.idx + oh * th.ntaps;
                const T* wy = th.wt + oh * th.ntaps;
                const int64_t n = th.cnt[oh];
                const T* gr = gp + oh * p.OW;
                for (int64_t i = 0; i < n; ++i) {
                    const T w = wy[i];
                    T* tr = t + iy[i] * p.OW;
                    for (int64_t ow = 0; ow < p.OW; ++ow) tr[ow] += w * gr[ow];
                }
            }
            memset(xp, 0, sizeof(T) * HW);
            for (int64_t h = 0; h < p.H; ++h) {
                T* xr = xp + h * p.W;
                const T* tr = t + h * p.OW;
                for (int64_t ow = 0; ow < p.OW; ++ow) {
                    const int64_t* ix = tw.idx + ow * tw.ntaps;
                    const T* wx = tw.wt + ow * tw.ntaps;
                    const int64_t n = tw.cnt[ow];
                    const T g = tr[ow];
                    for (int64_t j = 0; j < n; ++j) xr[ix[j]] += wx[j] * g;
                }
            }
        }
    });
}

}  // namespace

FV_REGISTRATION void fill_interp(KernelTable& t) {
    FV_FILL_F32_F64(t, interpolate_forward, interp_fwd);
    FV_FILL_F32_F64(t, interpolate_backward, interp_bwd);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
