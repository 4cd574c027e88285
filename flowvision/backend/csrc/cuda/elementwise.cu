// Elementwise kernels: broadcast binary ops, unary math and activations (forward and backward),
// casts, fills, strided copies and index gathers. The op is a run-time switch inside one kernel
// per storage type (a warp-uniform branch), which keeps the instantiation count and build time low.
#include <math.h>

#include <type_traits>

#include "common.cuh"

namespace fvcuda {
namespace {

__device__ __forceinline__ int64_t bcast_offset(const Broadcast& bc, int operand, int64_t i) {
    int64_t off = 0;
    for (int d = bc.ndim - 1; d >= 0; --d) {
        int64_t sz = bc.size[d];
        int64_t idx = i % sz;
        i /= sz;
        off += idx * bc.stride[operand][d];
    }
    return off;
}

// Arithmetic type of a storage type: float for the float types, the type itself otherwise.
template <typename T> struct Acc { using type = T; };
template <> struct Acc<__half> { using type = float; };
template <> struct Acc<__nv_bfloat16> { using type = float; };
template <> struct Acc<bool> { using type = int; };
template <> struct Acc<uint8_t> { using type = int; };
template <> struct Acc<int8_t> { using type = int; };
template <> struct Acc<int16_t> { using type = int; };

template <typename T> __device__ __forceinline__ typename Acc<T>::type load(const T* p, int64_t i) {
    return static_cast<typename Acc<T>::type>(p[i]);
}
template <> __device__ __forceinline__ float load<__half>(const __half* p, int64_t i) { return __half2float(p[i]); }
template <> __device__ __forceinline__ float load<__nv_bfloat16>(const __nv_bfloat16* p, int64_t i) {
    return __bfloat162float(p[i]);
}
template <typename T, typename V> __device__ __forceinline__ T store_as(V v) { return static_cast<T>(v); }
template <> __device__ __forceinline__ __half store_as<__half, float>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 store_as<__nv_bfloat16, float>(float v) {
    return __float2bfloat16_rn(v);
}

template <typename V> FV_HD V binop(int op, V a, V b) {
    switch (op) {
        case B_ADD: return a + b;
        case B_SUB: return a - b;
        case B_MUL: return a * b;
        case B_DIV: return a / b;
        case B_MAX: return a > b ? a : b;
        case B_MIN: return a < b ? a : b;
        default: return a;
    }
}
FV_HD float binop_float(int op, float a, float b) {
    switch (op) {
        case B_POW: return powf(a, b);
        case B_MAX: return (a != a || b != b) ? NAN : fmaxf(a, b);  // torch.maximum propagates NaN
        case B_MIN: return (a != a || b != b) ? NAN : fminf(a, b);
        case B_REM: { float r = fmodf(a, b); return (r != 0.f && ((r < 0.f) != (b < 0.f))) ? r + b : r; }
        case B_ATAN2: return atan2f(a, b);
        case B_FLOOR_DIV: return floorf(a / b);
        default: return binop<float>(op, a, b);
    }
}
template <typename V> FV_HD V binop_int(int op, V a, V b) {
    switch (op) {
        case B_AND: return a & b;
        case B_OR: return a | b;
        case B_XOR: return a ^ b;
        case B_REM: { V r = b ? a % b : 0; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
        case B_FLOOR_DIV: { if (!b) return 0; V q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }
        case B_POW: { V r = 1; for (V e = b; e > 0; --e) r *= a; return b < 0 ? 0 : r; }
        default: return binop<V>(op, a, b);
    }
}
template <typename V> FV_HD bool compare(int op, V a, V b) {
    switch (op) {
        case B_EQ: return a == b;
        case B_NE: return a != b;
        case B_LT: return a < b;
        case B_LE: return a <= b;
        case B_GT: return a > b;
        default: return a >= b;
    }
}

template <typename T>
__global__ void binary_kernel(int op, const T* a, const T* b, T* y, Broadcast bc, int64_t n, float alpha,
                              double scalar, bool swap) {
    using V = typename Acc<T>::type;
    FV_GRID_LOOP(i, n) {
        int64_t ia = bc.ndim ? bcast_offset(bc, 0, i) : i, ib = bc.ndim ? bcast_offset(bc, 1, i) : i;
        V va = load(a, ia), vb = b ? load(b, ib) : static_cast<V>(scalar);
        if (swap) { V t = va; va = vb; vb = t; }
        if ((op == B_ADD || op == B_SUB) && alpha != 1.f) vb = static_cast<V>(vb * alpha);
        V r;
        if constexpr (std::is_same<V, float>::value) r = binop_float(op, va, vb);
        else r = binop_int(op, va, vb);
        y[i] = store_as<T>(r);
    }
}

template <typename T>
__global__ void compare_kernel(int op, const T* a, const T* b, bool* y, Broadcast bc, int64_t n, double scalar,
                               bool swap) {
    using V = typename Acc<T>::type;
    FV_GRID_LOOP(i, n) {
        int64_t ia = bc.ndim ? bcast_offset(bc, 0, i) : i, ib = bc.ndim ? bcast_offset(bc, 1, i) : i;
        V va = load(a, ia), vb = b ? load(b, ib) : static_cast<V>(scalar);
        y[i] = swap ? compare(op, vb, va) : compare(op, va, vb);
    }
}


FV_HD float gelu_erf(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }
FV_HD float softplusf(float x, float beta, float thr) {
    return x * beta > thr ? x : log1pf(expf(x * beta)) / beta;
}

FV_HD float unop(int op, float x, float p0, float p1) {
    switch (op) {
        case U_NEG: return -x;
        case U_ABS: return fabsf(x);
        case U_EXP: return expf(x);
        case U_LOG: return logf(x);
        case U_LOG2: return log2f(x);
        case U_SQRT: return sqrtf(x);
        case U_RSQRT: return rsqrtf(x + p0);
        case U_SIN: return sinf(x);
        case U_COS: return cosf(x);
        case U_TANH: return tanhf(x);
        case U_SIGMOID: return 1.f / (1.f + expf(-x));
        case U_ERF: return erff(x);
        case U_FLOOR: return floorf(x);
        case U_CEIL: return ceilf(x);
        case U_ROUND: return rintf(x);  // half to even, as torch.round
        case U_TRUNC: return truncf(x);
        case U_RECIP: return 1.f / x;
        case U_SQUARE: return x * x;
        case U_LOG1P: return log1pf(x);
        case U_EXPM1: return expm1f(x);
        case U_SIGN: return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f);
        case U_RELU: return x > 0.f ? x : (x != x ? x : 0.f);
        case U_RELU6: return x != x ? x : fminf(fmaxf(x, 0.f), 6.f);
        case U_LEAKY_RELU: return x > 0.f ? x : x * p0;
        case U_ELU: return x > 0.f ? x : p0 * expm1f(x);
        case U_SELU: return 1.0507009873554805f * (x > 0.f ? x : 1.6732632423543772f * expm1f(x));
        case U_GELU: return gelu_erf(x);
        case U_GELU_TANH: {
            float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
            return 0.5f * x * (1.f + tanhf(u));
        }
        case U_SILU: return x / (1.f + expf(-x));
        case U_HARDSWISH: return x * fminf(fmaxf(x + 3.f, 0.f), 6.f) / 6.f;
        case U_HARDSIGMOID: return fminf(fmaxf(x + 3.f, 0.f), 6.f) / 6.f;
        case U_MISH: return x * tanhf(softplusf(x, 1.f, 20.f));
        case U_SOFTPLUS: return softplusf(x, p0, p1);
        case U_LOGSIGMOID: return fminf(x, 0.f) - log1pf(expf(-fabsf(x)));
        case U_CLAMP: case U_HARDTANH: return x != x ? x : fminf(fmaxf(x, p0), p1);
        case U_POW_SCALAR: return p0 == 2.f ? x * x : powf(x, p0);
        case U_ADD_SCALAR: return x + p0;
        case U_MUL_SCALAR: return x * p0;
        default: return x;
    }
}

// d op / dx given x and y = op(x).
FV_HD float unop_grad(int op, float x, float y, float p0, float p1) {
    switch (op) {
        case U_NEG: return -1.f;
        case U_ABS: return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f);
        case U_EXP: return y;
        case U_LOG: return 1.f / x;
        case U_LOG2: return 1.f / (x * 0.6931471805599453f);
        case U_SQRT: return 0.5f / y;
        case U_RSQRT: return -0.5f * y * y * y;
        case U_SIN: return cosf(x);
        case U_COS: return -sinf(x);
        case U_TANH: return 1.f - y * y;
        case U_SIGMOID: return y * (1.f - y);
        case U_ERF: return 1.1283791670955126f * expf(-x * x);
        case U_RECIP: return -y * y;
        case U_SQUARE: return 2.f * x;
        case U_LOG1P: return 1.f / (1.f + x);
        case U_EXPM1: return y + 1.f;
        case U_RELU: return x > 0.f ? 1.f : 0.f;
        case U_RELU6: return (x > 0.f && x < 6.f) ? 1.f : 0.f;
        case U_LEAKY_RELU: return x > 0.f ? 1.f : p0;
        case U_ELU: return x > 0.f ? 1.f : y + p0;
        case U_SELU: return x > 0.f ? 1.0507009873554805f : 1.0507009873554805f * 1.6732632423543772f * expf(x);
        case U_GELU: {
            float cdf = 0.5f * (1.f + erff(x * 0.70710678118654752f));
            float pdf = 0.3989422804014327f * expf(-0.5f * x * x);
            return cdf + x * pdf;
        }
        case U_GELU_TANH: {
            const float k = 0.7978845608028654f;
            float x2 = x * x, u = k * (x + 0.044715f * x2 * x), t = tanhf(u);
            return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * k * (1.f + 3.f * 0.044715f * x2);
        }
        case U_SILU: { float s = 1.f / (1.f + expf(-x)); return s * (1.f + x * (1.f - s)); }
        case U_HARDSWISH: return x < -3.f ? 0.f : (x <= 3.f ? (2.f * x + 3.f) / 6.f : 1.f);
        case U_HARDSIGMOID: return (x > -3.f && x < 3.f) ? 1.f / 6.f : 0.f;
        case U_MISH: {
            float sp = softplusf(x, 1.f, 20.f), t = tanhf(sp), s = 1.f / (1.f + expf(-x));
            return t + x * (1.f - t * t) * s;
        }
        case U_SOFTPLUS: return x * p0 > p1 ? 1.f : 1.f / (1.f + expf(-x * p0));
        case U_LOGSIGMOID: return 1.f / (1.f + expf(x));
        case U_CLAMP: return (x >= p0 && x <= p1) ? 1.f : 0.f;  // torch.clamp: inclusive
        case U_HARDTANH: return (x > p0 && x < p1) ? 1.f : 0.f;  // hardtanh/relu6: exclusive
        case U_POW_SCALAR: return p0 == 0.f ? 0.f : p0 * powf(x, p0 - 1.f);
        case U_ADD_SCALAR: return 1.f;
        case U_MUL_SCALAR: return p0;
        default: return 0.f;  // floor/ceil/round/sign/trunc: zero gradient
    }
}

template <typename T>
__global__ void unary_kernel(int op, const T* x, T* y, int64_t n, float p0, float p1) {
    FV_GRID_LOOP(i, n) y[i] = from_f<T>(unop(op, to_f(x[i]), p0, p1));
}

template <typename T>
__global__ void unary_bwd_kernel(int op, const T* g, const T* x, const T* y, T* dx, int64_t n, float p0, float p1) {
    FV_GRID_LOOP(i, n) {
        float xv = x ? to_f(x[i]) : 0.f, yv = y ? to_f(y[i]) : 0.f;
        dx[i] = from_f<T>(to_f(g[i]) * unop_grad(op, xv, yv, p0, p1));
    }
}

__device__ __forceinline__ double load_any(DType d, const void* p, int64_t i) {
    switch (d) {
        case DType::F32: return static_cast<const float*>(p)[i];
        case DType::F16: return __half2float(static_cast<const __half*>(p)[i]);
        case DType::BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
        case DType::I64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
        case DType::I32: return static_cast<const int32_t*>(p)[i];
        case DType::I16: return static_cast<const int16_t*>(p)[i];
        case DType::U8: return static_cast<const uint8_t*>(p)[i];
        case DType::I8: return static_cast<const int8_t*>(p)[i];
        default: return static_cast<const bool*>(p)[i] ? 1.0 : 0.0;
    }
}
__device__ __forceinline__ void store_any(DType d, void* p, int64_t i, double v) {
    switch (d) {
        case DType::F32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
        case DType::F16: static_cast<__half*>(p)[i] = __double2half(v); break;
        case DType::BF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v)); break;
        case DType::I64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
        case DType::I32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
        case DType::I16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); break;
        case DType::U8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(static_cast<int64_t>(v)); break;
        case DType::I8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(static_cast<int64_t>(v)); break;
        default: static_cast<bool*>(p)[i] = v != 0.0; break;
    }
}

__global__ void cast_kernel(DType from, DType to, const void* x, void* y, int64_t n) {
    FV_GRID_LOOP(i, n) {
        if (from == DType::I64 && to == DType::I64) static_cast<int64_t*>(y)[i] = static_cast<const int64_t*>(x)[i];
        else store_any(to, y, i, load_any(from, x, i));
    }
}

__global__ void fill_kernel(DType dt, void* y, int64_t n, double v) {
    FV_GRID_LOOP(i, n) store_any(dt, y, i, v);
}

// Copies of 1/2/4/8-byte elements, moved as unsigned integers of that width.
template <typename U> __global__ void strided_copy_kernel(const U* x, U* y, Broadcast bc, int64_t n) {
    FV_GRID_LOOP(i, n) y[i] = x[bcast_offset(bc, 0, i)];
}
template <typename U> __global__ void strided_write_kernel(const U* x, U* y, Broadcast bc, int64_t n) {
    FV_GRID_LOOP(i, n) y[bcast_offset(bc, 0, i)] = x[i];
}
template <typename U>
__global__ void where_kernel(const bool* c, const U* a, const U* b, U* y, Broadcast bc, int64_t n) {
    FV_GRID_LOOP(i, n) {
        y[i] = c[bcast_offset(bc, 0, i)] ? a[bcast_offset(bc, 1, i)] : b[bcast_offset(bc, 2, i)];
    }
}
template <typename U>
__global__ void index_select_kernel(const U* x, const int64_t* idx, U* y, int64_t dim_in, int64_t dim_out,
                                    int64_t inner, int64_t n) {
    FV_GRID_LOOP(i, n) {
        int64_t in = i % inner, j = (i / inner) % dim_out, o = i / (inner * dim_out);
        int64_t src = idx[j];
        if (src < 0) src += dim_in;
        y[i] = x[(o * dim_in + src) * inner + in];
    }
}
__global__ void index_add_kernel(const float* g, const int64_t* idx, float* dx, int64_t dim_in, int64_t dim_out,
                                 int64_t inner, int64_t n) {
    FV_GRID_LOOP(i, n) {
        int64_t in = i % inner, j = (i / inner) % dim_out, o = i / (inner * dim_out);
        int64_t dst = idx[j];
        if (dst < 0) dst += dim_in;
        atomicAdd(dx + (o * dim_in + dst) * inner + in, g[i]);
    }
}

template <typename Launch> void by_width(int itemsize, Launch f) {
    switch (itemsize) {
        case 1: f(uint8_t{}); break;
        case 2: f(uint16_t{}); break;
        case 4: f(uint32_t{}); break;
        case 8: f(uint64_t{}); break;
        default: fail("unsupported element size " + std::to_string(itemsize));
    }
}

}  // namespace

void binary(int op, DType in, DType out, const void* a, const void* b, void* y, const Broadcast& bc, int64_t n,
            double alpha, double scalar, bool swap, void* stream) {
    if (n == 0) return;
    if (op < 0 || op >= B_COUNT) fail("binary: bad op " + std::to_string(op));
    cudaStream_t s = as_stream(stream);
    unsigned g = blocks_for(n);
    bool cmp = op >= B_EQ && op <= B_GE;
    // comparisons write bool; every other op writes its input dtype (bool too: the logical ops on masks)
    if (cmp ? out != DType::BOOL : out != in) fail("binary: comparisons write bool, other ops their input dtype");
    auto go = [&](auto tag) {
        using T = decltype(tag);
        if (cmp) compare_kernel<T><<<g, kThreads, 0, s>>>(op, (const T*)a, (const T*)b, (bool*)y, bc, n, scalar, swap);
        else binary_kernel<T><<<g, kThreads, 0, s>>>(op, (const T*)a, (const T*)b, (T*)y, bc, n, (float)alpha,
                                                    scalar, swap);
    };
    switch (in) {
        case DType::F32: go(float{}); break;
        case DType::F16: go(__half{}); break;
        case DType::BF16: go(__nv_bfloat16{}); break;
        case DType::I64: go(int64_t{}); break;
        case DType::I32: go(int32_t{}); break;
        case DType::U8: go(uint8_t{}); break;
        case DType::BOOL: go(bool{}); break;
        default: fail("binary: unsupported dtype");
    }
    check_launch("binary");
}

void unary(int op, DType dt, const void* x, void* y, int64_t n, float p0, float p1, void* stream) {
    if (n == 0) return;
    if (op < 0 || op >= U_COUNT) fail("unary: bad op " + std::to_string(op));
    FV_DISPATCH_FLOAT(dt, T, unary_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
                                 op, (const T*)x, (T*)y, n, p0, p1));
    check_launch("unary");
}

void unary_backward(int op, DType dt, const void* g, const void* x, const void* y, void* dx, int64_t n, float p0,
                    float p1, void* stream) {
    if (n == 0) return;
    if (op < 0 || op >= U_COUNT) fail("unary_backward: bad op " + std::to_string(op));
    FV_DISPATCH_FLOAT(dt, T, unary_bwd_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
                                 op, (const T*)g, (const T*)x, (const T*)y, (T*)dx, n, p0, p1));
    check_launch("unary_backward");
}

void cast(DType from, DType to, const void* x, void* y, int64_t n, void* stream) {
    if (n == 0) return;
    cast_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(from, to, x, y, n);
    check_launch("cast");
}

void fill(DType dt, void* y, int64_t n, double value, void* stream) {
    if (n == 0) return;
    fill_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(dt, y, n, value);
    check_launch("fill");
}

void strided_copy(int itemsize, const void* x, void* y, const Broadcast& bc, int64_t n, void* stream) {
    if (n == 0) return;
    by_width(itemsize, [&](auto tag) {
        using U = decltype(tag);
        strided_copy_kernel<U><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>((const U*)x, (U*)y, bc, n);
    });
    check_launch("strided_copy");
}

void strided_write(int itemsize, const void* x, void* y, const Broadcast& bc, int64_t n, void* stream) {
    if (n == 0) return;
    by_width(itemsize, [&](auto tag) {
        using U = decltype(tag);
        strided_write_kernel<U><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>((const U*)x, (U*)y, bc, n);
    });
    check_launch("strided_write");
}

void where(int itemsize, const void* cond, const void* a, const void* b, void* y, const Broadcast& bc, int64_t n,
           void* stream) {
    if (n == 0) return;
    by_width(itemsize, [&](auto tag) {
        using U = decltype(tag);
        where_kernel<U><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>((const bool*)cond, (const U*)a,
                                                                            (const U*)b, (U*)y, bc, n);
    });
    check_launch("where");
}

void index_select(int itemsize, const void* x, const int64_t* idx, void* y, int64_t outer, int64_t dim_in,
                  int64_t dim_out, int64_t inner, void* stream) {
    int64_t n = outer * dim_out * inner;
    if (n == 0) return;
    by_width(itemsize, [&](auto tag) {
        using U = decltype(tag);
        index_select_kernel<U><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>((const U*)x, idx, (U*)y, dim_in,
                                                                                   dim_out, inner, n);
    });
    check_launch("index_select");
}

void index_add_f32(const float* g, const int64_t* idx, float* dx, int64_t outer, int64_t dim_in, int64_t dim_out,
                   int64_t inner, void* stream) {
    int64_t n = outer * dim_out * inner;
    if (n == 0) return;
    index_add_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(g, idx, dx, dim_in, dim_out, inner, n);
    check_launch("index_add");
}

}  // namespace fvcuda
