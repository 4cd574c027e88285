// One tiled GEMM kernel shared by matmul/linear and the three implicit-GEMM convolutions.
//
// A Problem supplies M, N, K (per blockIdx.z "batch" = group or matrix), the element loaders
// a(z, m, k) / b(z, k, n) (returning 0 outside the virtual matrix, e.g. in conv padding) and the
// epilogue store(z, m, n, value). The im2col matrix of a convolution is never materialised: the
// loader computes the input coordinate of each element (CUTLASS's "analytic" iterator).
//
// Tile: 64x64 outputs per 256-thread block, K step 16, operands staged in shared memory as fp32.
// SIMT path: each thread owns a 4x4 register tile (fp32 FMA). TF32 path (sm_80+): each of the 8
// warps owns a 16x32 slab computed with wmma m16n16k8 TF32 tensor-core fragments, fp32 accumulate.
// Both paths leave the tile in shared memory and store it in the order the Problem prefers
// (consecutive threads along m for NCHW conv outputs, along n for row-major GEMM outputs).
// Split-K (blockIdx.z = batch * splits + split) lets the weight gradient use all SMs; the
// problem's store then accumulates atomically.
#pragma once
#include <mma.h>

#include "common.cuh"

namespace fvcuda {

constexpr int TM = 64, TN = 64, TK = 16, TPAD = 4, TTHREADS = 256;

template <typename Problem, bool kTF32>
__global__ void __launch_bounds__(TTHREADS) igemm_kernel(Problem p, int splits) {
    __shared__ __align__(32) float smem[TM * (TN + TPAD)];
    float* As = smem;                      // [TK][TM + TPAD]: A^T, i.e. A column-major
    float* Bs = smem + TK * (TM + TPAD);   // [TK][TN + TPAD]: B row-major
    float* Cs = smem;                      // [TM][TN + TPAD], reused after the main loop
    const int t = threadIdx.x;
    const int z = blockIdx.z / splits, split = blockIdx.z % splits;
    const int64_t m0 = (int64_t)blockIdx.x * TM, n0 = (int64_t)blockIdx.y * TN;
    const int64_t M = p.M, N = p.N, K = p.K;
    const int64_t kchunk = ((K + splits - 1) / splits + TK - 1) / TK * TK;
    const int64_t kb = split * kchunk, ke = min(K, kb + kchunk);

    float acc[4][4] = {};
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 8, float> cf[2];
    if (kTF32) {
        nvcuda::wmma::fill_fragment(cf[0], 0.f);
        nvcuda::wmma::fill_fragment(cf[1], 0.f);
    }
#endif
    for (int64_t k0 = kb; k0 < ke; k0 += TK) {
        // 1024 elements per operand, 4 per thread; the loader order follows the operand's
        // contiguous dimension so that neighbouring threads read neighbouring addresses.
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            int e = t + i * TTHREADS, mm, kk;
            if (p.a_k_fast) { kk = e % TK; mm = e / TK; } else { mm = e % TM; kk = e / TM; }
            int64_t gm = m0 + mm, gk = k0 + kk;
            As[kk * (TM + TPAD) + mm] = (gm < M && gk < ke) ? p.a(z, gm, gk) : 0.f;
            int nn;
            if (p.b_k_fast) { kk = e % TK; nn = e / TK; } else { nn = e % TN; kk = e / TN; }
            int64_t gn = n0 + nn;
            gk = k0 + kk;
            Bs[kk * (TN + TPAD) + nn] = (gn < N && gk < ke) ? p.b(z, gk, gn) : 0.f;
        }
        __syncthreads();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        if (kTF32) {
            using namespace nvcuda;
            int warp = t >> 5, wm = warp & 3, wn = warp >> 2;
#pragma unroll
            for (int kk = 0; kk < TK; kk += 8) {
                wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::col_major> af;
                wmma::load_matrix_sync(af, As + kk * (TM + TPAD) + wm * 16, TM + TPAD);
#pragma unroll
                for (int q = 0; q < af.num_elements; ++q) af.x[q] = wmma::__float_to_tf32(af.x[q]);
#pragma unroll
                for (int f = 0; f < 2; ++f) {
                    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> bf;
                    wmma::load_matrix_sync(bf, Bs + kk * (TN + TPAD) + wn * 32 + f * 16, TN + TPAD);
#pragma unroll
                    for (int q = 0; q < bf.num_elements; ++q) bf.x[q] = wmma::__float_to_tf32(bf.x[q]);
                    wmma::mma_sync(cf[f], af, bf, cf[f]);
                }
            }
        } else
#endif
        {
            int tm = (t & 15) * 4, tn = (t >> 4) * 4;
#pragma unroll
            for (int kk = 0; kk < TK; ++kk) {
                float4 a4 = *reinterpret_cast<const float4*>(As + kk * (TM + TPAD) + tm);
                float4 b4 = *reinterpret_cast<const float4*>(Bs + kk * (TN + TPAD) + tn);
                float av[4] = {a4.x, a4.y, a4.z, a4.w}, bv[4] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
            }
        }
        __syncthreads();
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (kTF32) {
        int warp = t >> 5, wm = warp & 3, wn = warp >> 2;
        for (int f = 0; f < 2; ++f)
            nvcuda::wmma::store_matrix_sync(Cs + (wm * 16) * (TN + TPAD) + wn * 32 + f * 16, cf[f], TN + TPAD,
                                            nvcuda::wmma::mem_row_major);
    } else
#endif
    {
        int tm = (t & 15) * 4, tn = (t >> 4) * 4;
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) Cs[(tm + i) * (TN + TPAD) + tn + j] = acc[i][j];
    }
    __syncthreads();
    for (int e = t; e < TM * TN; e += TTHREADS) {
        int mm, nn;
        if (p.c_m_fast) { mm = e % TM; nn = e / TM; } else { nn = e % TN; mm = e / TN; }
        int64_t gm = m0 + mm, gn = n0 + nn;
        if (gm < M && gn < N) p.store(z, gm, gn, Cs[mm * (TN + TPAD) + nn], splits > 1);
    }
}

// Grid for a problem with `batches` independent GEMMs; `splits` > 1 splits K.
inline dim3 igemm_grid(int64_t M, int64_t N, int64_t batches, int splits) {
    if (batches * splits > 65535) fail("too many GEMM batches for one launch");
    return dim3(static_cast<unsigned>((M + TM - 1) / TM), static_cast<unsigned>((N + TN - 1) / TN),
                static_cast<unsigned>(batches * splits));
}

}  // namespace fvcuda
