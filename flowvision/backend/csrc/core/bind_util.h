// Shared by the pybind11 binding files of flowvision.backend._C (core/module.cpp, core/bind_*.cpp and the plan
// executor, core/executor*.cpp): the kernel table in use, numpy argument checks, and the packed-weight handles.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu/kernels.h"

namespace py = pybind11;
using fv::KernelSet;
using fv::KernelTable;

// the ISA's kernel table chosen at import (or by set_isa); defined in core/module.cpp
const KernelTable& table();
template <class T> const KernelSet<T>& ks();
template <> inline const KernelSet<float>& ks<float>() { return table().f32; }
template <> inline const KernelSet<double>& ks<double>() { return table().f64; }

// ---------------------------------------------------------------- helpers
template <class T> using Arr = py::array_t<T, py::array::c_style | py::array::forcecast>;

[[noreturn]] inline void fail(const std::string& msg) { throw std::invalid_argument(msg); }

inline std::string shp(const py::array& a) {
    std::ostringstream os;
    os << "(";
    for (py::ssize_t i = 0; i < a.ndim(); ++i) os << (i ? ", " : "") << a.shape(i);
    if (a.ndim() == 1) os << ",";
    os << ")";
    return os.str();
}
inline std::string vstr(const std::vector<int64_t>& v) {
    std::ostringstream os;
    os << "(";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    if (v.size() == 1) os << ",";
    os << ")";
    return os.str();
}

inline bool is_f64(const py::handle& h) {
    if (h.is_none() || !py::isinstance<py::array>(h)) return false;
    auto dt = py::reinterpret_borrow<py::array>(h).dtype();
    return dt.kind() == 'f' && dt.itemsize() == 8;
}

template <class T>
Arr<T> as(const py::handle& h, const char* fn, const char* name) {
    if (h.is_none()) fail(std::string(fn) + ": '" + name + "' must be an array, got None");
    auto a = Arr<T>::ensure(h);
    if (!a) {
        PyErr_Clear();
        fail(std::string(fn) + ": '" + name + "' is not convertible to a numeric array");
    }
    return a;
}

template <class T>
const T* opt_ptr(const py::object& h, Arr<T>& keep, const char* fn, const char* name, int64_t n) {
    if (h.is_none()) return nullptr;
    keep = as<T>(h, fn, name);
    if (keep.ndim() != 1 || keep.shape(0) != n) {
        std::ostringstream os;
        os << fn << ": '" << name << "' must have shape (" << n << ",), got " << shp(keep);
        fail(os.str());
    }
    return keep.data();
}

inline std::vector<int64_t> pair(const std::vector<int64_t>& v, const char* fn, const char* name) {
    if (v.size() == 1) return {v[0], v[0]};
    if (v.size() != 2) fail(std::string(fn) + ": '" + name + "' must have 2 elements, got " + vstr(v));
    return v;
}

inline void need_ndim(const py::array& a, int nd, const char* fn, const char* name) {
    if (a.ndim() != nd) {
        std::ostringstream os;
        os << fn << ": '" << name << "' must be " << nd << "-D, got shape " << shp(a);
        fail(os.str());
    }
}

template <class T> Arr<T> empty(const std::vector<int64_t>& shape) {
    std::vector<py::ssize_t> s(shape.begin(), shape.end());
    return Arr<T>(s);
}

struct PackedB {
    py::array data;  // 1-D, the ISA's packed layout
    int64_t K = 0, N = 0;
    bool f64 = false;
    const KernelTable* isa = nullptr;  // the layout depends on the ISA's register tile
};

template <class T>
T* packed_ptr(T* p) {
    return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t(63));
}

struct PackedA {
    py::array data;
    int64_t M = 0, K = 0;
    bool f64 = false;
    const KernelTable* isa = nullptr;
};

struct PackedConv {
    py::array data;  // the ISA's blocked layout (cpu/conv_nhwc.cpp), 1-D; empty for an ungrouped 1x1
    py::array gemm;  // ungrouped 1x1: instead the (C, O) GEMM operand from pack_b
    bool has_gemm = false;
    py::array winograd;  // pack_conv(..., winograd=True): also the Winograd-transformed filters (cpu/conv_winograd.cpp)
    bool has_winograd = false;
    int64_t O = 0, C = 0, KH = 0, KW = 0, groups = 1;
    const KernelTable* isa = nullptr;
};

inline void need_f32(const char* fn, const char* name, const py::handle& h) {
    if (!py::isinstance<py::array>(h))
        fail(std::string(fn) + ": '" + name + "' must be a numpy float32 array");
    auto dt = py::reinterpret_borrow<py::array>(h).dtype();
    if (dt.kind() != 'f' || dt.itemsize() != 4)
        fail(std::string(fn) + ": '" + name + "' must be float32, got " + std::string(py::str(dt)));
}

// Dispatch on dtype: float64 if any floating input is float64, else float32.
#define FV_DISPATCH(impl, probe, ...) \
    (probe ? impl<double>(__VA_ARGS__) : impl<float>(__VA_ARGS__))

inline std::vector<int64_t> shape_vec(const py::array& a) {
    std::vector<int64_t> v;
    for (py::ssize_t i = 0; i < a.ndim(); ++i) v.push_back(a.shape(i));
    return v;
}

inline void same_shape(const char* fn, const py::array& a, const char* an, const py::array& b, const char* bn) {
    if (shape_vec(a) != shape_vec(b))
        fail(std::string(fn) + ": " + an + " shape " + shp(a) + " and " + bn + " shape " + shp(b) + " differ");
}

inline std::pair<int64_t, int64_t> rows_cols(const char* fn, const py::array& x) {
    if (x.ndim() < 1) fail(std::string(fn) + ": input must be at least 1-D, got shape " + shp(x));
    int64_t N = x.shape(x.ndim() - 1), M = 1;
    for (py::ssize_t i = 0; i + 1 < x.ndim(); ++i) M *= x.shape(i);
    return {M, N};
}

// a float32 NHWC activation, C-contiguous (copied if it is not)
inline Arr<float> nhwc_input(const char* fn, py::handle x_) {
    need_f32(fn, "x", x_);
    auto x = as<float>(x_, fn, "x");
    if (x.ndim() != 4) fail(std::string(fn) + ": x must be 4-D (N, H, W, C), got shape " + shp(x));
    return x;
}

// ---------------------------------------------------------------- family bindings (core/bind_<family>.cpp)
void bind_gemm(py::module_& m);
void bind_conv(py::module_& m);
void bind_pool(py::module_& m);
void bind_norm(py::module_& m);
void bind_activation(py::module_& m);
void bind_interpolate(py::module_& m);
void bind_detection(py::module_& m);
void bind_attention(py::module_& m);
void bind_window(py::module_& m);
void bind_executor(py::module_& m);
void bind_optim(py::module_& m);
void bind_image(py::module_& m);
void bind_host_memory(py::module_& m);

// ---------------------------------------------------------------- shared with the plan executor (core/executor*.cpp) and core/module.cpp
// conv2d_nhwc's checks (ISA, x (N, H, W, C) against the packed weight, stride / padding / dilation) -> its params
fv::ConvNhwcParams conv_nhwc_params(const char* fn, const PackedConv& pk, const std::vector<int64_t>& xshape,
                                    const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
                                    const std::vector<int64_t>& dil);
// whether a strided / padded 1x1 first gathers its input pixels into a (N, OH, OW, C) scratch
bool conv_nhwc_gathers(const PackedConv& pk, const fv::ConvNhwcParams& p);
// conv2d_nhwc's compute (no GIL needed): `gathered` (N*OH*OW*C floats) when conv_nhwc_gathers, `nhwc_tmp`
// (N*OH*OW*O) when a 1x1 writes NCHW (p.out_nchw); y must not overlap x or the residual
void conv_nhwc_compute(const PackedConv& pk, const fv::ConvNhwcParams& p, const float* x, const float* bias,
                       const float* res, float* y, int act, float lo, float hi, float* gathered, float* nhwc_tmp);
// channel_gate_nhwc's kind (sigmoid, hardsigmoid, none) -> pointwise code, -1 for none (throws on another name)
int channel_gate_act(const char* fn, const std::string& kind);
// channel_gate_nhwc's compute (no GIL needed): y (N, P, C) = x * act(gate (N, C)); act_tmp (N*C floats) when
// act >= 0; y may be x (in place)
void channel_gate_compute(const float* x, const float* gate, float* y, float* act_tmp, int64_t N, int64_t P,
                          int64_t C, int act);
// the Epilogue code of a gemm_packed / conv2d_nhwc epilogue name (throws on an unknown name, naming fn)
int epilogue_code(const std::string& name, const char* fn = "gemm_packed");
// pooling output size and checks for an (N, C, H, W) input (max/avg pool)
fv::PoolParams nchw_pool_params(const char* fn, const std::vector<int64_t>& nchw_shape, const std::vector<int64_t>& kernel,
                                const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                const std::vector<int64_t>& dilation, bool ceil_mode);
