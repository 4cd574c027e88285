// softmax / log_softmax over the last dim, forward and backward. float32 uses the vectorised exp of
// cpu/common.h (Cephes-style polynomial, ~1 ulp); float64 uses libm.
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

typedef vec_t<float> vf;
typedef VecT<float>::itype vi;
constexpr int WF = vec_width<float>();

static inline float vmax_row(const float* p, int64_t n) {
    float m = -__builtin_inff();
    int64_t i = 0;
    if (n >= WF) {
        vf a = vload<vf>(p);
        for (i = WF; i + WF <= n; i += WF) {
            vf v = vload<vf>(p + i);
            a = v > a ? v : a;
        }
        for (int j = 0; j < WF; ++j) m = a[j] > m ? a[j] : m;
    }
    for (; i < n; ++i) m = p[i] > m ? p[i] : m;
    return m;
}

// y = exp(x - m); returns sum
static inline float exp_shift_store(const float* x, float* y, int64_t n, float m) {
    vf acc = vf{};
    int64_t i = 0;
    for (; i + WF <= n; i += WF) {
        vf e = vexp(vload<vf>(x + i) - m);
        vstore(y + i, e);
        acc += e;
    }
    float s = hsum<float>(acc);
    if (i < n) {
        float tx[WF], ty[WF];
        for (int j = 0; j < WF; ++j) tx[j] = i + j < n ? x[i + j] - m : -__builtin_inff();
        vf e = vexp(vload<vf>(tx));
        vstore(ty, e);
        for (int64_t j = 0; i + j < n; ++j) {
            y[i + j] = ty[j];
            s += ty[j];
        }
    }
    return s;
}
static inline float exp_shift_sum(const float* x, int64_t n, float m) {
    vf acc = vf{};
    int64_t i = 0;
    for (; i + WF <= n; i += WF) acc += vexp(vload<vf>(x + i) - m);
    float s = hsum<float>(acc);
    for (; i < n; ++i) s += expf(x[i] - m);
    return s;
}

void softmax_f32(const float* x, float* y, int64_t M, int64_t N, bool log) {
    parallel_for(0, M, grain_for(N * 8), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* xp = x + r * N;
            float* yp = y + r * N;
            const float m = vmax_row(xp, N);
            if (log) {
                const float ls = logf(exp_shift_sum(xp, N, m)) + m;
                for (int64_t i = 0; i < N; ++i) yp[i] = xp[i] - ls;
            } else {
                const float inv = 1.0f / exp_shift_store(xp, yp, N, m);
                for (int64_t i = 0; i < N; ++i) yp[i] *= inv;
            }
        }
    });
}

void softmax_f64(const double* x, double* y, int64_t M, int64_t N, bool log) {
    parallel_for(0, M, grain_for(N * 8), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const double* xp = x + r * N;
            double* yp = y + r * N;
            double m = -__builtin_inf();
            for (int64_t i = 0; i < N; ++i) m = xp[i] > m ? xp[i] : m;
            double s = 0;
            for (int64_t i = 0; i < N; ++i) {
                const double e = exp(xp[i] - m);
                if (!log) yp[i] = e;
                s += e;
            }
            if (log) {
                const double ls = ::log(s) + m;
                for (int64_t i = 0; i < N; ++i) yp[i] = xp[i] - ls;
            } else {
                const double inv = 1.0 / s;
                for (int64_t i = 0; i < N; ++i) yp[i] *= inv;
            }
        }
    });
}

template <class T>
void softmax_bwd(const T* gy, const T* y, T* gx, int64_t M, int64_t N, bool log) {
    parallel_for(0, M, grain_for(N * 4), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const T* g = gy + r * N;
            const T* yp = y + r * N;
            T* o = gx + r * N;
            if (log) {
                const T s = vsum(g, N);
                for (int64_t i = 0; i < N; ++i) o[i] = g[i] - fexp(yp[i]) * s;
            } else {
                const T d = vdot(g, yp, N);
                for (int64_t i = 0; i < N; ++i) o[i] = yp[i] * (g[i] - d);
            }
        }
    });
}

// log-softmax backward for float: vectorised exp
void log_softmax_bwd_f32(const float* gy, const float* y, float* gx, int64_t M, int64_t N) {
    parallel_for(0, M, grain_for(N * 4), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* g = gy + r * N;
            const float* yp = y + r * N;
            float* o = gx + r * N;
            const float s = vsum(g, N);
            int64_t i = 0;
            for (; i + WF <= N; i += WF) vstore(o + i, vload<vf>(g + i) - vexp(vload<vf>(yp + i)) * s);
            for (; i < N; ++i) o[i] = g[i] - expf(yp[i]) * s;
        }
    });
}

void softmax_bwd_f32(const float* gy, const float* y, float* gx, int64_t M, int64_t N, bool log) {
    if (log) return log_softmax_bwd_f32(gy, y, gx, M, N);
    softmax_bwd<float>(gy, y, gx, M, N, false);
}

}  // namespace

FV_REGISTRATION void fill_softmax(KernelTable& t) {
    t.f32.softmax_forward = &softmax_f32;
    t.f64.softmax_forward = &softmax_f64;
    t.f32.softmax_backward = &softmax_bwd_f32;
    t.f64.softmax_backward = &softmax_bwd<double>;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
