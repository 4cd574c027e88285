// Pooling over NHWC activations (forward, float32) for the captured inference path: vectorised over
// channels, with the same windows, summation order and NaN rules as the NCHW kernels in pool.cpp, so the
// results are identical to them.
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

FV_REGISTRATION void fill_pool_nhwc(KernelTable& t);

namespace {

typedef vec_t<float> V;
constexpr int kW = vec_width<float>();

void max_pool(const float* x, float* y, const PoolParams& p, int64_t C) {
    const int64_t rows = p.planes * p.OH;
    parallel_for(0, rows, grain_for(p.OW * C * p.kh * p.kw, 1 << 16), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t n = r / p.OH, oh = r % p.OH;
            const float* xn = x + n * p.H * p.W * C;
            int64_t h0 = oh * p.sh - p.ph;
            const int64_t h1 = mn<int64_t>(h0 + (p.kh - 1) * p.dh + 1, p.H);
            while (h0 < 0) h0 += p.dh;
            for (int64_t ow = 0; ow < p.OW; ++ow) {
                int64_t w0 = ow * p.sw - p.pw;
                const int64_t w1 = mn<int64_t>(w0 + (p.kw - 1) * p.dw + 1, p.W);
                while (w0 < 0) w0 += p.dw;
                float* yo = y + (r * p.OW + ow) * C;
                int64_t c = 0;
                for (; c + kW <= C; c += kW) {
                    V m = V{} - __builtin_inff();
                    for (int64_t ih = h0; ih < h1; ih += p.dh)
                        for (int64_t iw = w0; iw < w1; iw += p.dw) {
                            const V v = vload<V>(xn + (ih * p.W + iw) * C + c);
                            m = (v > m) | (v != v) ? v : m;  // NaN propagates like the NCHW kernel
                        }
                    vstore(yo + c, m);
                }
                for (; c < C; ++c) {
                    float m = -__builtin_inff();
                    for (int64_t ih = h0; ih < h1; ih += p.dh)
                        for (int64_t iw = w0; iw < w1; iw += p.dw) {
                            const float v = xn[(ih * p.W + iw) * C + c];
                            if (v > m || v != v) m = v;
                        }
                    yo[c] = m;
                }
            }
        }
    });
}

void avg_pool(const float* x, float* y, const PoolParams& p, int64_t C) {
    const int64_t rows = p.planes * p.OH;
    parallel_for(0, rows, grain_for(p.OW * C * p.kh * p.kw, 1 << 16), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t n = r / p.OH, oh = r % p.OH;
            const float* xn = x + n * p.H * p.W * C;
            for (int64_t ow = 0; ow < p.OW; ++ow) {
                // torch's avg_pool2d window and divisor (as avg_window in pool.cpp)
                int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
                int64_t h1 = mn<int64_t>(h0 + p.kh, p.H + p.ph), w1 = mn<int64_t>(w0 + p.kw, p.W + p.pw);
                const int64_t pool_size = (h1 - h0) * (w1 - w0);
                h0 = mx<int64_t>(h0, 0);
                w0 = mx<int64_t>(w0, 0);
                h1 = mn<int64_t>(h1, p.H);
                w1 = mn<int64_t>(w1, p.W);
                int64_t div = p.divisor_override ? p.divisor_override
                                                 : (p.count_include_pad ? pool_size : (h1 - h0) * (w1 - w0));
                float* yo = y + (r * p.OW + ow) * C;
                if (h0 >= h1 || w0 >= w1) {
                    memset(yo, 0, sizeof(float) * C);
                    continue;
                }
                const float fd = float(div);
                int64_t c = 0;
                for (; c + kW <= C; c += kW) {
                    V s = V{};
                    for (int64_t ih = h0; ih < h1; ++ih)
                        for (int64_t iw = w0; iw < w1; ++iw) s += vload<V>(xn + (ih * p.W + iw) * C + c);
                    vstore(yo + c, s / fd);
                }
                for (; c < C; ++c) {
                    float s = 0.0f;
                    for (int64_t ih = h0; ih < h1; ++ih)
                        for (int64_t iw = w0; iw < w1; ++iw) s += xn[(ih * p.W + iw) * C + c];
                    yo[c] = s / fd;
                }
            }
        }
    });
}

static inline int64_t a_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
static inline int64_t a_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

void adaptive_avg_pool(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C, int64_t OH, int64_t OW) {
    // tasks: (output pixel, block of 256 channels) so global pooling at batch 1 still spreads over threads
    constexpr int64_t kCB = 256;
    const int64_t ncb = ceil_div(C, kCB), npix = N * OH * OW;
    const int64_t win = ceil_div(H, OH) * ceil_div(W, OW) + 1;
    parallel_for(0, npix * ncb, grain_for(win * mn<int64_t>(C, kCB), 1 << 15), [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t cb = t % ncb, q = t / ncb;
            const int64_t ow = q % OW, oh = (q / OW) % OH, n = q / (OW * OH);
            const int64_t h0 = a_start(oh, H, OH), h1 = a_end(oh, H, OH);
            const int64_t w0 = a_start(ow, W, OW), w1 = a_end(ow, W, OW);
            const float fd = float((h1 - h0) * (w1 - w0));
            const float* xn = x + n * H * W * C;
            float* yo = y + q * C;
            const int64_t c1 = mn<int64_t>(C, (cb + 1) * kCB);
            int64_t c = cb * kCB;
            for (; c + 4 * kW <= c1; c += 4 * kW) {
                V s0 = V{}, s1 = V{}, s2 = V{}, s3 = V{};
                for (int64_t ih = h0; ih < h1; ++ih)
                    for (int64_t iw = w0; iw < w1; ++iw) {
                        const float* xp = xn + (ih * W + iw) * C + c;
                        s0 += vload<V>(xp);
                        s1 += vload<V>(xp + kW);
                        s2 += vload<V>(xp + 2 * kW);
                        s3 += vload<V>(xp + 3 * kW);
                    }
                vstore(yo + c, s0 / fd);
                vstore(yo + c + kW, s1 / fd);
                vstore(yo + c + 2 * kW, s2 / fd);
                vstore(yo + c + 3 * kW, s3 / fd);
            }
            for (; c + kW <= c1; c += kW) {
                V s = V{};
                for (int64_t ih = h0; ih < h1; ++ih)
                    for (int64_t iw = w0; iw < w1; ++iw) s += vload<V>(xn + (ih * W + iw) * C + c);
                vstore(yo + c, s / fd);
            }
            for (; c < c1; ++c) {
                float s = 0.0f;
                for (int64_t ih = h0; ih < h1; ++ih)
                    for (int64_t iw = w0; iw < w1; ++iw) s += xn[(ih * W + iw) * C + c];
                yo[c] = s / fd;
            }
        }
    });
}

// The squeeze-excitation gate: y (N, P, C) = x (N, P, C) * g (N, C), one rounded multiply per element (numpy's
// broadcast x * g bit for bit). y may be x. Tasks over pixel rows.
void channel_scale(const float* x, const float* g, float* y, int64_t N, int64_t P, int64_t C) {
    parallel_for(0, N * P, grain_for(C, 1 << 15), [&](int64_t r0, int64_t r1) {
        int64_t n = r0 / P, next = (n + 1) * P;  // the image of row r, stepped (no division per row)
        for (int64_t r = r0; r < r1; ++r) {
            if (r == next) { ++n; next += P; }
            const float* gn = g + n * C;
            const float* xr = x + r * C;
            float* yr = y + r * C;
            int64_t c = 0;
            for (; c + 4 * kW <= C; c += 4 * kW)
#pragma GCC unroll 4
                for (int v = 0; v < 4; ++v)
                    vstore(yr + c + v * kW, vload<V>(xr + c + v * kW) * vload<V>(gn + c + v * kW));
            for (; c + kW <= C; c += kW) vstore(yr + c, vload<V>(xr + c) * vload<V>(gn + c));
            for (; c < C; ++c) yr[c] = xr[c] * gn[c];
        }
    });
}

}  // namespace

FV_REGISTRATION void fill_pool_nhwc(KernelTable& t) {
    t.nhwc.channel_scale = &channel_scale;
    t.nhwc.max_pool = &max_pool;
    t.nhwc.avg_pool = &avg_pool;
    t.nhwc.adaptive_avg_pool = &adaptive_avg_pool;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
