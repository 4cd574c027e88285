// Bindings of softmax (cpu/softmax.cpp), the activations (cpu/activation.cpp) and the elementwise binary
// kernels (cpu/elementwise.cpp), with the enums the capture lowering reads by name.
#include "core/bind_util.h"

namespace {

// ---------------------------------------------------------------- softmax, activations
template <class T>
py::object softmax_fwd_impl(py::handle x_, bool log) {
    const char* fn = "softmax_forward";
    auto x = as<T>(x_, fn, "x");
    auto mn = rows_cols(fn, x);
    auto y = empty<T>(shape_vec(x));
    {
        py::gil_scoped_release rel;
        ks<T>().softmax_forward(x.data(), y.mutable_data(), mn.first, mn.second, log);
    }
    return std::move(y);
}

template <class T>
py::object softmax_bwd_impl(py::handle gy_, py::handle y_, bool log) {
    const char* fn = "softmax_backward";
    auto gy = as<T>(gy_, fn, "grad_y");
    auto y = as<T>(y_, fn, "y");
    same_shape(fn, gy, "grad_y", y, "y");
    auto mn = rows_cols(fn, y);
    auto gx = empty<T>(shape_vec(y));
    {
        py::gil_scoped_release rel;
        ks<T>().softmax_backward(gy.data(), y.data(), gx.mutable_data(), mn.first, mn.second, log);
    }
    return std::move(gx);
}

bool gelu_mode(const py::object& approx) {
    if (approx.is_none()) return false;
    if (py::isinstance<py::bool_>(approx)) return approx.cast<bool>();
    std::string s = py::str(approx);
    if (s == "none") return false;
    if (s == "tanh") return true;
    fail("gelu: approximate must be 'none' or 'tanh', got '" + s + "'");
}

template <class T>
py::object gelu_fwd_impl(py::handle x_, py::object approx) {
    auto x = as<T>(x_, "gelu_forward", "x");
    const bool a = gelu_mode(approx);
    auto y = empty<T>(shape_vec(x));
    {
        py::gil_scoped_release rel;
        ks<T>().gelu_forward(x.data(), y.mutable_data(), x.size(), a);
    }
    return std::move(y);
}
template <class T>
py::object gelu_bwd_impl(py::handle gy_, py::handle x_, py::object approx) {
    auto gy = as<T>(gy_, "gelu_backward", "grad_y");
    auto x = as<T>(x_, "gelu_backward", "x");
    same_shape("gelu_backward", gy, "grad_y", x, "x");
    const bool a = gelu_mode(approx);
    auto gx = empty<T>(shape_vec(x));
    {
        py::gil_scoped_release rel;
        ks<T>().gelu_backward(gy.data(), x.data(), gx.mutable_data(), x.size(), a);
    }
    return std::move(gx);
}
template <class T>
py::object silu_fwd_impl(py::handle x_) {
    auto x = as<T>(x_, "silu_forward", "x");
    auto y = empty<T>(shape_vec(x));
    {
        py::gil_scoped_release rel;
        ks<T>().silu_forward(x.data(), y.mutable_data(), x.size());
    }
    return std::move(y);
}
// grad_x of an elementwise activation from grad_y and the value its backward reads (SiLU: x, ReLU: its output y)
template <class T>
py::object act_bwd_impl(py::handle gy_, py::handle v_, const char* fn, const char* vname,
                        void (*KernelSet<T>::*kernel)(const T*, const T*, T*, int64_t)) {
    auto gy = as<T>(gy_, fn, "grad_y");
    auto v = as<T>(v_, fn, vname);
    same_shape(fn, gy, "grad_y", v, vname);
    auto gx = empty<T>(shape_vec(v));
    {
        py::gil_scoped_release rel;
        (ks<T>().*kernel)(gy.data(), v.data(), gx.mutable_data(), v.size());
    }
    return std::move(gx);
}
template <class T>
py::object silu_bwd_impl(py::handle gy, py::handle x) {
    return act_bwd_impl<T>(gy, x, "silu_backward", "x", &KernelSet<T>::silu_backward);
}
template <class T>
py::object relu_bwd_impl(py::handle gy, py::handle y) {
    return act_bwd_impl<T>(gy, y, "relu_backward", "y", &KernelSet<T>::relu_backward);
}

// y = f(x) for the pointwise activations; out may be x itself (in place) or a fresh array of x's shape.
int pointwise_kind(const std::string& k) {
#define FV_PW_NAME(id, pw_name) #pw_name,
    static const char* const names[] = {FV_POINTWISE_KINDS(FV_PW_NAME)};
#undef FV_PW_NAME
    std::string known;
    for (int i = 0; i < fv::kPwCount; ++i) {
        if (k == names[i]) return i;
        known += (i ? ", " : "") + std::string(names[i]);
    }
    fail("pointwise: unknown kind '" + k + "' (" + known + ")");
    return -1;
}
// The result array of an elementwise kernel: a new one shaped like x, or `out` (which may be x itself: the kernels
// read each element before writing it) after checking it is a writeable C-contiguous array of x's dtype and shape.
template <class T>
Arr<T> out_or_empty(const py::object& out_, const Arr<T>& x, const char* fn) {
    if (out_.is_none()) return empty<T>(shape_vec(x));
    if (!py::isinstance<py::array_t<T>>(out_)) fail(std::string(fn) + ": out must be an array of x's dtype");
    auto o = py::reinterpret_borrow<py::array>(out_);
    if (!(o.flags() & py::array::c_style) || !o.writeable() || o.ndim() != x.ndim() ||
        !std::equal(o.shape(), o.shape() + o.ndim(), x.shape()))
        fail(std::string(fn) + ": out must be a writeable C-contiguous array of x's shape, got " + shp(o) + " for x " +
             shp(x));
    return py::reinterpret_borrow<Arr<T>>(out_);
}

template <class T>
py::object pointwise_impl(py::handle x_, const std::string& kind, double lo, double hi, py::object out_) {
    const int k = pointwise_kind(kind);
    auto x = as<T>(x_, "pointwise", "x");
    Arr<T> y = out_or_empty<T>(out_, x, "pointwise");
    {
        py::gil_scoped_release rel;
        ks<T>().pointwise(k, x.data(), y.mutable_data(), x.size(), T(lo), T(hi));
    }
    return std::move(y);
}

// y = a + b or a * b with a viewed as (R, L) and b as (R, L), (R, 1) or (1, L) (b_mode 0/1/2); the caller (the
// Add/Mul ops) has checked dtypes, contiguity and the broadcast pattern.
template <class T>
py::object binary_impl(py::handle a_, py::handle b_, const std::string& op, int64_t R, int64_t L, int b_mode,
                       py::object out_) {
    if (op != "add" && op != "mul") fail("binary: unknown op '" + op + "' (add, mul)");
    if (b_mode < 0 || b_mode > 2) fail("binary: b_mode must be 0, 1 or 2");
    auto a = as<T>(a_, "binary", "a");
    auto b = as<T>(b_, "binary", "b");
    const int64_t nb = b_mode == 0 ? R * L : (b_mode == 1 ? R : L);
    if (R < 0 || L < 0 || a.size() != R * L || b.size() != nb)
        fail("binary: a has " + std::to_string(a.size()) + " elements and b " + std::to_string(b.size()) +
             ", expected " + std::to_string(R * L) + " and " + std::to_string(nb));
    Arr<T> y = out_or_empty<T>(out_, a, "binary");
    {
        py::gil_scoped_release rel;
        ks<T>().binary(op == "add" ? fv::kBinAdd : fv::kBinMul, a.data(), b.data(), y.mutable_data(), R, L, b_mode);
    }
    return std::move(y);
}

// Backward of y = x * s with x viewed as (A, C, B) and s one value per C: (grad_x or None, grad_s or None). x may be
// None when only the plain sum over A and B is wanted (a bias gradient).
template <class T>
py::object scale_bwd_impl(py::handle gy_, py::object x_, py::object s_, int64_t A, int64_t C, int64_t B,
                          bool need_gx, bool need_gs) {
    const char* fn = "scale_backward";
    auto gy = as<T>(gy_, fn, "grad_y");
    if (A < 0 || C < 0 || B < 0 || gy.size() != A * C * B)
        fail(std::string(fn) + ": grad_y has " + std::to_string(gy.size()) + " elements, expected A*C*B = " +
             std::to_string(A) + "*" + std::to_string(C) + "*" + std::to_string(B));
    Arr<T> xk, sk;
    const T* x = nullptr;
    if (!x_.is_none()) {
        xk = as<T>(x_, fn, "x");
        same_shape(fn, gy, "grad_y", xk, "x");
        x = xk.data();
    }
    const T* s = opt_ptr<T>(s_, sk, fn, "scale", C);
    if (need_gx && !s) fail(std::string(fn) + ": grad_x needs 'scale'");
    Arr<T> gx, gs;
    if (need_gx) gx = empty<T>(shape_vec(gy));
    if (need_gs) gs = empty<T>({C});
    {
        py::gil_scoped_release rel;
        ks<T>().scale_backward(gy.data(), x, s, need_gx ? gx.mutable_data() : nullptr,
                               need_gs ? gs.mutable_data() : nullptr, A, C, B);
    }
    return py::make_tuple(need_gx ? py::object(gx) : py::none(), need_gs ? py::object(gs) : py::none());
}

}  // namespace

void bind_activation(py::module_& m) {
    using v64 = std::vector<int64_t>;
    using obj = py::object;
    using hnd = py::handle;
    py::enum_<fv::Pointwise> pointwise(m, "Pointwise", "kinds of _C.pointwise and of a native plan's unary step");
#define FV_PW_VALUE(id, pw_name) pointwise.value(#pw_name, fv::id);
    FV_POINTWISE_KINDS(FV_PW_VALUE)
#undef FV_PW_VALUE
    py::enum_<fv::UnaryStep>(m, "UnaryStep", "a native plan's unary steps with kernels of their own")
        .value("gelu", fv::kUnGelu).value("gelu_tanh", fv::kUnGeluTanh).value("silu", fv::kUnSilu);
    py::enum_<fv::BinaryOp>(m, "BinaryOp", "ops of the binary kernels").value("add", fv::kBinAdd).value("mul", fv::kBinMul);

    m.def("softmax_forward", [](hnd x, bool log) { return FV_DISPATCH(softmax_fwd_impl, is_f64(x), x, log); },
          py::arg("x"), py::arg("log") = false);
    m.def("softmax_backward", [](hnd gy, hnd y, bool log) {
        return FV_DISPATCH(softmax_bwd_impl, is_f64(gy) || is_f64(y), gy, y, log);
    }, py::arg("grad_y"), py::arg("y"), py::arg("log") = false);

    m.def("gelu_forward", [](hnd x, obj approx) { return FV_DISPATCH(gelu_fwd_impl, is_f64(x), x, approx); },
          py::arg("x"), py::arg("approximate") = "none");
    m.def("gelu_backward", [](hnd gy, hnd x, obj approx) {
        return FV_DISPATCH(gelu_bwd_impl, is_f64(gy) || is_f64(x), gy, x, approx);
    }, py::arg("grad_y"), py::arg("x"), py::arg("approximate") = "none");
    m.def("silu_forward", [](hnd x) { return FV_DISPATCH(silu_fwd_impl, is_f64(x), x); }, py::arg("x"));
    m.def("binary", [](hnd a, hnd b, const std::string& op, int64_t R, int64_t L, int b_mode, obj out) {
        return FV_DISPATCH(binary_impl, is_f64(a), a, b, op, R, L, b_mode, out);
    }, py::arg("a"), py::arg("b"), py::arg("op"), py::arg("rows"), py::arg("cols"), py::arg("b_mode"),
          py::arg("out") = py::none(),
          "a (rows, cols) + or * b given as (rows, cols), (rows, 1) or (1, cols): threaded, vectorised (out may be a: "
          "in place)");
    m.def("scale_backward", [](hnd gy, obj x, obj s, int64_t A, int64_t C, int64_t B, bool need_gx, bool need_gs) {
        return FV_DISPATCH(scale_bwd_impl, is_f64(gy), gy, x, s, A, C, B, need_gx, need_gs);
    }, py::arg("grad_y"), py::arg("x"), py::arg("scale"), py::arg("A"), py::arg("C"), py::arg("B"),
          py::arg("need_grad_x") = true, py::arg("need_grad_scale") = true,
          "backward of y = x * scale with x viewed as (A, C, B) and scale of C values: (grad_y * scale, sum over A and "
          "B of grad_y * x); x None: the plain sum (a bias gradient)");
    m.def("pointwise", [](hnd x, const std::string& kind, double lo, double hi, obj out) {
        return FV_DISPATCH(pointwise_impl, is_f64(x), x, kind, lo, hi, out);
    }, py::arg("x"), py::arg("kind"), py::arg("lo") = 0.0, py::arg("hi") = 0.0, py::arg("out") = py::none(),
          "y = relu / clamp(lo, hi) / sigmoid / hardswish / hardsigmoid / leaky_relu (slope lo) of x (out may be x: "
          "in place)");
    m.def("silu_backward", [](hnd gy, hnd x) { return FV_DISPATCH(silu_bwd_impl, is_f64(gy) || is_f64(x), gy, x); },
          py::arg("grad_y"), py::arg("x"));
    m.def("relu_backward", [](hnd gy, hnd y) { return FV_DISPATCH(relu_bwd_impl, is_f64(gy) || is_f64(y), gy, y); },
          py::arg("grad_y"), py::arg("y"), "ReLU's input gradient from its output y: 0 where y <= 0, grad_y elsewhere");
}
