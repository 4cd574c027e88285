// Broadcast binary kernels (add, mul) over rows: a (R, L) with b (R, L), (R, 1) or (1, L); the backward of a
// per-channel scale (and its plain sum, a bias gradient).
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

template <class T>
void binary_op(int op, const T* a, const T* b, T* y, int64_t R, int64_t L, int b_mode) {
    using V = vec_t<T>;
    constexpr int W = vec_width<T>();
    const int64_t n = R * L;
    parallel_for(0, n, 32768, [&](int64_t lo, int64_t hi) {
        int64_t i = lo;
        while (i < hi) {  // one row segment at a time, so a per-row or repeated-row b is a vector or a splat
            const int64_t r = i / L, c0 = i - r * L, end = mn(hi, (r + 1) * L);
            const T* bp = b_mode == 0 ? b + i : (b_mode == 2 ? b + c0 : nullptr);
            const V bs = V{} + (b_mode == 1 ? b[r] : T(0));
            int64_t j = i;
            for (; j + W <= end; j += W) {
                const V va = vload<V>(a + j);
                const V vb = bp ? vload<V>(bp + (j - i)) : bs;
                vstore(y + j, op == kBinAdd ? va + vb : va * vb);
            }
            for (; j < end; ++j) {
                const T vb = bp ? bp[j - i] : b[r];
                y[j] = op == kBinAdd ? a[j] + vb : a[j] * vb;
            }
            i = end;
        }
    });
}

// Backward of y = x * s, x viewed as (A, C, B) and s holding one value per C: gx = gy * s[c] (when gx is given) and
// gs[c] = sum over a, b of gy * x (when gs is given; x null: the plain sum, a bias gradient). One pass over gy and x.
// The rows are split into a fixed number of chunks, each with its own partial gs, summed in chunk order: the result
// is the same for any thread count.
template <class T>
void scale_backward(const T* gy, const T* x, const T* s, T* gx, T* gs, int64_t A, int64_t C, int64_t B) {
    using V = vec_t<T>;
    constexpr int W = vec_width<T>();
    const bool rows_of_c = B == 1;  // (A, C): each row is a C vector; else each (a, c) is a row of B values
    const int64_t rows = rows_of_c ? A : A * C;
    const int64_t nch = A * C * B >= 32768 ? mn<int64_t>(8, rows) : 1;
    Buf<T> partial(gs ? mx<int64_t>(nch * C, 1) : 1, true);
    parallel_for(0, nch, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t ch = c0; ch < c1; ++ch) {
            T* part = partial.get() + (gs ? ch * C : 0);
            for (int64_t r = rows * ch / nch; r < rows * (ch + 1) / nch; ++r) {
                const T* g = gy + r * (rows_of_c ? C : B);
                const T* xr = x ? x + (g - gy) : nullptr;
                T* o = gx ? gx + (g - gy) : nullptr;
                if (rows_of_c) {
                    int64_t i = 0;
                    for (; i + W <= C; i += W) {
                        const V vg = vload<V>(g + i);
                        if (o) vstore(o + i, vg * vload<V>(s + i));
                        if (gs) vstore(part + i, vload<V>(part + i) + (xr ? vg * vload<V>(xr + i) : vg));
                    }
                    for (; i < C; ++i) {
                        if (o) o[i] = g[i] * s[i];
                        if (gs) part[i] += xr ? g[i] * xr[i] : g[i];
                    }
                } else {
                    const int64_t c = r % C;
                    if (o) {
                        const V vs = V{} + s[c];
                        int64_t i = 0;
                        for (; i + W <= B; i += W) vstore(o + i, vload<V>(g + i) * vs);
                        for (; i < B; ++i) o[i] = g[i] * s[c];
                    }
                    if (gs) part[c] += xr ? vdot(g, xr, B) : vsum(g, B);
                }
            }
        }
    });
    if (!gs) return;
    for (int64_t c = 0; c < C; ++c) {
        T acc = T(0);
        for (int64_t ch = 0; ch < nch; ++ch) acc += partial.get()[ch * C + c];
        gs[c] = acc;
    }
}

}  // namespace

FV_REGISTRATION void fill_elementwise(KernelTable& t) {
    FV_FILL_F32_F64(t, binary, binary_op);
    FV_FILL_F32_F64(t, scale_backward, scale_backward);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
