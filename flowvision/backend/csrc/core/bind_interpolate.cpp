// Bindings of the interpolation kernels (cpu/interpolate.cpp), forward and backward.
#include "core/bind_util.h"
using fv::InterpParams;

namespace {

// ---------------------------------------------------------------- interpolate
InterpParams interp_params(const char* fn, const std::vector<int64_t>& xs, std::vector<int64_t> out_hw,
                           const std::string& mode, bool align_corners, const py::object& scale_hw, bool antialias) {
    if (xs.size() != 4) fail(std::string(fn) + ": input must be 4-D (N, C, H, W), got shape " + vstr(xs));
    auto o = pair(out_hw, fn, "output_size");
    if (o[0] < 1 || o[1] < 1 || xs[2] < 1 || xs[3] < 1)
        fail(std::string(fn) + ": input " + vstr(xs) + " and output size " + vstr(o) + " must be positive");
    InterpParams p;
    p.planes = xs[0] * xs[1];
    p.H = xs[2];
    p.W = xs[3];
    p.OH = o[0];
    p.OW = o[1];
    if (mode == "nearest") p.mode = fv::kNearest;
    else if (mode == "nearest-exact" || mode == "nearest_exact") p.mode = fv::kNearestExact;
    else if (mode == "bilinear" || mode == "linear") p.mode = fv::kBilinear;
    else if (mode == "bicubic") p.mode = fv::kBicubic;
    else fail(std::string(fn) + ": unsupported mode '" + mode + "'");
    if (antialias && p.mode != fv::kBilinear && p.mode != fv::kBicubic)
        fail(std::string(fn) + ": antialias is only supported for bilinear and bicubic modes");
    p.align_corners = (p.mode == fv::kBilinear || p.mode == fv::kBicubic) ? align_corners : false;
    p.antialias = antialias;
    p.scale_h = p.scale_w = 0.0;
    if (!scale_hw.is_none()) {
        auto s = scale_hw.cast<std::vector<py::object>>();
        auto val = [](const py::object& v) { return v.is_none() ? 0.0 : v.cast<double>(); };
        if (s.size() == 1) p.scale_h = p.scale_w = val(s[0]);
        else if (s.size() == 2) {
            p.scale_h = val(s[0]);
            p.scale_w = val(s[1]);
        } else fail(std::string(fn) + ": scale_hw must have 2 elements");
    }
    return p;
}

template <class T>
py::object interp_fwd_impl(py::handle x_, std::vector<int64_t> out_hw, std::string mode, bool align_corners,
                           py::object scale_hw, bool antialias) {
    const char* fn = "interpolate_forward";
    auto x = as<T>(x_, fn, "x");
    InterpParams p = interp_params(fn, shape_vec(x), out_hw, mode, align_corners, scale_hw, antialias);
    auto y = empty<T>({x.shape(0), x.shape(1), p.OH, p.OW});
    {
        py::gil_scoped_release rel;
        ks<T>().interpolate_forward(x.data(), y.mutable_data(), p);
    }
    return std::move(y);
}

template <class T>
py::object interp_bwd_impl(py::handle gy_, std::vector<int64_t> input_shape, std::vector<int64_t> out_hw,
                           std::string mode, bool align_corners, py::object scale_hw, bool antialias) {
    const char* fn = "interpolate_backward";
    auto gy = as<T>(gy_, fn, "grad_y");
    need_ndim(gy, 4, fn, "grad_y");
    if (out_hw.empty()) out_hw = {gy.shape(2), gy.shape(3)};
    InterpParams p = interp_params(fn, input_shape, out_hw, mode, align_corners, scale_hw, antialias);
    std::vector<int64_t> want{input_shape[0], input_shape[1], p.OH, p.OW};
    if (shape_vec(gy) != want)
        fail(std::string(fn) + ": grad_y has shape " + shp(gy) + " but the output shape is " + vstr(want));
    auto gx = empty<T>(input_shape);
    {
        py::gil_scoped_release rel;
        ks<T>().interpolate_backward(gy.data(), gx.mutable_data(), p);
    }
    return std::move(gx);
}

}  // namespace

void bind_interpolate(py::module_& m) {
    using v64 = std::vector<int64_t>;
    using obj = py::object;
    using hnd = py::handle;
    m.def("interpolate_forward", [](hnd x, v64 o, std::string mode, bool ac, obj scale, bool aa) {
        return FV_DISPATCH(interp_fwd_impl, is_f64(x), x, o, mode, ac, scale, aa);
    }, py::arg("x"), py::arg("output_size"), py::arg("mode"), py::arg("align_corners") = false,
          py::arg("scale_hw") = py::none(), py::arg("antialias") = false);
    m.def("interpolate_backward", [](hnd gy, v64 ishape, v64 o, std::string mode, bool ac, obj scale, bool aa) {
        return FV_DISPATCH(interp_bwd_impl, is_f64(gy), gy, ishape, o, mode, ac, scale, aa);
    }, py::arg("grad_y"), py::arg("input_shape"), py::arg("output_size"), py::arg("mode"),
          py::arg("align_corners") = false, py::arg("scale_hw") = py::none(), py::arg("antialias") = false);
    // same without output_size (taken from grad_y)
    m.def("interpolate_backward", [](hnd gy, v64 ishape, std::string mode, bool ac, obj scale, bool aa) {
        return FV_DISPATCH(interp_bwd_impl, is_f64(gy), gy, ishape, v64{}, mode, ac, scale, aa);
    }, py::arg("grad_y"), py::arg("input_shape"), py::arg("mode"), py::arg("align_corners") = false,
          py::arg("scale_hw") = py::none(), py::arg("antialias") = false);
}
