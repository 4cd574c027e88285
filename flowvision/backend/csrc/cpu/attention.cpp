// Fused scaled-dot-product attention, float32 (compiled once per ISA).
//
// Per (batch index, chunk of query rows): k^T and v of that batch index are packed once (per thread) into
// register-panel layout; then, MR query rows at a time, S = q k^T is a register-blocked micro-GEMM into an
// L1/L2-resident row buffer, scale + mask + causal + row softmax run in place (vectorised exp), and
// O = E v is a second micro-GEMM whose tile is scaled by 1/rowsum while stored through the output strides.
// Each output row is computed by the same sequence of operations whatever the chunking, so the result is
// bit-identical for any thread count. The whole key range of a row is held at once (no online softmax):
// the buffers grow linearly with Lk, which is fine up to very long sequences.
#include "cpu/common.h"
#include "cpu/fma_tile.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

typedef vec_t<float> vf;
typedef VecT<float>::itype vi;
constexpr int WF = vec_width<float>();
constexpr int kMR = kTileMR;  // query rows per micro-tile (cpu/fma_tile.h: the ISA's full GEMM tile)
constexpr int kNV = kTileNV;
constexpr int64_t kNR = kNV * WF;  // widest panel


// Panels: columns [c0, c0 + width) of a (K x N) right operand, width = kNR for full panels and the tail rounded
// up to WF (zero padded); stored k-major (K rows of `width` floats) at offset c0 * K.
static inline int64_t panel_width(int64_t c0, int64_t N) { return mn<int64_t>(kNR, ceil_div(N - c0, WF) * WF); }

// C[i][0, NV*WF) = sum_k A[i*rsa + k] * B[k*ldb + .] for rows i < mr (C row stride ldc). Rows >= mr re-read row
// mr-1 (valid memory) and are not stored.
template <int NV>
static inline void micro_tile(int64_t K, const float* A, int64_t rsa, int mr, const float* __restrict Bp,
                              int64_t ldb, float* C, int64_t ldc) {
    const float* a[kMR];
    for (int i = 0; i < kMR; ++i) a[i] = A + (i < mr ? i : mr - 1) * rsa;
    FmaTile<float, kMR, NV> t;
    t.zero();
    t.template fma<1>(K, a, Bp, ldb);
#pragma GCC unroll 8
    for (int i = 0; i < kMR; ++i) {
        if (i >= mr) break;
        t.store_row(i, C + i * ldc);
    }
}

static inline void micro_tile_any(int nv, int64_t K, const float* A, int64_t rsa, int mr, const float* Bp,
                                  int64_t ldb, float* C, int64_t ldc) {
    switch (nv) {
        case 1: micro_tile<1>(K, A, rsa, mr, Bp, ldb, C, ldc); break;
#if defined(__AVX512F__)
        case 2: micro_tile<2>(K, A, rsa, mr, Bp, ldb, C, ldc); break;
        case 3: micro_tile<3>(K, A, rsa, mr, Bp, ldb, C, ldc); break;
        default: micro_tile<4>(K, A, rsa, mr, Bp, ldb, C, ldc); break;
#else
        default: micro_tile<2>(K, A, rsa, mr, Bp, ldb, C, ldc); break;
#endif
    }
}

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

// k (Lk, D; row stride rs) -> panels of k^T (D x Lk). 4 keys x 4 dims at a time through a register transpose
// (scalar transposition costs as much as the q k^T product itself for Swin's 49 x 32 heads).
static void pack_kt(const float* k, int64_t rs, int64_t Lk, int64_t D, float* out) {
    const int64_t D4 = D & ~int64_t(3);
    for (int64_t c0 = 0; c0 < Lk; c0 += kNR) {
        const int64_t w = panel_width(c0, Lk), n = mn<int64_t>(w, Lk - c0);
        float* dst = out + c0 * D;
        int64_t c = 0;
        for (; c + 4 <= n; c += 4) {
            const float* r = k + (c0 + c) * rs;
            for (int64_t d = 0; d < D4; d += 4) {
                const v4f r0 = vload<v4f>(r + d), r1 = vload<v4f>(r + rs + d), r2 = vload<v4f>(r + 2 * rs + d),
                          r3 = vload<v4f>(r + 3 * rs + d);
                const v4f t0 = __builtin_shuffle(r0, r1, v4i{0, 4, 1, 5}), t1 = __builtin_shuffle(r0, r1, v4i{2, 6, 3, 7});
                const v4f t2 = __builtin_shuffle(r2, r3, v4i{0, 4, 1, 5}), t3 = __builtin_shuffle(r2, r3, v4i{2, 6, 3, 7});
                vstore(dst + d * w + c, __builtin_shuffle(t0, t2, v4i{0, 1, 4, 5}));
                vstore(dst + (d + 1) * w + c, __builtin_shuffle(t0, t2, v4i{2, 3, 6, 7}));
                vstore(dst + (d + 2) * w + c, __builtin_shuffle(t1, t3, v4i{0, 1, 4, 5}));
                vstore(dst + (d + 3) * w + c, __builtin_shuffle(t1, t3, v4i{2, 3, 6, 7}));
            }
            for (int64_t d = D4; d < D; ++d)
                for (int64_t x = 0; x < 4; ++x) dst[d * w + c + x] = r[x * rs + d];
        }
        for (; c < n; ++c) {
            const float* src = k + (c0 + c) * rs;
            for (int64_t d = 0; d < D; ++d) dst[d * w + c] = src[d];
        }
        for (int64_t d = 0; d < D; ++d)
            for (int64_t x = n; x < w; ++x) dst[d * w + x] = 0.0f;
    }
}

// v (Lk, Dv; row stride rs) -> panels of v (Lk x Dv)
static void pack_v(const float* v, int64_t rs, int64_t Lk, int64_t Dv, float* out) {
    for (int64_t c0 = 0; c0 < Dv; c0 += kNR) {
        const int64_t w = panel_width(c0, Dv), n = mn<int64_t>(w, Dv - c0);
        float* dst = out + c0 * Lk;
        for (int64_t l = 0; l < Lk; ++l) {
            const float* src = v + l * rs + c0;
            float* o = dst + l * w;
            for (int64_t c = 0; c < n; ++c) o[c] = src[c];
            for (int64_t c = n; c < w; ++c) o[c] = 0.0f;
        }
    }
}

// Horizontal max / sum in log2(WF) shuffle steps (a lane-by-lane loop costs as much as the rest of a short row).
#define FV_R4(j) (j) % WF, (j + 1) % WF, (j + 2) % WF, (j + 3) % WF
alignas(64) static const int32_t kLaneRot[32] = {FV_R4(0),  FV_R4(4),  FV_R4(8),  FV_R4(12),
                                                 FV_R4(16), FV_R4(20), FV_R4(24), FV_R4(28)};  // j mod WF
#undef FV_R4
template <class Op>
static inline float reduce_lanes(vf a, Op op) {
#pragma GCC unroll 8
    for (int step = WF / 2; step >= 1; step /= 2)  // lane j takes lane (j + step) mod WF
        a = op(a, __builtin_shuffle(a, vload<vi>(kLaneRot + step)));
    return a[0];
}

// Softmax of the mr score rows of a micro-tile in place, over their padded width ld (a multiple of WF; columns >= n
// are scratch): x = scale * s + mask, -inf for keys >= visible (causal, padding), e = exp(x - rowmax);
// inv[r] = 1/sum(e), or 0 when no key of the row is visible (its e is zeroed, so the output row is 0, as in torch).
// Each pass runs over all rows before the next, so the rows' reductions and exp chains overlap (a short row alone
// is latency-bound).
static void softmax_tile(float* S, int64_t ld, int mr, int64_t n, int64_t row0, bool causal, float scale,
                         const float* mask, int64_t mask_rs, int64_t mask_cs, float* inv) {
    const vf sc = vsplat(scale), ninf = vsplat(-__builtin_inff());
    vi iota;
    for (int j = 0; j < WF; ++j) iota[j] = j;
    vf vmax[kMR];
    for (int r = 0; r < mr; ++r) {
        float* s = S + r * ld;
        const float* mrow = mask ? mask + r * mask_rs : nullptr;
        const int64_t visible = causal ? mn<int64_t>(n, row0 + r + 1) : n;
        vf mxv = ninf;
        for (int64_t i = 0; i < ld; i += WF) {
            vf x = vload<vf>(s + i) * sc;
            if (mrow) {
                if (mask_cs == 1 && i + WF <= n) {
                    x += vload<vf>(mrow + i);
                } else {  // the row's tail or a strided mask: only the valid entries (the rest is masked below)
                    vf mt = vf{};
                    const int64_t valid = mn<int64_t>(WF, n - i);
                    for (int64_t j = 0; j < valid; ++j) mt[j] = mrow[(i + j) * mask_cs];
                    x += mt;
                }
            }
            x = (iota + (int32_t)i) < (int32_t)visible ? x : ninf;
            vstore(s + i, x);
            mxv = x > mxv ? x : mxv;
        }
        vmax[r] = mxv;
    }
    float m[kMR];
    for (int r = 0; r < mr; ++r) m[r] = reduce_lanes(vmax[r], [](vf a, vf b) { return a > b ? a : b; });
    vf acc[kMR];
    for (int r = 0; r < mr; ++r) {
        float* s = S + r * ld;
        acc[r] = vf{};
        if (m[r] == -__builtin_inff()) {
            memset(s, 0, (size_t)ld * sizeof(float));
            continue;
        }
        for (int64_t i = 0; i < ld; i += WF) {
            const vf e = vexp(vload<vf>(s + i) - m[r]);
            vstore(s + i, e);
            acc[r] += e;
        }
    }
    for (int r = 0; r < mr; ++r)
        inv[r] = m[r] == -__builtin_inff() ? 0.0f : 1.0f / reduce_lanes(acc[r], [](vf a, vf b) { return a + b; });
}

static inline void prefetch_rows(const float* base, int64_t rs, int64_t r0, int64_t r1, int64_t cols) {
    for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = 0; c < cols; c += 16) __builtin_prefetch(base + r * rs + c, 0, 3);
}

struct Offsets {
    int64_t q, k, v, mask, out;
};

static Offsets batch_offsets(const AttentionParams& p, int64_t b) {
    Offsets o{0, 0, 0, 0, 0};
    for (int d = 3; d >= 0; --d) {
        const int64_t idx = b % p.batch[d];
        b /= p.batch[d];
        o.q += idx * p.q_bs[d];
        o.k += idx * p.k_bs[d];
        o.v += idx * p.v_bs[d];
        o.mask += idx * p.mask_bs[d];
        o.out += idx * p.out_bs[d];
    }
    return o;
}

void sdpa_f32(const float* q, const float* k, const float* v, const float* mask, float* out, float* probs,
              const AttentionParams& p) {
    const int64_t nb = p.batch[0] * p.batch[1] * p.batch[2] * p.batch[3];
    const int64_t Lq = p.Lq, Lk = p.Lk, D = p.D, Dv = p.Dv;
    if (nb == 0 || Lq == 0 || Dv == 0) return;
    if (Lk == 0) {  // no key at all: every row is fully masked
        for (int64_t b = 0; b < nb; ++b) {
            const Offsets o = batch_offsets(p, b);
            for (int64_t i = 0; i < Lq; ++i) memset(out + o.out + i * p.out_rs, 0, (size_t)Dv * sizeof(float));
        }
        return;
    }
    const int64_t ldS = ceil_div(Lk, WF) * WF;
    // v is read in place when its panels need no padding (Dv a multiple of the vector width): its rows are then
    // exactly the k-steps of the P v micro-GEMM, at the row stride
    const bool pack_values = Dv % WF != 0;
    const int64_t kt_floats = ceil_div(Lk, kNR) * kNR * D, v_floats = pack_values ? ceil_div(Dv, kNR) * kNR * Lk : 0;
    // Query rows per task: a multiple of kMR, fixed by the shape (never by the thread count), so that small batch
    // counts still give every thread work while each task amortises its k/v packing over many rows.
    const int64_t row_tiles = ceil_div(Lq, kMR);
    const int64_t chunks = mx<int64_t>(1, mn<int64_t>(row_tiles, ceil_div(32, nb)));
    const int64_t rows_per_task = ceil_div(row_tiles, chunks) * kMR;
    const int64_t tasks_per_batch = ceil_div(Lq, rows_per_task);
    const int64_t flops_per_task = rows_per_task * Lk * (D + Dv) * 2;
    parallel_for(0, nb * tasks_per_batch, grain_for(flops_per_task, 1 << 18), [&](int64_t t0, int64_t t1) {
        Buf<float> kt(kt_floats), vp(v_floats), S(kMR * ldS);
        alignas(64) float tile[kMR * kNR];
        float inv[kMR];
        int64_t packed_b = -1;
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t b = t / tasks_per_batch, r0 = (t % tasks_per_batch) * rows_per_task;
            const int64_t r1 = mn<int64_t>(Lq, r0 + rows_per_task);
            const Offsets o = batch_offsets(p, b);
            if (b != packed_b) {
                pack_kt(k + o.k, p.k_rs, Lk, D, kt.get());
                if (pack_values) pack_v(v + o.v, p.v_rs, Lk, Dv, vp.get());
                packed_b = b;
            }
            // The last task of a batch index prefetches the next one's q/k/v rows, spread over its row tiles:
            // strided views (rows of a qkv projection) defeat the hardware prefetcher.
            const bool prefetch_next = r1 == Lq && b + 1 < nb && t + 1 < t1;
            const Offsets on = prefetch_next ? batch_offsets(p, b + 1) : o;
            const int64_t tiles = ceil_div(r1 - r0, kMR), kv_per_tile = ceil_div(Lk, tiles);
            const int64_t q_per_tile = ceil_div(mn<int64_t>(Lq, rows_per_task), tiles);
            for (int64_t i0 = r0; i0 < r1; i0 += kMR) {
                const int mr = (int)mn<int64_t>(kMR, r1 - i0);
                if (prefetch_next) {
                    const int64_t ti = (i0 - r0) / kMR;
                    prefetch_rows(k + on.k, p.k_rs, ti * kv_per_tile, mn<int64_t>(Lk, (ti + 1) * kv_per_tile), D);
                    prefetch_rows(v + on.v, p.v_rs, ti * kv_per_tile, mn<int64_t>(Lk, (ti + 1) * kv_per_tile), Dv);
                    prefetch_rows(q + on.q, p.q_rs, ti * q_per_tile, mn<int64_t>(Lq, (ti + 1) * q_per_tile), D);
                    if (mask && p.mask_cs == 1 && on.mask != o.mask)
                        prefetch_rows(mask + on.mask, p.mask_rs, ti * q_per_tile,
                                      mn<int64_t>(p.mask_rs ? Lq : 1, (ti + 1) * q_per_tile), Lk);
                }
                // S = q k^T over the key panels
                for (int64_t c0 = 0; c0 < Lk; c0 += kNR) {
                    const int64_t w = panel_width(c0, Lk);
                    micro_tile_any((int)(w / WF), D, q + o.q + i0 * p.q_rs, p.q_rs, mr, kt.get() + c0 * D, w,
                                   S.get() + c0, ldS);
                }
                softmax_tile(S.get(), ldS, mr, Lk, i0, p.causal, p.scale, mask ? mask + o.mask + i0 * p.mask_rs : nullptr,
                             p.mask_rs, p.mask_cs, inv);
                if (probs) {
                    for (int i = 0; i < mr; ++i) {
                        float* pr = probs + (b * Lq + i0 + i) * Lk;
                        const float* e = S.get() + i * ldS;
                        for (int64_t j = 0; j < Lk; ++j) pr[j] = e[j] * inv[i];
                    }
                }
                // O = E v, scaled by 1/rowsum on the way out
                for (int64_t c0 = 0; c0 < Dv; c0 += kNR) {
                    const int64_t w = panel_width(c0, Dv), n = mn<int64_t>(w, Dv - c0);
                    if (pack_values)
                        micro_tile_any((int)(w / WF), Lk, S.get(), ldS, mr, vp.get() + c0 * Lk, w, tile, kNR);
                    else
                        micro_tile_any((int)(w / WF), Lk, S.get(), ldS, mr, v + o.v + c0, p.v_rs, tile, kNR);
                    for (int i = 0; i < mr; ++i) {
                        float* dst = out + o.out + (i0 + i) * p.out_rs + c0;
                        const float* src = tile + i * kNR;
                        const vf s = vsplat(inv[i]);
                        int64_t j = 0;
                        for (; j + WF <= n; j += WF) vstore(dst + j, vload<vf>(src + j) * s);
                        for (; j < n; ++j) dst[j] = src[j] * inv[i];
                    }
                }
            }
        }
    });
}

// The backward pass, one (batch index) head at a time in L2: P = softmax(scale * q k^T + mask) is recomputed with the
// forward's softmax, then dv = P^T g, dP = g v^T, dS = scale * P * (dP - rowsum(dP * P)), dq = dS k and
// dk = dS^T q are single-threaded GEMMs on that head's buffers. Heads run in parallel (a head per task scales
// with threads where batched GEMMs over all heads at once did not); with fewer heads than threads the heads run
// one after the other and each GEMM uses the pool. q, k, v and g are read through p's strides; gq, gk and gv
// are contiguous (batch, L, D) and the batch dims must not broadcast (the binding checks).
void sdpa_backward_f32(const float* q, const float* k, const float* v, const float* mask, const float* g, float* gq,
                       float* gk, float* gv, const AttentionParams& p) {
    const int64_t nb = p.batch[0] * p.batch[1] * p.batch[2] * p.batch[3];
    const int64_t Lq = p.Lq, Lk = p.Lk, D = p.D, Dv = p.Dv;
    if (nb == 0) return;
    if (Lq == 0 || Lk == 0) {  // no score at all: every gradient is 0
        memset(gq, 0, sizeof(float) * nb * Lq * D);
        memset(gk, 0, sizeof(float) * nb * Lk * D);
        memset(gv, 0, sizeof(float) * nb * Lk * Dv);
        return;
    }
    const int64_t ldS = ceil_div(Lk, WF) * WF;
    auto head = [&](int64_t b, float* P, float* dP) {
        const Offsets o = batch_offsets(p, b);
        const float* qh = q + o.q;
        const float* kh = k + o.k;
        const float* vh = v + o.v;
        const float* gh = g + o.out;
        float* gqh = gq + b * Lq * D;
        float* gkh = gk + b * Lk * D;
        float* gvh = gv + b * Lk * Dv;
        gemm_strided<float>(Lq, Lk, D, qh, p.q_rs, 1, kh, 1, p.k_rs, P, ldS, false);
        float inv[kMR];
        for (int64_t i0 = 0; i0 < Lq; i0 += kMR) {
            const int mr = (int)mn<int64_t>(kMR, Lq - i0);
            float* S = P + i0 * ldS;
            softmax_tile(S, ldS, mr, Lk, i0, p.causal, p.scale, mask ? mask + o.mask + i0 * p.mask_rs : nullptr,
                         p.mask_rs, p.mask_cs, inv);
            for (int r = 0; r < mr; ++r) {
                const vf s = vsplat(inv[r]);
                float* row = S + r * ldS;
                for (int64_t j = 0; j < ldS; j += WF) vstore(row + j, vload<vf>(row + j) * s);
            }
        }
        gemm_strided<float>(Lk, Dv, Lq, P, 1, ldS, gh, p.out_rs, 1, gvh, Dv, false);
        gemm_strided<float>(Lq, Lk, Dv, gh, p.out_rs, 1, vh, 1, p.v_rs, dP, ldS, false);
        for (int64_t i = 0; i < Lq; ++i) {
            const float* pr = P + i * ldS;
            float* d = dP + i * ldS;
            vf acc = vf{};
            int64_t j = 0;
            for (; j + WF <= Lk; j += WF) acc += vload<vf>(d + j) * vload<vf>(pr + j);
            float dot = reduce_lanes(acc, [](vf a, vf c) { return a + c; });
            for (; j < Lk; ++j) dot += d[j] * pr[j];
            const vf vdot = vsplat(dot), sc = vsplat(p.scale);
            for (j = 0; j + WF <= Lk; j += WF) vstore(d + j, vload<vf>(pr + j) * (vload<vf>(d + j) - vdot) * sc);
            for (; j < Lk; ++j) d[j] = pr[j] * (d[j] - dot) * p.scale;
        }
        gemm_strided<float>(Lq, D, Lk, dP, ldS, 1, kh, p.k_rs, 1, gqh, D, false);
        gemm_strided<float>(Lk, D, Lq, dP, 1, ldS, qh, p.q_rs, 1, gkh, D, false);
    };
    const int nt = in_parallel_region() ? 1 : get_num_threads();
    if (nb >= 2 * nt || nt == 1) {
        parallel_for(0, nb, 1, [&](int64_t b0, int64_t b1) {
            Buf<float> P(Lq * ldS), dP(Lq * ldS);
            for (int64_t b = b0; b < b1; ++b) head(b, P.get(), dP.get());
        });
    } else {
        Buf<float> P(Lq * ldS), dP(Lq * ldS);
        for (int64_t b = 0; b < nb; ++b) head(b, P.get(), dP.get());
    }
}

}  // namespace

FV_REGISTRATION void fill_attention(KernelTable& t) {
    t.attn.sdpa_f32 = &sdpa_f32;
    t.attn.sdpa_backward_f32 = &sdpa_backward_f32;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
