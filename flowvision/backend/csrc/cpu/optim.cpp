// Fused in-place optimizer updates (SGD with momentum / Nesterov / weight decay, Adam / AdamW with amsgrad), one
// pass over each parameter instead of numpy's several passes with temporaries. The formulas follow the numpy
// updates of flowvision/backend/optim step by step: every scalar rounded to T once, every operation rounded on its
// own (this file is compiled without FMA contraction), so the results are bit-identical to them.
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

template <class T>
void sgd_update(T* __restrict w, const T* __restrict g, T* __restrict buf, int64_t n, const SgdScalars& s) {
    const T wd = T(s.weight_decay), mom = T(s.momentum), damp1 = T(s.one_minus_dampening), lr = T(s.lr);
    const bool use_wd = s.weight_decay != 0.0;
    if (!s.use_momentum) {
        if (use_wd) {
            for (int64_t i = 0; i < n; ++i) w[i] = w[i] - lr * (g[i] + wd * w[i]);
        } else {
            for (int64_t i = 0; i < n; ++i) w[i] = w[i] - lr * g[i];
        }
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        const T d = use_wd ? g[i] + wd * w[i] : g[i];
        const T b = s.fresh ? d : buf[i] * mom + damp1 * d;
        buf[i] = b;
        const T step = s.nesterov ? d + mom * b : b;
        w[i] = w[i] - lr * step;
    }
}

template <class T>
static inline T nan_max(T a, T b) {
    if (a != a) return a;
    if (b != b) return b;
    return a < b ? b : a;
}

template <class T>
void adam_update(T* __restrict w, const T* __restrict g, T* __restrict m, T* __restrict v, T* __restrict vmax,
                 int64_t n, const AdamScalars& s) {
    const T decay = T(s.decay_factor), wd = T(s.weight_decay), lw = T(s.lerp_w), lw1 = T(s.one_minus_lerp_w);
    const T b2 = T(s.beta2), b2c = T(s.one_minus_beta2), bc2 = T(s.bias_correction2_sqrt), eps = T(s.eps);
    const T nss = T(s.neg_step_size);
    const bool low_w = s.lerp_w < 0.5;
    const bool decay_w = s.apply_wd && s.decoupled, couple = s.apply_wd && !s.decoupled;
    for (int64_t i = 0; i < n; ++i) {
        T wi = w[i];
        if (decay_w) wi = wi * decay;
        const T gi = couple ? g[i] + wd * wi : g[i];
        const T mi = low_w ? m[i] + lw * (gi - m[i]) : gi - (gi - m[i]) * lw1;
        const T vi = v[i] * b2 + b2c * (gi * gi);
        m[i] = mi;
        v[i] = vi;
        T root;
        if (s.amsgrad) {
            const T mxv = nan_max(vmax[i], vi);
            vmax[i] = mxv;
            root = fsqrt(mxv);
        } else {
            root = fsqrt(vi);
        }
        const T denom = root / bc2 + eps;
        w[i] = wi + nss * (mi / denom);
    }
}

}  // namespace

FV_REGISTRATION void fill_optim(KernelTable& t) {
    t.optim.sgd_f32 = &sgd_update<float>;
    t.optim.sgd_f64 = &sgd_update<double>;
    t.optim.adam_f32 = &adam_update<float>;
    t.optim.adam_f64 = &adam_update<double>;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
