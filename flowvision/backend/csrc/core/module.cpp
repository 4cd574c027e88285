// flowvision.backend._C: pybind11 bindings, argument/shape validation, ISA dispatch.
// Compiled for baseline x86-64; the kernels live in cpu/*.cpp, compiled once per ISA.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/bind_util.h"
#include "core/threadpool.h"
#include "cpu/kernels.h"

namespace py = pybind11;
void bind_detection(py::module_& m);  // core/bind_detection.cpp
void bind_attention(py::module_& m);  // core/bind_attention.cpp
void bind_window(py::module_& m);  // core/bind_window.cpp
void bind_executor(py::module_& m);  // core/executor.cpp
using fv::ConvParams;
using fv::InterpParams;
using fv::PoolParams;

namespace {

// ---------------------------------------------------------------- ISA dispatch
enum Isa { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };
const char* kIsaNames[] = {"portable", "avx2", "avx512"};

KernelTable g_tables[3];
std::atomic<const KernelTable*> g_current{nullptr};
int g_supported = kPortable;
std::string g_isa_reason;  // why the table in use was chosen (flowvision info prints it)

// The highest kernel ISA this CPU and OS support, and why. __builtin_cpu_supports also checks that the OS saves the
// wider registers (XCR0), so a VM that hides AVX-512 state is reported as AVX2.
int detect_isa(std::string& why) {
#if (defined(__x86_64__) || defined(__i386__)) && !defined(FV_PORTABLE_ONLY)
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const bool f16c = __builtin_cpu_supports("f16c");
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    if (avx512 && avx2 && f16c) {
        why = "the CPU has AVX-512 F/BW/DQ/VL";
        return kAvx512;
    }
    if (avx2 && f16c) {
        why = avx512 ? "the CPU has AVX-512 F/BW/DQ/VL but not F16C" : "the CPU has AVX2, FMA and F16C but not AVX-512 F/BW/DQ/VL";
        return kAvx2;
    }
    why = "the CPU lacks AVX2, FMA or F16C";
    return kPortable;
#else
    why = "this build has portable kernels only";
    return kPortable;
#endif
}

int parse_isa(const std::string& s) {
    for (int i = 0; i < 3; ++i)
        if (s == kIsaNames[i]) return i;
    throw std::invalid_argument("unknown ISA '" + s + "' (expected portable, avx2 or avx512)");
}

// cpuid first; then only the tables of supported ISAs are filled, so no code compiled for a higher ISA is ever
// reachable on this CPU (the other tables stay null and _set_isa_for_testing refuses them).
void init_dispatch() {
    std::string why;
    g_supported = detect_isa(why);
    g_tables[kPortable].isa = kIsaNames[kPortable];
    fv::portable::fill_table(g_tables[kPortable]);
#ifndef FV_PORTABLE_ONLY
    if (g_supported >= kAvx2) {
        g_tables[kAvx2].isa = kIsaNames[kAvx2];
        fv::avx2::fill_table(g_tables[kAvx2]);
    }
    if (g_supported >= kAvx512) {
        g_tables[kAvx512].isa = kIsaNames[kAvx512];
        fv::avx512::fill_table(g_tables[kAvx512]);
    }
#endif
    int chosen = g_supported;
    g_isa_reason = why;
    if (const char* env = std::getenv("FLOWVISION_ISA")) {
        std::string s(env);
        if (!s.empty()) {
            int want = -1;
            try {
                want = parse_isa(s);
            } catch (const std::invalid_argument&) {
                g_isa_reason = why + "; FLOWVISION_ISA=" + s + " is not an ISA (portable, avx2, avx512) and was ignored";
            }
            if (want >= 0 && want < chosen) {
                chosen = want;
                g_isa_reason = "forced by FLOWVISION_ISA=" + s + "; " + why;
            } else if (want > chosen) {
                g_isa_reason = why + "; FLOWVISION_ISA=" + s + " asks for more than the CPU has and was ignored";
            }
        }
    }
    g_current.store(&g_tables[chosen]);
}

}  // namespace

const KernelTable& table() { return *g_current.load(std::memory_order_acquire); }

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

int parse_epilogue(const std::string& s) {
    static const char* names[] = {"none", "relu", "relu6", "gelu", "gelu_tanh", "silu", "hardswish", "clamp"};
    for (int i = 0; i < 8; ++i)
        if (s == names[i]) return i;
    fail("gemm_packed: unknown epilogue '" + s + "' (none, relu, relu6, gelu, gelu_tanh, silu, hardswish, clamp)");
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
    const int act = parse_epilogue(ep);
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
    const int act = parse_epilogue(ep);
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

// ---------------------------------------------------------------- conv
ConvParams conv_params(const char* fn, const std::vector<int64_t>& xs, const std::vector<int64_t>& ws,
                       const std::vector<int64_t>& stride_, const std::vector<int64_t>& pad_,
                       const std::vector<int64_t>& dil_, int64_t groups) {
    auto st = pair(stride_, fn, "stride"), pd = pair(pad_, fn, "padding"), dl = pair(dil_, fn, "dilation");
    if (xs.size() != 4) fail(std::string(fn) + ": input must be 4-D (N, C, H, W), got shape " + vstr(xs));
    if (ws.size() != 4) fail(std::string(fn) + ": weight must be 4-D (O, C/groups, kh, kw), got shape " + vstr(ws));
    if (groups < 1) fail(std::string(fn) + ": groups must be >= 1, got " + std::to_string(groups));
    if (st[0] < 1 || st[1] < 1 || dl[0] < 1 || dl[1] < 1 || pd[0] < 0 || pd[1] < 0)
        fail(std::string(fn) + ": invalid stride " + vstr(st) + ", padding " + vstr(pd) + " or dilation " + vstr(dl));
    ConvParams p;
    p.N = xs[0]; p.C = xs[1]; p.H = xs[2]; p.W = xs[3];
    p.O = ws[0]; p.kh = ws[2]; p.kw = ws[3];
    p.sh = st[0]; p.sw = st[1]; p.ph = pd[0]; p.pw = pd[1]; p.dh = dl[0]; p.dw = dl[1];
    p.groups = groups;
    if (p.C % groups != 0 || p.O % groups != 0 || ws[1] * groups != p.C || p.kh < 1 || p.kw < 1) {
        std::ostringstream os;
        os << fn << ": input " << vstr(xs) << " and weight " << vstr(ws) << " are incompatible with groups=" << groups
           << " (need weight (O, C/groups, kh, kw) with O divisible by groups)";
        fail(os.str());
    }
    const int64_t eh = p.H + 2 * p.ph - p.dh * (p.kh - 1) - 1, ew = p.W + 2 * p.pw - p.dw * (p.kw - 1) - 1;
    if (eh < 0 || ew < 0) {
        std::ostringstream os;
        os << fn << ": kernel " << vstr({p.kh, p.kw}) << " with dilation " << vstr(dl) << " does not fit input "
           << vstr(xs) << " padded by " << vstr(pd);
        fail(os.str());
    }
    p.OH = eh / p.sh + 1;
    p.OW = ew / p.sw + 1;
    return p;
}

std::vector<int64_t> shape_vec(const py::array& a) {
    std::vector<int64_t> v;
    for (py::ssize_t i = 0; i < a.ndim(); ++i) v.push_back(a.shape(i));
    return v;
}

template <class T>
py::object conv2d_forward_impl(py::handle x_, py::handle w_, py::object bias_, std::vector<int64_t> stride,
                               std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups) {
    const char* fn = "conv2d_forward";
    auto x = as<T>(x_, fn, "x");
    auto w = as<T>(w_, fn, "weight");
    ConvParams p = conv_params(fn, shape_vec(x), shape_vec(w), stride, padding, dilation, groups);
    Arr<T> bk;
    const T* bias = opt_ptr<T>(bias_, bk, fn, "bias", p.O);
    auto y = empty<T>({p.N, p.O, p.OH, p.OW});
    {
        py::gil_scoped_release rel;
        ks<T>().conv2d_forward(x.data(), w.data(), bias, y.mutable_data(), p);
    }
    return std::move(y);
}

void check_grad_out(const char* fn, const py::array& gy, const ConvParams& p) {
    std::vector<int64_t> want{p.N, p.O, p.OH, p.OW};
    if (shape_vec(gy) != want)
        fail(std::string(fn) + ": grad_y has shape " + shp(gy) + " but the convolution output shape is " + vstr(want));
}

template <class T>
py::object conv2d_backward_input_impl(py::handle gy_, py::handle w_, std::vector<int64_t> input_shape,
                                      std::vector<int64_t> stride, std::vector<int64_t> padding,
                                      std::vector<int64_t> dilation, int64_t groups) {
    const char* fn = "conv2d_backward_input";
    auto gy = as<T>(gy_, fn, "grad_y");
    auto w = as<T>(w_, fn, "weight");
    ConvParams p = conv_params(fn, input_shape, shape_vec(w), stride, padding, dilation, groups);
    check_grad_out(fn, gy, p);
    auto gx = empty<T>({p.N, p.C, p.H, p.W});
    {
        py::gil_scoped_release rel;
        ks<T>().conv2d_backward_input(gy.data(), w.data(), gx.mutable_data(), p);
    }
    return std::move(gx);
}

template <class T>
py::object conv2d_backward_weight_impl(py::handle gy_, py::handle x_, std::vector<int64_t> weight_shape,
                                       std::vector<int64_t> stride, std::vector<int64_t> padding,
                                       std::vector<int64_t> dilation, int64_t groups) {
    const char* fn = "conv2d_backward_weight";
    auto gy = as<T>(gy_, fn, "grad_y");
    auto x = as<T>(x_, fn, "x");
    ConvParams p = conv_params(fn, shape_vec(x), weight_shape, stride, padding, dilation, groups);
    check_grad_out(fn, gy, p);
    auto gw = empty<T>(weight_shape);
    {
        py::gil_scoped_release rel;
        ks<T>().conv2d_backward_weight(gy.data(), x.data(), gw.mutable_data(), p);
    }
    return std::move(gw);
}

ConvParams unfold_params(const char* fn, int64_t N, int64_t C, int64_t H, int64_t W, std::vector<int64_t> kernel,
                         std::vector<int64_t> dilation, std::vector<int64_t> padding, std::vector<int64_t> stride) {
    auto k = pair(kernel, fn, "kernel_size");
    return conv_params(fn, {N, C, H, W}, {1, C, k[0], k[1]}, stride, padding, dilation, 1);
}

template <class T>
py::object im2col_impl(py::handle x_, std::vector<int64_t> kernel, std::vector<int64_t> dilation,
                       std::vector<int64_t> padding, std::vector<int64_t> stride) {
    const char* fn = "im2col";
    auto x = as<T>(x_, fn, "x");
    need_ndim(x, 4, fn, "x");
    ConvParams p = unfold_params(fn, x.shape(0), x.shape(1), x.shape(2), x.shape(3), kernel, dilation, padding, stride);
    auto cols = empty<T>({p.N, p.C * p.kh * p.kw, p.OH * p.OW});
    {
        py::gil_scoped_release rel;
        ks<T>().im2col(x.data(), cols.mutable_data(), p);
    }
    return std::move(cols);
}

template <class T>
py::object col2im_impl(py::handle c_, std::vector<int64_t> out_hw, std::vector<int64_t> kernel,
                       std::vector<int64_t> dilation, std::vector<int64_t> padding, std::vector<int64_t> stride) {
    const char* fn = "col2im";
    auto cols = as<T>(c_, fn, "cols");
    need_ndim(cols, 3, fn, "cols");
    auto k = pair(kernel, fn, "kernel_size");
    auto o = pair(out_hw, fn, "output_size");
    if (k[0] < 1 || k[1] < 1)  // before the modulo below (kernel_size 0 was an integer division by zero)
        fail(std::string(fn) + ": kernel_size must be positive, got " + vstr(k));
    if (cols.shape(1) % (k[0] * k[1]) != 0)
        fail(std::string(fn) + ": cols shape " + shp(cols) + " dim 1 is not divisible by kernel size " + vstr(k));
    const int64_t C = cols.shape(1) / (k[0] * k[1]);
    ConvParams p = unfold_params(fn, cols.shape(0), C, o[0], o[1], kernel, dilation, padding, stride);
    if (cols.shape(2) != p.OH * p.OW)
        fail(std::string(fn) + ": cols shape " + shp(cols) + " has " + std::to_string(cols.shape(2)) +
             " blocks but output_size " + vstr(o) + " gives " + std::to_string(p.OH * p.OW));
    auto x = empty<T>({p.N, C, o[0], o[1]});
    {
        py::gil_scoped_release rel;
        ks<T>().col2im(cols.data(), x.mutable_data(), p);
    }
    return std::move(x);
}

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

// ---------------------------------------------------------------- normalisation
// ---------------------------------------------------------------- NHWC inference kernels (float32)
// Convolution weights packed once for the ISA in use (pack_conv), applied to NHWC activations by conv2d_nhwc;
// NHWC pooling. Used by the eager inference fast path and the captured inference path.
PackedConv pack_conv_impl(py::handle w_, int64_t groups) {
    const char* fn = "pack_conv";
    need_f32(fn, "w", w_);
    auto w = as<float>(w_, fn, "w");
    need_ndim(w, 4, fn, "w");
    if (groups < 1) fail(std::string(fn) + ": groups must be >= 1, got " + std::to_string(groups));
    PackedConv pk;
    pk.O = w.shape(0);
    pk.C = w.shape(1) * groups;
    pk.KH = w.shape(2);
    pk.KW = w.shape(3);
    pk.groups = groups;
    pk.isa = &table();
    if (pk.O < 1 || w.shape(1) < 1 || pk.KH < 1 || pk.KW < 1 || pk.O % groups != 0)
        fail(std::string(fn) + ": weight " + shp(w) + " must be (O, C/groups, KH, KW) with positive sizes and O "
             "divisible by groups=" + std::to_string(groups));
    fv::ConvNhwcParams p{};
    p.O = pk.O; p.C = pk.C; p.KH = pk.KH; p.KW = pk.KW; p.groups = groups;
    const auto& nk = table().nhwc;
    const bool one = pk.KH == 1 && pk.KW == 1 && groups == 1;
    auto out = empty<float>({one ? int64_t(1) : nk.conv_packed_size(p) + 16});
    Arr<float> g;
    if (one) g = empty<float>({ks<float>().packed_b_size(pk.C, pk.O) + 16});
    {
        py::gil_scoped_release rel;
        if (!one) nk.conv_pack(w.data(), packed_ptr(out.mutable_data()), p);
        // the (O, C) weight is op(B) transposed for C(pixels, O) = X(pixels, C) @ W^T
        if (one) ks<float>().pack_b(w.data(), true, pk.C, pk.O, packed_ptr(g.mutable_data()));
    }
    pk.data = std::move(out);
    if (one) pk.gemm = std::move(g);
    pk.has_gemm = one;
    return pk;
}

bool overlaps(const py::array& a, const py::array& b) {
    const char* a0 = static_cast<const char*>(a.data());
    const char* b0 = static_cast<const char*>(b.data());
    return a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

}  // namespace

// Shared with core/executor.cpp (declared in core/bind_util.h): the checks and the compute of conv2d_nhwc.
fv::ConvNhwcParams conv_nhwc_params(const char* fn, const PackedConv& pk, const std::vector<int64_t>& xshape,
                                    const std::vector<int64_t>& stride_, const std::vector<int64_t>& pad_,
                                    const std::vector<int64_t>& dil_) {
    if (pk.isa != &table())
        fail(std::string(fn) + ": the weight was packed for ISA '" + pk.isa->isa + "' but '" + table().isa +
             "' is in use; pack it again");
    if (xshape.size() != 4 || xshape[3] != pk.C) {
        std::ostringstream os;
        os << fn << ": x must be (N, H, W, C) with C=" << pk.C << " (the packed weight's input channels), got "
           << vstr(xshape);
        fail(os.str());
    }
    auto st = pair(stride_, fn, "stride"), pd = pair(pad_, fn, "padding"), dl = pair(dil_, fn, "dilation");
    if (st[0] < 1 || st[1] < 1 || dl[0] < 1 || dl[1] < 1 || pd[0] < 0 || pd[1] < 0)
        fail(std::string(fn) + ": invalid stride " + vstr(st) + ", padding " + vstr(pd) + " or dilation " + vstr(dl));
    fv::ConvNhwcParams p{};
    p.N = xshape[0]; p.H = xshape[1]; p.W = xshape[2]; p.C = pk.C;
    p.O = pk.O; p.KH = pk.KH; p.KW = pk.KW; p.groups = pk.groups;
    p.sh = st[0]; p.sw = st[1]; p.ph = pd[0]; p.pw = pd[1]; p.dh = dl[0]; p.dw = dl[1];
    const int64_t eh = p.H + 2 * p.ph - p.dh * (p.KH - 1) - 1, ew = p.W + 2 * p.pw - p.dw * (p.KW - 1) - 1;
    if (eh < 0 || ew < 0) {
        std::ostringstream os;
        os << fn << ": kernel " << vstr({p.KH, p.KW}) << " with dilation " << vstr(dl) << " does not fit input "
           << vstr(xshape) << " padded by " << vstr(pd);
        fail(os.str());
    }
    p.OH = eh / p.sh + 1;
    p.OW = ew / p.sw + 1;
    return p;
}

bool conv_nhwc_gathers(const PackedConv& pk, const fv::ConvNhwcParams& p) {
    return pk.has_gemm && (p.sh != 1 || p.sw != 1 || p.ph != 0 || p.pw != 0);
}

void conv_nhwc_compute(const PackedConv& pk, const fv::ConvNhwcParams& p, const float* x, const float* bias,
                       const float* res, float* yp, int act, float lo, float hi, float* gathered, float* nhwc_tmp) {
    if (pk.has_gemm) {
        const float* xa = x;
        if (conv_nhwc_gathers(pk, p)) {
            float* g = gathered;
            // threaded over output rows, like the GEMM that follows (it was the one serial part of the op)
            const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(1, p.OW * p.C));
            fv::parallel_for(0, p.N * p.OH, grain, [&](int64_t r0, int64_t r1) {
                for (int64_t r = r0; r < r1; ++r) {
                    const int64_t n = r / p.OH, oh = r % p.OH, ih = oh * p.sh - p.ph;
                    for (int64_t ow = 0; ow < p.OW; ++ow) {
                        const int64_t iw = ow * p.sw - p.pw;
                        float* d = g + (r * p.OW + ow) * p.C;
                        if (ih >= 0 && ih < p.H && iw >= 0 && iw < p.W)
                            std::memcpy(d, x + ((n * p.H + ih) * p.W + iw) * p.C, sizeof(float) * p.C);
                        else
                            std::memset(d, 0, sizeof(float) * p.C);
                    }
                }
            });
            xa = gathered;
        }
        const float* bp = packed_ptr(static_cast<float*>(const_cast<void*>(pk.gemm.data())));
        float* yg = p.out_nchw ? nhwc_tmp : yp;
        ks<float>().gemm_packed(xa, p.N * p.OH * p.OW, p.C, p.O, bp, yg, bias, res, act, lo, hi);
        if (p.out_nchw) table().nhwc.transpose(yg, yp, p.N, p.OH * p.OW, p.O);
    } else {
        const float* wp = packed_ptr(static_cast<float*>(const_cast<void*>(pk.data.data())));
        table().nhwc.conv_forward(x, wp, bias, res, yp, p, act, lo, hi);
    }
}

// shared with core/executor.cpp (the plan's channel_gate step)
int channel_gate_act(const char* fn, const std::string& kind) {
    if (kind == "sigmoid") return fv::kPwSigmoid;
    if (kind == "hardsigmoid") return fv::kPwHardsigmoid;
    if (kind != "none") fail(std::string(fn) + ": unknown kind '" + kind + "' (sigmoid, hardsigmoid, none)");
    return -1;
}

void channel_gate_compute(const float* x, const float* gate, float* y, float* act_tmp, int64_t N, int64_t P,
                          int64_t C, int act) {
    if (act >= 0) {
        ks<float>().pointwise(act, gate, act_tmp, N * C, 0.0f, 0.0f);
        gate = act_tmp;
    }
    table().nhwc.channel_scale(x, gate, y, N, P, C);
}

namespace {

py::object conv2d_nhwc_impl(py::handle x_, const PackedConv& pk, py::object bias_, std::vector<int64_t> stride_,
                            std::vector<int64_t> pad_, std::vector<int64_t> dil_, const std::string& ep,
                            py::object res_, double lo, double hi, py::object out_, bool nchw_out = false) {
    const char* fn = nchw_out ? "conv2d_nhwc_to_nchw" : "conv2d_nhwc";
    if (pk.isa != &table())
        fail(std::string(fn) + ": the weight was packed for ISA '" + pk.isa->isa + "' but '" + table().isa +
             "' is in use; pack it again");
    need_f32(fn, "x", x_);
    auto x = as<float>(x_, fn, "x");
    static const char* names[] = {"none", "relu", "relu6", "gelu", "gelu_tanh", "silu", "hardswish", "clamp"};
    int act = -1;
    for (int i = 0; i < 8; ++i)
        if (ep == names[i]) act = i;
    fv::ConvNhwcParams p = conv_nhwc_params(fn, pk, shape_vec(x), stride_, pad_, dil_);
    if (act < 0)
        fail(std::string(fn) + ": unknown epilogue '" + ep + "' (none, relu, relu6, gelu, gelu_tanh, silu, hardswish, clamp)");
    p.out_nchw = nchw_out ? 1 : 0;
    const std::vector<int64_t> oshape = nchw_out ? std::vector<int64_t>{p.N, p.O, p.OH, p.OW}
                                                 : std::vector<int64_t>{p.N, p.OH, p.OW, p.O};
    Arr<float> bk, rk;
    const float* bias = opt_ptr<float>(bias_, bk, fn, "bias", p.O);
    py::array y;
    if (out_.is_none()) {
        y = empty<float>(oshape);
    } else {
        need_f32(fn, "out", out_);
        y = py::reinterpret_borrow<py::array>(out_);
        if (shape_vec(y) != oshape || !(y.flags() & py::array::c_style) || !y.writeable())
            fail(std::string(fn) + ": out must be a writeable C-contiguous float32 array of shape " + vstr(oshape) +
                 ", got " + shp(y));
        if (overlaps(y, x)) fail(std::string(fn) + ": out must not overlap x");
    }
    const float* res = nullptr;
    if (!res_.is_none()) {
        rk = as<float>(res_, fn, "residual");
        if (shape_vec(rk) != oshape)
            fail(std::string(fn) + ": residual must have the output's shape " + vstr(oshape) + ", got " + shp(rk));
        res = rk.data();
    }
    float* yp = static_cast<float*>(y.mutable_data());
    const bool gemm = pk.has_gemm;
    // a strided or padded 1x1 gathers its input pixels (zeros where the pixel is padding) into a compact
    // (N, OH, OW, C) copy first; an NCHW output is computed NHWC and transposed
    Arr<float> xg, yt;
    if (conv_nhwc_gathers(pk, p)) xg = empty<float>({p.N, p.OH, p.OW, p.C});
    if (gemm && nchw_out) yt = empty<float>({p.N, p.OH, p.OW, p.O});
    if (gemm && res && overlaps(rk, y)) {  // the GEMM writes partial sums into y before reading the residual
        py::object copy = rk.attr("copy")();
        rk = as<float>(copy, fn, "residual");
        res = rk.data();
    }
    {
        py::gil_scoped_release rel;
        conv_nhwc_compute(pk, p, x.data(), bias, res, yp, act, float(lo), float(hi),
                          conv_nhwc_gathers(pk, p) ? xg.mutable_data() : nullptr,
                          gemm && nchw_out ? yt.mutable_data() : nullptr);
    }
    return std::move(y);
}

Arr<float> nhwc_input(const char* fn, py::handle x_) {
    need_f32(fn, "x", x_);
    auto x = as<float>(x_, fn, "x");
    if (x.ndim() != 4) fail(std::string(fn) + ": x must be 4-D (N, H, W, C), got shape " + shp(x));
    return x;
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

py::object layout_impl(py::handle x_, bool to_nhwc) {
    const char* fn = to_nhwc ? "nchw_to_nhwc" : "nhwc_to_nchw";
    need_f32(fn, "x", x_);
    auto x = as<float>(x_, fn, "x");
    need_ndim(x, 4, fn, "x");
    const int64_t N = x.shape(0);
    // NCHW -> NHWC: per image (C, H*W) -> (H*W, C); NHWC -> NCHW: (H*W, C) -> (C, H*W)
    const int64_t rows = to_nhwc ? x.shape(1) : x.shape(1) * x.shape(2);
    const int64_t cols = to_nhwc ? x.shape(2) * x.shape(3) : x.shape(3);
    auto y = to_nhwc ? empty<float>({N, x.shape(2), x.shape(3), x.shape(1)})
                     : empty<float>({N, x.shape(3), x.shape(1), x.shape(2)});
    {
        py::gil_scoped_release rel;
        table().nhwc.transpose(x.data(), y.mutable_data(), N, rows, cols);
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

// Squeeze-excitation gate over NHWC x: y = x * act(gate) per (image, channel); act computed once per gate value
// by the pointwise kernel (so equal to _C.pointwise(gate, kind) then a broadcast multiply, bit for bit).
py::object channel_gate_nhwc_impl(py::handle x_, py::handle gate_, const std::string& kind, py::object out_) {
    const char* fn = "channel_gate_nhwc";
    auto x = nhwc_input(fn, x_);
    const int64_t N = x.shape(0), P = x.shape(1) * x.shape(2), C = x.shape(3);
    need_f32(fn, "gate", gate_);
    auto g = as<float>(gate_, fn, "gate");
    if (g.ndim() < 1 || g.shape(0) != N || g.size() != N * C)
        fail(std::string(fn) + ": gate must hold one value per (image, channel) of x " + shp(x) +
             ", e.g. (N, C) or (N, 1, 1, C), got " + shp(g));
    const int act = channel_gate_act(fn, kind);
    py::array y;
    if (out_.is_none()) {
        y = empty<float>({x.shape(0), x.shape(1), x.shape(2), C});
    } else {
        need_f32(fn, "out", out_);
        y = py::reinterpret_borrow<py::array>(out_);
        if (shape_vec(y) != shape_vec(x) || !(y.flags() & py::array::c_style) || !y.writeable())
            fail(std::string(fn) + ": out must be a writeable C-contiguous float32 array of x's shape " + shp(x) +
                 ", got " + shp(y));
        // in place (out is x) is fine: each element is read right before it is written
        if (y.data() != x.data() && overlaps(y, x)) fail(std::string(fn) + ": out must be x itself or not overlap it");
    }
    Arr<float> ga;
    if (act >= 0) ga = empty<float>({N * C});
    {
        py::gil_scoped_release rel;
        channel_gate_compute(x.data(), g.data(), static_cast<float*>(y.mutable_data()),
                             act >= 0 ? ga.mutable_data() : nullptr, N, P, C, act);
    }
    return std::move(y);
}

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

void same_shape(const char* fn, const py::array& a, const char* an, const py::array& b, const char* bn) {
    if (shape_vec(a) != shape_vec(b))
        fail(std::string(fn) + ": " + an + " shape " + shp(a) + " and " + bn + " shape " + shp(b) + " differ");
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

std::pair<int64_t, int64_t> rows_cols(const char* fn, const py::array& x) {
    if (x.ndim() < 1) fail(std::string(fn) + ": input must be at least 1-D, got shape " + shp(x));
    int64_t N = x.shape(x.ndim() - 1), M = 1;
    for (py::ssize_t i = 0; i + 1 < x.ndim(); ++i) M *= x.shape(i);
    return {M, N};
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
template <class T>
py::object silu_bwd_impl(py::handle gy_, py::handle x_) {
    auto gy = as<T>(gy_, "silu_backward", "grad_y");
    auto x = as<T>(x_, "silu_backward", "x");
    same_shape("silu_backward", gy, "grad_y", x, "x");
    auto gx = empty<T>(shape_vec(x));
    {
        py::gil_scoped_release rel;
        ks<T>().silu_backward(gy.data(), x.data(), gx.mutable_data(), x.size());
    }
    return std::move(gx);
}

// y = f(x) for the pointwise activations; out may be x itself (in place) or a fresh array of x's shape.
int pointwise_kind(const std::string& k) {
    static const char* names[] = {"relu", "clamp", "sigmoid", "hardswish", "hardsigmoid"};
    for (int i = 0; i < 5; ++i)
        if (k == names[i]) return i;
    fail("pointwise: unknown kind '" + k + "' (relu, clamp, sigmoid, hardswish, hardsigmoid)");
    return -1;
}
template <class T>
py::object pointwise_impl(py::handle x_, const std::string& kind, double lo, double hi, py::object out_) {
    const int k = pointwise_kind(kind);
    auto x = as<T>(x_, "pointwise", "x");
    Arr<T> y;
    if (out_.is_none()) {
        y = empty<T>(shape_vec(x));
    } else {
        if (!py::isinstance<py::array_t<T>>(out_)) fail("pointwise: out must be an array of x's dtype");
        auto o = py::reinterpret_borrow<py::array>(out_);
        if (!(o.flags() & py::array::c_style) || !o.writeable() || o.ndim() != x.ndim() ||
            !std::equal(o.shape(), o.shape() + o.ndim(), x.shape()))
            fail("pointwise: out must be a writeable C-contiguous array of x's shape, got " + shp(o) + " for x " +
                 shp(x));
        y = py::reinterpret_borrow<Arr<T>>(out_);
    }
    {
        py::gil_scoped_release rel;
        ks<T>().pointwise(k, x.data(), y.mutable_data(), x.size(), T(lo), T(hi));
    }
    return std::move(y);
}

// y = a + b or a * b with a viewed as (R, L) and b as (R, L), (R, 1) or (1, L) (b_mode 0/1/2); the caller (the
// Add/Mul ops) has checked dtypes, contiguity and the broadcast pattern.
template <class T>
py::object binary_impl(py::handle a_, py::handle b_, const std::string& op, int64_t R, int64_t L, int b_mode) {
    if (op != "add" && op != "mul") fail("binary: unknown op '" + op + "' (add, mul)");
    if (b_mode < 0 || b_mode > 2) fail("binary: b_mode must be 0, 1 or 2");
    auto a = as<T>(a_, "binary", "a");
    auto b = as<T>(b_, "binary", "b");
    const int64_t nb = b_mode == 0 ? R * L : (b_mode == 1 ? R : L);
    if (R < 0 || L < 0 || a.size() != R * L || b.size() != nb)
        fail("binary: a has " + std::to_string(a.size()) + " elements and b " + std::to_string(b.size()) +
             ", expected " + std::to_string(R * L) + " and " + std::to_string(nb));
    auto y = empty<T>(shape_vec(a));
    {
        py::gil_scoped_release rel;
        ks<T>().binary(op == "add" ? 0 : 1, a.data(), b.data(), y.mutable_data(), R, L, b_mode);
    }
    return std::move(y);
}

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

// Shared with core/executor.cpp (declared in core/bind_util.h).
int epilogue_code(const std::string& name) { return parse_epilogue(name); }
fv::PoolParams nchw_pool_params(const char* fn, const std::vector<int64_t>& nchw_shape, const std::vector<int64_t>& kernel,
                                const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                const std::vector<int64_t>& dilation, bool ceil_mode) {
    return pool_params(fn, nchw_shape, kernel, stride, padding, dilation, ceil_mode);
}

// Dispatch on dtype: float64 if any floating input is float64, else float32.
#define FV_DISPATCH(impl, probe, ...) \
    (probe ? impl<double>(__VA_ARGS__) : impl<float>(__VA_ARGS__))

PYBIND11_MODULE(_C, m) {
    m.doc() = "flowvision.backend compiled CPU kernels (numpy in, numpy out; the GIL is released)";
    init_dispatch();
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const std::bad_alloc& e) {
            PyErr_SetString(PyExc_MemoryError, "flowvision._C: out of memory");
        }
    });

    using v64 = std::vector<int64_t>;
    using obj = py::object;
    using hnd = py::handle;

    m.def("cpu_isa", []() { return std::string(table().isa); }, "ISA of the kernel table in use");
    m.def("cpu_isa_reason", []() { return g_isa_reason; }, "why the kernel table in use was chosen");
    m.def("supported_isas", []() {
        std::vector<std::string> r;
        for (int i = 0; i <= g_supported; ++i) r.push_back(kIsaNames[i]);
        return r;
    });
    m.def("_set_isa_for_testing", [](const std::string& name) {
        int want = parse_isa(name);
        if (want > g_supported) fail("ISA '" + name + "' is not supported by this CPU");
        g_current.store(&g_tables[want]);
    }, py::arg("name"));
    m.def("set_num_threads", [](int n) {
        if (n < 1) fail("set_num_threads: n must be >= 1, got " + std::to_string(n));
        py::gil_scoped_release rel;
        fv::set_num_threads(n);
    }, py::arg("n"));
    m.def("get_num_threads", []() { return fv::get_num_threads(); });
    bind_detection(m);
    bind_attention(m);
    bind_window(m);
    bind_executor(m);
    m.def("fma_peak_gflops", [](double seconds, int threads) {
        // best of short bursts (the machine is shared): each burst runs the FMA loop on `threads`
        // threads (0 = the pool size) and is timed as a whole
        py::gil_scoped_release rel;
        const int nt = threads > 0 ? threads : fv::get_num_threads();
        const auto loop = table().fma_loop;
        const int64_t iters = 200000;
        double best = 0.0;
        const auto t_end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        do {
            std::atomic<double> flops{0.0};
            auto t0 = std::chrono::steady_clock::now();
            struct Ctx { decltype(loop) f; int64_t it; std::atomic<double>* fl; } ctx{loop, iters, &flops};
            fv::parallel_for_raw(0, nt, 1, [](void* c, int64_t b, int64_t e) {
                auto* x = static_cast<Ctx*>(c);
                for (int64_t i = b; i < e; ++i) {
                    double f = x->f(x->it), cur = x->fl->load();
                    while (!x->fl->compare_exchange_weak(cur, cur + f)) {}
                }
            }, &ctx, nt);
            double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (dt > 0) best = std::max(best, flops.load() / dt * 1e-9);
        } while (std::chrono::steady_clock::now() < t_end);
        return best;
    }, py::arg("seconds") = 1.0, py::arg("threads") = 0,
       "Measured FMA peak in GFLOP/s of the current ISA's vector FMA loop (best of short bursts)");

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
       "relu6, gelu, gelu_tanh, silu, hardswish, clamp (to [lo, hi]); out: a writeable C-contiguous (M, N) array "
       "to write C into (may be the residual itself, must not overlap a)");
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
    m.def("conv2d_forward", [](hnd x, hnd w, obj bias, v64 s, v64 p, v64 d, int64_t g) {
        return FV_DISPATCH(conv2d_forward_impl, is_f64(x) || is_f64(w), x, w, bias, s, p, d, g);
    }, py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"), py::arg("dilation"),
          py::arg("groups") = 1);
    m.def("conv2d_backward_input", [](hnd gy, hnd w, v64 ishape, v64 s, v64 p, v64 d, int64_t g) {
        return FV_DISPATCH(conv2d_backward_input_impl, is_f64(gy) || is_f64(w), gy, w, ishape, s, p, d, g);
    }, py::arg("grad_y"), py::arg("weight"), py::arg("input_shape"), py::arg("stride"), py::arg("padding"),
          py::arg("dilation"), py::arg("groups") = 1);
    m.def("conv2d_backward_weight", [](hnd gy, hnd x, v64 wshape, v64 s, v64 p, v64 d, int64_t g) {
        return FV_DISPATCH(conv2d_backward_weight_impl, is_f64(gy) || is_f64(x), gy, x, wshape, s, p, d, g);
    }, py::arg("grad_y"), py::arg("x"), py::arg("weight_shape"), py::arg("stride"), py::arg("padding"),
          py::arg("dilation"), py::arg("groups") = 1);
    m.def("im2col", [](hnd x, v64 k, v64 d, v64 p, v64 s) { return FV_DISPATCH(im2col_impl, is_f64(x), x, k, d, p, s); },
          py::arg("x"), py::arg("kernel_size"), py::arg("dilation"), py::arg("padding"), py::arg("stride"));
    m.def("col2im", [](hnd c, v64 o, v64 k, v64 d, v64 p, v64 s) {
        return FV_DISPATCH(col2im_impl, is_f64(c), c, o, k, d, p, s);
    }, py::arg("cols"), py::arg("output_size"), py::arg("kernel_size"), py::arg("dilation"), py::arg("padding"),
          py::arg("stride"));

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

    // NHWC inference kernels (float32): packed direct convolution and pooling
    py::class_<PackedConv>(m, "PackedConv", "A conv weight packed once for the ISA in use (from pack_conv)")
        .def_readonly("O", &PackedConv::O)
        .def_readonly("C", &PackedConv::C)
        .def_readonly("KH", &PackedConv::KH)
        .def_readonly("KW", &PackedConv::KW)
        .def_readonly("groups", &PackedConv::groups)
        .def_property_readonly("isa", [](const PackedConv& p) { return std::string(p.isa->isa); })
        .def_property_readonly("nbytes", [](const PackedConv& p) {
            return p.data.nbytes() + (p.has_gemm ? p.gemm.nbytes() : 0);
        })
        .def("__repr__", [](const PackedConv& p) {
            return "PackedConv(O=" + std::to_string(p.O) + ", C=" + std::to_string(p.C) + ", KH=" +
                   std::to_string(p.KH) + ", KW=" + std::to_string(p.KW) + ", groups=" + std::to_string(p.groups) +
                   ", isa=" + p.isa->isa + ")";
        });
    m.def("pack_conv", &pack_conv_impl, py::arg("w"), py::arg("groups") = 1,
          "Pack a float32 conv weight (O, C/groups, KH, KW) once for conv2d_nhwc (output-channel-blocked panels)");
    m.def("conv2d_nhwc_to_nchw", [](hnd x, const PackedConv& pk, obj bias, v64 s, v64 p, v64 d, const std::string& ep,
                                     double lo, double hi) {
        return conv2d_nhwc_impl(x, pk, bias, s, p, d, ep, py::none(), lo, hi, py::none(), true);
    }, py::arg("x"), py::arg("packed"), py::arg("bias") = py::none(), py::arg("stride") = v64{1, 1},
       py::arg("padding") = v64{0, 0}, py::arg("dilation") = v64{1, 1}, py::arg("epilogue") = "none",
       py::arg("lo") = 0.0, py::arg("hi") = 0.0,
       "conv2d_nhwc with the output written as (N, O, OH, OW) (the eager NCHW path: the general kernel stores its "
       "tiles transposed, saving a layout pass); no residual");
    m.def("conv2d_nhwc", [](hnd x, const PackedConv& pk, obj bias, v64 s, v64 p, v64 d, const std::string& ep,
                            obj res, double lo, double hi, obj out) {
        return conv2d_nhwc_impl(x, pk, bias, s, p, d, ep, res, lo, hi, out);
    }, py::arg("x"), py::arg("packed"), py::arg("bias") = py::none(),
          py::arg("stride") = v64{1, 1}, py::arg("padding") = v64{0, 0}, py::arg("dilation") = v64{1, 1},
          py::arg("epilogue") = "none", py::arg("residual") = py::none(), py::arg("lo") = 0.0, py::arg("hi") = 0.0,
          py::arg("out") = py::none(),
          "y (N, OH, OW, O) = epilogue(conv(x (N, H, W, C) float32, packed) + bias + residual); the residual is "
          "added before the activation; epilogue: none, relu, relu6, gelu, gelu_tanh, silu, hardswish, clamp (to "
          "[lo, hi]); out: a preallocated C-contiguous float32 output to write into (returned)");
    m.def("max_pool2d_nhwc", &max_pool_nhwc_impl, py::arg("x"), py::arg("kernel_size"), py::arg("stride"),
          py::arg("padding") = v64{0, 0}, py::arg("dilation") = v64{1, 1}, py::arg("ceil_mode") = false,
          "max_pool2d over NHWC float32 x (N, H, W, C) -> (N, OH, OW, C); values only (no indices)");
    m.def("avg_pool2d_nhwc", &avg_pool_nhwc_impl, py::arg("x"), py::arg("kernel_size"), py::arg("stride"),
          py::arg("padding") = v64{0, 0}, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true,
          "avg_pool2d over NHWC float32 x (N, H, W, C) -> (N, OH, OW, C)");
    m.def("nchw_to_nhwc", [](hnd x) { return layout_impl(x, true); }, py::arg("x"),
          "float32 (N, C, H, W) -> C-contiguous (N, H, W, C) copy (threaded, cache-blocked)");
    m.def("nhwc_to_nchw", [](hnd x) { return layout_impl(x, false); }, py::arg("x"),
          "float32 (N, H, W, C) -> C-contiguous (N, C, H, W) copy (threaded, cache-blocked)");
    m.def("adaptive_avg_pool2d_nhwc", &adaptive_avg_nhwc_impl, py::arg("x"), py::arg("output_size"),
          "adaptive_avg_pool2d over NHWC float32 x (N, H, W, C) -> (N, OH, OW, C)");
    m.def("channel_gate_nhwc", &channel_gate_nhwc_impl, py::arg("x"), py::arg("gate"), py::arg("kind") = "sigmoid",
          py::arg("out") = py::none(),
          "y (N, H, W, C) = x * act(gate) for NHWC float32 x and a gate of one value per (image, channel) "
          "((N, C) or (N, 1, 1, C)); kind: sigmoid, hardsigmoid or none (gate used as is); out: a preallocated "
          "output, may be x itself (in place)");

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

    m.def("softmax_forward", [](hnd x, bool log) { return FV_DISPATCH(softmax_fwd_impl, is_f64(x), x, log); },
          py::arg("x"), py::arg("log") = false);
    m.def("softmax_backward", [](hnd gy, hnd y, bool log) {
        return FV_DISPATCH(softmax_bwd_impl, is_f64(gy) || is_f64(y), gy, y, log);
    }, py::arg("grad_y"), py::arg("y"), py::arg("log") = false);

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

    m.def("gelu_forward", [](hnd x, obj approx) { return FV_DISPATCH(gelu_fwd_impl, is_f64(x), x, approx); },
          py::arg("x"), py::arg("approximate") = "none");
    m.def("gelu_backward", [](hnd gy, hnd x, obj approx) {
        return FV_DISPATCH(gelu_bwd_impl, is_f64(gy) || is_f64(x), gy, x, approx);
    }, py::arg("grad_y"), py::arg("x"), py::arg("approximate") = "none");
    m.def("silu_forward", [](hnd x) { return FV_DISPATCH(silu_fwd_impl, is_f64(x), x); }, py::arg("x"));
    m.def("binary", [](hnd a, hnd b, const std::string& op, int64_t R, int64_t L, int b_mode) {
        return FV_DISPATCH(binary_impl, is_f64(a), a, b, op, R, L, b_mode);
    }, py::arg("a"), py::arg("b"), py::arg("op"), py::arg("rows"), py::arg("cols"), py::arg("b_mode"),
          "a (rows, cols) + or * b given as (rows, cols), (rows, 1) or (1, cols): threaded, vectorised");
    m.def("pointwise", [](hnd x, const std::string& kind, double lo, double hi, obj out) {
        return FV_DISPATCH(pointwise_impl, is_f64(x), x, kind, lo, hi, out);
    }, py::arg("x"), py::arg("kind"), py::arg("lo") = 0.0, py::arg("hi") = 0.0, py::arg("out") = py::none(),
          "y = relu / clamp(lo, hi) / sigmoid / hardswish / hardsigmoid of x (out may be x: in place)");
    m.def("silu_backward", [](hnd gy, hnd x) { return FV_DISPATCH(silu_bwd_impl, is_f64(gy) || is_f64(x), gy, x); },
          py::arg("grad_y"), py::arg("x"));
}
