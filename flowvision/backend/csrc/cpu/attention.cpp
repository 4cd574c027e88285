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

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

typedef vec_t<float> vf;
typedef VecT<float>::itype vi;
constexpr int WF = vec_width<float>();
constexpr int kMR = 6;  // query rows per micro-tile
#if defined(__AVX512F__)
constexpr int kNV = 4;  // 24 zmm accumulators
#else
constexpr int kNV = 2;  // 12 ymm / xmm accumulators
#endif
constexpr int64_t kNR = kNV * WF;  // widest panel

static inline vf vsplat(float a) { return vf{} + a; }

// exp over a vector: the same Cephes-style polynomial as softmax.cpp (~1 ulp), so our softmax rounds alike.
static inline vf vexp(vf x) {
    const vf hi = vsplat(88.0f), lo = vsplat(-87.3365447504f);
    const vf under = x < lo ? vsplat(1.0f) : vsplat(0.0f);
    vf xc = x > hi ? hi : x;
    xc = xc < lo ? lo : xc;
    const vf magic = vsplat(12582912.0f);  // 1.5 * 2^23: round to nearest
    vf t = xc * 1.44269504088896341f + magic;
    vi ni;
    memcpy(&ni, &t, sizeof(ni));
    const vf n = t - magic;
    ni = ni - 0x4B400000;  // bit pattern of magic
    vf r = xc - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    vf p = vsplat(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    vi bits = (ni + 127) << 23;
    vf pow2;
    memcpy(&pow2, &bits, sizeof(pow2));
    vf res = p * pow2;
    res = under != vsplat(0.0f) ? vsplat(0.0f) : res;
    return res;
}

// Panels: columns [c0, c0 + width) of a (K x N) right operand, width = kNR for full panels and the tail rounded
// up to WF (zero padded); stored k-major (K rows of `width` floats) at offset c0 * K.
static inline int64_t panel_width(int64_t c0, int64_t N) { return mn<int64_t>(kNR, ceil_div(N - c0, WF) * WF); }

// C[i][0, NV*WF) = sum_k A[i*rsa + k] * Bp[k][.] for rows i < mr (C row stride ldc). Rows >= mr re-read row
// mr-1 (valid memory) and are not stored.
template <int NV>
static inline void micro_tile(int64_t K, const float* A, int64_t rsa, int mr, const float* __restrict Bp,
                              float* C, int64_t ldc) {
    constexpr int NR = NV * WF;
    const float* a[kMR];
    for (int i = 0; i < kMR; ++i) a[i] = A + (i < mr ? i : mr - 1) * rsa;
    vf c[kMR][NV];
#pragma GCC unroll 8
    for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) c[i][j] = vf{};
#pragma GCC unroll 2
    for (int64_t k = 0; k < K; ++k) {
        vf b[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) b[j] = vload<vf>(Bp + k * NR + j * WF);
#pragma GCC unroll 8
        for (int i = 0; i < kMR; ++i) {
            const float s = a[i][k];
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) c[i][j] += b[j] * s;
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < kMR; ++i) {
        if (i >= mr) break;
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) vstore(C + i * ldc + j * WF, c[i][j]);
    }
}

static inline void micro_tile_any(int nv, int64_t K, const float* A, int64_t rsa, int mr, const float* Bp, float* C,
                                  int64_t ldc) {
    switch (nv) {
        case 1: micro_tile<1>(K, A, rsa, mr, Bp, C, ldc); break;
#if defined(__AVX512F__)
        case 2: micro_tile<2>(K, A, rsa, mr, Bp, C, ldc); break;
        case 3: micro_tile<3>(K, A, rsa, mr, Bp, C, ldc); break;
        default: micro_tile<4>(K, A, rsa, mr, Bp, C, ldc); break;
#else
        default: micro_tile<2>(K, A, rsa, mr, Bp, C, ldc); break;
#endif
    }
}

// k (Lk, D; row stride rs) -> panels of k^T (D x Lk)
static void pack_kt(const float* k, int64_t rs, int64_t Lk, int64_t D, float* out) {
    for (int64_t c0 = 0; c0 < Lk; c0 += kNR) {
        const int64_t w = panel_width(c0, Lk);
        float* dst = out + c0 * D;
        for (int64_t c = 0; c < w; ++c) {
            if (c0 + c < Lk) {
                const float* src = k + (c0 + c) * rs;
                for (int64_t d = 0; d < D; ++d) dst[d * w + c] = src[d];
            } else {
                for (int64_t d = 0; d < D; ++d) dst[d * w + c] = 0.0f;
            }
        }
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

// One score row in place: x = scale * s + mask (+ causal -inf), then e = exp(x - max); returns 1/sum(e), or 0 when
// no key is visible (the row of e is zeroed, so the output row is 0 as in torch).
static float softmax_row(float* s, int64_t n, int64_t visible, float scale, const float* mask, int64_t mask_cs) {
    int64_t i = 0;
    const vf sc = vsplat(scale);
    if (mask && mask_cs == 1) {
        for (; i + WF <= n; i += WF) vstore(s + i, vload<vf>(s + i) * sc + vload<vf>(mask + i));
        for (; i < n; ++i) s[i] = s[i] * scale + mask[i];
    } else if (mask) {
        for (; i < n; ++i) s[i] = s[i] * scale + mask[i * mask_cs];
    } else {
        for (; i + WF <= n; i += WF) vstore(s + i, vload<vf>(s + i) * sc);
        for (; i < n; ++i) s[i] = s[i] * scale;
    }
    for (i = visible; i < n; ++i) s[i] = -__builtin_inff();
    float m = -__builtin_inff();
    i = 0;
    if (n >= WF) {
        vf a = vload<vf>(s);
        for (i = WF; i + WF <= n; i += WF) {
            const vf x = vload<vf>(s + i);
            a = x > a ? x : a;
        }
        for (int j = 0; j < WF; ++j) m = a[j] > m ? a[j] : m;
    }
    for (; i < n; ++i) m = s[i] > m ? s[i] : m;
    if (m == -__builtin_inff()) {
        memset(s, 0, (size_t)n * sizeof(float));
        return 0.0f;
    }
    vf acc = vf{};
    i = 0;
    for (; i + WF <= n; i += WF) {
        const vf e = vexp(vload<vf>(s + i) - m);
        vstore(s + i, e);
        acc += e;
    }
    float sum = hsum<float>(acc);
    if (i < n) {
        alignas(64) float tx[WF];
        for (int j = 0; j < WF; ++j) tx[j] = i + j < n ? s[i + j] - m : -__builtin_inff();
        const vf e = vexp(vload<vf>(tx));
        for (int64_t j = 0; i + j < n; ++j) {
            s[i + j] = e[j];
            sum += e[j];
        }
    }
    return 1.0f / sum;
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
    const int64_t kt_floats = ceil_div(Lk, kNR) * kNR * D, v_floats = ceil_div(Dv, kNR) * kNR * Lk;
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
                pack_v(v + o.v, p.v_rs, Lk, Dv, vp.get());
                packed_b = b;
            }
            for (int64_t i0 = r0; i0 < r1; i0 += kMR) {
                const int mr = (int)mn<int64_t>(kMR, r1 - i0);
                // S = q k^T over the key panels
                for (int64_t c0 = 0; c0 < Lk; c0 += kNR) {
                    const int64_t w = panel_width(c0, Lk);
                    micro_tile_any((int)(w / WF), D, q + o.q + i0 * p.q_rs, p.q_rs, mr, kt.get() + c0 * D,
                                   S.get() + c0, ldS);
                }
                for (int i = 0; i < mr; ++i) {
                    const int64_t row = i0 + i;
                    const float* mrow = mask ? mask + o.mask + row * p.mask_rs : nullptr;
                    const int64_t visible = p.causal ? mn<int64_t>(Lk, row + 1) : Lk;
                    inv[i] = softmax_row(S.get() + i * ldS, Lk, visible, p.scale, mrow, p.mask_cs);
                    if (probs) {
                        float* pr = probs + (b * Lq + row) * Lk;
                        const float* e = S.get() + i * ldS;
                        for (int64_t j = 0; j < Lk; ++j) pr[j] = e[j] * inv[i];
                    }
                }
                // O = E v, scaled by 1/rowsum on the way out
                for (int64_t c0 = 0; c0 < Dv; c0 += kNR) {
                    const int64_t w = panel_width(c0, Dv), n = mn<int64_t>(w, Dv - c0);
                    micro_tile_any((int)(w / WF), Lk, S.get(), ldS, mr, vp.get() + c0 * Lk, tile, kNR);
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

}  // namespace

void fill_attention(KernelTable& t) {
    t.attn.sdpa_f32 = &sdpa_f32;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
