// Winograd F(4x4, 3x3) convolution (Lavin & Gray 2016), float32: the unit-stride 3x3 convs of a training step.
//
// A 4x4 output tile is A^T [ (G g G^T) . (B^T d B) ] A for the 6x6 input window d and the 3x3 filter g: 36
// multiplies per tile and channel pair where a direct conv does 144. Over all channels the 36 products become 36
// independent GEMMs, one per point xi of the 6x6 transformed domain:
//   M[xi] (tiles x O) = V[xi] (tiles x C) @ U[xi] (C x O)
// stored point-interleaved ([tile][xi][channel], U as [c][xi][o]), so every transform reads and writes one
// contiguous run per tile and the GEMMs read their operands at a row stride of 36 x channels.
// with V the transformed input tiles and U the transformed filters. The weight gradient uses the same tiles and
// the dual algorithm F(3x3, 4x4): gw = G^T [ (A gy A^T) . (B^T d B) ] G, summed over tiles by the GEMM
//   acc[xi] (O x C) = Z[xi]^T (O x tiles) @ V[xi] (tiles x C),  Z = the transformed 4x4 output-gradient tiles.
//
// Transforms run on NHWC activations (NCHW is transposed in and out), vectorised over channels: a tile's 36 input
// pixels are 36 channel vectors, and each transform is a fixed sequence of vector adds and scalings. The GEMMs are
// the packed GEMM (cpu/gemm.cpp), so a result does not depend on the thread count. Transform points 0, +-1, +-2:
// the float32 error is ~6e-6 of the output's magnitude on ResNet layers (a direct conv's: ~1e-6).
#include "cpu/conv_winograd.h"

#include "cpu/conv_nhwc.h"
#include "cpu/epilogue.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

namespace {

typedef vec_t<float> V;
constexpr int kW = vec_width<float>();
constexpr int kPoints = 36;  // the 6x6 transformed tile

// ---------------------------------------------------------------- the 1-D transforms, over vectors at a stride
// d (6) -> B^T d (6)
__attribute__((always_inline)) inline void input_1d(const V* d, int s, V* o, int os) {
    const V d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s], d5 = d[5 * s];
    const V a = d4 - d2 * 4.0f, b = d3 - d1 * 4.0f, c = d4 - d2, e = (d3 - d1) * 2.0f;
    o[0] = d0 * 4.0f - d2 * 5.0f + d4;
    o[os] = a + b;
    o[2 * os] = a - b;
    o[3 * os] = c + e;
    o[4 * os] = c - e;
    o[5 * os] = d1 * 4.0f - d3 * 5.0f + d5;
}

// m (6) -> A^T m (4)
__attribute__((always_inline)) inline void output_1d(const V* m, int s, V* o, int os) {
    const V p = m[s] + m[2 * s], q = m[s] - m[2 * s], r = m[3 * s] + m[4 * s], t = m[3 * s] - m[4 * s];
    o[0] = m[0] + p + r;
    o[os] = q + t * 2.0f;
    o[2 * os] = p + r * 4.0f;
    o[3 * os] = q + t * 8.0f + m[5 * s];
}

// g (3) -> G g (6)
__attribute__((always_inline)) inline void filter_1d(const V* g, int s, V* o, int os) {
    const V g0 = g[0], g1 = g[s], g2 = g[2 * s];
    const V even = g0 + g2;
    o[0] = g0 * 0.25f;
    o[os] = (even + g1) * (-1.0f / 6.0f);
    o[2 * os] = (even - g1) * (-1.0f / 6.0f);
    const V e2 = g0 * (1.0f / 24.0f) + g2 * (1.0f / 6.0f), o2 = g1 * (1.0f / 12.0f);
    o[3 * os] = e2 + o2;
    o[4 * os] = e2 - o2;
    o[5 * os] = g2;
}

// g (4) -> A g (6): an output-gradient tile into the transformed domain (weight gradient)
__attribute__((always_inline)) inline void grad_1d(const V* g, int s, V* o, int os) {
    const V g0 = g[0], g1 = g[s], g2 = g[2 * s], g3 = g[3 * s];
    const V p = g0 + g2, q = g1 + g3, r = g0 + g2 * 4.0f, t = g1 * 2.0f + g3 * 8.0f;
    o[0] = g0;
    o[os] = p + q;
    o[2 * os] = p - q;
    o[3 * os] = r + t;
    o[4 * os] = r - t;
    o[5 * os] = g3;
}

// m (6) -> G^T m (3): the summed products back to filter taps (weight gradient)
__attribute__((always_inline)) inline void grad_filter_1d(const V* m, int s, V* o, int os) {
    const V p = m[s] + m[2 * s], q = m[2 * s] - m[s], r = m[3 * s] + m[4 * s], t = m[3 * s] - m[4 * s];
    o[0] = m[0] * 0.25f - p * (1.0f / 6.0f) + r * (1.0f / 24.0f);
    o[os] = q * (1.0f / 6.0f) + t * (1.0f / 12.0f);
    o[2 * os] = (r - p) * (1.0f / 6.0f) + m[5 * s];
}

// ---------------------------------------------------------------- tiling
// A tile is 4 x 4 outputs. Dilated by (dh, dw) its outputs are dh rows / dw columns apart and its 6 x 6 input window
// as well: a dilated 3x3 conv is an undilated one on each of the dh x dw phases (output rows a, a + dh, ...), so the
// same transforms apply. Tiles run image by image, phase by phase, then row-major over the phase's tile grid (one
// phase, the plain tiling, when undilated).
struct Tiles {
    int64_t N, H, W, OH, OW, ph, pw, dh, dw, TH, TW, T;
    explicit Tiles(const ConvParams& p)
        : N(p.N), H(p.H), W(p.W), OH(p.OH), OW(p.OW), ph(p.ph), pw(p.pw), dh(p.dh), dw(p.dw),
          TH(ceil_div(ceil_div(p.OH, p.dh), 4)), TW(ceil_div(ceil_div(p.OW, p.dw), 4)),
          T(p.N * p.dh * p.dw * TH * TW) {}
    // tile t's image and its top-left output pixel
    void locate(int64_t t, int64_t* n, int64_t* oy, int64_t* ox) const {
        const int64_t per_phase = TH * TW, phase = t / per_phase % (dh * dw), i = t % per_phase;
        *n = t / (per_phase * dh * dw);
        *oy = phase / dw + i / TW * 4 * dh;
        *ox = phase % dw + i % TW * 4 * dw;
    }
    // how many of the tile's 4 output rows / columns from (oy, ox) lie inside the map
    int64_t rows_in(int64_t oy) const { return mn<int64_t>(4, ceil_div(OH - oy, dh)); }
    int64_t cols_in(int64_t ox) const { return mn<int64_t>(4, ceil_div(OW - ox, dw)); }
};

// v[t - tb][xi][c] = (B^T d B)[xi] for the 6x6 windows of x (NHWC, C channels) under tiles [t0, t1)
void transform_input(const float* x, int64_t C, const Tiles& g, float* v, int64_t tb, int64_t t0, int64_t t1) {
    V d[kPoints], tmp[kPoints];
    for (int64_t t = t0; t < t1; ++t) {
        int64_t n, oy, ox;
        g.locate(t, &n, &oy, &ox);
        const int64_t iy0 = oy - g.ph, ix0 = ox - g.pw;
        const float* xn = x + n * g.H * g.W * C;
        const bool interior = iy0 >= 0 && ix0 >= 0 && iy0 + 5 * g.dh < g.H && ix0 + 5 * g.dw < g.W;
        for (int64_t c = 0; c < C; c += kW) {
            if (interior) {
                for (int r = 0; r < 6; ++r)
                    for (int s = 0; s < 6; ++s)
                        d[r * 6 + s] = vload<V>(xn + ((iy0 + r * g.dh) * g.W + ix0 + s * g.dw) * C + c);
            } else {
                for (int r = 0; r < 6; ++r)
                    for (int s = 0; s < 6; ++s) {
                        const int64_t iy = iy0 + r * g.dh, ix = ix0 + s * g.dw;
                        d[r * 6 + s] = iy >= 0 && iy < g.H && ix >= 0 && ix < g.W
                                           ? vload<V>(xn + (iy * g.W + ix) * C + c) : V{};
                    }
            }
            for (int s = 0; s < 6; ++s) input_1d(d + s, 6, tmp + s, 6);
            for (int i = 0; i < 6; ++i) input_1d(tmp + i * 6, 1, d + i * 6, 1);
            float* dst = v + (t - tb) * kPoints * C + c;
            for (int xi = 0; xi < kPoints; ++xi) vstore(dst + xi * C, d[xi]);
        }
    }
}

// The output's epilogue: y = act(A^T m A + bias + residual) (residual in y's NHWC layout, or none)
struct OutEp {
    const float* bias;
    const float* res;
    int act;
    float lo, hi;
};

// y (NHWC, O channels; those of [o0, o0 + ob)) = the epilogue of A^T m A for tiles [t0, t1) of m[t - tb][xi][ob],
// clipped to the output map
void transform_output(const float* m, int64_t ob, int64_t o0, int64_t O, const OutEp& e, const Tiles& g, float* y,
                      int64_t tb, int64_t t0, int64_t t1) {
    V d[kPoints], tmp[24], out[16];
    for (int64_t t = t0; t < t1; ++t) {
        int64_t n, oy, ox;
        g.locate(t, &n, &oy, &ox);
        const int64_t nh = g.rows_in(oy), nw = g.cols_in(ox);
        float* yn = y + n * g.OH * g.OW * O + o0;
        for (int64_t o = 0; o < ob; o += kW) {
            const float* src = m + (t - tb) * kPoints * ob + o;
            for (int xi = 0; xi < kPoints; ++xi) d[xi] = vload<V>(src + xi * ob);
            for (int s = 0; s < 6; ++s) output_1d(d + s, 6, tmp + s, 6);
            for (int k = 0; k < 4; ++k) output_1d(tmp + k * 6, 1, out + k * 4, 1);
            const V b = e.bias ? vload<V>(e.bias + o0 + o) : V{};
            for (int k = 0; k < nh; ++k)
                for (int l = 0; l < nw; ++l) {
                    const int64_t at = ((oy + k * g.dh) * g.OW + ox + l * g.dw) * O + o;
                    V v = out[k * 4 + l] + b;
                    if (e.res) v += vload<V>(e.res + n * g.OH * g.OW * O + o0 + at);
                    vstore(yn + at, epilogue_apply<V, float>(e.act, v, e.lo, e.hi));
                }
        }
    }
}

// z[t - tb][xi][ob] = (A gy A^T)[xi] for the 4x4 tiles of gy (NHWC, O channels; those of [o0, o0 + ob); zero
// past the map) under tiles [t0, t1)
void transform_grad(const float* gy, int64_t O, int64_t o0, int64_t ob, const Tiles& g, float* z, int64_t tb,
                    int64_t t0, int64_t t1) {
    V d[16], tmp[24], out[kPoints];
    for (int64_t t = t0; t < t1; ++t) {
        int64_t n, oy, ox;
        g.locate(t, &n, &oy, &ox);
        const int64_t nh = g.rows_in(oy), nw = g.cols_in(ox);
        const float* gn = gy + n * g.OH * g.OW * O + o0;
        for (int64_t o = 0; o < ob; o += kW) {
            for (int k = 0; k < 4; ++k)
                for (int l = 0; l < 4; ++l)
                    d[k * 4 + l] = k < nh && l < nw
                                       ? vload<V>(gn + ((oy + k * g.dh) * g.OW + ox + l * g.dw) * O + o) : V{};
            for (int l = 0; l < 4; ++l) grad_1d(d + l, 4, tmp + l, 4);
            for (int i = 0; i < 6; ++i) grad_1d(tmp + i * 4, 1, out + i * 6, 1);
            float* dst = z + (t - tb) * kPoints * ob + o;
            for (int xi = 0; xi < kPoints; ++xi) vstore(dst + xi * ob, out[xi]);
        }
    }
}

// u[ci][xi][j] = (G g G^T)[xi] for the filters of output channels o0 + j, j < ob; wt holds the filters as
// [ci][tap][co] (flip: taps reversed)
void transform_filters(const float* wt, int64_t Cin, int64_t Cout, int64_t o0, int64_t ob, bool flip, float* u) {
    parallel_for(0, Cin, grain_for(ob * 64), [&](int64_t c0, int64_t c1) {
        V g[9], tmp[18], out[kPoints];
        for (int64_t ci = c0; ci < c1; ++ci)
            for (int64_t j = 0; j < ob; j += kW) {
                const float* src = wt + ci * 9 * Cout + o0 + j;
                for (int tap = 0; tap < 9; ++tap) g[tap] = vload<V>(src + (flip ? 8 - tap : tap) * Cout);
                for (int k = 0; k < 3; ++k) filter_1d(g + k, 3, tmp + k, 3);
                for (int i = 0; i < 6; ++i) filter_1d(tmp + i * 3, 1, out + i * 6, 1);
                float* dst = u + ci * kPoints * ob + j;
                for (int xi = 0; xi < kPoints; ++xi) vstore(dst + xi * ob, out[xi]);
            }
    });
}

// The 36 GEMMs. Enough of them for every thread: one GEMM per task (each single-threaded inside the pool);
// otherwise one after another, each spread over the threads. The packed GEMM gives the same bits either way.
template <class F>
void for_each_point(const F& gemm) {
    if (!in_parallel_region() && kPoints >= 4 * get_num_threads()) {
        parallel_for_dynamic(0, kPoints, [&](int64_t a, int64_t b) {
            for (int64_t xi = a; xi < b; ++xi) gemm(xi);
        });
    } else {
        for (int64_t xi = 0; xi < kPoints; ++xi) gemm(xi);
    }
}

// The scratch of one pass stays within a few MB, so transformed data is read back from cache and a conv's scratch
// does not grow with the batch or the width (at the start of a backward pass every activation is still alive: a
// 512-channel layer's whole U, 37 MB, would be added to the step's peak). Both sizes depend on the shapes only, so
// results are bit-identical for any thread count.
constexpr int64_t kScratchBytes = int64_t(8) << 20;

// Output channels per block: the block's transformed filters (36 x C x ob floats) within kScratchBytes, whole
// vectors, the blocks evened out (512 channels at C = 512: 4 x 104 + 96, not 4 x 112 + 64).
int64_t out_block(int64_t C, int64_t O) {
    const int64_t cap = mx<int64_t>(kW, kScratchBytes / (int64_t(sizeof(float)) * kPoints * C) / kW * kW);
    if (cap >= O) return O;
    return ceil_div(ceil_div(O, ceil_div(O, cap)), kW) * kW;
}

// Tiles per chunk: the chunk's transformed tiles (36 x (C + ob) floats each) within kScratchBytes; at least 64 tiles
// (GEMM rows), so the GEMMs' packing of U stays small next to their FMAs.
int64_t chunk_tiles(int64_t T, int64_t C, int64_t ob) {
    const int64_t fit = kScratchBytes / (int64_t(sizeof(float)) * kPoints * (C + ob));
    return mn<int64_t>(T, mx<int64_t>(64, fit));
}

// fn(t0, t1) over the tiles of [c0, c1), in parallel
template <class F>
void over_tiles(int64_t c0, int64_t c1, int64_t channels, const F& fn) {
    parallel_for(c0, c1, grain_for(channels * kPoints, 1 << 16), fn);
}

// The kernel taps, summed over the out output positions along one axis, that fall inside the input (size in, padded
// by pad, taps dil apart)
int64_t taps_inside(int64_t out, int64_t in, int64_t pad, int64_t dil) {
    int64_t n = 0;
    for (int64_t o = 0; o < out; ++o)
        for (int64_t r = 0; r < 3; ++r) n += o - pad + r * dil >= 0 && o - pad + r * dil < in;
    return n;
}

// The shape test shared by the training convs (undilated, padding <= 2 so that the input gradient, padded by 2 - p,
// is one too) and the captured plans' forward convs (dilated too, padding up to twice the dilation: "same" for any
// rate). The tile waste is counted on the dilated tiling.
bool shape_suits(const ConvParams& p, bool forward_only) {
    if (!winograd_allowed()) return false;
    if (p.groups != 1 || p.kh != 3 || p.kw != 3 || p.sh != 1 || p.sw != 1 || p.dh < 1 || p.dw < 1) return false;
    if (!forward_only && (p.dh != 1 || p.dw != 1)) return false;
    if (p.C % kW || p.O % kW || p.C < 16 || p.O < 16) return false;
    if (p.ph < 0 || p.ph > 2 * p.dh || p.pw < 0 || p.pw > 2 * p.dw || p.OH < 1 || p.OW < 1) return false;
    if (!forward_only && (p.ph > 2 || p.pw > 2)) return false;
    ConvParams one = p;
    one.N = 1;
    // the direct kernel's multiplies per channel pair: 9 a pixel, or for a dilated conv only the taps inside the
    // image (ASPP's large rates put a third or more of them in the padding, which Winograd's tiles still compute)
    const double direct = p.dh == 1 && p.dw == 1 ? 9.0 * double(p.OH * p.OW)
                                                  : double(taps_inside(p.OH, p.H, p.ph, p.dh)) *
                                                        double(taps_inside(p.OW, p.W, p.pw, p.dw));
    return 10.0 * kPoints * double(Tiles(one).T) <= 6.0 * direct;
}
}  // namespace

bool winograd_suits(const ConvParams& p) { return shape_suits(p, false); }

bool winograd_pays_for_filters(const ConvParams& p) {
    const int64_t pixels = p.N * p.OH * p.OW, tiles = p.N * ceil_div(p.OH, 4) * ceil_div(p.OW, 4);
    const double saved = 9.0 * double(pixels) - double(kPoints) * double(tiles);
    return saved >= 6.0 * sqrt(double(p.C) * double(p.O));
}

void conv_forward_winograd(const float* x, const float* w, const float* bias, float* y, const ConvParams& p,
                           bool w_flipped) {
    const Tiles g(p);
    const int64_t C = p.C, O = p.O, T = g.T, ob = out_block(C, O), tc = chunk_tiles(T, C, ob);
    Buf<float> wt(9 * C * O);
    if (w_flipped) transpose_batched(w, wt.get(), C, O, 9);  // (C, O, 9) -> [ci][tap][co]
    else transpose_batched(w, wt.get(), 1, O, C * 9);        // (O, C * 9) -> [ci * 9 + tap][co]
    Buf<float> xt(p.N * p.H * p.W * C), yt(p.N * p.OH * p.OW * O);
    transpose_batched(x, xt.get(), p.N, C, p.H * p.W);
    Buf<float> u(kPoints * C * ob), v(kPoints * tc * C), m(kPoints * tc * ob);
    // output-channel blocks outermost: a wide layer's few tiles are transformed again per block, where the other
    // order would transform its many filters again per chunk
    for (int64_t o0 = 0; o0 < O; o0 += ob) {
        const int64_t obw = mn<int64_t>(ob, O - o0);
        transform_filters(wt.get(), C, O, o0, obw, w_flipped, u.get());
        for (int64_t tb = 0; tb < T; tb += tc) {
            const int64_t te = mn<int64_t>(T, tb + tc);
            over_tiles(tb, te, C, [&](int64_t t0, int64_t t1) { transform_input(xt.get(), C, g, v.get(), tb, t0, t1); });
            for_each_point([&](int64_t xi) {
                gemm_strided<float>(te - tb, obw, C, v.get() + xi * C, kPoints * C, 1, u.get() + xi * obw,
                                    kPoints * obw, 1, m.get() + xi * obw, kPoints * obw, false);
            });
            over_tiles(tb, te, obw, [&](int64_t t0, int64_t t1) {
                transform_output(m.get(), obw, o0, O, OutEp{bias, nullptr, kEpNone, 0.0f, 0.0f}, g, yt.get(), tb, t0,
                                 t1);
            });
        }
    }
    transpose_batched(yt.get(), y, p.N, p.OH * p.OW, O);
}

void conv_backward_weight_winograd(const float* gy, const float* x, float* gw, const ConvParams& p) {
    const Tiles g(p);
    const int64_t C = p.C, O = p.O, T = g.T, ob = out_block(C, O), tc = chunk_tiles(T, C, ob);
    Buf<float> xt(p.N * p.H * p.W * C), gt(p.N * p.OH * p.OW * O);
    transpose_batched(x, xt.get(), p.N, C, p.H * p.W);
    transpose_batched(gy, gt.get(), p.N, O, p.OH * p.OW);
    Buf<float> v(kPoints * tc * C), z(kPoints * tc * ob), acc(kPoints * ob * C);
    for (int64_t o0 = 0; o0 < O; o0 += ob) {
        const int64_t obw = mn<int64_t>(ob, O - o0);
        for (int64_t tb = 0; tb < T; tb += tc) {
            const int64_t te = mn<int64_t>(T, tb + tc);
            over_tiles(tb, te, C, [&](int64_t t0, int64_t t1) { transform_input(xt.get(), C, g, v.get(), tb, t0, t1); });
            over_tiles(tb, te, obw, [&](int64_t t0, int64_t t1) {
                transform_grad(gt.get(), O, o0, obw, g, z.get(), tb, t0, t1);
            });
            // acc[o][xi][c] (+)= the chunk's sum over its tiles, chunks added in order
            for_each_point([&](int64_t xi) {
                gemm_strided<float>(obw, C, te - tb, z.get() + xi * obw, 1, kPoints * obw, v.get() + xi * C,
                                    kPoints * C, 1, acc.get() + xi * C, kPoints * C, tb > 0);
            });
        }
        // gw[o][c][tap] = (G^T acc G)[tap], nine strided stores per channel vector
        parallel_for(0, obw, grain_for(C * 64), [&](int64_t r0, int64_t r1) {
            V d[kPoints], tmp[18], out[9];
            float lanes[9][kW];
            for (int64_t r = r0; r < r1; ++r)
                for (int64_t c = 0; c < C; c += kW) {
                    const float* src = acc.get() + r * kPoints * C + c;
                    for (int xi = 0; xi < kPoints; ++xi) d[xi] = vload<V>(src + xi * C);
                    for (int s = 0; s < 6; ++s) grad_filter_1d(d + s, 6, tmp + s, 6);
                    for (int i = 0; i < 3; ++i) grad_filter_1d(tmp + i * 6, 1, out + i * 3, 1);
                    for (int tap = 0; tap < 9; ++tap) vstore(lanes[tap], out[tap]);
                    float* dst = gw + ((o0 + r) * C + c) * 9;
                    for (int l = 0; l < kW; ++l)
                        for (int tap = 0; tap < 9; ++tap) dst[l * 9 + tap] = lanes[tap][l];
                }
        });
    }
}

// ---------------------------------------------------------------- captured plans: NHWC, filters transformed once
namespace {

ConvParams as_conv_params(const ConvNhwcParams& q) {
    ConvParams p{};
    p.N = q.N; p.C = q.C; p.H = q.H; p.W = q.W; p.O = q.O; p.kh = q.KH; p.kw = q.KW;
    p.sh = q.sh; p.sw = q.sw; p.ph = q.ph; p.pw = q.pw; p.dh = q.dh; p.dw = q.dw; p.groups = q.groups;
    p.OH = q.OH; p.OW = q.OW;
    return p;
}

// A plan reads its transformed filters (36 x C x O floats) on every call but never transforms them, so the bar is
// the GEMM streaming U instead of the direct kernel's 9 x C x O weights: 9 x pixels - 36 x tiles >= 2 x sqrt(C x O)
// (measured at batch 1 on AVX2: a 256-channel 14x14 conv takes it, a 512-channel 7x7 one does not).
bool plan_suits(const ConvNhwcParams& q) {
    const ConvParams p = as_conv_params(q);
    if (!shape_suits(p, true)) return false;
    const int64_t pixels = p.N * p.OH * p.OW, tiles = Tiles(p).T;
    return 9.0 * double(pixels) - double(kPoints) * double(tiles) >= 2.0 * sqrt(double(p.C) * double(p.O));
}

bool plan_pack(const float* w, float* u, int64_t C, int64_t O) {
    if (C % kW || O % kW) return false;
    Buf<float> wt(9 * C * O);
    transpose_batched(w, wt.get(), 1, O, C * 9);
    transform_filters(wt.get(), C, O, 0, O, false, u);
    return true;
}

// A plan's transformed tiles live in one grow-only buffer per calling thread (at most ~10 MB: chunk_tiles), not in
// the host cache: every conv shape of a plan needs other sizes, and the cache would keep a block of each (measured:
// +180 MB peak RSS on a ResNet-18 plan at batch 8).
float* plan_scratch(int64_t floats) {
    struct Scratch {
        float* p = nullptr;
        int64_t cap = 0;
        ~Scratch() { free(p); }
    };
    static thread_local Scratch s;
    if (floats > s.cap) {
        free(s.p);
        s.p = static_cast<float*>(aligned_alloc(64, size_t(floats) * sizeof(float)));
        s.cap = s.p ? floats : 0;
        if (!s.p) throw_bad_alloc();
    }
    return s.p;
}

void plan_conv(const float* x, const float* u, const float* bias, const float* res, float* y,
               const ConvNhwcParams& q, int act, float lo, float hi) {
    const ConvParams p = as_conv_params(q);
    const Tiles g(p);
    const int64_t C = p.C, O = p.O, T = g.T, tc = chunk_tiles(T, C, O);
    if (act == kEpRelu) { lo = 0.0f; hi = INFINITY; }
    if (act == kEpRelu6) { lo = 0.0f; hi = 6.0f; }
    Buf<float> yt(q.out_nchw ? p.N * p.OH * p.OW * O : 1);
    float* yn = q.out_nchw ? yt.get() : y;
    const OutEp e{bias, q.out_nchw ? nullptr : res, act, lo, hi};
    float* const v = plan_scratch(kPoints * tc * (C + O) + 16);
    float* const m = v + kPoints * tc * C;
    for (int64_t tb = 0; tb < T; tb += tc) {
        const int64_t te = mn<int64_t>(T, tb + tc);
        over_tiles(tb, te, C, [&](int64_t t0, int64_t t1) { transform_input(x, C, g, v, tb, t0, t1); });
        for_each_point([&](int64_t xi) {
            gemm_strided<float>(te - tb, O, C, v + xi * C, kPoints * C, 1, u + xi * O, kPoints * O, 1, m + xi * O,
                                kPoints * O, false);
        });
        over_tiles(tb, te, O, [&](int64_t t0, int64_t t1) { transform_output(m, O, 0, O, e, g, yn, tb, t0, t1); });
    }
    if (epilogue_after_store(act)) act_inplace<float>(act, yn, p.N * p.OH * p.OW * O);
    if (q.out_nchw) transpose_batched(yn, y, p.N, p.OH * p.OW, O);
}

}  // namespace

FV_REGISTRATION void fill_conv_winograd(KernelTable& t) {
    t.nhwc.winograd_suits = &plan_suits;
    t.nhwc.winograd_pack = &plan_pack;
    t.nhwc.conv_winograd = &plan_conv;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
