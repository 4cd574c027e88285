// Shared by the pybind11 binding files of flowvision.backend._C_cuda (cuda/module.cpp, cuda/bind_*.cpp):
// dtype names, argument checks, broadcasting, the current stream, host<->device copies and the
// registration function of each kernel family (cuda/bind_<family>.cpp).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/kernels.h"
#include "cuda/runtime.h"

namespace py = pybind11;

namespace fvcuda_bind {

using fvcuda::DeviceArray;
using fvcuda::DType;
using Shape = std::vector<int64_t>;

inline DType dtype_from_name(const std::string& n) {
    if (n == "float32") return DType::F32;
    if (n == "float16") return DType::F16;
    if (n == "bfloat16") return DType::BF16;
    if (n == "int64") return DType::I64;
    if (n == "int32") return DType::I32;
    if (n == "int16") return DType::I16;
    if (n == "uint8") return DType::U8;
    if (n == "int8") return DType::I8;
    if (n == "bool") return DType::BOOL;
    throw py::type_error("dtype " + n + " is not supported on CUDA (float64 has no fast path on GPUs; use float32)");
}

inline const char* dtype_name(DType d) {
    switch (d) {
        case DType::F32: return "float32";
        case DType::F16: return "float16";
        case DType::BF16: return "bfloat16";
        case DType::I64: return "int64";
        case DType::I32: return "int32";
        case DType::I16: return "int16";
        case DType::U8: return "uint8";
        case DType::I8: return "int8";
        case DType::BOOL: return "bool";
    }
    return "?";
}

inline bool is_float(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16; }

inline void* stream() { return fvcuda::current_stream(); }

inline DeviceArray empty(const Shape& shape, DType dt) { return fvcuda::empty_array(shape, dt, stream()); }

inline void need(bool ok, const std::string& msg) {
    if (!ok) throw py::value_error(msg);
}
inline void need_float(const DeviceArray& a, const char* op) {
    need(is_float(a.dtype), std::string(op) + ": expected a float32/float16/bfloat16 tensor, got " + dtype_name(a.dtype));
}
inline void need_f32(const DeviceArray& a, const char* op) {
    need(a.dtype == DType::F32, std::string(op) + ": expected float32, got " + dtype_name(a.dtype));
}
inline void need_same(const DeviceArray& a, const DeviceArray& b, const char* op) {
    need(a.dtype == b.dtype, std::string(op) + ": dtypes differ (" + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype) + ")");
}
inline void need_ndim(const DeviceArray& a, size_t nd, const char* op) {
    need(a.shape.size() == nd, std::string(op) + ": expected a " + std::to_string(nd) + "-d tensor, got " +
                                   std::to_string(a.shape.size()) + "-d");
}
inline const float* fptr(const std::optional<DeviceArray>& a, int64_t n, const char* op) {
    if (!a) return nullptr;
    need_f32(*a, op);
    need(a->numel() == n, std::string(op) + ": parameter has " + std::to_string(a->numel()) + " elements, expected " +
                              std::to_string(n));
    return static_cast<const float*>(a->data());
}

inline std::string shape_str(const Shape& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

// Output shape and per-operand element strides for numpy-style broadcasting.
inline fvcuda::Broadcast broadcast(const std::vector<const Shape*>& shapes, Shape& out) {
    size_t nd = 0;
    for (auto* s : shapes) nd = std::max(nd, s->size());
    if (nd > (size_t)fvcuda::kMaxDims) throw py::value_error("broadcast: more than 8 dimensions");
    out.assign(nd, 1);
    for (auto* s : shapes)
        for (size_t i = 0; i < s->size(); ++i) {
            int64_t d = (*s)[s->size() - 1 - i];
            int64_t& o = out[nd - 1 - i];
            if (d != 1) {
                if (o != 1 && o != d)
                    throw py::value_error("shapes " + shape_str(*shapes[0]) + " and " + shape_str(*shapes[1]) +
                                          " cannot be broadcast together");
                o = d;
            }
        }
    fvcuda::Broadcast bc{};
    bc.ndim = static_cast<int>(nd);
    for (size_t d = 0; d < nd; ++d) bc.size[d] = out[d];
    for (size_t k = 0; k < shapes.size(); ++k) {
        const Shape& s = *shapes[k];
        int64_t st = 1;
        for (int d = (int)nd - 1; d >= 0; --d) {
            int si = d - (int)(nd - s.size());
            int64_t dim = si >= 0 ? s[si] : 1;
            bc.stride[k][d] = (dim == 1) ? 0 : st;
            st *= dim;
        }
    }
    return bc;
}

inline bool same_shape(const Shape& a, const Shape& b) { return a == b; }

inline fvcuda::Broadcast strided(const Shape& shape, const Shape& strides) {
    need(shape.size() == strides.size(), "strided: shape and strides differ in length");
    need(shape.size() <= (size_t)fvcuda::kMaxDims, "strided: more than 8 dimensions");
    fvcuda::Broadcast bc{};
    bc.ndim = (int)shape.size();
    for (size_t d = 0; d < shape.size(); ++d) {
        bc.size[d] = shape[d];
        bc.stride[0][d] = strides[d];
    }
    return bc;
}

// Element range [lo, hi] a strided view touches, to reject views outside the storage.
inline void check_view(const DeviceArray& base, int64_t offset, const Shape& shape, const Shape& strides, const char* op) {
    int64_t lo = offset, hi = offset, n = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
        n *= shape[d];
        if (shape[d] == 0) continue;
        int64_t ext = (shape[d] - 1) * strides[d];
        (ext < 0 ? lo : hi) += ext;
    }
    if (n) need(lo >= 0 && hi < base.numel(), std::string(op) + ": view is outside its storage");
}

inline py::array host_empty(const Shape& shape, DType dt) {
    const char* f;
    switch (dt) {
        case DType::F32: f = "float32"; break;
        case DType::F16: f = "float16"; break;
        case DType::BF16: f = "uint16"; break;  // bfloat16 bit patterns, like the CPU engine
        case DType::I64: f = "int64"; break;
        case DType::I32: f = "int32"; break;
        case DType::I16: f = "int16"; break;
        case DType::U8: f = "uint8"; break;
        case DType::I8: f = "int8"; break;
        default: f = "bool"; break;
    }
    std::vector<py::ssize_t> sh(shape.begin(), shape.end());
    return py::array(py::dtype(f), sh);
}

inline DeviceArray from_host(py::array arr, const std::string& dtype) {
    DType dt = dtype_from_name(dtype);
    arr = py::array::ensure(arr, py::array::c_style);
    if (!arr) throw py::value_error("from_host: could not make a C-contiguous array");
    if (arr.itemsize() != fvcuda::dtype_size(dt))
        throw py::value_error("from_host: element size " + std::to_string(arr.itemsize()) + " does not match " + dtype);
    Shape shape(arr.shape(), arr.shape() + arr.ndim());
    DeviceArray d = empty(shape, dt);
    const void* src = arr.data();
    size_t bytes = static_cast<size_t>(d.nbytes());
    {
        py::gil_scoped_release rel;
        fvcuda::copy_h2d(d.data(), src, bytes, stream());
    }
    return d;
}

inline py::array to_host(const DeviceArray& a) {
    py::array out = host_empty(a.shape, a.dtype);
    void* dst = out.mutable_data();
    size_t bytes = static_cast<size_t>(a.nbytes());
    {
        py::gil_scoped_release rel;
        fvcuda::copy_d2h(dst, a.data(), bytes, stream());
    }
    return out;
}

struct GilRelease {
    py::gil_scoped_release rel;
};

// defined in cuda/bind_elementwise.cpp; nms (cuda/bind_detection.cpp) also uses it
DeviceArray index_select(const DeviceArray& x, int64_t dim, const DeviceArray& idx);

// the families' registrations, called in this order by PYBIND11_MODULE in cuda/module.cpp
void bind_runtime(py::module_& m);
void bind_elementwise(py::module_& m);
void bind_nn(py::module_& m);
void bind_gemm(py::module_& m);
void bind_detection(py::module_& m);

}  // namespace fvcuda_bind
