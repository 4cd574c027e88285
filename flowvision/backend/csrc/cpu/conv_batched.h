// Blocked-image convolution kernels (cpu/conv_batched.cpp), called by cpu/conv.cpp's im2col path. Each returns
// false (and does nothing) when the per-image path suits the shapes better: depthwise, one image, or output
// planes that already give the GEMM enough columns.
#pragma once
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

template <class T>
bool conv_blocked_forward(const T* x, const T* w, const T* bias, T* y, const ConvParams& p);
template <class T>
bool conv_blocked_backward_input(const T* gy, const T* w, T* gx, const ConvParams& p);
template <class T>
bool conv_blocked_backward_weight(const T* gy, const T* x, T* gw, const ConvParams& p);

// The weight gradient's GEMM, gw (Og, Kd) (+)= gy (Og, K) @ cols^T (K, Kd), with gy and cols row-major (leading
// dimension ld). With fewer output channels than columns (Og < Kd: every KxK conv, 1x1 convs that reduce) it runs
// as gw^T (Kd, Og) = cols @ gy^T: the GEMM then has Kd rows, not Og, which measures 1.5x faster at Og = 64 on AVX2,
// and `out` holds the transposed result until weight_grad_finish puts it in place.
inline bool weight_grad_transposed(int64_t Og, int64_t Kd) { return Og < Kd; }

template <class T>
void weight_grad_gemm(int64_t Og, int64_t Kd, int64_t K, const T* gy, const T* cols, int64_t ld, T* out, bool acc) {
    if (weight_grad_transposed(Og, Kd)) gemm_strided<T>(Kd, Og, K, cols, ld, 1, gy, 1, ld, out, Og, acc);
    else gemm_strided<T>(Og, Kd, K, gy, ld, 1, cols, 1, ld, out, Kd, acc);
}

// gw[g][o][k] = out[g][k][o] for the G groups when the GEMM ran transposed.
template <class T>
void weight_grad_finish(const T* out, T* gw, int64_t G, int64_t Og, int64_t Kd) {
    for (int64_t g = 0; g < G; ++g)
        for (int64_t o = 0; o < Og; ++o)
            for (int64_t k = 0; k < Kd; ++k) gw[(g * Og + o) * Kd + k] = out[(g * Kd + k) * Og + o];
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
