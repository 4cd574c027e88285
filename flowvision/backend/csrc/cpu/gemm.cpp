// Cache-blocked GEMM with a register-tiled micro-kernel (GCC vector extensions, width
// set by the ISA flags of this translation unit). Packs B (KC x NC) once per block and
// each thread packs its own A (MC x KC) block.
#include "cpu/common.h"
#include "cpu/fma_tile.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

constexpr int kMR = kTileMR, kNV = kTileNV;  // the ISA's full tile (cpu/fma_tile.h)
constexpr int64_t kKC = 768;  // long K blocks: fewer passes over C (the A rows stay in L1, B panels stream from L2)
constexpr int64_t kMC = 192;
constexpr int64_t kNC = 3072;
constexpr int64_t kShortK = 64;      // gemm_packed: K up to this writes C in row chunks across the panels
constexpr int64_t kShortKRows = 24;  // rows per chunk there (4 tiles of 6 rows; 2 of the 12-row narrow tail)

template <class T>
struct Cfg {
    static constexpr int W = vec_width<T>();
    static constexpr int MR = kMR;
    static constexpr int NV = kNV;
    static constexpr int NR = kNV * W;
};

template <class T>
__attribute__((always_inline)) inline void micro_kernel(int64_t kc, const T* __restrict Ap, const T* __restrict Bp,
                                                        T* __restrict C, int64_t ldc, int64_t mr, int64_t nr, bool acc) {
    typedef vec_t<T> V;
    constexpr int MR = Cfg<T>::MR, NV = Cfg<T>::NV, W = Cfg<T>::W, NR = Cfg<T>::NR;
    // packed A: row i's value at step k is Ap[k * MR + i]
    const T* a[MR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) a[i] = Ap + i;
    FmaTile<T, MR, NV> t;
    t.zero();
    t.template fma<MR>(kc, a, Bp, NR);
    auto& c = t.c;
    if (mr == MR && nr == NR) {
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) {
                T* p = C + i * ldc + j * W;
                if (acc) vstore(p, vload<V>(p) + c[i][j]);
                else vstore(p, c[i][j]);
            }
    } else {
        alignas(64) T tmp[MR * NR];
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) *reinterpret_cast<V*>(tmp + i * NR + j * W) = c[i][j];
        for (int64_t i = 0; i < mr; ++i) {
            T* p = C + i * ldc;
            if (acc) for (int64_t j = 0; j < nr; ++j) p[j] += tmp[i * NR + j];
            else for (int64_t j = 0; j < nr; ++j) p[j] = tmp[i * NR + j];
        }
    }
}

#if defined(__AVX2__)
// Six rows of a row-major A (row stride rsa) into one micro-panel, dst[k * 6 + i] = row i's value k: eight steps
// at a time as an 8x8 transpose of the six rows and two zero rows (a scalar copy does one 4-byte store per value,
// a tenth of a linear layer's GEMM time). Step k's column goes to dst + 6k as 8 lanes; its last two land on step
// k+1's slots, which the next store overwrites, and the run's last column is stored through a mask so nothing
// past the panel is written.
inline void pack_rows6(const float* src, int64_t rsa, int64_t kc, float* dst) {
    const float* r[6];
    for (int i = 0; i < 6; ++i) r[i] = src + i * rsa;
    const __m256 z = _mm256_setzero_ps();
    const __m256i first6 = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        const __m256 r0 = _mm256_loadu_ps(r[0] + k), r1 = _mm256_loadu_ps(r[1] + k);
        const __m256 r2 = _mm256_loadu_ps(r[2] + k), r3 = _mm256_loadu_ps(r[3] + k);
        const __m256 r4 = _mm256_loadu_ps(r[4] + k), r5 = _mm256_loadu_ps(r[5] + k);
        const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
        // u_j: rows 0-3 (or 4-5 and zeros) of steps j (low 128 bits) and j + 4 (high)
        const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        const __m256 u4 = _mm256_shuffle_ps(t4, z, 0x44), u5 = _mm256_shuffle_ps(t4, z, 0xEE);
        const __m256 u6 = _mm256_shuffle_ps(t5, z, 0x44), u7 = _mm256_shuffle_ps(t5, z, 0xEE);
        float* d = dst + k * 6;
        _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
        _mm256_storeu_ps(d + 6, _mm256_permute2f128_ps(u1, u5, 0x20));
        _mm256_storeu_ps(d + 12, _mm256_permute2f128_ps(u2, u6, 0x20));
        _mm256_storeu_ps(d + 18, _mm256_permute2f128_ps(u3, u7, 0x20));
        _mm256_storeu_ps(d + 24, _mm256_permute2f128_ps(u0, u4, 0x31));
        _mm256_storeu_ps(d + 30, _mm256_permute2f128_ps(u1, u5, 0x31));
        _mm256_storeu_ps(d + 36, _mm256_permute2f128_ps(u2, u6, 0x31));
        const __m256 c7 = _mm256_permute2f128_ps(u3, u7, 0x31);
        if (k + 8 < kc) _mm256_storeu_ps(d + 42, c7);
        else _mm256_maskstore_ps(d + 42, first6, c7);
    }
    for (; k < kc; ++k)
        for (int i = 0; i < 6; ++i) dst[k * 6 + i] = r[i][k];
}
#endif

// Pack rows [i0, i0+mc) x cols [k0, k0+kc) of A into MR-row micro-panels, zero padded.
template <class T>
void pack_a(const T* A, int64_t rsa, int64_t csa, int64_t i0, int64_t mc, int64_t k0, int64_t kc, T* Ap) {
    constexpr int MR = Cfg<T>::MR;
    if (rsa == 1 && csa != 1) {
        // A transposed (the weight gradient's output-gradient operand): step k of the block is one contiguous run of
        // mc values. Blocks of 16 steps keep those runs in L1 while they are spread over the micro-panels; one
        // panel at a time over all kc steps would fetch every run from L3 again for each panel.
        for (int64_t kb = 0; kb < kc; kb += 16) {
            const int64_t ke = mn<int64_t>(kc, kb + 16);
            for (int64_t ir = 0; ir < mc; ir += MR) {
                const int64_t mr = mn<int64_t>(MR, mc - ir);
                T* dst = Ap + ir * kc;
                for (int64_t k = kb; k < ke; ++k) {
                    const T* src = A + (k0 + k) * csa + i0 + ir;
                    T* d = dst + k * MR;
                    if (mr == MR) {
#pragma GCC unroll 16
                        for (int i = 0; i < MR; ++i) d[i] = src[i];
                    } else {
                        for (int64_t i = 0; i < mr; ++i) d[i] = src[i];
                        for (int64_t i = mr; i < MR; ++i) d[i] = T(0);
                    }
                }
            }
        }
        return;
    }
    for (int64_t ir = 0; ir < mc; ir += MR) {
        int64_t mr = mn<int64_t>(MR, mc - ir);
        T* dst = Ap + ir * kc;
        if (csa == 1) {
#if defined(__AVX2__)
            if constexpr (sizeof(T) == 4 && MR == 6) {
                if (mr == MR) {
                    pack_rows6(reinterpret_cast<const float*>(A + (i0 + ir) * rsa + k0), rsa, kc,
                               reinterpret_cast<float*>(dst));
                    continue;
                }
            }
#endif
            for (int64_t i = 0; i < mr; ++i) {
                const T* src = A + (i0 + ir + i) * rsa + k0;
                for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = src[k];
            }
            for (int64_t i = mr; i < MR; ++i)
                for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = T(0);
        } else {
            for (int64_t k = 0; k < kc; ++k) {
                const T* src = A + (k0 + k) * csa + (i0 + ir) * rsa;
                T* d = dst + k * MR;
                if (rsa == 1) {
                    for (int64_t i = 0; i < mr; ++i) d[i] = src[i];
                } else {
                    for (int64_t i = 0; i < mr; ++i) d[i] = src[i * rsa];
                }
                for (int64_t i = mr; i < MR; ++i) d[i] = T(0);
            }
        }
    }
}

// Pack rows [k0, k0+kc) x cols of panel p (NR wide, starting at j0) of B.
template <class T>
void pack_b_panel(const T* B, int64_t rsb, int64_t csb, int64_t k0, int64_t kc, int64_t j0, int64_t nr, T* Bp) {
    constexpr int NR = Cfg<T>::NR;
    if (csb == 1) {
        for (int64_t k = 0; k < kc; ++k) {
            const T* src = B + (k0 + k) * rsb + j0;
            T* d = Bp + k * NR;
            if (nr == NR) {
                memcpy(d, src, sizeof(T) * NR);
            } else {
                for (int64_t j = 0; j < nr; ++j) d[j] = src[j];
                for (int64_t j = nr; j < NR; ++j) d[j] = T(0);
            }
        }
    } else {
        // B(k, j) = B[k*rsb + j*csb] (a transposed operand when rsb == 1): transpose in blocks of
        // 16 k so both the reads (one cache line per column) and the writes stay in L1
        for (int64_t kb = 0; kb < kc; kb += 16) {
            const int64_t ke = mn<int64_t>(kc, kb + 16);
            for (int64_t j = 0; j < nr; ++j) {
                const T* src = B + (j0 + j) * csb + (k0 + kb) * rsb;
                T* d = Bp + kb * NR + j;
                if (rsb == 1) {
                    for (int64_t k = 0; k < ke - kb; ++k) d[k * NR] = src[k];
                } else {
                    for (int64_t k = 0; k < ke - kb; ++k) d[k * NR] = src[k * rsb];
                }
            }
        }
        for (int64_t j = nr; j < NR; ++j)
            for (int64_t k = 0; k < kc; ++k) Bp[k * NR + j] = T(0);
    }
}

// `count` vectors of length K: element k of vector v is data[v * step + k * k_stride].
template <class T>
struct VecSet {
    const T* data;
    int64_t count, step, k_stride;
};

// C[f * c_few + m * c_many] (+)= dot(few_f, many_m) for every pair: the few vectors are copied contiguous once,
// the many are walked in parallel (each copied only when its elements are strided).
template <class T>
void small_dots(int64_t K, VecSet<T> few, VecSet<T> many, T* C, int64_t c_few, int64_t c_many, bool accumulate) {
    Buf<T> packed(few.count * K);
    for (int64_t f = 0; f < few.count; ++f)
        for (int64_t k = 0; k < K; ++k) packed.get()[f * K + k] = few.data[f * few.step + k * few.k_stride];
    parallel_for(0, many.count, grain_for(few.count * K, 1 << 16), [&](int64_t m0, int64_t m1) {
        Buf<T> copy(many.k_stride == 1 ? 1 : K);
        for (int64_t m = m0; m < m1; ++m) {
            const T* v = many.data + m * many.step;
            if (many.k_stride != 1) {
                for (int64_t k = 0; k < K; ++k) copy.get()[k] = v[k * many.k_stride];
                v = copy.get();
            }
            for (int64_t f = 0; f < few.count; ++f) {
                const T d = vdot(packed.get() + f * K, v, K);
                T& c = C[f * c_few + m * c_many];
                c = accumulate ? c + d : d;
            }
        }
    });
}

// GEMM with a tiny M or N (matrix-vector like): the register tile would be mostly padding,
// so use axpy / dot-product loops over contiguous copies instead. Each output element is
// computed by one thread in a fixed order (thread-count independent).
template <class T>
void gemm_small(int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t rsb,
                int64_t csb, T* C, int64_t ldc, bool accumulate) {
    if (M <= N && csb == 1) {
        // c_i[j] += sum_k A(i,k) * B[k, j]  (rows of B contiguous): axpy over N
        parallel_for(0, N, grain_for(M * K, 1 << 16) * 16, [&](int64_t jb, int64_t je) {
            // column blocks small enough that the M output rows stay in L1 while B streams once
            for (int64_t j0 = jb; j0 < je; j0 += 512) {
                const int64_t j1 = mn<int64_t>(je, j0 + 512);
                if (!accumulate)
                    for (int64_t i = 0; i < M; ++i)
                        for (int64_t j = j0; j < j1; ++j) C[i * ldc + j] = T(0);
                for (int64_t k = 0; k < K; ++k) {
                    const T* b = B + k * rsb;
                    for (int64_t i = 0; i < M; ++i) {
                        const T a = A[i * rsa + k * csa];
                        T* c = C + i * ldc;
                        for (int64_t j = j0; j < j1; ++j) c[j] += a * b[j];
                    }
                }
            }
        });
        return;
    }
    if (M <= N) {
        // dot products of A's rows (copied) against B's columns (contiguous when rsb == 1)
        small_dots(K, VecSet<T>{A, M, rsa, csa}, VecSet<T>{B, N, csb, rsb}, C, ldc, 1, accumulate);
        return;
    }
    // small N: dot products of B's columns (copied) against A's rows (contiguous when csa == 1)
    small_dots(K, VecSet<T>{B, N, csb, rsb}, VecSet<T>{A, M, rsa, csa}, C, 1, ldc, accumulate);
}


// ---------------------------------------------------------------- weights packed once
// Layout of a packed B (K, N): K blocks of kKC rows; inside block pc (kc rows) the NR-wide column panels
// follow each other, each kc x NR contiguous (zero padded past N): element (k, j) of panel p in block pc is
// at pc * Npad + p * kc * NR + (k - pc) * NR + (j - p * NR), Npad = ceil(N / NR) * NR.
template <class T>
int64_t packed_b_size(int64_t K, int64_t N) {
    constexpr int NR = Cfg<T>::NR;
    return mx<int64_t>(K, 1) * ceil_div(mx<int64_t>(N, 1), NR) * NR;
}

template <class T>
void pack_b_all(const T* B, bool tb, int64_t K, int64_t N, T* out) {
    constexpr int NR = Cfg<T>::NR;
    const int64_t npanels = ceil_div(N, NR), Npad = npanels * NR;
    const int64_t rsb = tb ? 1 : N, csb = tb ? K : 1;
    const int64_t nkb = ceil_div(K, kKC);
    parallel_for(0, nkb * npanels, grain_for(kKC * NR, 1 << 16), [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t pc = (t / npanels) * kKC, p = t % npanels;
            const int64_t kc = mn<int64_t>(kKC, K - pc);
            pack_b_panel(B, rsb, csb, pc, kc, p * NR, mn<int64_t>(NR, N - p * NR), out + pc * Npad + p * kc * NR);
        }
    });
}

template <class T>
void epilogue_rows(T* C, int64_t ldc, int64_t i0, int64_t i1, int64_t j0, int64_t j1, const T* bias,
                   const T* res, int act, T lo, T hi, bool bias_per_row = false) {
    const int64_t n = j1 - j0;
    if (n <= 0) return;
    if (act == kEpRelu) { lo = T(0); hi = T(INFINITY); }
    if (act == kEpRelu6) { lo = T(0); hi = T(6); }
    for (int64_t i = i0; i < i1; ++i) {
        T* __restrict c = C + i * ldc + j0;
        if (bias && bias_per_row) {
            const T bi = bias[i];
            for (int64_t j = 0; j < n; ++j) c[j] += bi;
        } else if (bias) {
            const T* __restrict b = bias + j0;
            for (int64_t j = 0; j < n; ++j) c[j] += b[j];
        }
        if (res) {
            const T* __restrict r = res + i * ldc + j0;
            for (int64_t j = 0; j < n; ++j) c[j] += r[j];
        }
        if (act == kEpGelu || act == kEpGeluTanh || act == kEpSilu) act_inplace<T>(act, c, n);
        else if (act != kEpNone)
            for (int64_t j = 0; j < n; ++j) c[j] = epilogue_apply<T, T>(act, c[j], lo, hi);
    }
}


// Few rows (M < MR, e.g. a classifier at batch 1): read A unpacked, only R accumulator rows, so no FMAs are
// spent on padding; streams each packed B panel once. PN panels (p, p + 1, ...) at once: R x NV sums alone are
// too few independent FMA chains to cover the FMA latency (a 1-row GEMV on AVX2 would have 2), PN x R x NV of
// them are enough. Every column is summed in k order whatever PN is (bit-identical results).
template <class T, int R, int PN>
void rows_kernel(int64_t K, const T* __restrict A, int64_t lda, const T* __restrict Bp, int64_t Npad, T* __restrict C,
                 int64_t ldc, int64_t p, int64_t N) {
    constexpr int NV = Cfg<T>::NV, NR = Cfg<T>::NR;
    FmaTile<T, R, PN * NV> t;
    t.zero();
    const T* a[R];
    for (int64_t pc = 0; pc < K; pc += kKC) {
        const int64_t kc = mn<int64_t>(kKC, K - pc);
        for (int i = 0; i < R; ++i) a[i] = A + i * lda + pc;
        t.template fma_panels<1, NV>(kc, a, Bp + pc * Npad + p * kc * NR, NR, kc * NR);
    }
    alignas(64) T tmp[PN * NR];
    for (int i = 0; i < R; ++i) {
        t.store_row(i, tmp);
        for (int q = 0; q < PN; ++q) {
            const int64_t nr = mn<int64_t>(NR, N - (p + q) * NR);
            for (int64_t j = 0; j < nr; ++j) C[i * ldc + (p + q) * NR + j] = tmp[q * NR + j];
        }
    }
}

// rows_kernel over panels [p0, p1): groups of PN panels where one panel has fewer than 6 sums (R x NV)
template <class T, int R>
void rows_panels(int64_t K, const T* A, int64_t lda, const T* Bp, int64_t Npad, T* C, int64_t ldc, int64_t p0,
                 int64_t p1, int64_t N) {
    constexpr int NV = Cfg<T>::NV;
    // two panels at most: a one-row GEMV over four panels (8 streams of B) measured slower than over one on Zen 3
    constexpr int PN = R * NV >= 6 ? 1 : 2;
    int64_t p = p0;
    if constexpr (PN >= 4)
        for (; p + 4 <= p1; p += 4) rows_kernel<T, R, 4>(K, A, lda, Bp, Npad, C, ldc, p, N);
    if constexpr (PN >= 2)
        for (; p + 2 <= p1; p += 2) rows_kernel<T, R, 2>(K, A, lda, Bp, Npad, C, ldc, p, N);
    for (; p < p1; ++p) rows_kernel<T, R, 1>(K, A, lda, Bp, Npad, C, ldc, p, N);
}

// ---------------------------------------------------------------- packed-B GEMM with unpacked A
// A Linear's activations are row-major and contiguous, so the tile kernel broadcasts A straight from its rows
// (no per-task A packing: for short K, e.g. K = 96 in Swin/ConvNeXt, packing cost as much as 10% of the
// FMAs). Each output element is summed in the same order whatever the tile or task shape: within a K block
// k ascending from zero, K blocks added to C in order; the residual is added to the first block's sum, the
// bias and activation on the last block's store, in registers (float64 GELU / SiLU: once per task tile).
// Reading the residual element right before writing the same element makes C = residual aliasing safe.
template <class T>
struct TileEpilogue {
    const T* res;       // residual, row stride ldc, already offset to the tile (nullptr: none)
    const T* bias;      // NR values for this panel, zero padded (nullptr: none)
    int act;            // Epilogue; relu/relu6 turned into clamp by the caller
    T lo, hi;
};

// float32 GELU / SiLU on a register, so the GEMM's last store applies them with no second pass over C: common.h's
// vgelu / vexp, the functions of the standalone GELU / SiLU kernels.
typedef vec_t<float> VecF;

// the activations tile_kernel applies in registers (the rest run once per task tile through act_inplace)
template <class T>
static inline bool act_in_registers(int act) {
    return sizeof(T) == 4 || !epilogue_after_store(act);  // float32: act_tile runs the after-store kinds
}

// GELU / SiLU over a tile just stored (still in L1): a plain loop rather than inside the store of the accumulators,
// where 24 live accumulators leave too few registers for the exp and the code would be unrolled 24 times
template <class T>
__attribute__((noinline)) void act_tile(int act, T* C, int64_t ldc, int rows, int cols) {
    if constexpr (sizeof(T) == 4) {
        constexpr int W = vec_width<float>();
        for (int i = 0; i < rows; ++i) {
            float* c = C + i * ldc;
#pragma GCC unroll 1
            for (int j = 0; j < cols; j += W) {
                const VecF v = vload<VecF>(c + j);
                vstore(c + j, act == kEpSilu ? vsilu(v) : vgelu(v, act == kEpGeluTanh));
            }
        }
    }
}

// R rows x NV vectors of C. A rows at A + i * lda (k contiguous); B: the packed panel, kc rows of NR floats
// (only the first NV * W columns are read, so a narrow NV serves a half-empty tail panel without wasted FMAs).
// first: this is K block 0 (C is not read); last: the final K block (epilogue). nr < NV * W: partial tile.
template <class T, int R, int NV>
__attribute__((always_inline)) inline void tile_kernel(int64_t kc, const T* __restrict A, int64_t lda,
                                                       const T* __restrict Bp, T* C, int64_t ldc, int64_t nr,
                                                       bool first, bool last, const TileEpilogue<T>& ep) {
    typedef vec_t<T> V;
    constexpr int W = Cfg<T>::W, NR = Cfg<T>::NR, TW = NV * W;
    FmaTile<T, R, NV> t;
    t.zero();
    auto& c = t.c;
    const T* a[R];
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) a[i] = A + i * lda;
    // start fetching the C (and residual) lines for writing now, so the stores below do not wait for them (with
    // short K the store of a freshly allocated output is a large part of the tile's time); one prefetch per 64-byte
    // line of a row, not per vector (AVX2: half as many, K = 16 tiles 66 -> 75 GFLOP/s)
    constexpr int kLine = 64 / int(sizeof(T));
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < TW; j += kLine) {
            __builtin_prefetch(C + i * ldc + j, 1);
            if (first && ep.res) __builtin_prefetch(ep.res + i * ldc + j, 0);
        }
    t.template fma<1, true>(kc, a, Bp, NR);
    if (first && last && !ep.res && nr == TW && t.store_epilogue(C, ldc, ep.bias, ep.act, ep.lo, ep.hi)) {
        if (sizeof(T) == 4 && (ep.act == kEpGelu || ep.act == kEpGeluTanh || ep.act == kEpSilu))
            act_tile<T>(ep.act, C, ldc, R, TW);
        return;
    }
    // a partial tile goes through a full-width scratch copy so the vector code below has no masks
    alignas(64) T tmp_c[R * TW], tmp_r[R * TW];
    const bool partial = nr < TW;
    T* cp = C;
    int64_t ldcp = ldc;
    const T* rp = ep.res;
    if (partial) {
        if (!first)
            for (int i = 0; i < R; ++i) {
                for (int64_t j = 0; j < nr; ++j) tmp_c[i * TW + j] = C[i * ldc + j];
                for (int64_t j = nr; j < TW; ++j) tmp_c[i * TW + j] = T(0);
            }
        if (first && rp) {
            for (int i = 0; i < R; ++i) {
                for (int64_t j = 0; j < nr; ++j) tmp_r[i * TW + j] = rp[i * ldc + j];
                for (int64_t j = nr; j < TW; ++j) tmp_r[i * TW + j] = T(0);
            }
            rp = tmp_r;
        }
        cp = tmp_c;
        ldcp = TW;
    }
    const int64_t ldr = partial ? TW : ldc;
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) {
            T* p = cp + i * ldcp + j * W;
            V v = c[i][j];
            if (first) {
                if (rp) v = vload<V>(rp + i * ldr + j * W) + v;
            } else {
                v = vload<V>(p) + v;
            }
            if (last) {
                if (ep.bias) v = v + vload<V>(ep.bias + j * W);
                v = epilogue_apply<V, T>(ep.act, v, ep.lo, ep.hi);
            }
            vstore(p, v);
        }
    if (last && sizeof(T) == 4 && (ep.act == kEpGelu || ep.act == kEpGeluTanh || ep.act == kEpSilu))
        act_tile<T>(ep.act, cp, ldcp, R, TW);
    if (partial)
        for (int i = 0; i < R; ++i) memcpy(C + i * ldc, tmp_c + i * TW, sizeof(T) * nr);
    (void)NR;
}

// rows [i0, i1) of one panel, full-width kernel (MR rows at a time, then the remainder)
template <class T, int NV>
void tile_rows(int64_t kc, const T* A, int64_t lda, const T* Bp, T* C, int64_t ldc, int64_t i0, int64_t i1,
               int64_t nr, bool first, bool last, TileEpilogue<T> ep, const T* res_base) {
    constexpr int MR = Cfg<T>::MR;
    // the narrow (tail panel) kernel has half the vectors per row, so twice the rows for the same accumulators
    constexpr int RB = NV == Cfg<T>::NV ? MR : 2 * MR;
    int64_t i = i0;
    for (; i + RB <= i1; i += RB) {
        // short rows (small K) are too short for the hardware prefetcher to pick up: fetch the next tile's A rows
        if (kc <= 256)
            for (int64_t r = i + RB; r < mn<int64_t>(i + 2 * RB, i1); ++r)
                for (int64_t k = 0; k < kc; k += 64 / int64_t(sizeof(T))) __builtin_prefetch(A + r * lda + k, 0);
        ep.res = res_base ? res_base + i * ldc : nullptr;
        tile_kernel<T, RB, NV>(kc, A + i * lda, lda, Bp, C + i * ldc, ldc, nr, first, last, ep);
    }
    if (RB != MR && i + MR <= i1) {
        ep.res = res_base ? res_base + i * ldc : nullptr;
        tile_kernel<T, MR, NV>(kc, A + i * lda, lda, Bp, C + i * ldc, ldc, nr, first, last, ep);
        i += MR;
    }
    const int64_t rem = i1 - i;
    if (rem <= 0) return;
    ep.res = res_base ? res_base + i * ldc : nullptr;
    const T* a = A + i * lda;
    T* c = C + i * ldc;
    switch (rem) {
        case 1: tile_kernel<T, 1, NV>(kc, a, lda, Bp, c, ldc, nr, first, last, ep); break;
        case 2: tile_kernel<T, 2, NV>(kc, a, lda, Bp, c, ldc, nr, first, last, ep); break;
        case 3: tile_kernel<T, 3, NV>(kc, a, lda, Bp, c, ldc, nr, first, last, ep); break;
        case 4: tile_kernel<T, 4, NV>(kc, a, lda, Bp, c, ldc, nr, first, last, ep); break;
        default: tile_kernel<T, 5, NV>(kc, a, lda, Bp, c, ldc, nr, first, last, ep); break;
    }
}

// C(M, N) (row-major, ldc = N) = epilogue(A(M, K) @ packed B). Tasks are (row range x panel range) tiles of
// near-equal size handed out dynamically; inside a task K blocks are outermost (the task's A rows x kc stay in
// L2 across its panels, each kc x NR B panel in L1/L2 across its rows). C may alias the residual.
template <class T>
void gemm_packed_impl(const T* A, int64_t M, int64_t K, int64_t N, const T* Bp, T* C, const T* bias, const T* res,
                      int act, T lo, T hi) {
    constexpr int MR = Cfg<T>::MR, NR = Cfg<T>::NR, W = Cfg<T>::W, NV = Cfg<T>::NV;
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        for (int64_t i = 0; i < M; ++i) {
            if (res) memmove(C + i * N, res + i * N, sizeof(T) * N);
            else memset(C + i * N, 0, sizeof(T) * N);
        }
        epilogue_rows(C, N, 0, M, 0, N, bias, static_cast<const T*>(nullptr), act, lo, hi);
        return;
    }
    const int nt = in_parallel_region() ? 1 : get_num_threads();
    const int64_t npanels = ceil_div(N, NR), Npad = npanels * NR;
    if (M < MR && M <= 4) {
        // rows_kernel stores its sums into C before epilogue_rows adds the residual: copy the (<= 4 rows)
        // residual first in case it is C
        Buf<T> res_copy(res ? M * N : 1);
        if (res) {
            memcpy(res_copy.get(), res, sizeof(T) * M * N);
            res = res_copy.get();
        }
        parallel_for(0, npanels, grain_for(K * NR * M, 1 << 17), [&](int64_t p0, int64_t p1) {
            switch (M) {
                case 1: rows_panels<T, 1>(K, A, K, Bp, Npad, C, N, p0, p1, N); break;
                case 2: rows_panels<T, 2>(K, A, K, Bp, Npad, C, N, p0, p1, N); break;
                case 3: rows_panels<T, 3>(K, A, K, Bp, Npad, C, N, p0, p1, N); break;
                default: rows_panels<T, 4>(K, A, K, Bp, Npad, C, N, p0, p1, N); break;
            }
            if (bias || res || act != kEpNone)
                epilogue_rows(C, N, 0, M, p0 * NR, mn<int64_t>(N, p1 * NR), bias, res, act, lo, hi);
        });
        return;
    }
    if (act == kEpRelu) { act = kEpClamp; lo = T(0); hi = T(INFINITY); }
    if (act == kEpRelu6) { act = kEpClamp; lo = T(0); hi = T(6); }
    // bias padded to whole panels, so the tile kernel's vector loads stay in bounds
    Buf<T> bias_pad(bias ? Npad : 1);
    if (bias) {
        memcpy(bias_pad.get(), bias, sizeof(T) * N);
        for (int64_t j = N; j < Npad; ++j) bias_pad.get()[j] = T(0);
    }
    const int64_t mpanels = ceil_div(M, MR);
    int64_t mblocks = ceil_div(M, kMC);
    // >= 8 tasks per thread when the shape allows (dynamic balancing on a shared machine); column ranges of >= 2
    // panels, then more row blocks (A is not packed, so short row blocks cost nothing extra)
    int64_t nsplit = 1;
    if (nt > 1) {
        nsplit = mx<int64_t>(1, mn<int64_t>(ceil_div(8 * nt, mblocks), npanels / 2));
        if (mblocks * nsplit < 8 * nt) mblocks = mn<int64_t>(mpanels, ceil_div(8 * nt, nsplit));
        else mblocks = ceil_div(mblocks, nt) * nt;  // a multiple of the thread count: no straggler task
        mblocks = mn<int64_t>(mblocks, mpanels);
    }
    const int64_t ntasks = mblocks * nsplit;
    const bool narrow_tail = (N - (npanels - 1) * NR) <= NR / 2 && NV % 2 == 0;
    auto task_fn = [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t ib = t / nsplit, js = t % nsplit;
            const int64_t i0 = mpanels * ib / mblocks * MR, i1 = mn<int64_t>(M, mpanels * (ib + 1) / mblocks * MR);
            const int64_t p0 = npanels * js / nsplit, p1 = npanels * (js + 1) / nsplit;
            if (p0 >= p1 || i0 >= i1) continue;
            // Short K (a pointwise expansion from 16..64 channels): a tile's FMAs take little longer than its stores,
            // so rows go outermost in chunks, each chunk written across all the task's panels in one sequential run
            // rather than one 64-byte piece per row in a pass over the whole block per panel (5-12% faster there,
            // the same tiles and sums).
            const int64_t chunk = K <= kShortK ? kShortKRows : i1 - i0;
            for (int64_t pc = 0; pc < K; pc += kKC) {
                const int64_t kc = mn<int64_t>(kKC, K - pc);
                const bool first = pc == 0, last = pc + kc >= K;
                const T* bblk = Bp + pc * Npad;
                for (int64_t r0 = i0; r0 < i1; r0 += chunk) {
                    const int64_t r1 = mn<int64_t>(i1, r0 + chunk);
                    for (int64_t p = p0; p < p1; ++p) {
                        const int64_t nr = mn<int64_t>(NR, N - p * NR);
                        TileEpilogue<T> ep{nullptr, bias ? bias_pad.get() + p * NR : nullptr, act, lo, hi};
                        const T* rb = first && res ? res + p * NR : nullptr;
                        if (narrow_tail && p == npanels - 1)
                            tile_rows<T, (NV + 1) / 2>(kc, A + pc, K, bblk + p * kc * NR, C + p * NR, N, r0, r1, nr,
                                                       first, last, ep, rb);
                        else
                            tile_rows<T, NV>(kc, A + pc, K, bblk + p * kc * NR, C + p * NR, N, r0, r1, nr, first,
                                             last, ep, rb);
                    }
                }
            }
            // GELU / SiLU (vector exp) over the task's tile while it is in L2, in as few calls as possible (a call
            // per tile row costs ~40% of the GELU). act_inplace does whole vectors, then a scalar tail: each element
            // takes the same branch for any task split when rows are whole vectors or each call is one row
            // segment that starts at a panel boundary.
            if (!act_in_registers<T>(act)) {
                const int64_t j0 = p0 * NR, j1 = mn<int64_t>(N, p1 * NR);
                if (j0 == 0 && j1 == N && N % W == 0) act_inplace<T>(act, C + i0 * N, (i1 - i0) * N);
                else
                    for (int64_t i = i0; i < i1; ++i) act_inplace<T>(act, C + i * N + j0, j1 - j0);
            }
        }
    };
    if (ntasks > 1 && nt > 1 && double(M) * N * K > 1.0e6) parallel_for_dynamic(0, ntasks, task_fn);
    else task_fn(0, ntasks);
}

// Packed A (M, K): K blocks of kKC columns; inside block pc the MR-row micro-panels (pack_a's format, zero padded
// past M) follow each other: panel ir (a multiple of MR) of block pc starts at pc * Mpad + ir * kc.
template <class T>
int64_t packed_a_size(int64_t M, int64_t K) {
    constexpr int MR = Cfg<T>::MR;
    return mx<int64_t>(K, 1) * ceil_div(mx<int64_t>(M, 1), MR) * MR;
}

template <class T>
void pack_a_all(const T* A, int64_t M, int64_t K, T* out) {
    constexpr int MR = Cfg<T>::MR;
    const int64_t mpanels = ceil_div(M, MR), Mpad = mpanels * MR;
    const int64_t nkb = ceil_div(K, kKC);
    parallel_for(0, nkb * mpanels, grain_for(kKC * MR, 1 << 16), [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t pc = (t / mpanels) * kKC, ir = (t % mpanels) * MR;
            const int64_t kc = mn<int64_t>(kKC, K - pc);
            pack_a(A, K, int64_t(1), ir, mn<int64_t>(MR, M - ir), pc, kc, out + pc * Mpad + ir * kc);
        }
    });
}

// For each b < batch: C_b = epilogue(A @ B_b), A packed (pack_a_all), B_b (K, N) row-major. Tasks are
// (image, column block of <= 512 columns, row range): each packs its B block per K block into L2 and sweeps
// its rows of the packed weight over it.
template <class T>
void gemm_packed_a_impl(const T* Ap, int64_t M, int64_t K, int64_t N, int64_t batch, const T* B, T* C,
                        const T* bias, const T* res, int act, T lo, T hi) {
    constexpr int MR = Cfg<T>::MR, NR = Cfg<T>::NR;
    if (M <= 0 || N <= 0 || batch <= 0) return;
    if (K <= 0) {
        for (int64_t b = 0; b < batch; ++b) {
            memset(C + b * M * N, 0, sizeof(T) * M * N);
            epilogue_rows(C + b * M * N, N, 0, M, 0, N, bias, res ? res + b * M * N : nullptr, act, lo, hi, true);
        }
        return;
    }
    const int nt = in_parallel_region() ? 1 : get_num_threads();
    const int64_t mpanels = ceil_div(M, MR), Mpad = mpanels * MR;
    const int64_t ncb = ceil_div(512, NR) * NR;
    const int64_t nblocks = ceil_div(N, ncb);
    const int64_t base = batch * nblocks;
    int64_t msplit = 1;
    if (nt > 1) msplit = mx<int64_t>(1, mn<int64_t>(ceil_div(8 * nt, base), ceil_div(mpanels, 8)));
    const int64_t kc_max = mn<int64_t>(kKC, K);
    auto task_fn = [&](int64_t t0, int64_t t1) {
        Buf<T> Bp(kc_max * ncb);
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t ms = t % msplit, bb = t / msplit;
            const int64_t img = bb / nblocks, jb = bb % nblocks;
            const int64_t i0 = mpanels * ms / msplit * MR, i1 = mn<int64_t>(M, mpanels * (ms + 1) / msplit * MR);
            if (i0 >= i1) continue;
            const int64_t j0 = jb * ncb, nc = mn<int64_t>(ncb, N - j0), np_ = ceil_div(nc, NR);
            const T* Bi = B + img * K * N;
            T* Ci = C + img * M * N;
            for (int64_t pc = 0; pc < K; pc += kKC) {
                const int64_t kc = mn<int64_t>(kKC, K - pc);
                for (int64_t p = 0; p < np_; ++p)
                    pack_b_panel(Bi, N, int64_t(1), pc, kc, j0 + p * NR, mn<int64_t>(NR, nc - p * NR),
                                 Bp.get() + p * kc * NR);
                const T* ablk = Ap + pc * Mpad;
                for (int64_t p = 0; p < np_; ++p) {
                    const T* bpp = Bp.get() + p * kc * NR;
                    const int64_t nr = mn<int64_t>(NR, nc - p * NR);
                    for (int64_t ir = i0; ir < i1; ir += MR)
                        micro_kernel<T>(kc, ablk + ir * kc, bpp, Ci + ir * N + j0 + p * NR, N,
                                        mn<int64_t>(MR, i1 - ir), nr, pc > 0);
                }
            }
            if (bias || res || act != kEpNone)
                epilogue_rows(Ci, N, i0, i1, j0, j0 + nc, bias, res ? res + img * M * N : nullptr, act, lo, hi, true);
        }
    };
    const int64_t ntasks = base * msplit;
    if (ntasks > 1 && nt > 1 && double(M) * N * K * batch > 1.0e6) parallel_for_dynamic(0, ntasks, task_fn);
    else task_fn(0, ntasks);
}
}  // namespace

template <class T>
void gemm_strided(int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa,
                  const T* B, int64_t rsb, int64_t csb, T* C, int64_t ldc, bool accumulate) {
    constexpr int MR = Cfg<T>::MR, NR = Cfg<T>::NR;
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (!accumulate)
            for (int64_t i = 0; i < M; ++i) memset(C + i * ldc, 0, sizeof(T) * N);
        return;
    }
    if (M <= 4 || N <= 4) return gemm_small(M, N, K, A, rsa, csa, B, rsb, csb, C, ldc, accumulate);
    const int nt = in_parallel_region() ? 1 : get_num_threads();
    if (M <= 2 * kMC) {
        // Few rows (linear layers on token batches, conv with few output channels, weight gradients): split N into
        // column blocks whose packed B (kc x ncb) stays in L2. Per K block all M rows of A are packed once into a
        // buffer every task reads (a weight gradient's A is the transposed output gradient, a gather: packing it
        // once per column block cost as much as a sixth of the multiply), then each task packs its B block.
        // Blocks of <= 512 columns (the packed B block, kc x ncb, stays in L2) and, with several threads, about 4
        // per thread but >= 128 columns each, in a count that is a multiple of the thread count: 576 columns on 2
        // threads are 4 blocks of 144, not 3 of 256 (the third block left one thread idle for a third of the call:
        // the weight gradient of a 64-channel 3x3 conv). Column blocks do not change any element's sums.
        const int64_t npan_all = ceil_div(N, NR);
        int64_t nblocks = ceil_div(npan_all, ceil_div(512, NR));
        if (nt > 1) {
            const int64_t most = mx<int64_t>(int64_t(1), npan_all * NR / 128);
            nblocks = mx<int64_t>(nblocks, mn<int64_t>(4 * nt, most));
            const int64_t rounded = ceil_div(nblocks, nt) * nt;
            if (rounded <= mx<int64_t>(most, nblocks)) nblocks = rounded;
        }
        const int64_t ncb = ceil_div(npan_all, nblocks) * NR;
        nblocks = ceil_div(N, ncb);
        // When the column blocks do not divide evenly over the threads (3 blocks on 2 threads: the linear weight
        // gradient of a 384-wide layer) the rows are split too, so every thread gets the same share; a row split
        // packs B once more per split.
        const int64_t mpanels_all = ceil_div(M, MR);
        int64_t msplit = 1;
        if (nt > 1 && nblocks % nt != 0)
            for (int64_t s = 2; s <= nt * 2; ++s)
                if ((nblocks * s) % nt == 0 && mpanels_all / s >= 4) {
                    msplit = s;
                    break;
                }
        const int64_t ntasks = nblocks * msplit;
        const int64_t kc_max = mn<int64_t>(kKC, K);
        const bool threaded = ntasks > 1 && double(M) * N * K > 2.0e6;
        Buf<T> Ap(mpanels_all * MR * kc_max);
        // one column block: every row range belongs to one task, which packs its own rows (they stay in its L2)
        const bool own_rows = nblocks == 1;
        // row chunks of 48 (8 micro-panels, 3 cache lines of a transposed A's k-step) for the parallel A pack
        constexpr int64_t kPackRows = 8 * MR;
        const int64_t nchunks = ceil_div(M, kPackRows);
        for (int64_t pc = 0; pc < K; pc += kKC) {
            const int64_t kc = mn<int64_t>(kKC, K - pc);
            const bool acc = accumulate || pc > 0;
            T* ap = Ap.get();
            auto pack_fn = [&](int64_t c0, int64_t c1) {
                for (int64_t c = c0; c < c1; ++c) {
                    const int64_t i0 = c * kPackRows;
                    pack_a(A, rsa, csa, i0, mn<int64_t>(kPackRows, M - i0), pc, kc, ap + i0 * kc);
                }
            };
            if (!own_rows) {
                if (threaded) parallel_for(0, nchunks, 1, pack_fn);
                else pack_fn(0, nchunks);
            }
            auto block_fn = [&](int64_t t0, int64_t t1) {
                Buf<T> Bp(kc * ncb);
                for (int64_t t = t0; t < t1; ++t) {
                    const int64_t blk = t / msplit, ms = t % msplit;
                    const int64_t r0 = mpanels_all * ms / msplit * MR;
                    const int64_t r1 = mn<int64_t>(M, mpanels_all * (ms + 1) / msplit * MR);
                    if (own_rows) pack_a(A, rsa, csa, r0, r1 - r0, pc, kc, ap + r0 * kc);
                    const int64_t j0 = blk * ncb;
                    const int64_t nc = mn<int64_t>(ncb, N - j0);
                    const int64_t npanels = ceil_div(nc, NR);
                    for (int64_t p = 0; p < npanels; ++p)
                        pack_b_panel(B, rsb, csb, pc, kc, j0 + p * NR, mn<int64_t>(NR, nc - p * NR),
                                     Bp.get() + p * kc * NR);
                    for (int64_t i0 = r0; i0 < r1; i0 += kMC) {
                        const int64_t mc = mn<int64_t>(kMC, r1 - i0);
                        for (int64_t p = 0; p < npanels; ++p) {
                            const T* bpp = Bp.get() + p * kc * NR;
                            const int64_t nr = mn<int64_t>(NR, nc - p * NR);
                            for (int64_t ir = 0; ir < mc; ir += MR)
                                micro_kernel<T>(kc, ap + (i0 + ir) * kc, bpp, C + (i0 + ir) * ldc + j0 + p * NR, ldc,
                                                mn<int64_t>(MR, mc - ir), nr, acc);
                        }
                    }
                }
            };
            if (threaded) parallel_for_dynamic(0, ntasks, block_fn);
            else block_fn(0, ntasks);
        }
        return;
    }
    const int64_t nc_max = mn<int64_t>(kNC, ceil_div(N, NR) * NR);
    const int64_t kc_max = mn<int64_t>(kKC, K);
    Buf<T> Bp(kc_max * nc_max);

    // M blocking: equal-sized blocks (multiple of MR), at least one per thread if possible
    int64_t mblocks = ceil_div(M, kMC);
    if (mblocks < nt) mblocks = mn<int64_t>(nt, ceil_div(M, MR));
    // a whole number of blocks per thread when N is too narrow to split (3 blocks of 192 rows on 2 threads left
    // one thread idle for a third of a long-K weight gradient)
    if (nt > 1 && mblocks % nt != 0 && ceil_div(N, Cfg<T>::NR) < 8 && ceil_div(mblocks, nt) * nt <= ceil_div(M, MR))
        mblocks = ceil_div(mblocks, nt) * nt;
    int64_t mc_blk = ceil_div(ceil_div(M, mblocks), MR) * MR;
    mblocks = ceil_div(M, mc_blk);

    for (int64_t jc = 0; jc < N; jc += kNC) {
        const int64_t nc = mn<int64_t>(kNC, N - jc);
        const int64_t npanels = ceil_div(nc, NR);
        // ~4 tasks per thread, handed out dynamically; extra tasks split N (each task keeps
        // a full MC-row A block so B micro-panels are reused from L1 across its rows). Every split packs its A
        // block again, so N is split only when the row blocks alone cannot give each thread the same share.
        int64_t nsplit = 1;
        if (nt > 1 && (mblocks < nt || mblocks % nt != 0)) {
            nsplit = mx<int64_t>(1, mn<int64_t>(ceil_div(4 * nt, mblocks), npanels / 4));
            // a task count that is a multiple of the thread count: 9 equal tasks on 2 threads idle one of them for
            // a ninth of the call
            while ((mblocks * nsplit) % nt != 0 && nsplit < npanels / 4) ++nsplit;
        }
        for (int64_t pc = 0; pc < K; pc += kKC) {
            const int64_t kc = mn<int64_t>(kKC, K - pc);
            const bool acc = accumulate || pc > 0;
            T* bp = Bp.get();
            parallel_for(0, npanels, grain_for(kc * NR, 1 << 15), [&](int64_t p0, int64_t p1) {
                for (int64_t p = p0; p < p1; ++p)
                    pack_b_panel(B, rsb, csb, pc, kc, jc + p * NR, mn<int64_t>(NR, nc - p * NR), bp + p * kc * NR);
            });
            const int64_t ntasks = mblocks * nsplit;
            const int64_t task_work = mc_blk * kc * nc / nsplit;
            auto task_fn = [&](int64_t t0, int64_t t1) {
                Buf<T> Ap(mc_blk * kc);
                int64_t packed = -1;
                for (int64_t t = t0; t < t1; ++t) {
                    const int64_t ib = t / nsplit, js = t % nsplit;
                    const int64_t i0 = ib * mc_blk;
                    const int64_t mc = mn<int64_t>(mc_blk, M - i0);
                    if (packed != ib) {
                        pack_a(A, rsa, csa, i0, mc, pc, kc, Ap.get());
                        packed = ib;
                    }
                    const int64_t p0 = npanels * js / nsplit, p1 = npanels * (js + 1) / nsplit;
                    for (int64_t p = p0; p < p1; ++p) {
                        const int64_t j0 = p * NR;
                        const int64_t nr = mn<int64_t>(NR, nc - j0);
                        const T* bpp = bp + p * kc * NR;
                        for (int64_t ir = 0; ir < mc; ir += MR) {
                            micro_kernel<T>(kc, Ap.get() + ir * kc, bpp, C + (i0 + ir) * ldc + jc + j0, ldc,
                                            mn<int64_t>(MR, mc - ir), nr, acc);
                        }
                    }
                }
            };
            if (task_work > (1 << 16)) parallel_for_dynamic(0, ntasks, task_fn);
            else task_fn(0, ntasks);
        }
    }
}

template void gemm_strided<float>(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const float*, int64_t,
                                  int64_t, float*, int64_t, bool);
template void gemm_strided<double>(int64_t, int64_t, int64_t, const double*, int64_t, int64_t, const double*, int64_t,
                                   int64_t, double*, int64_t, bool);

namespace {

template <class T>
void gemm_batched(const T* a, const T* b, T* c, int64_t batch, int64_t M, int64_t N, int64_t K, bool ta, bool tb) {
    const int64_t rsa = ta ? 1 : K, csa = ta ? M : 1;
    const int64_t rsb = tb ? 1 : N, csb = tb ? K : 1;
    const int64_t sa = M * K, sb = K * N, sc = M * N;
    const int nt = in_parallel_region() ? 1 : get_num_threads();
    const double flops = double(M) * N * K;
    if (batch > 1 && nt > 1 && (batch >= 4 * nt || flops < 4.0e6)) {
        parallel_for(0, batch, 1, [&](int64_t b0, int64_t b1) {
            for (int64_t i = b0; i < b1; ++i)
                gemm_strided<T>(M, N, K, a + i * sa, rsa, csa, b + i * sb, rsb, csb, c + i * sc, N, false);
        });
    } else {
        for (int64_t i = 0; i < batch; ++i)
            gemm_strided<T>(M, N, K, a + i * sa, rsa, csa, b + i * sb, rsb, csb, c + i * sc, N, false);
    }
}

}  // namespace

namespace {
double fma_loop(int64_t iters) {
    typedef vec_t<float> V;
    constexpr int W = vec_width<float>();
    constexpr int NA = 24;
    V acc[NA];
    for (int i = 0; i < NA; ++i) acc[i] = V{} + float(i) * 1e-3f;
    V b = V{} + 0.999999f, c = V{} + 1e-7f;
    for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 24
        for (int i = 0; i < NA; ++i) acc[i] = acc[i] * b + c;
        __asm__ volatile("" : "+v"(b));  // keep the loop from being folded
    }
    V s = V{};
    for (int i = 0; i < NA; ++i) s += acc[i];
    volatile float sink = s[0];
    (void)sink;
    return 2.0 * W * NA * double(iters);
}
}  // namespace

void gemm_packed_f32(const float* A, int64_t M, int64_t K, int64_t N, const float* Bp, float* C, const float* bias,
                     int act, float lo, float hi) {
    gemm_packed_impl<float>(A, M, K, N, Bp, C, bias, nullptr, act, lo, hi);
}

FV_REGISTRATION void fill_gemm(KernelTable& t) {
    t.fma_loop = &fma_loop;
    FV_FILL_F32_F64(t, gemm, gemm_batched);
    FV_FILL_F32_F64(t, packed_b_size, packed_b_size);
    FV_FILL_F32_F64(t, pack_b, pack_b_all);
    FV_FILL_F32_F64(t, gemm_packed, gemm_packed_impl);
    FV_FILL_F32_F64(t, packed_a_size, packed_a_size);
    FV_FILL_F32_F64(t, pack_a, pack_a_all);
    FV_FILL_F32_F64(t, gemm_packed_a, gemm_packed_a_impl);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
