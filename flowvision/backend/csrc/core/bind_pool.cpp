// Bindings of the pooling kernels: NCHW (cpu/pool.cpp, with backward) and NHWC inference (cpu/pool_nhwc.cpp).
#include "core/bind_util.h"
using fv::PoolParams;

namespace {

// ---------------------------------------------------------------- pooling
int64_t pool_out(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
    const int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    // floor division (num may be negative)
    int64_t q = num >= 0 ? num / stride : -((-num + stride - 1) / stride);
    int64_t out = q + 1;
    if (ceil_mode && (out - 1) * stride >= in + pad) --out;
    return out;
}

PoolParams pool_params(const char* fn, const std::vector<int64_t>& xs, std::vector<int64_t> kernel,
                       std::vector<int64_t> stride, std::vector<int64_t> padding, std::vector<int64_t> dilation,
                       bool ceil_mode) {
    if (xs.size() != 4) fail(std::string(fn) + ": input must be 4-D (N, C, H, W), got shape " + vstr(xs));
    auto k = pair(kernel, fn, "kernel_size");
    auto s = stride.empty() ? k : pair(stride, fn, "stride");
    auto pd = pair(padding, fn, "padding");
    auto d = pair(dilation, fn, "dilation");
    if (k[0] < 1 || k[1] < 1 || s[0] < 1 || s[1] < 1 || d[0] < 1 || d[1] < 1 || pd[0] < 0 || pd[1] < 0)
        fail(std::string(fn) + ": invalid kernel " + vstr(k) + ", stride " + vstr(s) + ", padding " + vstr(pd) +
             " or dilation " + vstr(d));
    if (pd[0] > k[0] / 2 || pd[1] > k[1] / 2)
        fail(std::string(fn) + ": padding " + vstr(pd) + " should be at most half of kernel size " + vstr(k));
    PoolParams p;
    p.planes = xs[0] * xs[1];
    p.H = xs[2];
    p.W = xs[3];
    p.kh = k[0]; p.kw = k[1]; p.sh = s[0]; p.sw = s[1]; p.ph = pd[0]; p.pw = pd[1]; p.dh = d[0]; p.dw = d[1];
    p.OH = pool_out(p.H, p.kh, p.ph, p.sh, p.dh, ceil_mode);
    p.OW = pool_out(p.W, p.kw, p.pw, p.sw, p.dw, ceil_mode);
    p.count_include_pad = true;
    p.divisor_override = 0;
    if (p.OH < 1 || p.OW < 1)
        fail(std::string(fn) + ": output size is too small for input " + vstr(xs) + " with kernel " + vstr(k) +
             ", stride " + vstr(s) + ", padding " + vstr(pd) + ", dilation " + vstr(d));
    return p;
}

template <class T>
py::object max_pool_fwd_impl(py::handle x_, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                             std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode) {
    const char* fn = "max_pool2d_forward";
    auto x = as<T>(x_, fn, "x");
    auto xs = shape_vec(x);
    PoolParams p = pool_params(fn, xs, kernel, stride, padding, dilation, ceil_mode);
    auto y = empty<T>({xs[0], xs[1], p.OH, p.OW});
    auto idx = empty<int64_t>({xs[0], xs[1], p.OH, p.OW});
    {
        py::gil_scoped_release rel;
        ks<T>().max_pool2d_forward(x.data(), y.mutable_data(), idx.mutable_data(), p);
    }
    return py::make_tuple(y, idx);
}

template <class T>
py::object max_pool_bwd_impl(py::handle gy_, py::handle idx_, std::vector<int64_t> input_shape) {
    const char* fn = "max_pool2d_backward";
    auto gy = as<T>(gy_, fn, "grad_y");
    auto idx = as<int64_t>(idx_, fn, "indices");
    if (input_shape.size() != 4) fail(std::string(fn) + ": input_shape must have 4 elements, got " + vstr(input_shape));
    need_ndim(gy, 4, fn, "grad_y");
    if (shape_vec(gy) != shape_vec(idx))
        fail(std::string(fn) + ": grad_y shape " + shp(gy) + " and indices shape " + shp(idx) + " differ");
    if (gy.shape(0) != input_shape[0] || gy.shape(1) != input_shape[1])
        fail(std::string(fn) + ": grad_y shape " + shp(gy) + " does not match input_shape " + vstr(input_shape));
    auto gx = empty<T>(input_shape);
    {
        py::gil_scoped_release rel;
        ks<T>().max_pool2d_backward(gy.data(), idx.data(), gx.mutable_data(), input_shape[0] * input_shape[1],
                                    input_shape[2] * input_shape[3], gy.shape(2) * gy.shape(3));
    }
    return std::move(gx);
}

template <class T>
py::object avg_pool_fwd_impl(py::handle x_, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                             std::vector<int64_t> padding, bool ceil_mode, bool count_include_pad,
                             int64_t divisor_override) {
    const char* fn = "avg_pool2d_forward";
    auto x = as<T>(x_, fn, "x");
    auto xs = shape_vec(x);
    PoolParams p = pool_params(fn, xs, kernel, stride, padding, {1, 1}, ceil_mode);
    p.count_include_pad = count_include_pad;
    if (divisor_override < 0) fail(std::string(fn) + ": divisor_override must be positive");
    p.divisor_override = divisor_override;
    auto y = empty<T>({xs[0], xs[1], p.OH, p.OW});
    {
        py::gil_scoped_release rel;
        ks<T>().avg_pool2d_forward(x.data(), y.mutable_data(), p);
    }
    return std::move(y);
}

template <class T>
py::object avg_pool_bwd_impl(py::handle gy_, std::vector<int64_t> input_shape, std::vector<int64_t> kernel,
                             std::vector<int64_t> stride, std::vector<int64_t> padding, bool ceil_mode,
                             bool count_include_pad, int64_t divisor_override) {
    const char* fn = "avg_pool2d_backward";
    auto gy = as<T>(gy_, fn, "grad_y");
    PoolParams p = pool_params(fn, input_shape, kernel, stride, padding, {1, 1}, ceil_mode);
    p.count_include_pad = count_include_pad;
    if (divisor_override < 0) fail(std::string(fn) + ": divisor_override must be positive");
    p.divisor_override = divisor_override;
    std::vector<int64_t> want{input_shape[0], input_shape[1], p.OH, p.OW};
    if (shape_vec(gy) != want)
        fail(std::string(fn) + ": grad_y has shape " + shp(gy) + " but the pooling output shape is " + vstr(want));
    auto gx = empty<T>(input_shape);
    {
        py::gil_scoped_release rel;
        ks<T>().avg_pool2d_backward(gy.data(), gx.mutable_data(), p);
    }
    return std::move(gx);
}

std::vector<int64_t> adaptive_out(const char* fn, const py::array& x, std::vector<int64_t> out_hw) {
    need_ndim(x, 4, fn, "x");
    auto o = pair(out_hw, fn, "output_size");
    if (o[0] < 1 || o[1] < 1) fail(std::string(fn) + ": output_size must be positive, got " + vstr(o));
    return o;
}

template <class T>
py::object adaptive_avg_fwd_impl(py::handle x_, std::vector<int64_t> out_hw) {
    const char* fn = "adaptive_avg_pool2d_forward";
    auto x = as<T>(x_, fn, "x");
    auto o = adaptive_out(fn, x, out_hw);
    auto y = empty<T>({x.shape(0), x.shape(1), o[0], o[1]});
    {
        py::gil_scoped_release rel;
        ks<T>().adaptive_avg_pool2d_forward(x.data(), y.mutable_data(), x.shape(0) * x.shape(1), x.shape(2),
                                            x.shape(3), o[0], o[1]);
    }
    return std::move(y);
}

template <class T>
py::object adaptive_avg_bwd_impl(py::handle gy_, std::vector<int64_t> input_shape) {
    const char* fn = "adaptive_avg_pool2d_backward";
    auto gy = as<T>(gy_, fn, "grad_y");
    need_ndim(gy, 4, fn, "grad_y");
    if (input_shape.size() != 4 || gy.shape(0) != input_shape[0] || gy.shape(1) != input_shape[1])
        fail(std::string(fn) + ": grad_y shape " + shp(gy) + " does not match input_shape " + vstr(input_shape));
    auto gx = empty<T>(input_shape);
    {
        py::gil_scoped_release rel;
        ks<T>().adaptive_avg_pool2d_backward(gy.data(), gx.mutable_data(), input_shape[0] * input_shape[1],
                                             input_shape[2], input_shape[3], gy.shape(2), gy.shape(3));
    }
    return std::move(gx);
}

template <class T>
py::object adaptive_max_fwd_impl(py::handle x_, std::vector<int64_t> out_hw) {
    const char* fn = "adaptive_max_pool2d_forward";
    auto x = as<T>(x_, fn, "x");
    auto o = adaptive_out(fn, x, out_hw);
    auto y = empty<T>({x.shape(0), x.shape(1), o[0], o[1]});
    auto idx = empty<int64_t>({x.shape(0), x.shape(1), o[0], o[1]});
    {
        py::gil_scoped_release rel;
        ks<T>().adaptive_max_pool2d_forward(x.data(), y.mutable_data(), idx.mutable_data(), x.shape(0) * x.shape(1),
                                            x.shape(2), x.shape(3), o[0], o[1]);
    }
    return py::make_tuple(y, idx);
}
py::object max_pool_nhwc_impl(py::handle x_, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                              std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode) {
    const char* fn = "max_pool2d_nhwc";
    auto x = nhwc_input(fn, x_);
    const int64_t N = x.shape(0), H = x.shape(1), W = x.shape(2), C = x.shape(3);
    PoolParams p = pool_params(fn, {N, C, H, W}, kernel, stride, padding, dilation, ceil_mode);
    p.planes = N;
    auto y = empty<float>({N, p.OH, p.OW, C});
    {
        py::gil_scoped_release rel;
        table().nhwc.max_pool(x.data(), y.mutable_data(), p, C);
    }
    return std::move(y);
}

py::object avg_pool_nhwc_impl(py::handle x_, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                              std::vector<int64_t> padding, bool ceil_mode, bool count_include_pad) {
    const char* fn = "avg_pool2d_nhwc";
    auto x = nhwc_input(fn, x_);
    const int64_t N = x.shape(0), H = x.shape(1), W = x.shape(2), C = x.shape(3);
    PoolParams p = pool_params(fn, {N, C, H, W}, kernel, stride, padding, {1, 1}, ceil_mode);
    p.planes = N;
    p.count_include_pad = count_include_pad;
    auto y = empty<float>({N, p.OH, p.OW, C});
    {
        py::gil_scoped_release rel;
        table().nhwc.avg_pool(x.data(), y.mutable_data(), p, C);
    }
    return std::move(y);
}
py::object adaptive_avg_nhwc_impl(py::handle x_, std::vector<int64_t> out_hw) {
    const char* fn = "adaptive_avg_pool2d_nhwc";
    auto x = nhwc_input(fn, x_);
    auto o = pair(out_hw, fn, "output_size");
    if (o[0] < 1 || o[1] < 1) fail(std::string(fn) + ": output_size must be positive, got " + vstr(o));
    const int64_t N = x.shape(0), H = x.shape(1), W = x.shape(2), C = x.shape(3);
    if (H < 1 || W < 1) fail(std::string(fn) + ": input " + shp(x) + " has an empty spatial size");
    auto y = empty<float>({N, o[0], o[1], C});
    {
        py::gil_scoped_release rel;
        table().nhwc.adaptive_avg_pool(x.data(), y.mutable_data(), N, H, W, C, o[0], o[1]);
    }
    return std::move(y);
}

}  // namespace

// Shared with the plan executor (core/executor*.cpp) (declared in core/bind_util.h).
fv::PoolParams nchw_pool_params(const char* fn, const std::vector<int64_t>& nchw_shape, const std::vector<int64_t>& kernel,
                                const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                const std::vector<int64_t>& dilation, bool ceil_mode) {
    return pool_params(fn, nchw_shape, kernel, stride, padding, dilation, ceil_mode);
}

void bind_pool(py::module_& m) {
    using v64 = std::vector<int64_t>;
    using obj = py::object;
    using hnd = py::handle;
    py::enum_<fv::PoolKind>(m, "PoolKind", "a native plan's NHWC pool steps")
        .value("max", fv::kPoolMax).value("avg", fv::kPoolAvg).value("adaptive_avg", fv::kPoolAdaptiveAvg);

    m.def("max_pool2d_forward", [](hnd x, v64 k, v64 s, v64 p, v64 d, bool ceil_mode) {
        return FV_DISPATCH(max_pool_fwd_impl, is_f64(x), x, k, s, p, d, ceil_mode);
    }, py::arg("x"), py::arg("kernel_size"), py::arg("stride"), py::arg("padding"), py::arg("dilation"),
          py::arg("ceil_mode") = false);
    m.def("max_pool2d_backward", [](hnd gy, hnd idx, v64 ishape) {
        return FV_DISPATCH(max_pool_bwd_impl, is_f64(gy), gy, idx, ishape);
    }, py::arg("grad_y"), py::arg("indices"), py::arg("input_shape"));
    m.def("avg_pool2d_forward", [](hnd x, v64 k, v64 s, v64 p, bool ceil_mode, bool cip, obj div) {
        int64_t dv = div.is_none() ? 0 : div.cast<int64_t>();
        return FV_DISPATCH(avg_pool_fwd_impl, is_f64(x), x, k, s, p, ceil_mode, cip, dv);
    }, py::arg("x"), py::arg("kernel_size"), py::arg("stride"), py::arg("padding"), py::arg("ceil_mode") = false,
          py::arg("count_include_pad") = true, py::arg("divisor_override") = 0);
    m.def("avg_pool2d_backward", [](hnd gy, v64 ishape, v64 k, v64 s, v64 p, bool ceil_mode, bool cip, obj div) {
        int64_t dv = div.is_none() ? 0 : div.cast<int64_t>();
        return FV_DISPATCH(avg_pool_bwd_impl, is_f64(gy), gy, ishape, k, s, p, ceil_mode, cip, dv);
    }, py::arg("grad_y"), py::arg("input_shape"), py::arg("kernel_size"), py::arg("stride"), py::arg("padding"),
          py::arg("ceil_mode") = false, py::arg("count_include_pad") = true, py::arg("divisor_override") = 0);
    m.def("adaptive_avg_pool2d_forward", [](hnd x, v64 o) { return FV_DISPATCH(adaptive_avg_fwd_impl, is_f64(x), x, o); },
          py::arg("x"), py::arg("output_size"));
    m.def("adaptive_avg_pool2d_backward", [](hnd gy, v64 ishape) {
        return FV_DISPATCH(adaptive_avg_bwd_impl, is_f64(gy), gy, ishape);
    }, py::arg("grad_y"), py::arg("input_shape"));
    m.def("adaptive_max_pool2d_forward", [](hnd x, v64 o) { return FV_DISPATCH(adaptive_max_fwd_impl, is_f64(x), x, o); },
          py::arg("x"), py::arg("output_size"));

    m.def("max_pool2d_nhwc", &max_pool_nhwc_impl, py::arg("x"), py::arg("kernel_size"), py::arg("stride"),
          py::arg("padding") = v64{0, 0}, py::arg("dilation") = v64{1, 1}, py::arg("ceil_mode") = false,
          "max_pool2d over NHWC float32 x (N, H, W, C) -> (N, OH, OW, C); values only (no indices)");
    m.def("avg_pool2d_nhwc", &avg_pool_nhwc_impl, py::arg("x"), py::arg("kernel_size"), py::arg("stride"),
          py::arg("padding") = v64{0, 0}, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true,
          "avg_pool2d over NHWC float32 x (N, H, W, C) -> (N, OH, OW, C)");
    m.def("adaptive_avg_pool2d_nhwc", &adaptive_avg_nhwc_impl, py::arg("x"), py::arg("output_size"),
          "adaptive_avg_pool2d over NHWC float32 x (N, H, W, C) -> (N, OH, OW, C)");
}
