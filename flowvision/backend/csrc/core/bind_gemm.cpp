// Bindings of the GEMM kernels (cpu/gemm.cpp): plain, and with one operand packed once plus a fused epilogue.
#include "core/bind_util.h"

namespace {

// ---------------------------------------------------------------- gemm
template <class T>
py::object gemm_impl(py::handle a_, py::handle b_, bool ta, bool tb) {
    auto a = as<T>(a_, "gemm", "a");
    auto b = as<T>(b_, "gemm", "b");
    const bool two_d = a.ndim() == 2 && b.ndim() == 2;
    if (!two_d && (a.ndim() != 3 || b.ndim() != 3))
        fail("gemm: expected a and b to be 3-D (batch, rows, cols), got shapes " + shp(a) + " and " + shp(b));
    const int o = two_d ? 0 : 1;
    const int64_t B = two_d ? 1 : a.shape(0);
    if (!two_d && b.shape(0) != B)
        fail("gemm: batch sizes differ: a " + shp(a) + ", b " + shp(b));
    const int64_t M = ta ? a.shape(o + 1) : a.shape(o), K = ta ? a.shape(o) : a.shape(o + 1);
    const int64_t K2 = tb ? b.shape(o + 1) : b.shape(o), N = tb ? b.shape(o) : b.shape(o + 1);
    if (K != K2) {
        std::ostringstream os;
        os << "gemm: inner dimensions differ: a " << shp(a) << (ta ? " (transposed)" : "") << " and b " << shp(b)
           << (tb ? " (transposed)" : "") << " give K=" << K << " vs " << K2;
        fail(os.str());
    }
    Arr<T> c = two_d ? empty<T>({M, N}) : empty<T>({B, M, N});
    {
        py::gil_scoped_release rel;
        ks<T>().gemm(a.data(), b.data(), c.mutable_data(), B, M, N, K, ta, tb);
    }
    return std::move(c);
}

template <class T>
PackedB pack_b_impl(py::handle b_, bool tb) {
    auto b = as<T>(b_, "pack_b", "b");
    need_ndim(b, 2, "pack_b", "b");
    PackedB pk;
    pk.K = tb ? b.shape(1) : b.shape(0);
    pk.N = tb ? b.shape(0) : b.shape(1);
    pk.f64 = sizeof(T) == 8;
    pk.isa = &table();
    // the micro-kernel uses aligned vector loads: over-allocate and start at a 64-byte boundary
    auto out = empty<T>({ks<T>().packed_b_size(pk.K, pk.N) + int64_t(64 / sizeof(T))});
    {
        py::gil_scoped_release rel;
        ks<T>().pack_b(b.data(), tb, pk.K, pk.N, packed_ptr(out.mutable_data()));
    }
    pk.data = std::move(out);
    return pk;
}

bool gemm_overlaps(const void* a, int64_t abytes, const void* b, int64_t bbytes) {
    const char* a0 = static_cast<const char*>(a);
    const char* b0 = static_cast<const char*>(b);
    return a0 < b0 + bbytes && b0 < a0 + abytes;
}

// out= of the packed GEMMs: the caller's writeable C-contiguous array of the output's shape and dtype (a plan's
// arena slot); None: a new array
template <class T>
Arr<T> gemm_out(const char* fn, py::object out_, const std::vector<int64_t>& shape) {
    if (out_.is_none()) return empty<T>(shape);
    const char* dt = sizeof(T) == 8 ? "float64" : "float32";
    if (!py::isinstance<py::array_t<T>>(out_))
        fail(std::string(fn) + ": out must be a numpy " + dt + " array (the packed weight's dtype)");
    auto o = py::reinterpret_borrow<py::array>(out_);
    if (!(o.flags() & py::array::c_style) || !o.writeable() ||
        std::vector<int64_t>(o.shape(), o.shape() + o.ndim()) != shape)
        fail(std::string(fn) + ": out must be a writeable C-contiguous " + dt + " array of shape " + vstr(shape) +
             ", got " + shp(o) + (o.flags() & py::array::c_style ? "" : " (not C-contiguous)") +
             (o.writeable() ? "" : " (read-only)"));
    return py::reinterpret_borrow<Arr<T>>(out_);
}

template <class T>
py::object gemm_packed_impl(py::handle a_, const PackedB& pk, py::object bias_, const std::string& ep,
                            py::object res_, double lo, double hi, py::object out_) {
    const char* fn = "gemm_packed";
    if (pk.isa != &table())
        fail(std::string(fn) + ": the weight was packed for ISA '" + pk.isa->isa + "' but '" + table().isa +
             "' is in use; pack it again");
    auto a = as<T>(a_, fn, "a");
    need_ndim(a, 2, fn, "a");
    if (a.shape(1) != pk.K) {
        std::ostringstream os;
        os << fn << ": a has shape " << shp(a) << " but the packed weight has K=" << pk.K << " (N=" << pk.N << ")";
        fail(os.str());
    }
    const int act = epilogue_code(ep);
    const int64_t M = a.shape(0);
    Arr<T> bk, rk;
    const T* bias = opt_ptr<T>(bias_, bk, fn, "bias", pk.N);
    const T* res = nullptr;
    if (!res_.is_none()) {
        rk = as<T>(res_, fn, "residual");
        if (rk.ndim() != 2 || rk.shape(0) != M || rk.shape(1) != pk.N)
            fail(std::string(fn) + ": residual must have shape (" + std::to_string(M) + ", " + std::to_string(pk.N) +
                 "), got " + shp(rk));
        res = rk.data();
    }
    auto c = gemm_out<T>(fn, out_, {M, pk.N});
    // the kernel reads a throughout; it reads each residual element right before writing that element of c, so
    // out may be the residual (exactly, not a shifted overlap)
    if (gemm_overlaps(c.data(), c.nbytes(), a.data(), a.nbytes()))
        fail(std::string(fn) + ": out must not overlap a");
    if (res && res != c.data() && gemm_overlaps(c.data(), c.nbytes(), res, rk.nbytes()))
        fail(std::string(fn) + ": out must be the residual itself or not overlap it");
    const T* bp = packed_ptr(static_cast<T*>(const_cast<void*>(pk.data.data())));
    {
        py::gil_scoped_release rel;
        ks<T>().gemm_packed(a.data(), M, pk.K, pk.N, bp, c.mutable_data(), bias, res, act, T(lo), T(hi));
    }
    return std::move(c);
}

template <class T>
PackedA pack_a_impl(py::handle a_) {
    auto a = as<T>(a_, "pack_a", "a");
    need_ndim(a, 2, "pack_a", "a");
    PackedA pk;
    pk.M = a.shape(0);
    pk.K = a.shape(1);
    pk.f64 = sizeof(T) == 8;
    pk.isa = &table();
    auto out = empty<T>({ks<T>().packed_a_size(pk.M, pk.K) + int64_t(64 / sizeof(T))});
    {
        py::gil_scoped_release rel;
        ks<T>().pack_a(a.data(), pk.M, pk.K, packed_ptr(out.mutable_data()));
    }
    pk.data = std::move(out);
    return pk;
}

template <class T>
py::object gemm_packed_a_impl(const PackedA& pk, py::handle b_, py::object bias_, const std::string& ep,
                              py::object res_, double lo, double hi, py::object out_) {
    const char* fn = "gemm_packed_a";
    if (pk.isa != &table())
        fail(std::string(fn) + ": the weight was packed for ISA '" + pk.isa->isa + "' but '" + table().isa +
             "' is in use; pack it again");
    auto b = as<T>(b_, fn, "b");
    if ((b.ndim() != 2 && b.ndim() != 3) || b.shape(b.ndim() - 2) != pk.K) {
        std::ostringstream os;
        os << fn << ": b must be (K, N) or (batch, K, N) with K=" << pk.K << ", got " << shp(b);
        fail(os.str());
    }
    const bool three = b.ndim() == 3;
    const int64_t batch = three ? b.shape(0) : 1, N = b.shape(b.ndim() - 1), M = pk.M;
    const int act = epilogue_code(ep);
    Arr<T> bk, rk;
    const T* bias = opt_ptr<T>(bias_, bk, fn, "bias", M);
    auto c = gemm_out<T>(fn, out_, three ? std::vector<int64_t>{batch, M, N} : std::vector<int64_t>{M, N});
    if (gemm_overlaps(c.data(), c.nbytes(), b.data(), b.nbytes())) fail(std::string(fn) + ": out must not overlap b");
    const T* res = nullptr;
    if (!res_.is_none()) {
        rk = as<T>(res_, fn, "residual");
        if (rk.ndim() != c.ndim() || rk.size() != c.size() || rk.shape(0) != c.shape(0) || rk.shape(rk.ndim() - 1) != c.shape(c.ndim() - 1))
            fail(std::string(fn) + ": residual must have the output's shape " + shp(c) + ", got " + shp(rk));
        // this kernel stores partial sums into c before it reads the residual: keep a copy if they share memory
        if (gemm_overlaps(c.data(), c.nbytes(), rk.data(), rk.nbytes())) rk = Arr<T>(rk.attr("copy")());
        res = rk.data();
    }
    const T* ap = packed_ptr(static_cast<T*>(const_cast<void*>(pk.data.data())));
    {
        py::gil_scoped_release rel;
        ks<T>().gemm_packed_a(ap, M, pk.K, N, batch, b.data(), c.mutable_data(), bias, res, act, T(lo), T(hi));
    }
    return std::move(c);
}

// y = epilogue(y) in place: the fused kernels' epilogue for results of a kernel that has none (the NCHW conv)
template <class T>
void epilogue_inplace_impl(py::handle y_, const std::string& ep, double lo, double hi) {
    const int act = epilogue_code(ep, "epilogue_inplace");
    if (!py::isinstance<py::array_t<T>>(y_)) fail("epilogue_inplace: y must be a float32 or float64 array");
    auto y = py::reinterpret_borrow<py::array>(y_);
    if (!(y.flags() & py::array::c_style) || !y.writeable())
        fail("epilogue_inplace: y must be a writeable C-contiguous array, got shape " + shp(y));
    T* p = static_cast<T*>(y.mutable_data());
    py::gil_scoped_release rel;
    ks<T>().epilogue(act, p, y.size(), T(lo), T(hi));
}

}  // namespace

// Shared with conv2d_nhwc and the plan executor (declared in core/bind_util.h).
int epilogue_code(const std::string& name, const char* fn) {
#define FV_EP_NAME(id, ep_name, after_store) #ep_name,
    static const char* const names[] = {FV_EPILOGUES(FV_EP_NAME)};
#undef FV_EP_NAME
    std::string known;
    for (int i = 0; i < fv::kEpCount; ++i) {
        if (name == names[i]) return i;
        known += (i ? ", " : "") + std::string(names[i]);
    }
    fail(std::string(fn) + ": unknown epilogue '" + name + "' (" + known + ")");
}

void bind_gemm(py::module_& m) {
    using v64 = std::vector<int64_t>;
    using obj = py::object;
    using hnd = py::handle;
    py::enum_<fv::Epilogue> epilogue(m, "Epilogue", "fused epilogues of the packed GEMM and NHWC conv kernels");
#define FV_EP_VALUE(id, ep_name, after_store) epilogue.value(#ep_name, fv::id);
    FV_EPILOGUES(FV_EP_VALUE)
#undef FV_EP_VALUE

    m.def("epilogue_inplace", [](hnd y, const std::string& ep, double lo, double hi) {
        FV_DISPATCH(epilogue_inplace_impl, is_f64(y), y, ep, lo, hi);
    }, py::arg("y"), py::arg("epilogue"), py::arg("lo") = 0.0, py::arg("hi") = 0.0,
          "y = epilogue(y) in place (float32 / float64, C-contiguous): the fused kernels' epilogue math");
    m.def("gemm", [](hnd a, hnd b, bool ta, bool tb) { return FV_DISPATCH(gemm_impl, is_f64(a) || is_f64(b), a, b, ta, tb); },
          py::arg("a"), py::arg("b"), py::arg("trans_a") = false, py::arg("trans_b") = false);

    py::class_<PackedB>(m, "PackedB", "A GEMM right-hand side packed once for the ISA in use (from pack_b)")
        .def_readonly("K", &PackedB::K)
        .def_readonly("N", &PackedB::N)
        .def_property_readonly("dtype", [](const PackedB& p) { return p.data.dtype(); })
        .def_property_readonly("isa", [](const PackedB& p) { return std::string(p.isa->isa); })
        .def_property_readonly("nbytes", [](const PackedB& p) { return p.data.nbytes(); })
        .def("__repr__", [](const PackedB& p) {
            return "PackedB(K=" + std::to_string(p.K) + ", N=" + std::to_string(p.N) + ", " +
                   (p.f64 ? "float64" : "float32") + ", isa=" + p.isa->isa + ")";
        });
    m.def("pack_b", [](hnd b, bool tb) { return is_f64(b) ? pack_b_impl<double>(b, tb) : pack_b_impl<float>(b, tb); },
          py::arg("b"), py::arg("trans_b") = false,
          "Pack the right-hand side of C = A @ op(B) once (op(B) is (K, N); trans_b: b is (N, K), a Linear weight)");
    m.def("gemm_packed", [](hnd a, const PackedB& pk, obj bias, const std::string& ep, obj res, double lo, double hi,
                            obj out) {
        return pk.f64 ? gemm_packed_impl<double>(a, pk, bias, ep, res, lo, hi, out)
                      : gemm_packed_impl<float>(a, pk, bias, ep, res, lo, hi, out);
    }, py::arg("a"), py::arg("packed"), py::arg("bias") = py::none(), py::arg("epilogue") = "none",
       py::arg("residual") = py::none(), py::arg("lo") = 0.0, py::arg("hi") = 0.0, py::arg("out") = py::none(),
       "C = epilogue(a @ packed + bias + residual); a (M, K) is cast to the packed dtype; epilogue: none, relu, "
       "relu6, gelu, gelu_tanh, silu, hardswish, clamp (to [lo, hi]), leaky_relu (slope lo); out: a writeable "
       "C-contiguous (M, N) array to write C into (may be the residual itself, must not overlap a)");
    py::class_<PackedA>(m, "PackedA", "A GEMM left-hand side (e.g. a 1x1 conv weight) packed once (from pack_a)")
        .def_readonly("M", &PackedA::M)
        .def_readonly("K", &PackedA::K)
        .def_property_readonly("dtype", [](const PackedA& p) { return p.data.dtype(); })
        .def_property_readonly("isa", [](const PackedA& p) { return std::string(p.isa->isa); })
        .def_property_readonly("nbytes", [](const PackedA& p) { return p.data.nbytes(); })
        .def("__repr__", [](const PackedA& p) {
            return "PackedA(M=" + std::to_string(p.M) + ", K=" + std::to_string(p.K) + ", " +
                   (p.f64 ? "float64" : "float32") + ", isa=" + p.isa->isa + ")";
        });
    m.def("pack_a", [](hnd a) { return is_f64(a) ? pack_a_impl<double>(a) : pack_a_impl<float>(a); }, py::arg("a"),
          "Pack the left operand A (M, K) of C = A @ B once (a 1x1 convolution weight (O, C))");
    m.def("gemm_packed_a", [](const PackedA& pk, hnd b, obj bias, const std::string& ep, obj res, double lo, double hi,
                              obj out) {
        return pk.f64 ? gemm_packed_a_impl<double>(pk, b, bias, ep, res, lo, hi, out)
                      : gemm_packed_a_impl<float>(pk, b, bias, ep, res, lo, hi, out);
    }, py::arg("packed"), py::arg("b"), py::arg("bias") = py::none(), py::arg("epilogue") = "none",
       py::arg("residual") = py::none(), py::arg("lo") = 0.0, py::arg("hi") = 0.0, py::arg("out") = py::none(),
       "C[i] = epilogue(packed @ b[i] + bias[:, None] + residual[i]) for b (K, N) or (batch, K, N): an NCHW 1x1 "
       "stride-1 convolution with x reshaped to (N, C, H*W); bias is per output row (channel); out: a writeable C-contiguous array of the output's shape (may share memory with the residual: it is copied first)");
}
