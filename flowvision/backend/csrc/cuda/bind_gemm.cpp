// flowvision.backend._C_cuda: batched matmul.
#include "cuda/bind_util.h"

namespace fvcuda_bind {

namespace {

// Batched matmul: a [..., M, K] (or [..., K, M] if trans_a), b [..., K, N] (or [..., N, K]);
// leading dims broadcast when one side has none (b shared across the batch, as in linear).
DeviceArray matmul(const DeviceArray& a, const DeviceArray& b, const std::optional<DeviceArray>& bias, bool trans_a,
                   bool trans_b, float alpha, bool tf32) {
    need_float(a, "matmul");
    need_same(a, b, "matmul");
    need(a.shape.size() >= 2 && b.shape.size() >= 2, "matmul: expected at least 2-d operands");
    size_t na = a.shape.size(), nb = b.shape.size();
    int64_t m = trans_a ? a.shape[na - 1] : a.shape[na - 2], ka = trans_a ? a.shape[na - 2] : a.shape[na - 1];
    int64_t kb = trans_b ? b.shape[nb - 1] : b.shape[nb - 2], n = trans_b ? b.shape[nb - 2] : b.shape[nb - 1];
    need(ka == kb, "matmul: shapes " + shape_str(a.shape) + " and " + shape_str(b.shape) + " cannot be multiplied");
    int64_t ba = a.numel() / std::max<int64_t>(m * ka, 1), bb = b.numel() / std::max<int64_t>(kb * n, 1);
    Shape lead_a(a.shape.begin(), a.shape.end() - 2), lead_b(b.shape.begin(), b.shape.end() - 2);
    need(m * ka == 0 || kb * n == 0 || ba == bb || bb == 1 || ba == 1,
         "matmul: batch dims " + shape_str(lead_a) + " and " + shape_str(lead_b) + " differ (broadcast them first)");
    if (m * ka == 0) ba = 1;
    if (kb * n == 0) bb = 1;
    int64_t batch = std::max(ba, bb);
    Shape out = ba >= bb ? lead_a : lead_b;
    out.push_back(m);
    out.push_back(n);
    if (bias) {
        need_same(a, *bias, "matmul bias");
        need(bias->numel() == n, "matmul: bias has the wrong size");
    }
    DeviceArray c = empty(out, a.dtype);
    fvcuda::Gemm g{};
    g.batch = batch; g.m = m; g.n = n; g.k = ka;
    g.lda = a.shape[na - 1]; g.ldb = b.shape[nb - 1]; g.ldc = n;
    g.stride_a = ba == 1 ? 0 : m * ka; g.stride_b = bb == 1 ? 0 : kb * n; g.stride_c = m * n;
    g.trans_a = trans_a; g.trans_b = trans_b; g.alpha = alpha;
    fvcuda::Broadcast bias_bc{};
    Shape bias_out;
    if (ka == 0 && bias) bias_bc = broadcast({&c.shape, &bias->shape}, bias_out);
    GilRelease gr;
    if (ka == 0) {  // an empty sum: zeros (+ bias)
        fvcuda::fill(a.dtype, c.data(), c.numel(), 0.0, stream());
        if (bias)
            fvcuda::binary(fvcuda::B_ADD, a.dtype, a.dtype, c.data(), bias->data(), c.data(), bias_bc, c.numel(), 1.0,
                           0.0, false, stream());
    } else {
        fvcuda::gemm(a.dtype, a.data(), b.data(), bias ? bias->data() : nullptr, c.data(), g, tf32, stream());
    }
    return c;
}

}  // namespace

void bind_gemm(py::module_& m) {
    m.def("matmul", &matmul, py::arg("a"), py::arg("b"), py::arg("bias"), py::arg("trans_a"), py::arg("trans_b"),
          py::arg("alpha") = 1.f, py::arg("tf32") = false);
}

}  // namespace fvcuda_bind
