// The register-blocked FMA micro-kernel shared by the packed GEMM (cpu/gemm.cpp), the NHWC direct convolution
// (cpu/conv_nhwc.cpp) and fused attention (cpu/attention.cpp).
//
// An FmaTile<T, MR, NV> holds MR x NV vector accumulators (MR rows of the output, NV vectors of columns). Its
// reduction step broadcasts one A value per row and multiplies it into NV vectors of B: per step NV vector
// loads, MR broadcasts and MR x NV FMAs. Every caller keeps its own operand layout (packed or strided A rows,
// a pointer per conv pixel, a packed weight panel) by handing in one A pointer per row, a compile-time element
// stride along k and the B row stride, and its own epilogue reads the accumulators.
//
// Each accumulator sums its terms in k order with one fused multiply-add per term, so a result does not depend on
// the tile shape, the vector width or how callers split the reduction into runs (the conv's segments, the GEMM's
// K blocks summed in order): a different tile choice gives bit-identical outputs.
//
// Tile shapes per ISA (registers: AVX-512 32 zmm, AVX2 16 ymm, SSE 16 xmm). A tile needs MR x NV accumulators +
// NV B vectors + one broadcast register (AVX2 FMAs cannot broadcast from memory):
//   AVX-512: 6 x 4 = 24 accumulators (+4 +1 = 29 of 32)
//   AVX2:    6 x 2 = 12 accumulators (+2 +1 = 15 of 16); a one-vector panel 12 x 1 (12 +1 +1 = 14 of 16). With
//            two FMA pipes of latency 4 (Zen 3, Haswell..Alder Lake: 4-5) at least 8-10 independent accumulators
//            are needed to keep both pipes busy, so 8 x 1 would leave one pipe idle a fifth of the time.
// kTileMR / kTileNV are the GEMM's full tile; tile_rows_for(nv) the tallest tile for a narrower panel.
#pragma once
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

#if defined(__AVX512F__)
constexpr int kVecRegs = 32;
constexpr int kTileMR = 6, kTileNV = 4;
#else
constexpr int kVecRegs = 16;
constexpr int kTileMR = 6, kTileNV = 2;
#endif

// The tallest tile for a panel of nv vectors: accumulators + nv B vectors + one broadcast within the register
// file, at most 12 rows (taller tiles waste more of the last tile on small maps and gain nothing once both FMA
// pipes are covered).
constexpr int tile_rows_for(int nv) {
    return (kVecRegs - 1 - nv) / nv < 12 ? (kVecRegs - 1 - nv) / nv : 12;
}

template <class T, int MR, int NV>
struct FmaTile {
    typedef vec_t<T> V;
    static constexpr int W = vec_width<T>();
    // a one-row tile reads each B vector once, as an FMA memory operand: no B registers
    static_assert(MR * NV + (MR > 1 ? NV : 0) + 1 <= kVecRegs, "tile does not fit the vector register file");
    V c[MR][NV];

    __attribute__((always_inline)) inline void zero() {
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) c[i][j] = V{};
    }

    // One reduction step: A value a[i][k] of each row; B vector j at b + (j / NVP) * pstride + (j % NVP) * W
    // (NVP = NV: one row of NV contiguous vectors; NVP < NV: NV / NVP panels of NVP vectors, pstride apart).
    template <int NVP = NV>
    __attribute__((always_inline)) inline void step(const T* const* a, int64_t k, const T* __restrict b,
                                                    int64_t pstride = 0) {
        V bv[NV];
#pragma GCC unroll 16
        for (int j = 0; j < NV; ++j) bv[j] = vload<V>(b + (j / NVP) * pstride + (j % NVP) * W);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
            const T av = a[i][k];
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) c[i][j] += bv[j] * av;
        }
    }

    // c[i][j] += sum_{k < len, ascending} a[i][k * AS] * b[k * ldb + j * W]. UNROLL4: unroll the k loop 4x
    // (long runs with a short body elsewhere in the caller) rather than 2x (the default: less code per tile).
    template <int AS, bool UNROLL4 = false>
    __attribute__((always_inline)) inline void fma(int64_t len, const T* const* a, const T* __restrict b,
                                                   int64_t ldb) {
        const T* ap[MR];  // the row pointers in registers for the whole run
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) ap[i] = a[i];
        if constexpr (UNROLL4) {
#pragma GCC unroll 4
            for (int64_t k = 0; k < len; ++k) step(ap, k * AS, b + k * ldb);
        } else {
#pragma GCC unroll 2
            for (int64_t k = 0; k < len; ++k) step(ap, k * AS, b + k * ldb);
        }
    }

    // fma() over NV / NVP panels of NVP vectors at once, panel q's B rows at b + q * pstride + k * ldb: more
    // independent sums for a short tile (a GEMV's one row), each column still summed in k order
    template <int AS, int NVP>
    __attribute__((always_inline)) inline void fma_panels(int64_t len, const T* const* a, const T* __restrict b,
                                                          int64_t ldb, int64_t pstride) {
        static_assert(NV % NVP == 0, "whole panels");
        const T* ap[MR];
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) ap[i] = a[i];
#pragma GCC unroll 2
        for (int64_t k = 0; k < len; ++k) step<NVP>(ap, k * AS, b + k * ldb, pstride);
    }

    // Every accumulator stored to C (row stride ldc) as act(c + bias[j]), with the activation and whether there is a
    // bias fixed at compile time: the store of the GEMM's and the NHWC conv's common tile, where testing them for
    // each stored vector cost as much as a short reduction's FMAs. act: an Epilogue (relu / relu6 / clamp to
    // [lo, hi] and hardswish in registers; none and the after-store kinds pass through); false, and nothing stored,
    // for one without an instance here.
    __attribute__((always_inline)) inline bool store_epilogue(T* C, int64_t ldc, const T* bias, int act, T lo,
                                                              T hi) const {
        switch (act) {
            case kEpNone:
            case kEpGelu:
            case kEpGeluTanh:
            case kEpSilu:
                bias ? store_fixed<kEpNone, true>(C, ldc, bias, lo, hi)
                     : store_fixed<kEpNone, false>(C, ldc, bias, lo, hi);
                return true;
            case kEpRelu:
            case kEpRelu6:
            case kEpClamp:  // one clamp to [lo, hi]: the callers set relu's and relu6's bounds
                bias ? store_fixed<kEpClamp, true>(C, ldc, bias, lo, hi)
                     : store_fixed<kEpClamp, false>(C, ldc, bias, lo, hi);
                return true;
            case kEpHardswish:
                bias ? store_fixed<kEpHardswish, true>(C, ldc, bias, lo, hi)
                     : store_fixed<kEpHardswish, false>(C, ldc, bias, lo, hi);
                return true;
            default:
                return false;
        }
    }

    template <int ACT, bool BIAS>
    __attribute__((always_inline)) inline void store_fixed(T* C, int64_t ldc, const T* bias, T lo, T hi) const {
        V b[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) b[j] = BIAS ? vload<V>(bias + j * W) : V{};
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) {
                V v = c[i][j];
                if (BIAS) v = v + b[j];
                vstore(C + i * ldc + j * W, epilogue_apply<V, T>(ACT, v, lo, hi));
            }
    }

    // row i's NV vectors stored to p (NV * W contiguous values)
    __attribute__((always_inline)) inline void store_row(int i, T* p) const {
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) vstore(p + j * W, c[i][j]);
    }
};

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
