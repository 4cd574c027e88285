// Reductions over the middle axis of an (outer, r, inner) array. inner == 1: one block per output
// (block-wide tree reduction, coalesced reads along r); inner > 1: one thread per (outer, inner)
// output walking r (coalesced across neighbouring threads).
#include <float.h>
#include <math.h>

#include <type_traits>

#include "common.cuh"

namespace fvcuda {
namespace {

template <typename T> struct RAcc { using type = float; };
template <> struct RAcc<int64_t> { using type = int64_t; };

template <typename T> FV_HD typename RAcc<T>::type rload(const T* p, int64_t i) {
    if constexpr (std::is_same<T, int64_t>::value) return p[i];
    else return to_f(p[i]);
}
template <typename T, typename A> FV_HD T rstore(A v) {
    if constexpr (std::is_same<T, int64_t>::value) return v;
    else return from_f<T>(static_cast<float>(v));
}

template <typename A> FV_HD A identity(int op) {
    if (op == R_MAX || op == R_ARGMAX) return std::is_same<A, float>::value ? (A)-INFINITY : (A)INT64_MIN;
    if (op == R_MIN || op == R_ARGMIN) return std::is_same<A, float>::value ? (A)INFINITY : (A)INT64_MAX;
    if (op == R_PROD) return (A)1;
    return (A)0;
}

// (value, index) pair combine; NaN wins like torch's max/argmax, ties keep the first index.
template <typename A> FV_HD void combine(int op, A& v, int64_t& i, A ov, int64_t oi) {
    switch (op) {
        case R_SUM: case R_MEAN: case R_SUMSQ: v += ov; break;
        case R_PROD: v *= ov; break;
        default: {
            bool want_max = op == R_MAX || op == R_ARGMAX;
            bool v_nan = v != v, o_nan = ov != ov;
            bool take;
            if (v_nan || o_nan) take = o_nan && (!v_nan || oi < i);
            else if (ov == v) take = oi < i;
            else take = want_max ? ov > v : ov < v;
            if (take) { v = ov; i = oi; }
        }
    }
}

template <typename T>
__global__ void reduce_rows_kernel(int op, const T* x, T* y, int64_t* idx, int64_t r) {
    using A = typename RAcc<T>::type;
    __shared__ A sv[kThreads];
    __shared__ int64_t si[kThreads];
    const T* row = x + blockIdx.x * r;
    A v = identity<A>(op);
    int64_t vi = INT64_MAX;
    for (int64_t j = threadIdx.x; j < r; j += blockDim.x) {
        A e = rload(row, j);
        if (op == R_SUMSQ) e = e * e;
        combine(op, v, vi, e, j);
    }
    sv[threadIdx.x] = v;
    si[threadIdx.x] = vi;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) {
            A a = sv[threadIdx.x];
            int64_t ai = si[threadIdx.x];
            combine(op, a, ai, sv[threadIdx.x + w], si[threadIdx.x + w]);
            sv[threadIdx.x] = a;
            si[threadIdx.x] = ai;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        A out = sv[0];
        if (op == R_MEAN) out = out / static_cast<A>(r);
        if (y) y[blockIdx.x] = rstore<T>(out);
        if (idx) idx[blockIdx.x] = r ? si[0] : 0;
    }
}

template <typename T>
FV_HD void reduce_cols_kernel_at(int op, const T* x, T* y, int64_t* idx, int64_t outer, int64_t r, int64_t inner, int64_t t) {
    using A = typename RAcc<T>::type;
    int64_t o = t / inner, in = t % inner;
    const T* base = x + o * r * inner + in;
    A v = identity<A>(op);
    int64_t vi = INT64_MAX;
    for (int64_t j = 0; j < r; ++j) {
        A e = rload(base, j * inner);
        if (op == R_SUMSQ) e = e * e;
        combine(op, v, vi, e, j);
    }
    if (op == R_MEAN) v = v / static_cast<A>(r);
    if (y) y[t] = rstore<T>(v);
    if (idx) idx[t] = r ? vi : 0;
}

template <typename T>
__global__ void reduce_cols_kernel(int op, const T* x, T* y, int64_t* idx, int64_t outer, int64_t r, int64_t inner) {
    FV_GRID_LOOP(t, outer * inner) reduce_cols_kernel_at(op, x, y, idx, outer, r, inner, t);
}

}  // namespace

void reduce(int op, DType dt, const void* x, void* y, int64_t* idx, int64_t outer, int64_t r, int64_t inner,
            void* stream) {
    if (outer * inner == 0) return;
    if ((op == R_ARGMAX || op == R_ARGMIN) && !idx) fail("reduce: argmax/argmin need an index output");
    if ((op == R_ARGMAX || op == R_ARGMIN || op == R_MAX || op == R_MIN) && r == 0)
        fail("reduce: max/min of an empty dimension");
    cudaStream_t s = as_stream(stream);
    auto go = [&](auto tag) {
        using T = decltype(tag);
        if (inner == 1 && r >= 64)
            reduce_rows_kernel<T><<<static_cast<unsigned>(outer), kThreads, 0, s>>>(op, (const T*)x, (T*)y, idx, r);
        else
            reduce_cols_kernel<T><<<blocks_for(outer * inner), kThreads, 0, s>>>(op, (const T*)x, (T*)y, idx, outer,
                                                                                   r, inner);
    };
    if (inner == 1 && r >= 64 && outer > 0x7fffffff) fail("reduce: too many rows");
    switch (dt) {
        case DType::F32: go(float{}); break;
        case DType::F16: go(__half{}); break;
        case DType::BF16: go(__nv_bfloat16{}); break;
        case DType::I64:
            if (op == R_MEAN || op == R_SUMSQ) fail("reduce: mean of an integer tensor");
            go(int64_t{});
            break;
        default: fail("reduce: unsupported dtype");
    }
    check_launch("reduce");
}

}  // namespace fvcuda
