// im2col / col2im of one row or channel, shared by the per-image (cpu/conv.cpp) and blocked-image
// (cpu/conv_batched.cpp) convolution paths. Included inside each ISA's namespace by both files.
#pragma once
#include <cstring>

#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

// Output columns [lo, hi) whose input column ow*s - p + off lies inside [0, W).
inline void valid_cols(int64_t W, int64_t OW, int64_t s, int64_t p, int64_t off, int64_t& lo, int64_t& hi) {
    const int64_t t = p - off;
    lo = t <= 0 ? 0 : (t + s - 1) / s;
    hi = (W - 1 + t) < 0 ? 0 : (W - 1 + t) / s + 1;
    if (lo > OW) lo = OW;
    if (hi > OW) hi = OW;
    if (hi < lo) hi = lo;
}

// Row r (= c*kh*kw + ki*kw + kj) of one image's im2col matrix, written to out[0, L).
template <class T>
inline void im2col_row(const T* x, T* out, const ConvParams& p, int64_t r) {
    const int64_t kk = p.kh * p.kw, c = r / kk, ki = (r / p.kw) % p.kh, kj = r % p.kw;
    const T* xp = x + c * p.H * p.W;
    int64_t lo, hi;
    valid_cols(p.W, p.OW, p.sw, p.pw, kj * p.dw, lo, hi);
    for (int64_t oh = 0; oh < p.OH; ++oh) {
        T* o = out + oh * p.OW;
        const int64_t ih = oh * p.sh - p.ph + ki * p.dh;
        if (ih < 0 || ih >= p.H || lo == hi) {
            for (int64_t ow = 0; ow < p.OW; ++ow) o[ow] = T(0);
            continue;
        }
        for (int64_t ow = 0; ow < lo; ++ow) o[ow] = T(0);
        for (int64_t ow = hi; ow < p.OW; ++ow) o[ow] = T(0);
        const T* row = xp + ih * p.W + (lo * p.sw - p.pw + kj * p.dw);
        if (p.sw == 1) {
            memcpy(o + lo, row, sizeof(T) * (hi - lo));
        } else {
            for (int64_t ow = lo; ow < hi; ++ow) o[ow] = row[(ow - lo) * p.sw];
        }
    }
}

// x[c] += fold(rows of channel c of one image's im2col matrix, row stride ld); x pre-zeroed.
template <class T>
inline void col2im_channel(const T* cols, int64_t ld, T* x, const ConvParams& p, int64_t c) {
    const int64_t kk = p.kh * p.kw;
    T* xp = x + c * p.H * p.W;
    for (int64_t ki = 0; ki < p.kh; ++ki)
        for (int64_t kj = 0; kj < p.kw; ++kj) {
            const T* in = cols + (c * kk + ki * p.kw + kj) * ld;
            int64_t lo, hi;
            valid_cols(p.W, p.OW, p.sw, p.pw, kj * p.dw, lo, hi);
            if (lo == hi) continue;
            for (int64_t oh = 0; oh < p.OH; ++oh) {
                const int64_t ih = oh * p.sh - p.ph + ki * p.dh;
                if (ih < 0 || ih >= p.H) continue;
                const T* o = in + oh * p.OW;
                T* row = xp + ih * p.W + (lo * p.sw - p.pw + kj * p.dw);
                if (p.sw == 1) {
                    for (int64_t ow = lo; ow < hi; ++ow) row[ow - lo] += o[ow];
                } else {
                    for (int64_t ow = lo; ow < hi; ++ow) row[(ow - lo) * p.sw] += o[ow];
                }
            }
        }
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
