// flowvision.backend._C_cuda: binary/unary ops, cast, strided copies, where, index_select/index_add, reduce.
#include "cuda/bind_util.h"

namespace fvcuda_bind {

DeviceArray index_select(const DeviceArray& x, int64_t dim, const DeviceArray& idx) {
    need(idx.dtype == DType::I64, "index_select: indices must be int64");
    need(dim >= 0 && dim < (int64_t)x.shape.size(), "index_select: bad dim");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.shape[d];
    for (size_t d = dim + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
    Shape out = x.shape;
    out[dim] = idx.numel();
    DeviceArray y = empty(out, x.dtype);
    GilRelease g;
    fvcuda::index_select(x.itemsize(), x.data(), static_cast<const int64_t*>(idx.data()), y.data(), outer, x.shape[dim],
                         idx.numel(), inner, stream());
    return y;
}

namespace {

DeviceArray binary(int op, const DeviceArray& a, py::object b, double alpha, bool swap) {
    bool cmp = op >= fvcuda::B_EQ && op <= fvcuda::B_GE;
    DType out_dt = cmp ? DType::BOOL : a.dtype;
    if (py::isinstance<DeviceArray>(b)) {
        const DeviceArray& bb = b.cast<const DeviceArray&>();
        need_same(a, bb, "binary");
        Shape out;
        fvcuda::Broadcast bc{};
        if (same_shape(a.shape, bb.shape)) out = a.shape;
        else bc = broadcast({&a.shape, &bb.shape}, out);
        DeviceArray y = empty(out, out_dt);
        GilRelease g;
        fvcuda::binary(op, a.dtype, out_dt, a.data(), bb.data(), y.data(), bc, y.numel(), alpha, 0.0, swap, stream());
        return y;
    }
    double scalar = b.cast<double>();
    DeviceArray y = empty(a.shape, out_dt);
    fvcuda::Broadcast bc{};
    GilRelease g;
    fvcuda::binary(op, a.dtype, out_dt, a.data(), nullptr, y.data(), bc, y.numel(), alpha, scalar, swap, stream());
    return y;
}

DeviceArray unary(int op, const DeviceArray& x, float p0, float p1) {
    need_float(x, "unary");
    DeviceArray y = empty(x.shape, x.dtype);
    GilRelease g;
    fvcuda::unary(op, x.dtype, x.data(), y.data(), x.numel(), p0, p1, stream());
    return y;
}

DeviceArray unary_backward(int op, const DeviceArray& grad, const std::optional<DeviceArray>& x,
                           const std::optional<DeviceArray>& y, float p0, float p1) {
    need_float(grad, "unary_backward");
    for (auto* t : {&x, &y})
        if (*t) {
            need_same(grad, **t, "unary_backward");
            need((*t)->numel() == grad.numel(), "unary_backward: sizes differ");
        }
    DeviceArray dx = empty(grad.shape, grad.dtype);
    GilRelease g;
    fvcuda::unary_backward(op, grad.dtype, grad.data(), x ? x->data() : nullptr, y ? y->data() : nullptr, dx.data(),
                           grad.numel(), p0, p1, stream());
    return dx;
}

DeviceArray cast(const DeviceArray& x, const std::string& dtype) {
    DType to = dtype_from_name(dtype);
    DeviceArray y = empty(x.shape, to);
    GilRelease g;
    fvcuda::cast(x.dtype, to, x.data(), y.data(), x.numel(), stream());
    return y;
}

DeviceArray strided_copy(const DeviceArray& x, const Shape& shape, const Shape& strides, int64_t offset) {
    check_view(x, offset, shape, strides, "strided_copy");
    fvcuda::Broadcast bc = strided(shape, strides);
    DeviceArray y = empty(shape, x.dtype);
    GilRelease g;
    fvcuda::strided_copy(x.itemsize(), static_cast<const char*>(x.data()) + offset * x.itemsize(), y.data(), bc,
                         y.numel(), stream());
    return y;
}

void strided_write(const DeviceArray& src, DeviceArray& dst, const Shape& shape, const Shape& strides, int64_t offset) {
    need_same(src, dst, "strided_write");
    check_view(dst, offset, shape, strides, "strided_write");
    fvcuda::Broadcast bc = strided(shape, strides);
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    need(n == src.numel(), "strided_write: source has " + std::to_string(src.numel()) + " elements, view " +
                               std::to_string(n));
    GilRelease g;
    fvcuda::strided_write(src.itemsize(), src.data(), static_cast<char*>(dst.data()) + offset * dst.itemsize(), bc, n,
                          stream());
}

DeviceArray where(const DeviceArray& c, const DeviceArray& a, const DeviceArray& b) {
    need(c.dtype == DType::BOOL, "where: condition must be bool");
    need_same(a, b, "where");
    Shape out;
    fvcuda::Broadcast bc = broadcast({&c.shape, &a.shape, &b.shape}, out);
    DeviceArray y = empty(out, a.dtype);
    GilRelease g;
    fvcuda::where(a.itemsize(), c.data(), a.data(), b.data(), y.data(), bc, y.numel(), stream());
    return y;
}

DeviceArray index_add(const Shape& in_shape, int64_t dim, const DeviceArray& idx, const DeviceArray& grad) {
    need_f32(grad, "index_add");
    need(idx.dtype == DType::I64, "index_add: indices must be int64");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= in_shape[d];
    for (size_t d = dim + 1; d < in_shape.size(); ++d) inner *= in_shape[d];
    DeviceArray dx = empty(in_shape, DType::F32);
    GilRelease g;
    fvcuda::fill(DType::F32, dx.data(), dx.numel(), 0.0, stream());
    fvcuda::index_add_f32(static_cast<const float*>(grad.data()), static_cast<const int64_t*>(idx.data()),
                          static_cast<float*>(dx.data()), outer, in_shape[dim], idx.numel(), inner, stream());
    return dx;
}

py::tuple reduce(int op, const DeviceArray& x, int64_t outer, int64_t r, int64_t inner) {
    need(outer * r * inner == x.numel(), "reduce: (outer, r, inner) does not match the tensor size");
    bool arg = op == fvcuda::R_ARGMAX || op == fvcuda::R_ARGMIN;
    DeviceArray y = empty({outer * inner}, x.dtype);
    std::optional<DeviceArray> idx;
    if (arg) idx = empty({outer * inner}, DType::I64);
    {
        GilRelease g;
        fvcuda::reduce(op, x.dtype, x.data(), y.data(), idx ? static_cast<int64_t*>(idx->data()) : nullptr, outer, r,
                       inner, stream());
    }
    return py::make_tuple(y, idx ? py::cast(*idx) : py::none());
}

}  // namespace

void bind_elementwise(py::module_& m) {
    m.def("binary", &binary, py::arg("op"), py::arg("a"), py::arg("b"), py::arg("alpha") = 1.0, py::arg("swap") = false);
    m.def("unary", &unary, py::arg("op"), py::arg("x"), py::arg("p0") = 0.f, py::arg("p1") = 0.f);
    m.def("unary_backward", &unary_backward, py::arg("op"), py::arg("grad"), py::arg("x"), py::arg("y"),
          py::arg("p0") = 0.f, py::arg("p1") = 0.f);
    m.def("cast", &cast);
    m.def("strided_copy", &strided_copy, py::arg("x"), py::arg("shape"), py::arg("strides"), py::arg("offset") = 0);
    m.def("strided_write", &strided_write, py::arg("src"), py::arg("dst"), py::arg("shape"), py::arg("strides"),
          py::arg("offset") = 0);
    m.def("where", &where);
    m.def("index_select", &index_select);
    m.def("index_add", &index_add);
    m.def("reduce", &reduce);
}

}  // namespace fvcuda_bind
