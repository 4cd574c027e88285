// Broadcast binary kernels (add, mul) over rows: a (R, L) with b (R, L), (R, 1) or (1, L).
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

}  // namespace

FV_REGISTRATION void fill_elementwise(KernelTable& t) {
    FV_FILL_F32_F64(t, binary, binary_op);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
