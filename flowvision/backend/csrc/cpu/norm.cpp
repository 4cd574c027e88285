// batch / layer / group normalisation, forward and backward.
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

// ---------------- batch norm: x is (N, C, S) ----------------
template <class T>
void bn_train_fwd(const T* x, const T* w, const T* b, T* y, T* mean_out, T* invstd_out, int64_t N, int64_t C,
                  int64_t S, double eps) {
    const int64_t cnt = N * S;
    parallel_for(0, C, grain_for(N * S * 3), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            double s = 0;
            for (int64_t n = 0; n < N; ++n) s += vsum(x + (n * C + c) * S, S);
            const double mean = cnt ? s / cnt : 0.0;
            double ss = 0;
            for (int64_t n = 0; n < N; ++n) ss += vsumsq_c(x + (n * C + c) * S, S, T(mean));
            const double var = cnt ? ss / cnt : 0.0;
            const double invstd = 1.0 / sqrt(var + eps);
            mean_out[c] = T(mean);
            invstd_out[c] = T(invstd);
            const T scale = T((w ? double(w[c]) : 1.0) * invstd);
            const T shift = T((b ? double(b[c]) : 0.0) - mean * double(scale));
            for (int64_t n = 0; n < N; ++n) {
                const T* xp = x + (n * C + c) * S;
                T* yp = y + (n * C + c) * S;
                for (int64_t i = 0; i < S; ++i) yp[i] = xp[i] * scale + shift;
            }
        }
    });
}

template <class T>
void bn_infer_fwd(const T* x, const T* rm, const T* rv, const T* w, const T* b, T* y, int64_t N, int64_t C, int64_t S,
                  double eps) {
    parallel_for(0, N * C, grain_for(S), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t c = q % C;
            const double invstd = 1.0 / sqrt(double(rv[c]) + eps);
            const T scale = T((w ? double(w[c]) : 1.0) * invstd);
            const T shift = T((b ? double(b[c]) : 0.0) - double(rm[c]) * double(scale));
            const T* xp = x + q * S;
            T* yp = y + q * S;
            for (int64_t i = 0; i < S; ++i) yp[i] = xp[i] * scale + shift;
        }
    });
}

template <class T>
void bn_bwd(const T* gy, const T* x, const T* w, const T* mean, const T* invstd, T* gx, T* gw, T* gb, int64_t N,
            int64_t C, int64_t S, bool training) {
    const int64_t cnt = N * S;
    parallel_for(0, C, grain_for(N * S * 3), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            const T m = mean[c];
            double sum_dy = 0, dot = 0;
            for (int64_t n = 0; n < N; ++n) {
                const T* g = gy + (n * C + c) * S;
                sum_dy += vsum(g, S);
                dot += vdot_c(x + (n * C + c) * S, g, S, m);
            }
            const double is = invstd[c];
            const double wc = w ? double(w[c]) : 1.0;
            if (gw) gw[c] = T(dot * is);
            if (gb) gb[c] = T(sum_dy);
            if (!gx) continue;
            if (training) {
                const T k = T(cnt ? dot * is * is / cnt : 0.0);
                const T gmean = T(cnt ? sum_dy / cnt : 0.0);
                const T sc = T(is * wc);
                for (int64_t n = 0; n < N; ++n) {
                    const T* g = gy + (n * C + c) * S;
                    const T* xp = x + (n * C + c) * S;
                    T* o = gx + (n * C + c) * S;
                    for (int64_t i = 0; i < S; ++i) o[i] = (g[i] - gmean - (xp[i] - m) * k) * sc;
                }
            } else {
                const T sc = T(is * wc);
                for (int64_t n = 0; n < N; ++n) {
                    const T* g = gy + (n * C + c) * S;
                    T* o = gx + (n * C + c) * S;
                    for (int64_t i = 0; i < S; ++i) o[i] = g[i] * sc;
                }
            }
        }
    });
}

// ---------------- layer norm: x is (M, N), normalised over N ----------------
template <class T>
void ln_fwd(const T* x, const T* w, const T* b, T* y, T* mean_out, T* rstd_out, int64_t M, int64_t N, double eps) {
    parallel_for(0, M, grain_for(N * 3), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const T* xp = x + r * N;
            T* yp = y + r * N;
            const T mean = N ? T(double(vsum(xp, N)) / N) : T(0);
            const double var = N ? double(vsumsq_c(xp, N, mean)) / N : 0.0;
            const T rstd = T(1.0 / sqrt(var + eps));
            mean_out[r] = mean;
            rstd_out[r] = rstd;
            if (w && b) {
                for (int64_t i = 0; i < N; ++i) yp[i] = (xp[i] - mean) * rstd * w[i] + b[i];
            } else if (w) {
                for (int64_t i = 0; i < N; ++i) yp[i] = (xp[i] - mean) * rstd * w[i];
            } else if (b) {
                for (int64_t i = 0; i < N; ++i) yp[i] = (xp[i] - mean) * rstd + b[i];
            } else {
                for (int64_t i = 0; i < N; ++i) yp[i] = (xp[i] - mean) * rstd;
            }
        }
    });
}

template <class T>
void ln_bwd(const T* gy, const T* x, const T* w, const T* mean, const T* rstd, T* gx, T* gw, T* gb, int64_t M,
            int64_t N) {
    // fixed chunking (not the thread count) so gw/gb are bit-identical for any thread count
    const int64_t nch = mx<int64_t>(1, mn<int64_t>(8, M * N >= (1 << 15) ? M : 1));
    Buf<T> partial(2 * nch * mx<int64_t>(N, 1), true);  // per chunk: gw part, gb part
    parallel_for(0, nch, 1, [&](int64_t c0, int64_t c1) {
        Buf<T> wg(mx<int64_t>(N, 1));
        for (int64_t c = c0; c < c1; ++c) {
            T* pgw = partial.get() + 2 * c * N;
            T* pgb = pgw + N;
            for (int64_t r = M * c / nch; r < M * (c + 1) / nch; ++r) {
                const T* g = gy + r * N;
                const T* xp = x + r * N;
                const T m = mean[r], rs = rstd[r];
                for (int64_t i = 0; i < N; ++i) {
                    pgw[i] += g[i] * (xp[i] - m) * rs;
                    pgb[i] += g[i];
                }
                T* wgp = wg.get();
                if (w) for (int64_t i = 0; i < N; ++i) wgp[i] = g[i] * w[i];
                else for (int64_t i = 0; i < N; ++i) wgp[i] = g[i];
                const T a = N ? vsum(wgp, N) / T(N) : T(0);
                const T bb = N ? vdot_c(xp, wgp, N, m) * rs / T(N) : T(0);
                T* o = gx + r * N;
                for (int64_t i = 0; i < N; ++i) o[i] = rs * (wgp[i] - a - (xp[i] - m) * rs * bb);
            }
        }
    });
    for (int64_t i = 0; i < N; ++i) {
        T sw = T(0), sb = T(0);
        for (int64_t c = 0; c < nch; ++c) {
            sw += partial.get()[2 * c * N + i];
            sb += partial.get()[2 * c * N + N + i];
        }
        if (gw) gw[i] = sw;
        if (gb) gb[i] = sb;
    }
}

// ---------------- group norm: x is (N, C, S), G groups ----------------
template <class T>
void gn_fwd(const T* x, const T* w, const T* b, T* y, T* mean_out, T* rstd_out, int64_t N, int64_t C, int64_t S,
            int64_t G, double eps) {
    const int64_t D = C / G, cnt = D * S;
    parallel_for(0, N * G, grain_for(cnt * 3), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t n = q / G, g = q % G;
            const T* xp = x + q * cnt;
            T* yp = y + q * cnt;
            const T mean = cnt ? T(double(vsum(xp, cnt)) / cnt) : T(0);
            const double var = cnt ? double(vsumsq_c(xp, cnt, mean)) / cnt : 0.0;
            const T rstd = T(1.0 / sqrt(var + eps));
            mean_out[q] = mean;
            rstd_out[q] = rstd;
            (void)n;
            for (int64_t d = 0; d < D; ++d) {
                const int64_t c = g * D + d;
                const T scale = rstd * (w ? w[c] : T(1));
                const T shift = (b ? b[c] : T(0)) - mean * scale;
                const T* xc = xp + d * S;
                T* yc = yp + d * S;
                for (int64_t i = 0; i < S; ++i) yc[i] = xc[i] * scale + shift;
            }
        }
    });
}

template <class T>
void gn_bwd(const T* gy, const T* x, const T* w, const T* mean, const T* rstd, T* gx, T* gw, T* gb, int64_t N,
            int64_t C, int64_t S, int64_t G) {
    const int64_t D = C / G, cnt = D * S;
    Buf<T> ds(N * C), db(N * C);
    parallel_for(0, N * G, grain_for(cnt * 3), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t n = q / G, g = q % G;
            const T* xp = x + q * cnt;
            const T* gp = gy + q * cnt;
            T ds_g = T(0), db_g = T(0);
            for (int64_t d = 0; d < D; ++d) {
                const int64_t c = g * D + d;
                const T s1 = vdot(gp + d * S, xp + d * S, S);
                const T s2 = vsum(gp + d * S, S);
                ds.get()[n * C + c] = s1;
                db.get()[n * C + c] = s2;
                const T gam = w ? w[c] : T(1);
                ds_g += s1 * gam;
                db_g += s2 * gam;
            }
            const T m = mean[q], rs = rstd[q];
            const T sc = T(1) / T(cnt);
            const T c2 = (db_g * m - ds_g) * rs * rs * rs * sc;
            const T c3 = -c2 * m - db_g * rs * sc;
            T* o = gx + q * cnt;
            for (int64_t d = 0; d < D; ++d) {
                const int64_t c = g * D + d;
                const T c1 = rs * (w ? w[c] : T(1));
                const T* gc = gp + d * S;
                const T* xc = xp + d * S;
                T* oc = o + d * S;
                for (int64_t i = 0; i < S; ++i) oc[i] = c1 * gc[i] + c2 * xc[i] + c3;
            }
        }
    });
    for (int64_t c = 0; c < C; ++c) {
        const int64_t g = c / D;
        T sw = T(0), sb = T(0);
        for (int64_t n = 0; n < N; ++n) {
            sw += (ds.get()[n * C + c] - db.get()[n * C + c] * mean[n * G + g]) * rstd[n * G + g];
            sb += db.get()[n * C + c];
        }
        if (gw) gw[c] = sw;
        if (gb) gb[c] = sb;
    }
}

}  // namespace

// one row per norm: forward, backward (batch norm: then its inference forward)
FV_REGISTRATION void fill_norm(KernelTable& t) {
    FV_FILL_F32_F64(t, batch_norm_train_forward, bn_train_fwd), FV_FILL_F32_F64(t, batch_norm_backward, bn_bwd),
        FV_FILL_F32_F64(t, batch_norm_infer_forward, bn_infer_fwd);
    FV_FILL_F32_F64(t, layer_norm_forward, ln_fwd), FV_FILL_F32_F64(t, layer_norm_backward, ln_bwd);
    FV_FILL_F32_F64(t, group_norm_forward, gn_fwd), FV_FILL_F32_F64(t, group_norm_backward, gn_bwd);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
