// Helpers for the per-ISA kernel translation units.
//
// ODR hazard: these TUs are compiled with different -m flags and linked into one .so.
// Any inline/template function with external linkage that is emitted out of line in
// two of them is merged by the linker, and it may keep the AVX-512 copy, which would
// crash on older CPUs. So: everything lives in namespace fv::FV_ISA_NAMESPACE, we use
// no std:: containers/algorithms here (only C math functions and <cstring>), and
// generic templates are instantiated only with TU-local lambda types.
#pragma once
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE__)
#include <immintrin.h>
#endif

#include "core/threadpool.h"
#include "cpu/kernels.h"

#ifndef FV_ISA_NAMESPACE
#error "FV_ISA_NAMESPACE must be defined (avx512, avx2 or portable)"
#endif

namespace fv {
namespace FV_ISA_NAMESPACE {

#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX2__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif

template <class T> struct VecT;
template <> struct VecT<float> { typedef float type __attribute__((vector_size(kVecBytes))); typedef int32_t itype __attribute__((vector_size(kVecBytes))); };
template <> struct VecT<double> { typedef double type __attribute__((vector_size(kVecBytes))); typedef int64_t itype __attribute__((vector_size(kVecBytes))); };

template <class T> using vec_t = typename VecT<T>::type;
template <class T> constexpr int vec_width() { return kVecBytes / (int)sizeof(T); }

template <class V, class T> static inline V vload(const T* p) { V v; memcpy(&v, p, sizeof(V)); return v; }
template <class V, class T> static inline void vstore(T* p, V v) { memcpy(p, &v, sizeof(V)); }

static inline vec_t<float> vsplat(float a) { return vec_t<float>{} + a; }

// Lane-wise min(a, x) / max(a, x) that return x where x is NaN, as `x > a ? a : x` does, in one instruction
// (the ternary compiles to a compare and a blend)
static inline vec_t<float> vmin_keep_nan(vec_t<float> a, vec_t<float> x) {
#if defined(__AVX512F__)
    return (vec_t<float>)_mm512_min_ps((__m512)a, (__m512)x);
#elif defined(__AVX__)
    return (vec_t<float>)_mm256_min_ps((__m256)a, (__m256)x);
#elif defined(__SSE__)
    return (vec_t<float>)_mm_min_ps((__m128)a, (__m128)x);
#else
    return x > a ? a : x;
#endif
}
static inline vec_t<float> vmax_keep_nan(vec_t<float> a, vec_t<float> x) {
#if defined(__AVX512F__)
    return (vec_t<float>)_mm512_max_ps((__m512)a, (__m512)x);
#elif defined(__AVX__)
    return (vec_t<float>)_mm256_max_ps((__m256)a, (__m256)x);
#elif defined(__SSE__)
    return (vec_t<float>)_mm_max_ps((__m128)a, (__m128)x);
#else
    return x < a ? a : x;
#endif
}

// exp over a float vector: Cephes-style polynomial (~1 ulp), inputs clamped to [-87.34, 88]; with UNDERFLOW_TO_ZERO,
// 0 below -87.34. `1 + exp(z)` (SiLU, sigmoid, tanh) is the same without that select, which saves a compare and a
// blend: exp(-87.34) ~ 1.2e-38 vanishes next to 1 exactly as 0 does.
template <bool UNDERFLOW_TO_ZERO = true>
static inline vec_t<float> vexp(vec_t<float> x) {
    const vec_t<float> hi = vsplat(88.0f), lo = vsplat(-87.3365447504f);
    const vec_t<float> xc = vmax_keep_nan(lo, vmin_keep_nan(hi, x));
    const vec_t<float> magic = vsplat(12582912.0f);  // 1.5 * 2^23: round to nearest
    vec_t<float> t = xc * 1.44269504088896341f + magic;
    VecT<float>::itype ni;
    memcpy(&ni, &t, sizeof(ni));
    const vec_t<float> n = t - magic;
    ni = ni - 0x4B400000;  // bit pattern of magic
    vec_t<float> r = xc - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    vec_t<float> p = vsplat(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    VecT<float>::itype bits = (ni + 127) << 23;
    vec_t<float> pow2;
    memcpy(&pow2, &bits, sizeof(pow2));
    const vec_t<float> res = p * pow2;
    if (UNDERFLOW_TO_ZERO) return x < lo ? vsplat(0.0f) : res;
    return res;
}

// SiLU x / (1 + exp(-x)) and the logistic sigmoid on a float vector: the one definition every kernel uses (the
// standalone activation, the GEMM's and the convolutions' epilogues)
static inline vec_t<float> vsilu(vec_t<float> v) { return v / (1.0f + vexp<false>(-v)); }
static inline vec_t<float> vsigmoid(vec_t<float> v) { return 1.0f / (1.0f + vexp<false>(-v)); }

template <class T> static inline T mn(T a, T b) { return b < a ? b : a; }
template <class T> static inline T mx(T a, T b) { return a < b ? b : a; }
static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static inline float fsqrt(float x) { return sqrtf(x); }
static inline double fsqrt(double x) { return sqrt(x); }
// erf(x) = 1 - poly(t) exp(-x^2), t = 1/(1 + p|x|) (Abramowitz-Stegun 7.1.26, |err| < 1.5e-7; the approximation
// torch's vectorised CPU erf uses), tanh through vexp, and GELU on a float vector: the standalone GELU kernel
// (cpu/activation.cpp) and the GEMM's fused epilogue (cpu/gemm.cpp) both use these.
static inline vec_t<float> verf(vec_t<float> x) {
    const vec_t<float> ax = x < vsplat(0.0f) ? -x : x;
    const vec_t<float> t = 1.0f / (1.0f + 0.3275911f * ax);
    vec_t<float> p = vsplat(1.061405429f);
    p = p * t - 1.453152027f;
    p = p * t + 1.421413741f;
    p = p * t - 0.284496736f;
    p = p * t + 0.254829592f;
    p = p * t;
    const vec_t<float> r = 1.0f - p * vexp(-ax * ax);
    return x < vsplat(0.0f) ? -r : r;
}
static inline vec_t<float> vtanh(vec_t<float> u) { return 1.0f - 2.0f / (vexp<false>(2.0f * u) + 1.0f); }
static inline vec_t<float> vgelu(vec_t<float> v, bool tanh_approx) {
    if (tanh_approx) return 0.5f * v * (1.0f + vtanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    return 0.5f * v * (1.0f + verf(v * 0.7071067811865476f));
}

static inline float fexp(float x) { return expf(x); }
static inline double fexp(double x) { return exp(x); }
static inline float flog(float x) { return logf(x); }
static inline double flog(double x) { return log(x); }

// Vectorised reductions (plain loops would not vectorise without -ffast-math).
template <class T>
static inline T hsum(vec_t<T> v) {
    T s = T(0);
    for (int j = 0; j < vec_width<T>(); ++j) s += v[j];
    return s;
}
template <class T>
static inline T vsum(const T* p, int64_t n) {
    typedef vec_t<T> V;
    constexpr int W = vec_width<T>();
    V a0 = V{}, a1 = V{};
    int64_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
        a0 += vload<V>(p + i);
        a1 += vload<V>(p + i + W);
    }
    for (; i + W <= n; i += W) a0 += vload<V>(p + i);
    T s = hsum<T>(a0 + a1);
    for (; i < n; ++i) s += p[i];
    return s;
}
template <class T>
static inline T vdot(const T* p, const T* q, int64_t n) {
    typedef vec_t<T> V;
    constexpr int W = vec_width<T>();
    V a0 = V{}, a1 = V{};
    int64_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
        a0 += vload<V>(p + i) * vload<V>(q + i);
        a1 += vload<V>(p + i + W) * vload<V>(q + i + W);
    }
    for (; i + W <= n; i += W) a0 += vload<V>(p + i) * vload<V>(q + i);
    T s = hsum<T>(a0 + a1);
    for (; i < n; ++i) s += p[i] * q[i];
    return s;
}
// sum((p - c)^2)
template <class T>
static inline T vsumsq_c(const T* p, int64_t n, T c) {
    typedef vec_t<T> V;
    constexpr int W = vec_width<T>();
    V a0 = V{}, a1 = V{};
    int64_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
        V d0 = vload<V>(p + i) - c, d1 = vload<V>(p + i + W) - c;
        a0 += d0 * d0;
        a1 += d1 * d1;
    }
    for (; i + W <= n; i += W) {
        V d = vload<V>(p + i) - c;
        a0 += d * d;
    }
    T s = hsum<T>(a0 + a1);
    for (; i < n; ++i) s += (p[i] - c) * (p[i] - c);
    return s;
}
// sum(q * (p - c))
template <class T>
static inline T vdot_c(const T* p, const T* q, int64_t n, T c) {
    typedef vec_t<T> V;
    constexpr int W = vec_width<T>();
    V a0 = V{}, a1 = V{};
    int64_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
        a0 += (vload<V>(p + i) - c) * vload<V>(q + i);
        a1 += (vload<V>(p + i + W) - c) * vload<V>(q + i + W);
    }
    for (; i + W <= n; i += W) a0 += (vload<V>(p + i) - c) * vload<V>(q + i);
    T s = hsum<T>(a0 + a1);
    for (; i < n; ++i) s += (p[i] - c) * q[i];
    return s;
}

// 64-byte aligned scratch buffer (RAII, no std::).
template <class T>
struct Buf {
    T* p = nullptr;
    explicit Buf(int64_t n, bool zero = false) {
        size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(T) + 63) & ~(size_t)63;
        p = static_cast<T*>(fv::scratch_alloc(bytes));
        if (!p) fv::throw_bad_alloc();
        if (zero) memset(p, 0, bytes);
    }
    ~Buf() { fv::scratch_free(p); }
    Buf(const Buf&) = delete;
    Buf& operator=(const Buf&) = delete;
    T* get() const { return p; }
};

// Grain (iterations per chunk) so that each chunk does at least ~`min_work` units of
// work when one iteration costs `work_per_iter`.
static inline int64_t grain_for(int64_t work_per_iter, int64_t min_work = 32768) {
    if (work_per_iter <= 0) work_per_iter = 1;
    int64_t g = min_work / work_per_iter;
    return g < 1 ? 1 : g;
}

// ---- per-TU kernel entry points (defined in the .cpp files, gathered by table.cpp) ----
// Fills table slot `name` of both dtype halves with the float / double instantiations of kernel template `fn`.
#define FV_FILL_F32_F64(t, name, fn) ((t).f32.name = &fn<float>, (t).f64.name = &fn<double>)
FV_REGISTRATION void fill_gemm(KernelTable& t);
FV_REGISTRATION void fill_conv(KernelTable& t);
FV_REGISTRATION void fill_pool(KernelTable& t);
FV_REGISTRATION void fill_norm(KernelTable& t);
FV_REGISTRATION void fill_softmax(KernelTable& t);
FV_REGISTRATION void fill_activation(KernelTable& t);
FV_REGISTRATION void fill_elementwise(KernelTable& t);
FV_REGISTRATION void fill_interp(KernelTable& t);

// internal GEMM used by conv: C(M,N; row stride ldc) (+)= A(M,K) B(K,N) with
// A(i,k) = A[i*rsa + k*csa], B(k,j) = B[k*rsb + j*csb]. Parallel unless nested.
template <class T>
void gemm_strided(int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa,
                  const T* B, int64_t rsb, int64_t csb, T* C, int64_t ldc, bool accumulate);

// C(M, N) = epilogue(A(M, K) @ B) with B packed by pack_b (cpu/gemm.cpp's gemm_packed, float32, no residual);
// serial when called inside a parallel region.
void gemm_packed_f32(const float* A, int64_t M, int64_t K, int64_t N, const float* Bp, float* C, const float* bias,
                     int act, float lo, float hi);

// In-place GELU (erf / tanh) or SiLU over n contiguous elements, the same math as gelu_forward /
// silu_forward (defined in activation.cpp; serial when called inside a parallel region): the after-store
// epilogues. The register epilogues are epilogue_apply (cpu/epilogue.h).
template <class T>
void act_inplace(int act, T* p, int64_t n);

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
