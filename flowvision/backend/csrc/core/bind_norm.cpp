// Bindings of the normalisation kernels (cpu/norm.cpp): batch, layer and group norm, forward and backward.
#include "core/bind_util.h"

namespace {

struct NCS {
    int64_t N, C, S;
};
NCS ncs_of(const char* fn, const py::array& x) {
    if (x.ndim() < 2) fail(std::string(fn) + ": input must be at least 2-D (N, C, *), got shape " + shp(x));
    NCS r{x.shape(0), x.shape(1), 1};
    for (py::ssize_t i = 2; i < x.ndim(); ++i) r.S *= x.shape(i);
    return r;
}

template <class T>
py::object bn_train_fwd_impl(py::handle x_, py::object w_, py::object b_, double eps) {
    const char* fn = "batch_norm_train_forward";
    auto x = as<T>(x_, fn, "x");
    NCS d = ncs_of(fn, x);
    Arr<T> wk, bk;
    const T* w = opt_ptr<T>(w_, wk, fn, "weight", d.C);
    const T* b = opt_ptr<T>(b_, bk, fn, "bias", d.C);
    auto y = empty<T>(shape_vec(x));
    auto mean = empty<T>({d.C});
    auto invstd = empty<T>({d.C});
    {
        py::gil_scoped_release rel;
        ks<T>().batch_norm_train_forward(x.data(), w, b, y.mutable_data(), mean.mutable_data(), invstd.mutable_data(),
                                         d.N, d.C, d.S, eps);
    }
    return py::make_tuple(y, mean, invstd);
}

template <class T>
py::object bn_infer_fwd_impl(py::handle x_, py::handle rm_, py::handle rv_, py::object w_, py::object b_, double eps) {
    const char* fn = "batch_norm_infer_forward";
    auto x = as<T>(x_, fn, "x");
    NCS d = ncs_of(fn, x);
    Arr<T> rmk, rvk, wk, bk;
    const T* rm = opt_ptr<T>(py::reinterpret_borrow<py::object>(rm_), rmk, fn, "running_mean", d.C);
    const T* rv = opt_ptr<T>(py::reinterpret_borrow<py::object>(rv_), rvk, fn, "running_var", d.C);
    if (!rm || !rv) fail(std::string(fn) + ": running_mean and running_var are required");
    const T* w = opt_ptr<T>(w_, wk, fn, "weight", d.C);
    const T* b = opt_ptr<T>(b_, bk, fn, "bias", d.C);
    auto y = empty<T>(shape_vec(x));
    {
        py::gil_scoped_release rel;
        ks<T>().batch_norm_infer_forward(x.data(), rm, rv, w, b, y.mutable_data(), d.N, d.C, d.S, eps);
    }
    return std::move(y);
}

template <class T>
py::object bn_bwd_impl(py::handle gy_, py::handle x_, py::object w_, py::handle mean_, py::handle invstd_,
                       bool training) {
    const char* fn = "batch_norm_backward";
    auto gy = as<T>(gy_, fn, "grad_y");
    auto x = as<T>(x_, fn, "x");
    same_shape(fn, gy, "grad_y", x, "x");
    NCS d = ncs_of(fn, x);
    Arr<T> wk, mk, ik;
    const T* w = opt_ptr<T>(w_, wk, fn, "weight", d.C);
    const T* mean = opt_ptr<T>(py::reinterpret_borrow<py::object>(mean_), mk, fn, "mean", d.C);
    const T* invstd = opt_ptr<T>(py::reinterpret_borrow<py::object>(invstd_), ik, fn, "invstd", d.C);
    if (!mean || !invstd) fail(std::string(fn) + ": mean and invstd are required");
    auto gx = empty<T>(shape_vec(x));
    auto gw = empty<T>({d.C});
    auto gb = empty<T>({d.C});
    {
        py::gil_scoped_release rel;
        ks<T>().batch_norm_backward(gy.data(), x.data(), w, mean, invstd, gx.mutable_data(), gw.mutable_data(),
                                    gb.mutable_data(), d.N, d.C, d.S, training);
    }
    return py::make_tuple(gx, gw, gb);
}

std::vector<int64_t> lead_shape(const py::array& x) {
    auto s = shape_vec(x);
    s.pop_back();
    return s;
}

template <class T>
py::object ln_fwd_impl(py::handle x_, py::object w_, py::object b_, double eps) {
    const char* fn = "layer_norm_forward";
    auto x = as<T>(x_, fn, "x");
    auto mn = rows_cols(fn, x);
    Arr<T> wk, bk;
    const T* w = opt_ptr<T>(w_, wk, fn, "weight", mn.second);
    const T* b = opt_ptr<T>(b_, bk, fn, "bias", mn.second);
    auto y = empty<T>(shape_vec(x));
    auto mean = empty<T>(lead_shape(x));
    auto rstd = empty<T>(lead_shape(x));
    {
        py::gil_scoped_release rel;
        ks<T>().layer_norm_forward(x.data(), w, b, y.mutable_data(), mean.mutable_data(), rstd.mutable_data(),
                                   mn.first, mn.second, eps);
    }
    return py::make_tuple(y, mean, rstd);
}

template <class T>
py::object ln_bwd_impl(py::handle gy_, py::handle x_, py::object w_, py::handle mean_, py::handle rstd_) {
    const char* fn = "layer_norm_backward";
    auto gy = as<T>(gy_, fn, "grad_y");
    auto x = as<T>(x_, fn, "x");
    same_shape(fn, gy, "grad_y", x, "x");
    auto mn = rows_cols(fn, x);
    Arr<T> wk, mk, rk;
    const T* w = opt_ptr<T>(w_, wk, fn, "weight", mn.second);
    mk = as<T>(mean_, fn, "mean");
    rk = as<T>(rstd_, fn, "rstd");
    if (mk.size() != mn.first || rk.size() != mn.first)
        fail(std::string(fn) + ": mean " + shp(mk) + " / rstd " + shp(rk) + " must have " + std::to_string(mn.first) +
             " elements for x of shape " + shp(x));
    auto gx = empty<T>(shape_vec(x));
    auto gw = empty<T>({mn.second});
    auto gb = empty<T>({mn.second});
    {
        py::gil_scoped_release rel;
        ks<T>().layer_norm_backward(gy.data(), x.data(), w, mk.data(), rk.data(), gx.mutable_data(),
                                    w ? gw.mutable_data() : nullptr, gb.mutable_data(), mn.first, mn.second);
    }
    return py::make_tuple(gx, w ? py::object(gw) : py::object(py::none()), gb);
}

template <class T>
py::object gn_fwd_impl(py::handle x_, int64_t groups, py::object w_, py::object b_, double eps) {
    const char* fn = "group_norm_forward";
    auto x = as<T>(x_, fn, "x");
    NCS d = ncs_of(fn, x);
    if (groups < 1 || d.C % groups != 0)
        fail(std::string(fn) + ": channels of input " + shp(x) + " are not divisible by groups=" + std::to_string(groups));
    Arr<T> wk, bk;
    const T* w = opt_ptr<T>(w_, wk, fn, "weight", d.C);
    const T* b = opt_ptr<T>(b_, bk, fn, "bias", d.C);
    auto y = empty<T>(shape_vec(x));
    auto mean = empty<T>({d.N, groups});
    auto rstd = empty<T>({d.N, groups});
    {
        py::gil_scoped_release rel;
        ks<T>().group_norm_forward(x.data(), w, b, y.mutable_data(), mean.mutable_data(), rstd.mutable_data(), d.N,
                                   d.C, d.S, groups, eps);
    }
    return py::make_tuple(y, mean, rstd);
}

template <class T>
py::object gn_bwd_impl(py::handle gy_, py::handle x_, int64_t groups, py::object w_, py::handle mean_,
                       py::handle rstd_) {
    const char* fn = "group_norm_backward";
    auto gy = as<T>(gy_, fn, "grad_y");
    auto x = as<T>(x_, fn, "x");
    same_shape(fn, gy, "grad_y", x, "x");
    NCS d = ncs_of(fn, x);
    if (groups < 1 || d.C % groups != 0)
        fail(std::string(fn) + ": channels of input " + shp(x) + " are not divisible by groups=" + std::to_string(groups));
    Arr<T> wk;
    const T* w = opt_ptr<T>(w_, wk, fn, "weight", d.C);
    auto mk = as<T>(mean_, fn, "mean");
    auto rk = as<T>(rstd_, fn, "rstd");
    if (mk.size() != d.N * groups || rk.size() != d.N * groups)
        fail(std::string(fn) + ": mean " + shp(mk) + " / rstd " + shp(rk) + " must have shape (" +
             std::to_string(d.N) + ", " + std::to_string(groups) + ")");
    auto gx = empty<T>(shape_vec(x));
    auto gw = empty<T>({d.C});
    auto gb = empty<T>({d.C});
    {
        py::gil_scoped_release rel;
        ks<T>().group_norm_backward(gy.data(), x.data(), w, mk.data(), rk.data(), gx.mutable_data(),
                                    gw.mutable_data(), gb.mutable_data(), d.N, d.C, d.S, groups);
    }
    return py::make_tuple(gx, gw, gb);
}

}  // namespace

void bind_norm(py::module_& m) {
    using v64 = std::vector<int64_t>;
    using obj = py::object;
    using hnd = py::handle;
    m.def("batch_norm_train_forward", [](hnd x, obj w, obj b, double eps) {
        return FV_DISPATCH(bn_train_fwd_impl, is_f64(x), x, w, b, eps);
    }, py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("eps") = 1e-5);
    m.def("batch_norm_infer_forward", [](hnd x, hnd rm, hnd rv, obj w, obj b, double eps) {
        return FV_DISPATCH(bn_infer_fwd_impl, is_f64(x), x, rm, rv, w, b, eps);
    }, py::arg("x"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight"), py::arg("bias"),
          py::arg("eps") = 1e-5);
    m.def("batch_norm_backward", [](hnd gy, hnd x, obj w, hnd mean, hnd invstd, bool training) {
        return FV_DISPATCH(bn_bwd_impl, is_f64(gy) || is_f64(x), gy, x, w, mean, invstd, training);
    }, py::arg("grad_y"), py::arg("x"), py::arg("weight"), py::arg("mean"), py::arg("invstd"),
          py::arg("training") = true);
    m.def("layer_norm_forward", [](hnd x, obj w, obj b, double eps) {
        return FV_DISPATCH(ln_fwd_impl, is_f64(x), x, w, b, eps);
    }, py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("eps") = 1e-5);
    m.def("layer_norm_backward", [](hnd gy, hnd x, obj w, hnd mean, hnd rstd) {
        return FV_DISPATCH(ln_bwd_impl, is_f64(gy) || is_f64(x), gy, x, w, mean, rstd);
    }, py::arg("grad_y"), py::arg("x"), py::arg("weight"), py::arg("mean"), py::arg("rstd"));
    m.def("group_norm_forward", [](hnd x, int64_t g, obj w, obj b, double eps) {
        return FV_DISPATCH(gn_fwd_impl, is_f64(x), x, g, w, b, eps);
    }, py::arg("x"), py::arg("groups"), py::arg("weight"), py::arg("bias"), py::arg("eps") = 1e-5);
    m.def("group_norm_backward", [](hnd gy, hnd x, int64_t g, obj w, hnd mean, hnd rstd) {
        return FV_DISPATCH(gn_bwd_impl, is_f64(gy) || is_f64(x), gy, x, g, w, mean, rstd);
    }, py::arg("grad_y"), py::arg("x"), py::arg("groups"), py::arg("weight"), py::arg("mean"), py::arg("rstd"));
}
