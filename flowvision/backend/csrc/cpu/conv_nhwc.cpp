// Direct NHWC convolution in the oneDNN style (float32, forward only): inference, and the training forward of
// ungrouped KxK convs (conv_forward_nchw_direct, chosen by cpu/conv.cpp).
//
// Activations are NHWC; weights are packed once into output-channel-blocked panels
// [group][oc block][kh][kw][ic/g][ocb] (ocb = NV vector widths, zero padded past the group's width), so the
// reduction for one output pixel and one OC block reads one contiguous panel. The micro-kernel keeps an
// MR (output pixels) x NV (vectors of output channels) tile of accumulators in registers and reduces over
// "segments": a segment is a run of `len` reduction steps that is contiguous both in the panel and in each
// pixel's input. Interior tiles of ungrouped, undilated-in-W convs use one segment per kernel row (the
// KW x C input run of a pixel is contiguous in NHWC, which is what makes the 3-channel stem efficient);
// everything else uses one segment per tap of length C/g. Padding is handled by clipping: a tap outside the
// input for every pixel of the tile is skipped, and a pixel whose tap is outside reads a zero run (so the
// tile keeps its shared FMAs) -- there is never a padded copy of the input.
//
// Depthwise convs (groups == C == O) have their own kernel, vectorised over channels with the taps clipped
// per pixel. Each output element is computed by one task in a fixed order: results are bit-identical for
// any thread count.
#include "cpu/common.h"
#include "cpu/conv_nhwc.h"
#include "cpu/fma_tile.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace fv {
namespace FV_ISA_NAMESPACE {

FV_REGISTRATION void fill_conv_nhwc(KernelTable& t);

namespace {

typedef vec_t<float> V;
constexpr int kW = vec_width<float>();

#if defined(__AVX512F__)
constexpr int kMaxNV = 4;  // 64-lane OC blocks, 6 x 4 = 24 zmm accumulators
#else
constexpr int kMaxNV = 2;  // 16 (AVX2) / 8 (SSE) lanes, 6 x 2 = 12 accumulators
#endif

// Vectors per OC block for a group of `ocg` output channels: as wide as allowed, then evened out over
// the blocks so the last block is not mostly padding (96 channels -> 2 x 48 rather than 64 + 64).
static inline int64_t block_nv(int64_t ocg) {
    const int64_t nvec = ceil_div(ocg, kW);
    const int64_t nb = ceil_div(nvec, kMaxNV);
    return ceil_div(nvec, nb);
}

static inline bool is_depthwise(const ConvNhwcParams& p) { return p.groups > 1 && p.groups == p.C && p.O == p.C; }

// Narrow groups (ResNeXt / RegNet: 2..8 channels per group, as many in as out): one vector of output channels
// spans kW / width groups, and the input value each lane needs is a lane permutation of the same kW input
// channels, so the kernel runs with no padded lanes and no wasted FMAs (one permute per FMA).
static inline bool is_narrow_grouped(const ConvNhwcParams& p) {
    const int64_t ocg = p.O / p.groups, icg = p.C / p.groups;
    return p.groups > 1 && ocg == icg && icg > 1 && icg < kW && kW % icg == 0;
}

int64_t packed_size(ConvNhwcParams& p) {
    const int64_t ocg = p.O / p.groups, icg = p.C / p.groups;
    if (is_depthwise(p)) {
        p.ocb = kW;
        return p.KH * p.KW * ceil_div(p.C, kW) * kW;
    }
    if (is_narrow_grouped(p)) {
        p.ocb = kW;
        return ceil_div(p.C, kW) * p.KH * p.KW * icg * kW;
    }
    p.ocb = block_nv(ocg) * kW;
    const int64_t nb = ceil_div(ocg, p.ocb);
    return p.groups * nb * p.KH * p.KW * icg * p.ocb;
}

// Where weight element (output channel o, input channel c of its group, tap t) lies: w[off + o*so + c*sc + t*st].
// The torch layout (O, C/g, KH, KW) is {C/g * KK, KK, 1, 0}; the transposed and flipped weight of an input
// gradient (read from the forward conv's (C, O, KH, KW) weight) is {KK, O * KK, -1, KK - 1} (ungrouped only).
struct WeightView {
    int64_t so, sc, st, off;
};

void pack_view(const float* w, float* out, const ConvNhwcParams& p0, const WeightView& view) {
    ConvNhwcParams p = p0;
    const int64_t total = packed_size(p);
    memset(out, 0, sizeof(float) * total);
    const int64_t KK = p.KH * p.KW;
    if (is_depthwise(p)) {
        const int64_t cpad = ceil_div(p.C, kW) * kW;
        for (int64_t c = 0; c < p.C; ++c)
            for (int64_t t = 0; t < KK; ++t) out[t * cpad + c] = w[c * KK + t];
        return;
    }
    if (is_narrow_grouped(p)) {
        // block b: output channels [b*kW, b*kW + kW), layout [tap][i][lane] = w[oc][i][tap]
        const int64_t icg = p.C / p.groups;
        for (int64_t oc = 0; oc < p.O; ++oc) {
            float* dst = out + (oc / kW) * KK * icg * kW + oc % kW;
            for (int64_t i = 0; i < icg; ++i)
                for (int64_t t = 0; t < KK; ++t) dst[(t * icg + i) * kW] = w[(oc * icg + i) * KK + t];
        }
        return;
    }
    const int64_t ocg = p.O / p.groups, icg = p.C / p.groups, ocb = p.ocb, nb = ceil_div(ocg, ocb);
    const int64_t blk = KK * icg * ocb;
    parallel_for(0, p.groups * nb, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t gb = b0; gb < b1; ++gb) {
            const int64_t g = gb / nb, ob = gb % nb;
            float* dst = out + gb * blk;
            const int64_t nr = mn<int64_t>(ocb, ocg - ob * ocb);
            // contiguous writes, the nr source rows' reads for one ic stay in L1 (writing one output channel at a
            // time strode the whole block: a 512x512x3x3 weight took ~4 ms)
            const float* src = w + view.off + (g * ocg + ob * ocb) * view.so;
            for (int64_t ic = 0; ic < icg; ++ic)
                for (int64_t t = 0; t < KK; ++t) {
                    float* d = dst + (t * icg + ic) * ocb;
                    const float* s = src + ic * view.sc + t * view.st;
                    for (int64_t j = 0; j < nr; ++j) d[j] = s[j * view.so];
                }
        }
    });
}

void pack(const float* w, float* out, const ConvNhwcParams& p) {
    const int64_t KK = p.KH * p.KW;
    pack_view(w, out, p, WeightView{(p.C / p.groups) * KK, KK, 1, 0});
}

// ---------------------------------------------------------------- epilogue
struct Ep {
    const float* bias;  // indexed by output channel
    const float* res;   // same layout as y
    int act;
    float lo, hi;
};

// y[0:n] = act(acc + bias[0:n] + res[0:n]); the same order of operations as the packed GEMM's epilogue
// (ACT >= 0: the activation fixed at compile time, e.act's register epilogue; -1: e.act's, switched on per call)
template <int ACT = -1>
static inline void finish_vec(V acc, float* y, const float* bias, const float* res, const Ep& e) {
    if (bias) acc += vload<V>(bias);
    if (res) acc += vload<V>(res);
    vstore(y, epilogue_apply<V, float>(ACT < 0 ? e.act : ACT, acc, e.lo, e.hi));
}
static inline void finish_scalar(float* y, const float* acc, int64_t n, const float* bias, const float* res,
                                 const Ep& e) {
    for (int64_t j = 0; j < n; ++j) {
        float v = acc[j];
        if (bias) v += bias[j];
        if (res) v += res[j];
        y[j] = epilogue_apply<float, float>(e.act, v, e.lo, e.hi);
    }
}

// ---------------------------------------------------------------- general (implicit GEMM) kernel
struct Seg {
    int64_t woff;  // offset of the segment's weights in the OC block's panel
    int64_t len;   // reduction steps (each reads ocb weights and one input value per pixel)
};

// GELU / SiLU over a tile row just stored (still in L1): whole vectors here, the tail through act_inplace, so every
// element gets the math act_inplace gives it over the whole row, without a kernel call per row of 16 values
static inline void act_row(int act, float* y, int64_t n) {
    int64_t j = 0;
    if (act == kEpSilu) {
        for (; j + kW <= n; j += kW) {
            const V v = vload<V>(y + j);
            vstore(y + j, vsilu(v));
        }
    } else {
        for (; j + kW <= n; j += kW) vstore(y + j, vgelu(vload<V>(y + j), act == kEpGeluTanh));
    }
    if (j < n) act_inplace<float>(act, y + j, n - j);
}

template <int MR, int NV>
__attribute__((noinline)) void tile_kernel(const Seg* segs, int64_t nseg, const float* const* ptrs,
                                           const float* __restrict wb, float* y, int64_t ldy, int64_t mr,
                                           int64_t nr, const float* bias, const float* res, const Ep& e) {
    constexpr int NR = NV * kW;
    FmaTile<float, MR, NV> t;
    t.zero();
    for (int64_t s = 0; s < nseg; ++s) t.template fma<1>(segs[s].len, ptrs + s * MR, wb + segs[s].woff, NR);
    auto& c = t.c;
    const bool stored = nr == NR && mr == MR && !res && t.store_epilogue(y, ldy, bias, e.act, e.lo, e.hi);
    if (stored) {
        // the common tile: done
    } else if (nr == NR) {
        for (int64_t i = 0; i < mr; ++i)
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j)
                finish_vec(c[i][j], y + i * ldy + j * kW, bias ? bias + j * kW : nullptr,
                           res ? res + i * ldy + j * kW : nullptr, e);
    } else {
        alignas(64) float tmp[NR];
        for (int64_t i = 0; i < mr; ++i) {
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) *reinterpret_cast<V*>(tmp + j * kW) = c[i][j];
            finish_scalar(y + i * ldy, tmp, nr, bias, res ? res + i * ldy : nullptr, e);
        }
    }
    if (e.act == kEpGelu || e.act == kEpGeluTanh || e.act == kEpSilu)
        for (int64_t i = 0; i < mr; ++i) act_row(e.act, y + i * ldy, nr);
}

typedef void (*TileFn)(const Seg*, int64_t, const float* const*, const float*, float*, int64_t, int64_t, int64_t,
                       const float*, const float*, const Ep&);

// The micro-kernel for an OC block of nv vectors and its tile height MR (output pixels): about 24 accumulators on
// AVX-512 (6 x 4, 8 x 3, 12 x 2, 12 x 1), 12 on AVX2 / SSE (6 x 2, 12 x 1), or a few pixels fewer where that
// wastes less of the last tile: a 7x7 map (49 pixels) is 10 tiles of 5 rather than 9 of 6 (54 slots, 10% idle).
// The choice depends on the pixel count only, never on the thread count (results stay bit-identical).
struct TileChoice {
    int mr;
    TileFn fn;
};

TileFn tile_fn(int nv, int64_t npix, int* mr) {
#if defined(__AVX512F__)
    static const TileChoice c4[] = {{6, &tile_kernel<6, 4>}, {5, &tile_kernel<5, 4>}, {4, &tile_kernel<4, 4>}};
    static const TileChoice c3[] = {{8, &tile_kernel<8, 3>}, {7, &tile_kernel<7, 3>}, {6, &tile_kernel<6, 3>}};
    static const TileChoice c2[] = {{12, &tile_kernel<12, 2>}, {10, &tile_kernel<10, 2>}, {8, &tile_kernel<8, 2>}};
    static const TileChoice c1[] = {{12, &tile_kernel<12, 1>}, {10, &tile_kernel<10, 1>}, {8, &tile_kernel<8, 1>}};
    const TileChoice* c = nv >= 4 ? c4 : nv == 3 ? c3 : nv == 2 ? c2 : c1;
#else
    static const TileChoice c2[] = {{6, &tile_kernel<6, 2>}, {5, &tile_kernel<5, 2>}, {4, &tile_kernel<4, 2>}};
    // one-vector panels (8 output channels): 12 x 1 = 12 accumulators, not 8 x 1 (cpu/fma_tile.h)
    static const TileChoice c1[] = {{12, &tile_kernel<12, 1>}, {10, &tile_kernel<10, 1>}, {8, &tile_kernel<8, 1>}};
    const TileChoice* c = nv >= 2 ? c2 : c1;
#endif
    // cost = tiles x (2 MR + 1): the pixel slots computed plus about half a pixel of per-tile overhead (pointer
    // setup, epilogue); ties keep the tallest tile
    int best = 0;
    int64_t best_cost = INT64_MAX;
    for (int i = 0; i < 3; ++i) {
        const int64_t cost = ceil_div(npix, int64_t(c[i].mr)) * (2 * c[i].mr + 1);
        if (cost < best_cost) { best_cost = cost; best = i; }
    }
    *mr = c[best].mr;
    return c[best].fn;
}

void conv_general(const float* x, const float* wp, float* y, const ConvNhwcParams& p, const Ep& e) {
    const int64_t ocg = p.O / p.groups, icg = p.C / p.groups, ocb = p.ocb;
    const int nv = int(ocb / kW);
    const int64_t nb = ceil_div(ocg, ocb), KK = p.KH * p.KW, blk = KK * icg * ocb;
    // tiles run over the batch-flattened (n, oh, ow) pixels: NHWC output rows of consecutive images are
    // contiguous, and a batch of 7x7 maps fills 6-pixel tiles (8 x 49 = 392 = 65.3 tiles, not 8 x 9)
    const int64_t npix = p.OH * p.OW, ntot = p.N * npix;
    int MR = 0;
    const TileFn kern = tile_fn(nv, ntot, &MR);
    const int64_t ntiles = ceil_div(ntot, int64_t(MR));
    // one segment per kernel row when a pixel's KW x C input run is contiguous
    const bool merge_kw = p.groups == 1 && p.dw == 1;
    // Edge tiles of convs on few channels (the 3-channel stems) keep the per-row segments too: a pixel whose KW x C
    // run is cut by the padding gets a zero-filled copy of it, instead of KH x KW segments of C = 3 steps each.
    const bool pad_rows = merge_kw && p.C < 16;
    const int nt = in_parallel_region() ? 1 : get_num_threads();
    // Tasks: (group, oc block, run of tiles), handed out dynamically. About 32 per thread, so a thread that is
    // slowed down (or the last, short task) leaves the others little to wait for, but at least ~256k FMAs each.
    // Consecutive tasks share the oc block, whose weights the threads then read from the shared cache at about
    // the same time. Tile boundaries do not depend on the split.
    const int64_t outer = p.groups * nb;
    const int64_t fma_tile = int64_t(MR) * ocb * KK * icg;
    int64_t chunks = 1;
    if (nt > 1) {
        chunks = mn<int64_t>(ntiles, ceil_div(int64_t(32) * nt, outer));
        chunks = mn<int64_t>(chunks, mx<int64_t>(1, ntiles * fma_tile / (int64_t(1) << 18)));
    }
    const int64_t tiles_per = ceil_div(ntiles, chunks);
    chunks = ceil_div(ntiles, tiles_per);
    const int64_t ntasks = outer * chunks;
    const int64_t zlen = mx<int64_t>(icg, merge_kw ? p.KW * p.C : 1);
    const int64_t rowlen = p.KW * p.C;
    Buf<float> zeros(zlen, true);  // read-only, shared by the tasks
    auto task = [&](int64_t t0, int64_t t1) {
        Buf<float> stage(p.out_nchw ? MR * ocb : 1);  // NCHW output: the tile, transposed on the way out
        Buf<float> padded(pad_rows ? MR * p.KH * rowlen : 1);
        Buf<Seg> segs(KK);
        Buf<const float*> ptrs(KK * MR);
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t ch = t % chunks, o = t / chunks;
            const int64_t ob = o % nb, g = o / nb, oc0 = g * ocg + ob * ocb;
            float* yb = y + oc0;
            const float* rb = e.res ? e.res + oc0 : nullptr;
            const float* bn = e.bias ? e.bias + oc0 : nullptr;
            const float* wb = wp + (g * nb + ob) * blk;
            const int64_t nr = mn<int64_t>(ocb, ocg - ob * ocb);
            const int64_t tb = ch * tiles_per, te = mn<int64_t>(ntiles, tb + tiles_per);
            for (int64_t ti = tb; ti < te; ++ti) {
                const int64_t pix0 = ti * MR, mr = mn<int64_t>(MR, ntot - pix0);
                int64_t ih0[16], iw0[16];
                const float* xb[16];
                bool interior = true;
                // pixel coordinates stepped from the tile's first (the divisions cost as much as a stem tile's
                // 147-step reduction); rows past mr repeat pixel 0
                int64_t n = pix0 / npix, oh = (pix0 % npix) / p.OW, ow = (pix0 % npix) % p.OW;
                for (int64_t i = 0; i < MR; ++i) {
                    if (i < mr) {
                        xb[i] = x + n * p.H * p.W * p.C + g * icg;
                        ih0[i] = oh * p.sh - p.ph;
                        iw0[i] = ow * p.sw - p.pw;
                        if (++ow == p.OW) {
                            ow = 0;
                            if (++oh == p.OH) { oh = 0; ++n; }
                        }
                    } else {
                        xb[i] = xb[0];
                        ih0[i] = ih0[0];
                        iw0[i] = iw0[0];
                    }
                    interior = interior && ih0[i] >= 0 && ih0[i] + (p.KH - 1) * p.dh < p.H && iw0[i] >= 0 &&
                               iw0[i] + (p.KW - 1) * p.dw < p.W;
                }
                int64_t nseg = 0;
                Seg* sg = segs.get();
                const float** pt = ptrs.get();
                if (interior && merge_kw) {
                    for (int64_t kh = 0; kh < p.KH; ++kh) {
                        sg[nseg] = Seg{kh * p.KW * icg * ocb, rowlen};
                        for (int64_t i = 0; i < MR; ++i)
                            pt[nseg * MR + i] =
                                i < mr ? xb[i] + ((ih0[i] + kh * p.dh) * p.W + iw0[i]) * p.C : zeros.get();
                        ++nseg;
                    }
                } else if (pad_rows) {
                    for (int64_t kh = 0; kh < p.KH; ++kh) {
                        bool any = false;
                        for (int64_t i = 0; i < MR; ++i) {
                            const int64_t ih = ih0[i] + kh * p.dh;
                            const float* src = zeros.get();
                            if (i < mr && ih >= 0 && ih < p.H) {
                                const float* row = xb[i] + ih * p.W * p.C;
                                if (iw0[i] >= 0 && iw0[i] + p.KW <= p.W) {
                                    src = row + iw0[i] * p.C;
                                } else {
                                    float* d = padded.get() + (i * p.KH + kh) * rowlen;
                                    for (int64_t kw = 0; kw < p.KW; ++kw) {
                                        const int64_t iw = iw0[i] + kw;
                                        if (iw >= 0 && iw < p.W)
                                            memcpy(d + kw * p.C, row + iw * p.C, sizeof(float) * p.C);
                                        else
                                            memset(d + kw * p.C, 0, sizeof(float) * p.C);
                                    }
                                    src = d;
                                }
                                any = true;
                            }
                            pt[nseg * MR + i] = src;
                        }
                        if (!any) continue;  // clipped: the row is outside the input for the whole tile
                        sg[nseg] = Seg{kh * p.KW * icg * ocb, rowlen};
                        ++nseg;
                    }
                } else {
                    for (int64_t kh = 0; kh < p.KH; ++kh)
                        for (int64_t kw = 0; kw < p.KW; ++kw) {
                            bool any = false;
                            for (int64_t i = 0; i < MR; ++i) {
                                const int64_t ih = ih0[i] + kh * p.dh, iw = iw0[i] + kw * p.dw;
                                const bool ok = i < mr && ih >= 0 && ih < p.H && iw >= 0 && iw < p.W;
                                pt[nseg * MR + i] = ok ? xb[i] + (ih * p.W + iw) * p.C : zeros.get();
                                any = any || ok;
                            }
                            if (!any) continue;  // clipped: the tap is outside the input for the whole tile
                            sg[nseg] = Seg{(kh * p.KW + kw) * icg * ocb, icg};
                            ++nseg;
                        }
                }
                if (p.out_nchw) {
                    kern(sg, nseg, pt, wb, stage.get(), ocb, mr, nr, bn, nullptr, e);
                    const float* st = stage.get();
                    const int64_t n0 = pix0 / npix, r0 = pix0 % npix;
                    if (r0 + mr <= npix) {  // one image: each channel's mr pixels are contiguous in NCHW
                        float* yc = y + (n0 * p.O + oc0) * npix + r0;
                        for (int64_t j = 0; j < nr; ++j)
                            for (int64_t i = 0; i < mr; ++i) yc[j * npix + i] = st[i * ocb + j];
                    } else {
                        for (int64_t i = 0; i < mr; ++i) {
                            const int64_t q = pix0 + i, n = q / npix, r = q % npix;
                            float* yc = y + (n * p.O + oc0) * npix + r;
                            for (int64_t j = 0; j < nr; ++j) yc[j * npix] = st[i * ocb + j];
                        }
                    }
                } else {
                    kern(sg, nseg, pt, wb, yb + pix0 * p.O, p.O, mr, nr, bn, rb ? rb + pix0 * p.O : nullptr, e);
                }
            }
        }
    };
    if (ntasks > 1 && nt > 1) parallel_for_dynamic(0, ntasks, task);
    else task(0, ntasks);
}

// ---------------------------------------------------------------- depthwise kernel
static inline V load_part(const float* p, int64_t n) {
#if defined(__AVX512F__)
    return (V)_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
#else
    V v = V{};
    memcpy(&v, p, sizeof(float) * n);
    return v;
#endif
}

// One output pixel, channels [c0, c0 + CV*kW) (cn valid), taps [kh0,kh1) x [kw0,kw1).
template <int CV, int ACT>
inline void dw_pixel(const float* xn, const float* wp, float* yo, const float* ro, const float* bias,
                     const ConvNhwcParams& p, int64_t cpad, int64_t ih0, int64_t iw0, int64_t kh0, int64_t kh1,
                     int64_t kw0, int64_t kw1, int64_t c0, int64_t cn, const Ep& e) {
    V acc[CV];
    for (int v = 0; v < CV; ++v) acc[v] = V{};
    const bool full = cn == CV * kW;
    for (int64_t kh = kh0; kh < kh1; ++kh) {
        const float* xr = xn + ((ih0 + kh * p.dh) * p.W) * p.C + c0;
        const float* wr = wp + kh * p.KW * cpad + c0;
        for (int64_t kw = kw0; kw < kw1; ++kw) {
            const float* xp = xr + (iw0 + kw * p.dw) * p.C;
            const float* wv = wr + kw * cpad;
            if (full) {
#pragma GCC unroll 4
                for (int v = 0; v < CV; ++v) acc[v] += vload<V>(xp + v * kW) * vload<V>(wv + v * kW);
            } else {
                for (int v = 0; v < CV; ++v) {
                    const int64_t m = cn - v * kW;
                    if (m <= 0) break;
                    acc[v] += (m >= kW ? vload<V>(xp + v * kW) : load_part(xp + v * kW, m)) * vload<V>(wv + v * kW);
                }
            }
        }
    }
    if (full) {
        for (int v = 0; v < CV; ++v)
            finish_vec<ACT>(acc[v], yo + v * kW, bias ? bias + c0 + v * kW : nullptr, ro ? ro + v * kW : nullptr, e);
    } else {
        alignas(64) float tmp[CV * kW];
        for (int v = 0; v < CV; ++v) vstore(tmp + v * kW, acc[v]);
        finish_scalar(yo, tmp, cn, bias ? bias + c0 : nullptr, ro, e);
    }
}

// PX adjacent interior pixels (all taps valid), full channel vectors: the weight vectors are shared.
template <int PX, int CV, int ACT>
inline void dw_interior(const float* xn, const float* wp, float* yo, const float* ro, const float* bias,
                        const ConvNhwcParams& p, int64_t cpad, int64_t ih0, int64_t iw0, int64_t c0, const Ep& e) {
    V acc[PX][CV];
    for (int i = 0; i < PX; ++i)
        for (int v = 0; v < CV; ++v) acc[i][v] = V{};
    const int64_t ps = p.sw * p.C;
    for (int64_t kh = 0; kh < p.KH; ++kh) {
        const float* xr = xn + ((ih0 + kh * p.dh) * p.W + iw0) * p.C + c0;
        const float* wr = wp + kh * p.KW * cpad + c0;
        for (int64_t kw = 0; kw < p.KW; ++kw) {
            const float* xp = xr + kw * p.dw * p.C;
            V wv[CV];
#pragma GCC unroll 4
            for (int v = 0; v < CV; ++v) wv[v] = vload<V>(wr + kw * cpad + v * kW);
#pragma GCC unroll 8
            for (int i = 0; i < PX; ++i)
#pragma GCC unroll 4
                for (int v = 0; v < CV; ++v) acc[i][v] += vload<V>(xp + i * ps + v * kW) * wv[v];
        }
    }
    for (int i = 0; i < PX; ++i)
        for (int v = 0; v < CV; ++v)
            finish_vec<ACT>(acc[i][v], yo + i * p.C + v * kW, bias ? bias + c0 + v * kW : nullptr,
                       ro ? ro + i * p.C + v * kW : nullptr, e);
}

// Pixels per run: accumulators + K weights + 1 input vector within 16 registers (14 at K = 5 and at K = 7)
template <int K>
constexpr int dw_run_px() { return K >= 7 ? 6 : 8; }

// Undilated K x K (3 or 5 with stride 1 or 2, 7 with stride 1) runs: PX adjacent output pixels x every full channel
// vector, over the kernel rows [kh0, kh1) (the rows inside the image). Per vector of channels the K weight vectors of
// a kernel row stay in registers and each input vector is loaded once and used for every pixel whose window covers
// it (K / S FMAs per load instead of one). One call covers all channel vectors, so the setup is paid once per run,
// not once per vector. EDGE: only the run's input columns [jlo, jhi) exist (the image's left / right border; the
// others are padding and skipped), otherwise every column the run reads is inside. Each pixel sums its taps in
// (kh, kw) order, as dw_interior and dw_pixel do, so which path computes a pixel does not change its value.
template <int K, int S, int PX, int ACT, bool EDGE>
inline void dw_run(const float* xn, const float* wp, float* yo, const float* ro, const float* bias,
                   const ConvNhwcParams& p, int64_t cpad, int64_t ih0, int64_t iw0, int64_t kh0, int64_t kh1,
                   int64_t cfull, int64_t jlo, int64_t jhi, const Ep& e) {
    constexpr int J = S * (PX - 1) + K;  // input columns the run reads
    // a local copy: the stores to y (float) could alias e's bounds, which were otherwise reloaded for every vector
    const Ep el = e;
    for (int64_t c0 = 0; c0 < cfull; c0 += kW) {
        V acc[PX];
#pragma GCC unroll 16
        for (int i = 0; i < PX; ++i) acc[i] = V{};
        for (int64_t kh = kh0; kh < kh1; ++kh) {
            const float* xr = xn + ((ih0 + kh) * p.W + iw0) * p.C + c0;
            const float* wr = wp + kh * K * cpad + c0;
            V w[K];
#pragma GCC unroll 8
            for (int kw = 0; kw < K; ++kw) w[kw] = vload<V>(wr + kw * cpad);
            const float* xp = xr;
#pragma GCC unroll 32
            for (int j = 0; j < J; ++j, xp += p.C) {
                // the column pointer is stepped, not indexed: with J runtime multiples of C as offsets the
                // unrolled loop ran out of general registers and reloaded them from the stack around every FMA
                asm("" : "+r"(xp));
                if (EDGE && (j < jlo || j >= jhi)) continue;
                const V xv = vload<V>(xp);
#pragma GCC unroll 8
                for (int kw = K - 1; kw >= 0; --kw) {  // pixel (j - kw) / S: the pixels' chains advance in kw order
                    const int d = j - kw;
                    if (d >= 0 && d % S == 0 && d / S < PX) acc[d / S] += xv * w[kw];
                }
            }
        }
#pragma GCC unroll 16
        for (int i = 0; i < PX; ++i)
            finish_vec<ACT>(acc[i], yo + i * p.C + c0, bias ? bias + c0 : nullptr, ro ? ro + i * p.C + c0 : nullptr,
                            el);
    }
}

// One run of PX pixels from output column ow: the interior kernel, or the border one with the columns that exist.
template <int K, int S, int PX, int ACT>
inline void dw_run_at(const float* xn, const float* wp, float* yr, const float* rr, const float* bias,
                      const ConvNhwcParams& p, int64_t cpad, int64_t ih0, int64_t kh0, int64_t kh1, int64_t ow,
                      int64_t cfull, const Ep& e) {
    constexpr int J = S * (PX - 1) + K;
    const int64_t iw0 = ow * S - p.pw;
    const int64_t jlo = mx<int64_t>(0, -iw0), jhi = mn<int64_t>(J, p.W - iw0);
    float* yo = yr + ow * p.C;
    const float* ro = rr ? rr + ow * p.C : nullptr;
    if (jlo == 0 && jhi == J)
        dw_run<K, S, PX, ACT, false>(xn, wp, yo, ro, bias, p, cpad, ih0, iw0, kh0, kh1, cfull, 0, J, e);
    else
        dw_run<K, S, PX, ACT, true>(xn, wp, yo, ro, bias, p, cpad, ih0, iw0, kh0, kh1, cfull, jlo, jhi, e);
}

// Every output pixel of one output row, borders included, in runs of 8 (then 4, then single pixels). A row whose
// width is not a multiple of the run ends with a run that overlaps the one before: its first pixels are computed
// twice, to the same values, which costs less than narrower runs (fewer FMAs per load). Not when the residual is
// the output itself (a second pass would add it twice). Channels past the last full vector through dw_pixel.
template <int K, int S, int ACT>
void dw_row_runs(const float* xn, const float* wp, float* yr, const float* rr, const float* bias,
                 const ConvNhwcParams& p, int64_t cpad, int64_t ih0, int64_t kh0, int64_t kh1, const Ep& e) {
    constexpr int PX = dw_run_px<K>();
    const int64_t cfull = p.C / kW * kW;
    const bool may_overlap = rr != yr;
    int64_t ow = 0;
    if (cfull > 0) {
        for (; ow + PX <= p.OW; ow += PX)
            dw_run_at<K, S, PX, ACT>(xn, wp, yr, rr, bias, p, cpad, ih0, kh0, kh1, ow, cfull, e);
        if (ow < p.OW && may_overlap && p.OW >= PX) {
            dw_run_at<K, S, PX, ACT>(xn, wp, yr, rr, bias, p, cpad, ih0, kh0, kh1, p.OW - PX, cfull, e);
            ow = p.OW;
        }
        for (; ow + 4 <= p.OW; ow += 4)
            dw_run_at<K, S, 4, ACT>(xn, wp, yr, rr, bias, p, cpad, ih0, kh0, kh1, ow, cfull, e);
        if (ow < p.OW && may_overlap && p.OW >= 4) {
            dw_run_at<K, S, 4, ACT>(xn, wp, yr, rr, bias, p, cpad, ih0, kh0, kh1, p.OW - 4, cfull, e);
            ow = p.OW;
        }
        for (; ow < p.OW; ++ow) dw_run_at<K, S, 1, ACT>(xn, wp, yr, rr, bias, p, cpad, ih0, kh0, kh1, ow, cfull, e);
    }
    if (cfull < p.C)
        for (int64_t o = 0; o < p.OW; ++o) {
            const int64_t iw0 = o * S - p.pw;
            const int64_t kw0 = mx<int64_t>(0, -iw0), kw1 = mn<int64_t>(K, p.W - iw0);
            constexpr int CV = 2;
            dw_pixel<CV, ACT>(xn, wp, yr + o * p.C + cfull, rr ? rr + o * p.C + cfull : nullptr, bias, p, cpad, ih0,
                              iw0, kh0, kh1, kw0, kw1, cfull, p.C - cfull, e);
        }
}

// Output rows [r0, r1) (row r = image r / OH, output row r % OH) of the depthwise conv, serially, with the register
// epilogue ACT (see finish_vec).
template <int ACT>
void dw_rows_act(const float* x, const float* wp, float* y, const ConvNhwcParams& p, const Ep& e, int64_t r0,
             int64_t r1) {
#if defined(__AVX512F__)
    constexpr int CV = 2, PX = 4;
#else
    // 16 registers: 6 pixels x 2 vectors = 12 accumulators + 2 weight vectors (the inputs are FMA memory operands);
    // two FMA pipes of latency 4-5 need 8-10 independent sums, which 4 x 2 = 8 only just covers
    constexpr int CV = 2, PX = 6;
#endif
    constexpr int64_t CB = CV * kW;
    const int64_t cpad = ceil_div(p.C, kW) * kW;
    // square 3x3 / 5x5 with stride 1 or 2 and 7x7 (ConvNeXt) with stride 1, undilated: the register-run kernels
    // over whole rows
    const bool square = p.KH == p.KW && p.sh == p.sw && p.dh == 1 && p.dw == 1;
    const int run_kind = square && (((p.KW == 3 || p.KW == 5) && (p.sw == 1 || p.sw == 2)) || (p.KW == 7 && p.sw == 1))
                             ? p.KW * 10 + static_cast<int>(p.sw)
                             : 0;
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / p.OH, oh = r % p.OH;
        const float* xn = x + n * p.H * p.W * p.C;
        const int64_t ih0 = oh * p.sh - p.ph;
        // clip the kernel rows to the input
        int64_t kh0 = 0, kh1 = p.KH;
        while (kh0 < p.KH && ih0 + kh0 * p.dh < 0) ++kh0;
        while (kh1 > kh0 && ih0 + (kh1 - 1) * p.dh >= p.H) --kh1;
        const bool rows_full = kh0 == 0 && kh1 == p.KH;
        float* yr = y + r * p.OW * p.C;
        const float* rr = e.res ? e.res + r * p.OW * p.C : nullptr;
        auto edge_pixel = [&](int64_t ow) {
            const int64_t iw0 = ow * p.sw - p.pw;
            int64_t kw0 = 0, kw1 = p.KW;
            while (kw0 < p.KW && iw0 + kw0 * p.dw < 0) ++kw0;
            while (kw1 > kw0 && iw0 + (kw1 - 1) * p.dw >= p.W) --kw1;
            for (int64_t c0 = 0; c0 < p.C; c0 += CB)
                dw_pixel<CV, ACT>(xn, wp, yr + ow * p.C + c0, rr ? rr + ow * p.C + c0 : nullptr, e.bias, p, cpad, ih0,
                                  iw0, kh0, kh1, kw0, kw1, c0, mn<int64_t>(CB, p.C - c0), e);
        };
        if (run_kind) {
            const auto runs = run_kind == 31   ? &dw_row_runs<3, 1, ACT>
                              : run_kind == 32 ? &dw_row_runs<3, 2, ACT>
                              : run_kind == 51 ? &dw_row_runs<5, 1, ACT>
                              : run_kind == 52 ? &dw_row_runs<5, 2, ACT>
                                               : &dw_row_runs<7, 1, ACT>;
            runs(xn, wp, yr, rr, e.bias, p, cpad, ih0, kh0, kh1, e);
        } else {
            for (int64_t ow = 0; ow < p.OW;) {
                const int64_t iw0 = ow * p.sw - p.pw;
                const bool cols_full = iw0 >= 0 && iw0 + (p.KW - 1) * p.dw < p.W;
                // a run of PX interior pixels
                if (rows_full && cols_full && ow + PX <= p.OW &&
                    (ow + PX - 1) * p.sw - p.pw + (p.KW - 1) * p.dw < p.W) {
                    int64_t c0 = 0;
                    for (; c0 + CB <= p.C; c0 += CB)
                        dw_interior<PX, CV, ACT>(xn, wp, yr + ow * p.C + c0, rr ? rr + ow * p.C + c0 : nullptr, e.bias,
                                                 p, cpad, ih0, iw0, c0, e);
                    for (; c0 < p.C; c0 += CB)
                        for (int64_t i = 0; i < PX; ++i)
                            dw_pixel<CV, ACT>(xn, wp, yr + (ow + i) * p.C + c0,
                                              rr ? rr + (ow + i) * p.C + c0 : nullptr, e.bias, p, cpad, ih0,
                                              iw0 + i * p.sw, 0, p.KH, 0, p.KW, c0, mn<int64_t>(CB, p.C - c0), e);
                    ow += PX;
                    continue;
                }
                edge_pixel(ow);
                ++ow;
            }
        }
        if (e.act == kEpGelu || e.act == kEpGeluTanh || e.act == kEpSilu) act_inplace<float>(e.act, yr, p.OW * p.C);
    }
}

// dw_rows_act with the activation fixed at compile time: a 3x3 depthwise output vector is 9 FMAs, so a switch on
// the activation per vector is a large share of its cost
void dw_rows(const float* x, const float* wp, float* y, const ConvNhwcParams& p, const Ep& e, int64_t r0,
             int64_t r1) {
    switch (e.act) {
        case kEpNone:
        case kEpGelu:
        case kEpGeluTanh:
        case kEpSilu:  // after-store kinds: the register epilogue passes them through, act_inplace runs them
            return dw_rows_act<kEpNone>(x, wp, y, p, e, r0, r1);
        case kEpRelu:
        case kEpRelu6:
        case kEpClamp:  // one clamp to [lo, hi] (make_ep sets relu's and relu6's bounds)
            return dw_rows_act<kEpClamp>(x, wp, y, p, e, r0, r1);
        case kEpHardswish:
            return dw_rows_act<kEpHardswish>(x, wp, y, p, e, r0, r1);
        default:
            return dw_rows_act<-1>(x, wp, y, p, e, r0, r1);
    }
}

void conv_depthwise(const float* x, const float* wp, float* y, const ConvNhwcParams& p, const Ep& e) {
    parallel_for(0, p.N * p.OH, grain_for(p.OW * p.C * p.KH * p.KW, 1 << 16),
                 [&](int64_t r0, int64_t r1) { dw_rows(x, wp, y, p, e, r0, r1); });
}

// conv_forward's epilogue: bias, residual, and act with ReLU / ReLU6 as clamps
Ep make_ep(const float* bias, const float* res, int act, float lo, float hi) {
    Ep e{bias, res, act, lo, hi};
    if (act == kEpRelu) { e.lo = 0.0f; e.hi = INFINITY; }
    if (act == kEpRelu6) { e.lo = 0.0f; e.hi = 6.0f; }
    return e;
}

// MR pixels (input bases xb[m], taps [kh0,kh1) x [kw0,kw1) valid for all of them) x one block of kW output
// channels of narrow groups (width G): lane j reads input channel j - j % G + i at reduction step i.
template <int MR, int G>
void narrow_tile(const float* const* xb, const float* wb, float* y, const float* res, const float* bias,
                 const ConvNhwcParams& p, int64_t mr, int64_t cn, int64_t kh0, int64_t kh1, int64_t kw0,
                 int64_t kw1, const Ep& e) {
    typedef typename VecT<float>::itype VI;
    VI idx[G];
    for (int i = 0; i < G; ++i)
        for (int j = 0; j < kW; ++j) idx[i][j] = j - j % G + i;
    V c[MR];
    for (int m = 0; m < MR; ++m) c[m] = V{};
    const bool full = cn == kW;
    for (int64_t kh = kh0; kh < kh1; ++kh)
        for (int64_t kw = kw0; kw < kw1; ++kw) {
            const int64_t off = (kh * p.dh * p.W + kw * p.dw) * p.C;
            const float* w = wb + (kh * p.KW + kw) * G * kW;
            V xv[MR];
#pragma GCC unroll 16
            for (int m = 0; m < MR; ++m) xv[m] = full ? vload<V>(xb[m] + off) : load_part(xb[m] + off, cn);
#pragma GCC unroll 8
            for (int i = 0; i < G; ++i) {
                const V wv = *reinterpret_cast<const V*>(w + i * kW);
#pragma GCC unroll 16
                for (int m = 0; m < MR; ++m) c[m] += __builtin_shuffle(xv[m], idx[i]) * wv;
            }
        }
    for (int64_t m = 0; m < mr; ++m) {
        if (full) {
            finish_vec(c[m], y + m * p.O, bias, res ? res + m * p.O : nullptr, e);
        } else {
            alignas(64) float tmp[kW];
            vstore(tmp, c[m]);
            finish_scalar(y + m * p.O, tmp, cn, bias, res ? res + m * p.O : nullptr, e);
        }
    }
}

template <int G>
void conv_narrow_grouped(const float* x, const float* wp, float* y, const ConvNhwcParams& p, const Ep& e) {
    constexpr int MR = kW >= 16 ? 12 : 6;
    const int64_t nblk = ceil_div(p.C, kW), blk = p.KH * p.KW * G * kW;
    const int64_t rows = p.N * p.OH;
    parallel_for(0, rows * nblk, grain_for(p.OW * kW * p.KH * p.KW * G, 1 << 16), [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t b = t % nblk, r = t / nblk;
            const int64_t n = r / p.OH, oh = r % p.OH, c0 = b * kW, cn = mn<int64_t>(kW, p.C - c0);
            const float* xn = x + n * p.H * p.W * p.C + c0;
            const float* wb = wp + b * blk;
            const float* bias = e.bias ? e.bias + c0 : nullptr;
            float* yr = y + r * p.OW * p.O + c0;
            const float* rr = e.res ? e.res + r * p.OW * p.O + c0 : nullptr;
            const int64_t ih0 = oh * p.sh - p.ph;
            int64_t kh0 = 0, kh1 = p.KH;
            while (kh0 < p.KH && ih0 + kh0 * p.dh < 0) ++kh0;
            while (kh1 > kh0 && ih0 + (kh1 - 1) * p.dh >= p.H) --kh1;
            const float* xb[MR];
            for (int64_t ow = 0; ow < p.OW;) {
                const int64_t iw0 = ow * p.sw - p.pw;
                // a run of MR pixels whose taps are all inside in W (rows clipped for the whole output row)
                if (iw0 >= 0 && ow + MR <= p.OW && (ow + MR - 1) * p.sw - p.pw + (p.KW - 1) * p.dw < p.W) {
                    for (int m = 0; m < MR; ++m) xb[m] = xn + (ih0 * p.W + iw0 + m * p.sw) * p.C;
                    narrow_tile<MR, G>(xb, wb, yr + ow * p.O, rr ? rr + ow * p.O : nullptr, bias, p, MR, cn, kh0, kh1,
                                       0, p.KW, e);
                    ow += MR;
                    continue;
                }
                int64_t kw0 = 0, kw1 = p.KW;
                while (kw0 < p.KW && iw0 + kw0 * p.dw < 0) ++kw0;
                while (kw1 > kw0 && iw0 + (kw1 - 1) * p.dw >= p.W) --kw1;
                xb[0] = xn + (ih0 * p.W + iw0) * p.C;
                narrow_tile<1, G>(xb, wb, yr + ow * p.O, rr ? rr + ow * p.O : nullptr, bias, p, 1, cn, kh0, kh1, kw0,
                                  kw1, e);
                ++ow;
            }
            if (e.act == kEpGelu || e.act == kEpGeluTanh || e.act == kEpSilu)
                for (int64_t ow = 0; ow < p.OW; ++ow) act_inplace<float>(e.act, yr + ow * p.O, cn);
        }
    });
}

}  // namespace

// y[3 i + r] = x_r[i], i < n: three planes interleaved (an RGB image's NCHW -> NHWC). With AVX2, 8 pixels at a
// time: each plane's vector is spread by one lane permutation per output vector and the three merged by blends;
// the scalar loop costs about 4x as much and the input transposition is the first step of every captured plan.
static void interleave3(const float* x0, const float* x1, const float* x2, float* y, int64_t n) {
    int64_t i = 0;
#if defined(__AVX2__)
    const __m256i idx0 = _mm256_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2), idx1 = _mm256_setr_epi32(2, 3, 3, 3, 4, 4, 4, 5),
                  idx2 = _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7);
    for (; i + 8 <= n; i += 8) {
        const __m256 a = _mm256_loadu_ps(x0 + i), b = _mm256_loadu_ps(x1 + i), c = _mm256_loadu_ps(x2 + i);
        // lane L of output vector k holds plane (8 k + L) % 3: blend masks pick b's and c's lanes
        const __m256 o0 = _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(a, idx0),
                                                          _mm256_permutevar8x32_ps(b, idx0), 0x92),
                                          _mm256_permutevar8x32_ps(c, idx0), 0x24);
        const __m256 o1 = _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(a, idx1),
                                                          _mm256_permutevar8x32_ps(b, idx1), 0x24),
                                          _mm256_permutevar8x32_ps(c, idx1), 0x49);
        const __m256 o2 = _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(a, idx2),
                                                          _mm256_permutevar8x32_ps(b, idx2), 0x49),
                                          _mm256_permutevar8x32_ps(c, idx2), 0x92);
        _mm256_storeu_ps(y + 3 * i, o0);
        _mm256_storeu_ps(y + 3 * i + 8, o1);
        _mm256_storeu_ps(y + 3 * i + 16, o2);
    }
#endif
    for (; i < n; ++i) {
        y[3 * i] = x0[i];
        y[3 * i + 1] = x1[i];
        y[3 * i + 2] = x2[i];
    }
}

#if defined(__AVX2__)
// y[c * ldy + r] = x[r * ldx + c] for an 8 x 8 block, in registers: pairs of rows interleaved, then pairs of pairs,
// then the 128-bit halves swapped (eight loads and eight stores, where a scalar copy does 64 of each)
static inline void transpose8x8(const float* x, int64_t ldx, float* y, int64_t ldy) {
    __m256 r[8], t[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(x + i * ldx);
#pragma GCC unroll 4
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 2
    for (int h = 0; h < 8; h += 4) {  // rows h..h+3: their columns 0-3 in the low halves, 4-7 in the high ones
        r[h] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
        _mm256_storeu_ps(y + c * ldy, _mm256_permute2f128_ps(r[c], r[c + 4], 0x20));
        _mm256_storeu_ps(y + (c + 4) * ldy, _mm256_permute2f128_ps(r[c], r[c + 4], 0x31));
    }
}
#endif

// rows [r0, r1) x columns [c0, c1) of x (rows x cols) into y (cols x rows)
static void transpose_block(const float* x, float* y, int64_t rows, int64_t cols, int64_t r0, int64_t r1, int64_t c0,
                            int64_t c1) {
    int64_t rv = r0, cv = c0;  // [r0, rv) x [c0, cv): the whole 8 x 8 blocks
#if defined(__AVX2__)
    rv = r0 + (r1 - r0) / 8 * 8;
    cv = c0 + (c1 - c0) / 8 * 8;
    for (int64_t c = c0; c < cv; c += 8)
        for (int64_t r = r0; r < rv; r += 8) transpose8x8(x + r * cols + c, cols, y + c * rows + r, rows);
#else
    constexpr int64_t T = 16;
    if (r1 - r0 == T && c1 - c0 == T) {
        float tile[T][T];
        for (int64_t r = 0; r < T; ++r)
            for (int64_t c = 0; c < T; ++c) tile[c][r] = x[(r0 + r) * cols + c0 + c];
        for (int64_t c = 0; c < T; ++c) memcpy(y + (c0 + c) * rows + r0, tile[c], sizeof(float) * T);
        return;
    }
#endif
    for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = rv; r < r1; ++r) y[c * rows + r] = x[r * cols + c];
    for (int64_t c = cv; c < c1; ++c)
        for (int64_t r = r0; r < rv; ++r) y[c * rows + r] = x[r * cols + c];
}

// y (B, cols, rows) = x (B, rows, cols) transposed per batch: NCHW <-> NHWC. 16 x 16 tiles (both the reads
// and the writes touch 16 cache lines), tasks over (batch, tile row, run of 16 tile columns): an RGB image
// (3 rows of 50176) is 196 tasks, not one.
void transpose_batched(const float* x, float* y, int64_t B, int64_t rows, int64_t cols) {
    constexpr int64_t T = 16, CC = 16 * T;
    if (rows == 3) {  // an RGB image to NHWC: runs of 4096 pixels per task
        constexpr int64_t RUN = 4096;
        const int64_t runs = ceil_div(cols, RUN);
        parallel_for(0, B * runs, 1, [&](int64_t t0, int64_t t1) {
            for (int64_t t = t0; t < t1; ++t) {
                const int64_t b = t / runs, i0 = (t % runs) * RUN, n = mn<int64_t>(RUN, cols - i0);
                const float* xb = x + b * 3 * cols + i0;
                interleave3(xb, xb + cols, xb + 2 * cols, y + b * 3 * cols + 3 * i0, n);
            }
        });
        return;
    }
    const int64_t rt = ceil_div(rows, T), ct = ceil_div(cols, CC);
    parallel_for(0, B * rt * ct, grain_for(T * CC, 1 << 15), [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t b = t / (rt * ct), r0 = ((t / ct) % rt) * T, r1 = mn<int64_t>(rows, r0 + T);
            const int64_t cb = (t % ct) * CC, ce = mn<int64_t>(cols, cb + CC);
            const float* xb = x + b * rows * cols;
            float* yb = y + b * rows * cols;
            for (int64_t c0 = cb; c0 < ce; c0 += T) transpose_block(xb, yb, rows, cols, r0, r1, c0, mn(ce, c0 + T));
        }
    });
}

namespace {

void conv_forward(const float* x, const float* wp, const float* bias, const float* res, float* y,
                  const ConvNhwcParams& p0, int act, float lo, float hi) {
    ConvNhwcParams p = p0;
    packed_size(p);  // sets ocb
    Ep e = make_ep(bias, res, act, lo, hi);
    if (p.N <= 0 || p.OH <= 0 || p.OW <= 0 || p.O <= 0) return;
    if (p.out_nchw && (is_depthwise(p) || is_narrow_grouped(p))) {
        // these kernels store NHWC rows: run them into a scratch buffer and transpose it
        p.out_nchw = 0;
        e.res = nullptr;
        Buf<float> tmp(p.N * p.OH * p.OW * p.O);
        conv_forward(x, wp, bias, nullptr, tmp.get(), p, act, lo, hi);
        transpose_batched(tmp.get(), y, p.N, p.OH * p.OW, p.O);
        return;
    }
    if (is_depthwise(p)) return conv_depthwise(x, wp, y, p, e);
    if (is_narrow_grouped(p)) {
        switch (p.C / p.groups) {
            case 2: return conv_narrow_grouped<2>(x, wp, y, p, e);
            case 4: return conv_narrow_grouped<4>(x, wp, y, p, e);
#if defined(__AVX512F__)
            case 8: return conv_narrow_grouped<8>(x, wp, y, p, e);
#endif
            default: break;
        }
    }
    conv_general(x, wp, y, p, e);
}

}  // namespace

void depthwise_rows(const float* x, const float* wp, const float* bias, float* y, const ConvNhwcParams& p, int act,
                    float lo, float hi, int64_t r0, int64_t r1) {
    dw_rows(x, wp, y, p, make_ep(bias, nullptr, act, lo, hi), r0, r1);
}

void conv_forward_nchw_direct(const float* x, const float* w, const float* bias, float* y, const ConvParams& cp,
                              bool w_flipped) {
    ConvNhwcParams p{};
    p.N = cp.N; p.H = cp.H; p.W = cp.W; p.C = cp.C;
    p.O = cp.O; p.KH = cp.kh; p.KW = cp.kw; p.groups = cp.groups;
    p.sh = cp.sh; p.sw = cp.sw; p.ph = cp.ph; p.pw = cp.pw; p.dh = cp.dh; p.dw = cp.dw;
    p.OH = cp.OH; p.OW = cp.OW;
    p.out_nchw = 1;
    Buf<float> wp(packed_size(p) + 16);
    const int64_t KK = p.KH * p.KW;
    if (w_flipped) pack_view(w, wp.get(), p, WeightView{KK, p.O * KK, -1, KK - 1});
    else pack(w, wp.get(), p);
    Buf<float> xt(p.N * p.H * p.W * p.C);
    transpose_batched(x, xt.get(), p.N, p.C, p.H * p.W);
    conv_forward(xt.get(), wp.get(), bias, nullptr, y, p, kEpNone, 0.0f, 0.0f);
}

FV_REGISTRATION void fill_conv_nhwc(KernelTable& t) {
    t.nhwc.transpose = &transpose_batched;
    t.nhwc.conv_packed_size = &packed_size;
    t.nhwc.conv_pack = &pack;
    t.nhwc.conv_forward = &conv_forward;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
