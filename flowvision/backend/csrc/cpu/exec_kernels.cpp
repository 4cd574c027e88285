// Memory-bound kernels of the captured-plan executor (compiled once per ISA): strided copy (contiguous copies of
// views, cat, roll) and strided broadcast add / mul. The plan's glue ran single-threaded in numpy before.
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

namespace {

// The rows of an ndim-D index space (all dims but the last), split over the pool; `row(offsets...)` per row.
// Rows are walked with an odometer so each chunk computes its start index once.
template <int NOps, class F>
void for_rows(const int64_t* shape, int ndim, const int64_t* const* strides, const F& row) {
    const int64_t inner = shape[ndim - 1];
    int64_t rows = 1;
    for (int d = 0; d < ndim - 1; ++d) rows *= shape[d];
    const int64_t grain = mx<int64_t>(1, 16384 / mx<int64_t>(inner, 1));
    parallel_for(0, rows, grain, [&](int64_t lo, int64_t hi) {
        int64_t idx[kExecMaxDims] = {0};
        int64_t off[NOps] = {0};
        int64_t r = lo;
        for (int d = ndim - 2; d >= 0; --d) {
            idx[d] = r % shape[d];
            r /= shape[d];
            for (int k = 0; k < NOps; ++k) off[k] += idx[d] * strides[k][d];
        }
        for (int64_t i = lo; i < hi; ++i) {
            row(off);
            for (int d = ndim - 2; d >= 0; --d) {  // next row
                for (int k = 0; k < NOps; ++k) off[k] += strides[k][d];
                if (++idx[d] < shape[d]) break;
                for (int k = 0; k < NOps; ++k) off[k] -= idx[d] * strides[k][d];
                idx[d] = 0;
            }
        }
    });
}

void copy_nd(const float* x, const int64_t* xs, float* y, const int64_t* ys, const int64_t* shape, int ndim) {
    const int64_t n = shape[ndim - 1], sx = xs[ndim - 1], sy = ys[ndim - 1];
    const int64_t* strides[2] = {xs, ys};
    for_rows<2>(shape, ndim, strides, [&](const int64_t* off) {
        const float* a = x + off[0];
        float* b = y + off[1];
        if (sx == 1 && sy == 1) {
            memcpy(b, a, sizeof(float) * n);
        } else {
            for (int64_t j = 0; j < n; ++j) b[j * sy] = a[j * sx];
        }
    });
}

template <int Op>
inline float apply(float a, float b) { return Op == 0 ? a + b : a * b; }

template <int Op>
void binary_rows(const float* a, const int64_t* as, const float* b, const int64_t* bs, float* y, const int64_t* shape,
                 int ndim) {
    using V = vec_t<float>;
    constexpr int W = vec_width<float>();
    const int64_t n = shape[ndim - 1], sa = as[ndim - 1], sb = bs[ndim - 1];
    int64_t ys[kExecMaxDims];
    int64_t st = 1;
    for (int d = ndim - 1; d >= 0; --d) {
        ys[d] = st;
        st *= shape[d];
    }
    const int64_t* strides[3] = {as, bs, ys};
    for_rows<3>(shape, ndim, strides, [&](const int64_t* off) {
        const float* pa = a + off[0];
        const float* pb = b + off[1];
        float* py = y + off[2];
        int64_t j = 0;
        if (sa == 1 && sb == 1) {
            for (; j + W <= n; j += W) {
                const V va = vload<V>(pa + j), vb = vload<V>(pb + j);
                vstore(py + j, Op == 0 ? va + vb : va * vb);
            }
            for (; j < n; ++j) py[j] = apply<Op>(pa[j], pb[j]);
        } else if (sa == 1 && sb == 0) {
            const V vb = V{} + pb[0];
            for (; j + W <= n; j += W) {
                const V va = vload<V>(pa + j);
                vstore(py + j, Op == 0 ? va + vb : va * vb);
            }
            for (; j < n; ++j) py[j] = apply<Op>(pa[j], pb[0]);
        } else if (sa == 0 && sb == 1) {
            const V va = V{} + pa[0];
            for (; j + W <= n; j += W) {
                const V vb = vload<V>(pb + j);
                vstore(py + j, Op == 0 ? va + vb : va * vb);
            }
            for (; j < n; ++j) py[j] = apply<Op>(pa[0], pb[j]);
        } else {
            for (; j < n; ++j) py[j] = apply<Op>(pa[j * sa], pb[j * sb]);
        }
    });
}

void binary_nd(int op, const float* a, const int64_t* as, const float* b, const int64_t* bs, float* y,
               const int64_t* shape, int ndim) {
    if (op == kBinAdd)
        binary_rows<0>(a, as, b, bs, y, shape, ndim);
    else
        binary_rows<1>(a, as, b, bs, y, shape, ndim);
}

}  // namespace

FV_REGISTRATION void fill_exec(KernelTable& t) {
    t.exec.copy = copy_nd;
    t.exec.binary = binary_nd;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
