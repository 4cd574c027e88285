// Elementwise activations: GELU (erf / tanh), SiLU, and the pointwise kinds (relu, clamp, sigmoid, hardswish,
// hardsigmoid, leaky_relu), forward and backward; any fused epilogue applied in place. float32 vectors use
// cpu/common.h's vexp / verf / vgelu (the GEMM epilogue applies the same functions); float64 and the scalar tails
// use libm.
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

typedef vec_t<float> vf;
constexpr int WF = vec_width<float>();

static inline float ferf(float x) { return erff(x); }
static inline double ferf(double x) { return erf(x); }
static inline float ftanh(float x) { return tanhf(x); }
static inline double ftanh(double x) { return tanh(x); }


void gelu_fwd_f32(const float* x, float* y, int64_t n, bool approx) {
    parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
        int64_t i = b;
        if (approx) {
            for (; i + WF <= e; i += WF) {
                const vf v = vload<vf>(x + i);
                vstore(y + i, vgelu(v, true));
            }
            for (; i < e; ++i) y[i] = 0.5f * x[i] * (1.0f + tanhf(0.7978845608028654f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
        } else {
            for (; i + WF <= e; i += WF) {
                const vf v = vload<vf>(x + i);
                vstore(y + i, vgelu(v, false));
            }
            for (; i < e; ++i) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.7071067811865476f));
        }
    });
}

void gelu_bwd_f32(const float* gy, const float* x, float* gx, int64_t n, bool approx) {
    parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
        int64_t i = b;
        if (approx) {
            const float k0 = 0.7978845608028654f, k1 = 0.044715f;
            for (; i + WF <= e; i += WF) {
                const vf v = vload<vf>(x + i);
                const vf t = vtanh(k0 * (v + k1 * v * v * v));
                const vf dinner = k0 * (1.0f + 3.0f * k1 * v * v);
                vstore(gx + i, vload<vf>(gy + i) * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * dinner));
            }
            for (; i < e; ++i) {
                const float v = x[i], t = tanhf(k0 * (v + k1 * v * v * v));
                gx[i] = gy[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * k0 * (1.0f + 3.0f * k1 * v * v));
            }
        } else {
            for (; i + WF <= e; i += WF) {
                const vf v = vload<vf>(x + i);
                const vf cdf = 0.5f * (1.0f + verf(v * 0.7071067811865476f));
                const vf pdf = 0.3989422804014327f * vexp(-0.5f * v * v);
                vstore(gx + i, vload<vf>(gy + i) * (cdf + v * pdf));
            }
            for (; i < e; ++i) {
                const float v = x[i];
                gx[i] = gy[i] * (0.5f * (1.0f + erff(v * 0.7071067811865476f)) +
                                 v * 0.3989422804014327f * expf(-0.5f * v * v));
            }
        }
    });
}

template <class T>
void gelu_fwd(const T* x, T* y, int64_t n, bool approx) {
    parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
        if (approx) {
            const T k0 = T(0.7978845608028654), k1 = T(0.044715);
            for (int64_t i = b; i < e; ++i) {
                const T v = x[i];
                y[i] = T(0.5) * v * (T(1) + ftanh(k0 * (v + k1 * v * v * v)));
            }
        } else {
            for (int64_t i = b; i < e; ++i) y[i] = T(0.5) * x[i] * (T(1) + ferf(x[i] * T(0.7071067811865476)));
        }
    });
}

template <class T>
void gelu_bwd(const T* gy, const T* x, T* gx, int64_t n, bool approx) {
    parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
        if (approx) {
            const T k0 = T(0.7978845608028654), k1 = T(0.044715);
            for (int64_t i = b; i < e; ++i) {
                const T v = x[i];
                const T inner = k0 * (v + k1 * v * v * v);
                const T t = ftanh(inner);
                const T dinner = k0 * (T(1) + T(3) * k1 * v * v);
                gx[i] = gy[i] * (T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * dinner);
            }
        } else {
            const T kAlpha = T(0.7071067811865476), kBeta = T(0.3989422804014327);  // 1/sqrt(2), 1/sqrt(2*pi)
            for (int64_t i = b; i < e; ++i) {
                const T v = x[i];
                const T cdf = T(0.5) * (T(1) + ferf(v * kAlpha));
                const T pdf = kBeta * fexp(T(-0.5) * v * v);
                gx[i] = gy[i] * (cdf + v * pdf);
            }
        }
    });
}

template <class T>
void silu_fwd(const T* x, T* y, int64_t n) {
    parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = x[i] / (T(1) + fexp(-x[i]));
    });
}
template <class T>
void silu_bwd(const T* gy, const T* x, T* gx, int64_t n) {
    parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            const T s = T(1) / (T(1) + fexp(-x[i]));
            gx[i] = gy[i] * s * (T(1) + x[i] * (T(1) - s));
        }
    });
}

void silu_fwd_f32(const float* x, float* y, int64_t n) {
    parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
        int64_t i = b;
        for (; i + WF <= e; i += WF) {
            vf v = vload<vf>(x + i);
            vstore(y + i, vsilu(v));
        }
        for (; i < e; ++i) y[i] = x[i] / (1.0f + expf(-x[i]));
    });
}
void silu_bwd_f32(const float* gy, const float* x, float* gx, int64_t n) {
    parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
        int64_t i = b;
        for (; i + WF <= e; i += WF) {
            vf v = vload<vf>(x + i);
            vf s = vsigmoid(v);
            vstore(gx + i, vload<vf>(gy + i) * s * (1.0f + v * (1.0f - s)));
        }
        for (; i < e; ++i) {
            const float s = 1.0f / (1.0f + expf(-x[i]));
            gx[i] = gy[i] * s * (1.0f + x[i] * (1.0f - s));
        }
    });
}

template <class T>
void relu_bwd(const T* gy, const T* y, T* gx, int64_t n) {
    typedef vec_t<T> V;
    constexpr int W = vec_width<T>();
    parallel_for(0, n, 32768, [&](int64_t b, int64_t e) {
        const V zero = V{} + T(0);
        int64_t i = b;
        for (; i + W <= e; i += W) vstore(gx + i, vload<V>(y + i) <= zero ? zero : vload<V>(gy + i));
        for (; i < e; ++i) gx[i] = y[i] <= T(0) ? T(0) : gy[i];
    });
}

// Comparisons are written so that NaN falls through to the input (torch propagates NaN in relu/clamp).
template <class V, class S>
static inline V pw_apply(int kind, V v, S lo, S hi) {
    const V zero = V{} + S(0), one = V{} + S(1), three = V{} + S(3), six = V{} + S(6);
    switch (kind) {
        case kPwRelu: return v < zero ? zero : v;
        case kPwClamp: { V l = V{} + lo, h = V{} + hi; V r = v < l ? l : v; return r > h ? h : r; }
        case kPwHardswish: { V t = v + three; t = t < zero ? zero : t; t = t > six ? six : t; return v * t / six; }
        case kPwHardsigmoid: { V t = v + three; t = t < zero ? zero : t; t = t > six ? six : t; return t / six; }
        case kPwLeakyRelu: return v > zero ? v : v * lo;
        default: return v;
    }
}
template <class T>
static inline T pw_scalar(int kind, T v, T lo, T hi) {
    if (kind == kPwSigmoid) return v >= T(0) ? T(1) / (T(1) + fexp(-v)) : fexp(v) / (T(1) + fexp(v));
    T t;
    switch (kind) {
        case kPwRelu: return v < T(0) ? T(0) : v;
        case kPwClamp: t = v < lo ? lo : v; return t > hi ? hi : t;
        case kPwHardswish: t = v + T(3); t = t < T(0) ? T(0) : (t > T(6) ? T(6) : t); return v * t / T(6);
        case kPwHardsigmoid: t = v + T(3); t = t < T(0) ? T(0) : (t > T(6) ? T(6) : t); return t / T(6);
        case kPwLeakyRelu: return v > T(0) ? v : v * lo;
        default: return v;
    }
}
void pointwise_f32(int kind, const float* x, float* y, int64_t n, float lo, float hi) {
    parallel_for(0, n, 32768, [&](int64_t b, int64_t e) {
        int64_t i = b;
        if (kind == kPwSigmoid) {
            for (; i + WF <= e; i += WF) {
                vf v = vload<vf>(x + i);
                // exp of -|v| only (no overflow): sigmoid(v) = 1/(1+e) for v >= 0, e/(1+e) otherwise
                vf a = v < vsplat(0.0f) ? v : -v;
                vf ex = vexp(a);
                vf r = v < vsplat(0.0f) ? ex / (1.0f + ex) : 1.0f / (1.0f + ex);
                vstore(y + i, v != v ? v : r);
            }
        } else {
            for (; i + WF <= e; i += WF) vstore(y + i, pw_apply<vf, float>(kind, vload<vf>(x + i), lo, hi));
        }
        for (; i < e; ++i) y[i] = pw_scalar<float>(kind, x[i], lo, hi);
    });
}
void pointwise_f64(int kind, const double* x, double* y, int64_t n, double lo, double hi) {
    parallel_for(0, n, 32768, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = pw_scalar<double>(kind, x[i], lo, hi);
    });
}

}  // namespace

template <>
void act_inplace<float>(int act, float* p, int64_t n) {
    if (act == kEpGelu || act == kEpGeluTanh) gelu_fwd_f32(p, p, n, act == kEpGeluTanh);
    else if (act == kEpSilu) silu_fwd_f32(p, p, n);
}
template <>
void act_inplace<double>(int act, double* p, int64_t n) {
    if (act == kEpGelu || act == kEpGeluTanh) gelu_fwd<double>(p, p, n, act == kEpGeluTanh);
    else if (act == kEpSilu) silu_fwd<double>(p, p, n);
}

namespace {

// y = epilogue(y) for any Epilogue kind: the fused kernels' own math (epilogue_apply, act_inplace), for a
// convolution whose kernel has no epilogue of its own (the NCHW conv path)
template <class T>
void epilogue_inplace(int act, T* y, int64_t n, T lo, T hi) {
    if (act == kEpNone) return;
    if (epilogue_after_store(act)) {
        act_inplace<T>(act, y, n);
        return;
    }
    if (act == kEpRelu) { lo = T(0); hi = T(INFINITY); }
    if (act == kEpRelu6) { lo = T(0); hi = T(6); }
    typedef vec_t<T> V;
    constexpr int W = vec_width<T>();
    parallel_for(0, n, 32768, [&](int64_t b, int64_t e) {
        int64_t i = b;
        for (; i + W <= e; i += W) vstore(y + i, epilogue_apply<V, T>(act, vload<V>(y + i), lo, hi));
        for (; i < e; ++i) y[i] = epilogue_apply<T, T>(act, y[i], lo, hi);
    });
}

}  // namespace

FV_REGISTRATION void fill_activation(KernelTable& t) {
    FV_FILL_F32_F64(t, epilogue, epilogue_inplace);
    t.f32.gelu_forward = &gelu_fwd_f32;
    t.f64.gelu_forward = &gelu_fwd<double>;
    t.f32.gelu_backward = &gelu_bwd_f32;
    t.f64.gelu_backward = &gelu_bwd<double>;
    t.f32.silu_forward = &silu_fwd_f32;
    t.f64.silu_forward = &silu_fwd<double>;
    t.f32.silu_backward = &silu_bwd_f32;
    t.f64.silu_backward = &silu_bwd<double>;
    FV_FILL_F32_F64(t, relu_backward, relu_bwd);
    t.f32.pointwise = &pointwise_f32;
    t.f64.pointwise = &pointwise_f64;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
