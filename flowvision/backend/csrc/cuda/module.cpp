// flowvision.backend._C_cuda: device queries, the caching allocator, streams/events, DeviceArray
// (the storage of a CUDA tensor) and the kernel entry points used by flowvision/backend/_cuda.
// Built only where nvcc exists; cudart is linked statically, so the module imports on machines
// without a GPU or driver (every query then reports "no device" instead of failing).
//
// Kernel entry points take DeviceArrays, validate shapes and dtypes (bad input -> ValueError /
// RuntimeError with a message), allocate their outputs from the caching allocator, release the
// GIL and enqueue on the calling thread's current stream.
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

extern "C" {
int fv_cuda_device_count(int* count);
int fv_cuda_device_name(int index, char* buf, int n);
const char* fv_cuda_error_string(int e);
int fv_cuda_runtime_version(int* v);
int fv_cuda_driver_version(int* v);
int fv_cuda_device_capability(int index, int* major, int* minor);
int fv_cuda_total_memory(int index, size_t* bytes);
int fv_cuda_set_device(int index);
int fv_cuda_axpy(int n, float a, const float* x, float* y);
}

namespace py = pybind11;
using fvcuda::DeviceArray;
using fvcuda::DType;
using Shape = std::vector<int64_t>;

namespace {

DType dtype_from_name(const std::string& n) {
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

const char* dtype_name(DType d) {
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

bool is_float(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16; }

void* stream() { return fvcuda::current_stream(); }

DeviceArray empty(const Shape& shape, DType dt) { return fvcuda::empty_array(shape, dt, stream()); }

void need(bool ok, const std::string& msg) {
    if (!ok) throw py::value_error(msg);
}
void need_float(const DeviceArray& a, const char* op) {
    need(is_float(a.dtype), std::string(op) + ": expected a float32/float16/bfloat16 tensor, got " + dtype_name(a.dtype));
}
void need_f32(const DeviceArray& a, const char* op) {
    need(a.dtype == DType::F32, std::string(op) + ": expected float32, got " + dtype_name(a.dtype));
}
void need_same(const DeviceArray& a, const DeviceArray& b, const char* op) {
    need(a.dtype == b.dtype, std::string(op) + ": dtypes differ (" + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype) + ")");
}
void need_ndim(const DeviceArray& a, size_t nd, const char* op) {
    need(a.shape.size() == nd, std::string(op) + ": expected a " + std::to_string(nd) + "-d tensor, got " +
                                   std::to_string(a.shape.size()) + "-d");
}
const float* fptr(const std::optional<DeviceArray>& a, int64_t n, const char* op) {
    if (!a) return nullptr;
    need_f32(*a, op);
    need(a->numel() == n, std::string(op) + ": parameter has " + std::to_string(a->numel()) + " elements, expected " +
                              std::to_string(n));
    return static_cast<const float*>(a->data());
}

std::string shape_str(const Shape& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

// Output shape and per-operand element strides for numpy-style broadcasting.
fvcuda::Broadcast broadcast(const std::vector<const Shape*>& shapes, Shape& out) {
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

bool same_shape(const Shape& a, const Shape& b) { return a == b; }

fvcuda::Broadcast strided(const Shape& shape, const Shape& strides) {
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
void check_view(const DeviceArray& base, int64_t offset, const Shape& shape, const Shape& strides, const char* op) {
    int64_t lo = offset, hi = offset, n = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
        n *= shape[d];
        if (shape[d] == 0) continue;
        int64_t ext = (shape[d] - 1) * strides[d];
        (ext < 0 ? lo : hi) += ext;
    }
    if (n) need(lo >= 0 && hi < base.numel(), std::string(op) + ": view is outside its storage");
}

py::array host_empty(const Shape& shape, DType dt) {
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

DeviceArray from_host(py::array arr, const std::string& dtype) {
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

py::array to_host(const DeviceArray& a) {
    py::array out = host_empty(a.shape, a.dtype);
    void* dst = out.mutable_data();
    size_t bytes = static_cast<size_t>(a.nbytes());
    {
        py::gil_scoped_release rel;
        fvcuda::copy_d2h(dst, a.data(), bytes, stream());
    }
    return out;
}

DeviceArray reshape(const DeviceArray& a, const Shape& shape) {
    DeviceArray v = a;
    v.shape = shape;
    need(v.numel() == a.numel(), "reshape: shape " + shape_str(shape) + " is invalid for input of size " +
                                     std::to_string(a.numel()));
    return v;
}

// A contiguous sub-block of `a` starting at element `offset` (e.g. x[i] or a chunk along dim 0).
DeviceArray subarray(const DeviceArray& a, int64_t offset, const Shape& shape) {
    DeviceArray v = a;
    v.shape = shape;
    need(offset >= 0 && offset + v.numel() <= a.numel(), "subarray: out of range");
    v.offset = a.offset + offset * a.itemsize();
    return v;
}

struct GilRelease {
    py::gil_scoped_release rel;
};

// ------------------------------------------------------------------ kernel entry points
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

DeviceArray full(const Shape& shape, double value, const std::string& dtype) {
    DeviceArray y = empty(shape, dtype_from_name(dtype));
    GilRelease g;
    fvcuda::fill(y.dtype, y.data(), y.numel(), value, stream());
    return y;
}

void fill_(DeviceArray& y, double value) {
    GilRelease g;
    fvcuda::fill(y.dtype, y.data(), y.numel(), value, stream());
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

void copy_(DeviceArray& dst, const DeviceArray& src) {
    need(dst.nbytes() == src.nbytes(), "copy_: sizes differ");
    GilRelease g;
    fvcuda::copy_d2d(dst.data(), src.data(), static_cast<size_t>(src.nbytes()), stream());
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

DeviceArray softmax_forward(const DeviceArray& x, int64_t outer, int64_t d, int64_t inner, bool log) {
    need_float(x, "softmax");
    need(outer * d * inner == x.numel(), "softmax: (outer, d, inner) does not match the tensor size");
    DeviceArray y = empty(x.shape, x.dtype);
    GilRelease g;
    fvcuda::softmax_fwd(x.dtype, x.data(), y.data(), outer, d, inner, log, stream());
    return y;
}

DeviceArray softmax_backward(const DeviceArray& grad, const DeviceArray& y, int64_t outer, int64_t d, int64_t inner,
                             bool log) {
    need_same(grad, y, "softmax_backward");
    need(outer * d * inner == y.numel() && grad.numel() == y.numel(), "softmax_backward: size mismatch");
    DeviceArray dx = empty(y.shape, y.dtype);
    GilRelease g;
    fvcuda::softmax_bwd(y.dtype, grad.data(), y.data(), dx.data(), outer, d, inner, log, stream());
    return dx;
}

py::tuple layer_norm_forward(const DeviceArray& x, int64_t cols, const std::optional<DeviceArray>& w,
                             const std::optional<DeviceArray>& b, float eps) {
    need_float(x, "layer_norm");
    need(cols > 0 && x.numel() % cols == 0, "layer_norm: normalized size does not divide the input");
    int64_t rows = x.numel() / cols;
    const float *wp = fptr(w, cols, "layer_norm weight"), *bp = fptr(b, cols, "layer_norm bias");
    DeviceArray y = empty(x.shape, x.dtype), mean = empty({rows}, DType::F32), rstd = empty({rows}, DType::F32);
    {
        GilRelease g;
        fvcuda::layer_norm_fwd(x.dtype, x.data(), wp, bp, y.data(), (float*)mean.data(), (float*)rstd.data(), rows, cols,
                               eps, stream());
    }
    return py::make_tuple(y, mean, rstd);
}

py::tuple layer_norm_backward(const DeviceArray& grad, const DeviceArray& x, const std::optional<DeviceArray>& w,
                              const DeviceArray& mean, const DeviceArray& rstd, int64_t cols, bool need_dx,
                              bool need_dw, bool need_db) {
    need_same(grad, x, "layer_norm_backward");
    int64_t rows = x.numel() / cols;
    const float* wp = fptr(w, cols, "layer_norm weight");
    std::optional<DeviceArray> dx, dw, db;
    if (need_dx) dx = empty(x.shape, x.dtype);
    if (need_dw) dw = empty({cols}, DType::F32);
    if (need_db) db = empty({cols}, DType::F32);
    {
        GilRelease g;
        fvcuda::layer_norm_bwd(x.dtype, grad.data(), x.data(), wp, (const float*)mean.data(), (const float*)rstd.data(),
                               dx ? dx->data() : nullptr, dw ? (float*)dw->data() : nullptr,
                               db ? (float*)db->data() : nullptr, rows, cols, stream());
    }
    auto opt = [](const std::optional<DeviceArray>& a) { return a ? py::cast(*a) : py::none(); };
    return py::make_tuple(opt(dx), opt(dw), opt(db));
}

py::tuple group_norm_forward(const DeviceArray& x, int64_t groups, const std::optional<DeviceArray>& w,
                             const std::optional<DeviceArray>& b, float eps) {
    need_float(x, "group_norm");
    need(x.shape.size() >= 2, "group_norm: expected at least 2 dims (N, C, ...)");
    int64_t n = x.shape[0], c = x.shape[1], hw = c && n ? x.numel() / (n * c) : 0;
    need(groups > 0 && c % groups == 0, "group_norm: num_channels must be divisible by num_groups");
    const float *wp = fptr(w, c, "group_norm weight"), *bp = fptr(b, c, "group_norm bias");
    DeviceArray y = empty(x.shape, x.dtype), mean = empty({n * groups}, DType::F32),
                rstd = empty({n * groups}, DType::F32);
    {
        GilRelease g;
        fvcuda::group_norm_fwd(x.dtype, x.data(), wp, bp, y.data(), (float*)mean.data(), (float*)rstd.data(), n, c, hw,
                               groups, eps, stream());
    }
    return py::make_tuple(y, mean, rstd);
}

py::tuple group_norm_backward(const DeviceArray& grad, const DeviceArray& x, const std::optional<DeviceArray>& w,
                              const DeviceArray& mean, const DeviceArray& rstd, int64_t groups, bool need_dx,
                              bool need_dw, bool need_db) {
    need_same(grad, x, "group_norm_backward");
    int64_t n = x.shape[0], c = x.shape[1], hw = c && n ? x.numel() / (n * c) : 0;
    const float* wp = fptr(w, c, "group_norm weight");
    std::optional<DeviceArray> dx, dw, db;
    if (need_dx) dx = empty(x.shape, x.dtype);
    if (need_dw) dw = empty({c}, DType::F32);
    if (need_db) db = empty({c}, DType::F32);
    {
        GilRelease g;
        fvcuda::group_norm_bwd(x.dtype, grad.data(), x.data(), wp, (const float*)mean.data(), (const float*)rstd.data(),
                               dx ? dx->data() : nullptr, dw ? (float*)dw->data() : nullptr,
                               db ? (float*)db->data() : nullptr, n, c, hw, groups, stream());
    }
    auto opt = [](const std::optional<DeviceArray>& a) { return a ? py::cast(*a) : py::none(); };
    return py::make_tuple(opt(dx), opt(dw), opt(db));
}

void nchw(const DeviceArray& x, int64_t& n, int64_t& c, int64_t& hw, const char* op) {
    need(x.shape.size() >= 2, std::string(op) + ": expected (N, C, ...) input");
    n = x.shape[0];
    c = x.shape[1];
    hw = 1;
    for (size_t d = 2; d < x.shape.size(); ++d) hw *= x.shape[d];
}

// Training: returns (y, mean, invstd, unbiased var); eval (mean/var given): (y, mean, invstd, None).
py::tuple batch_norm_forward(const DeviceArray& x, const std::optional<DeviceArray>& running_mean,
                             const std::optional<DeviceArray>& running_var, const std::optional<DeviceArray>& w,
                             const std::optional<DeviceArray>& b, bool training, float eps) {
    need_float(x, "batch_norm");
    int64_t n, c, hw;
    nchw(x, n, c, hw, "batch_norm");
    const float *wp = fptr(w, c, "batch_norm weight"), *bp = fptr(b, c, "batch_norm bias");
    DeviceArray y = empty(x.shape, x.dtype), mean = empty({c}, DType::F32), invstd = empty({c}, DType::F32);
    std::optional<DeviceArray> var;
    if (training) {
        var = empty({c}, DType::F32);
        GilRelease g;
        fvcuda::batch_norm_stats(x.dtype, x.data(), (float*)mean.data(), (float*)invstd.data(), (float*)var->data(), n,
                                 c, hw, eps, stream());
    } else {
        need(running_mean && running_var, "batch_norm: running_mean and running_var are required in eval mode");
        const float* rm = fptr(running_mean, c, "running_mean");
        fptr(running_var, c, "running_var");
        GilRelease g;
        fvcuda::copy_d2d(mean.data(), rm, sizeof(float) * c, stream());
        fvcuda::unary(fvcuda::U_RSQRT, DType::F32, running_var->data(), invstd.data(), c, eps, 0.f, stream());
    }
    {
        GilRelease g;
        fvcuda::batch_norm_apply(x.dtype, x.data(), (const float*)mean.data(), (const float*)invstd.data(), wp, bp,
                                 y.data(), n, c, hw, stream());
    }
    return py::make_tuple(y, mean, invstd, var ? py::cast(*var) : py::none());
}

// Returns (dx, dweight, dbias) (fp32 parameter gradients).
py::tuple batch_norm_backward(const DeviceArray& grad, const DeviceArray& x, const DeviceArray& mean,
                              const DeviceArray& invstd, const std::optional<DeviceArray>& w, bool training) {
    need_same(grad, x, "batch_norm_backward");
    int64_t n, c, hw;
    nchw(x, n, c, hw, "batch_norm_backward");
    const float* wp = fptr(w, c, "batch_norm weight");
    DeviceArray dx = empty(x.shape, x.dtype), sum_dy = empty({c}, DType::F32), sum_dy_xmu = empty({c}, DType::F32);
    DeviceArray dw = empty({c}, DType::F32);
    {
        GilRelease g;
        fvcuda::batch_norm_bwd_reduce(x.dtype, grad.data(), x.data(), (const float*)mean.data(), (float*)sum_dy.data(),
                                      (float*)sum_dy_xmu.data(), n, c, hw, stream());
        fvcuda::batch_norm_bwd_apply(x.dtype, grad.data(), x.data(), (const float*)mean.data(),
                                     (const float*)invstd.data(), wp, (const float*)sum_dy.data(),
                                     (const float*)sum_dy_xmu.data(), dx.data(), n, c, hw, training, stream());
        // dweight = sum(g * (x - mean)) * invstd
        fvcuda::Broadcast bc{};
        fvcuda::binary(fvcuda::B_MUL, DType::F32, DType::F32, sum_dy_xmu.data(), invstd.data(), dw.data(), bc, c, 1.0,
                       0.0, false, stream());
    }
    return py::make_tuple(dx, dw, sum_dy);
}

fvcuda::Pool2d pool_geom(const DeviceArray& x, int64_t oh, int64_t ow, std::vector<int> k, std::vector<int> s,
                         std::vector<int> p, std::vector<int> d, const char* op) {
    need(x.shape.size() == 4 || x.shape.size() == 3, std::string(op) + ": expected a 3-d or 4-d input");
    need(k.size() == 2 && s.size() == 2 && p.size() == 2 && d.size() == 2, std::string(op) + ": expected pairs");
    size_t nd = x.shape.size();
    int64_t h = x.shape[nd - 2], w = x.shape[nd - 1];
    fvcuda::Pool2d g{x.numel() / std::max<int64_t>(h * w, 1), h, w, oh, ow, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1]};
    if (h * w == 0) g.planes = 0;
    return g;
}

Shape pooled_shape(const DeviceArray& x, int64_t oh, int64_t ow) {
    Shape out = x.shape;
    out[out.size() - 2] = oh;
    out[out.size() - 1] = ow;
    return out;
}

py::tuple max_pool2d_forward(const DeviceArray& x, int64_t oh, int64_t ow, std::vector<int> k, std::vector<int> s,
                             std::vector<int> p, std::vector<int> d, bool indices) {
    need_float(x, "max_pool2d");
    fvcuda::Pool2d g = pool_geom(x, oh, ow, k, s, p, d, "max_pool2d");
    DeviceArray y = empty(pooled_shape(x, oh, ow), x.dtype);
    std::optional<DeviceArray> idx;
    if (indices) idx = empty(y.shape, DType::I64);
    {
        GilRelease gr;
        fvcuda::max_pool2d_fwd(x.dtype, x.data(), y.data(), idx ? (int64_t*)idx->data() : nullptr, g, stream());
    }
    return py::make_tuple(y, idx ? py::cast(*idx) : py::none());
}

DeviceArray max_pool2d_backward(const DeviceArray& grad, const DeviceArray& idx, const Shape& in_shape) {
    need_f32(grad, "max_pool2d_backward");
    need(idx.numel() == grad.numel(), "max_pool2d_backward: indices do not match the gradient");
    int64_t h = in_shape[in_shape.size() - 2], w = in_shape[in_shape.size() - 1];
    int64_t oh = grad.shape[grad.shape.size() - 2], ow = grad.shape[grad.shape.size() - 1];
    DeviceArray dx = empty(in_shape, DType::F32);
    int64_t planes = h * w ? dx.numel() / (h * w) : 0;
    GilRelease gr;
    fvcuda::max_pool2d_bwd((const float*)grad.data(), (const int64_t*)idx.data(), (float*)dx.data(), planes, h * w,
                           oh * ow, stream());
    return dx;
}

DeviceArray avg_pool2d_forward(const DeviceArray& x, int64_t oh, int64_t ow, std::vector<int> k, std::vector<int> s,
                               std::vector<int> p, bool cip, int divisor) {
    need_float(x, "avg_pool2d");
    fvcuda::Pool2d g = pool_geom(x, oh, ow, k, s, p, {1, 1}, "avg_pool2d");
    DeviceArray y = empty(pooled_shape(x, oh, ow), x.dtype);
    GilRelease gr;
    fvcuda::avg_pool2d_fwd(x.dtype, x.data(), y.data(), g, cip, divisor, stream());
    return y;
}

DeviceArray avg_pool2d_backward(const DeviceArray& grad, const Shape& in_shape, std::vector<int> k, std::vector<int> s,
                                std::vector<int> p, bool cip, int divisor) {
    need_f32(grad, "avg_pool2d_backward");
    DeviceArray dx = empty(in_shape, DType::F32);
    fvcuda::Pool2d g = pool_geom(dx, grad.shape[grad.shape.size() - 2], grad.shape.back(), k, s, p, {1, 1},
                                 "avg_pool2d_backward");
    GilRelease gr;
    fvcuda::avg_pool2d_bwd((const float*)grad.data(), (float*)dx.data(), g, cip, divisor, stream());
    return dx;
}

DeviceArray adaptive_avg_pool2d_forward(const DeviceArray& x, int64_t oh, int64_t ow) {
    need_float(x, "adaptive_avg_pool2d");
    need(x.shape.size() >= 2, "adaptive_avg_pool2d: expected (..., H, W)");
    int64_t h = x.shape[x.shape.size() - 2], w = x.shape.back(), planes = h * w ? x.numel() / (h * w) : 0;
    DeviceArray y = empty(pooled_shape(x, oh, ow), x.dtype);
    GilRelease gr;
    fvcuda::adaptive_avg_pool2d_fwd(x.dtype, x.data(), y.data(), planes, h, w, oh, ow, stream());
    return y;
}

DeviceArray adaptive_avg_pool2d_backward(const DeviceArray& grad, const Shape& in_shape) {
    need_f32(grad, "adaptive_avg_pool2d_backward");
    int64_t h = in_shape[in_shape.size() - 2], w = in_shape.back();
    int64_t oh = grad.shape[grad.shape.size() - 2], ow = grad.shape.back();
    DeviceArray dx = empty(in_shape, DType::F32);
    int64_t planes = h * w ? dx.numel() / (h * w) : 0;
    GilRelease gr;
    fvcuda::adaptive_avg_pool2d_bwd((const float*)grad.data(), (float*)dx.data(), planes, h, w, oh, ow, stream());
    return dx;
}

py::tuple adaptive_max_pool2d_forward(const DeviceArray& x, int64_t oh, int64_t ow) {
    need_float(x, "adaptive_max_pool2d");
    need(x.shape.size() >= 2, "adaptive_max_pool2d: expected (..., H, W)");
    int64_t h = x.shape[x.shape.size() - 2], w = x.shape.back(), planes = h * w ? x.numel() / (h * w) : 0;
    need(h > 0 && w > 0, "adaptive_max_pool2d: empty input plane");
    DeviceArray y = empty(pooled_shape(x, oh, ow), x.dtype), idx = empty(pooled_shape(x, oh, ow), DType::I64);
    {
        GilRelease gr;
        fvcuda::adaptive_max_pool2d_fwd(x.dtype, x.data(), y.data(), (int64_t*)idx.data(), planes, h, w, oh, ow,
                                        stream());
    }
    return py::make_tuple(y, idx);
}

fvcuda::Conv2d conv_geom(const Shape& x, const Shape& w, std::vector<int> s, std::vector<int> p, std::vector<int> d,
                         int groups) {
    need(x.size() == 4 && w.size() == 4, "conv2d: expected 4-d input and weight");
    need(s.size() == 2 && p.size() == 2 && d.size() == 2, "conv2d: stride/padding/dilation must be pairs");
    need(groups > 0 && x[1] % groups == 0 && w[0] % groups == 0, "conv2d: channels must be divisible by groups");
    need(w[1] * groups == x[1], "conv2d: weight of shape " + shape_str(w) + " expects " + std::to_string(w[1] * groups) +
                                    " input channels, got " + std::to_string(x[1]));
    fvcuda::Conv2d cv{};
    cv.n = x[0]; cv.c = x[1]; cv.h = x[2]; cv.w = x[3]; cv.k = w[0];
    cv.r = (int)w[2]; cv.s = (int)w[3];
    cv.sh = s[0]; cv.sw = s[1]; cv.ph = p[0]; cv.pw = p[1]; cv.dh = d[0]; cv.dw = d[1]; cv.groups = groups;
    cv.p = (cv.h + 2 * cv.ph - (int64_t)cv.dh * (cv.r - 1) - 1) / cv.sh + 1;
    cv.q = (cv.w + 2 * cv.pw - (int64_t)cv.dw * (cv.s - 1) - 1) / cv.sw + 1;
    need(cv.p > 0 && cv.q > 0, "conv2d: input " + shape_str(x) + " is smaller than the (dilated) kernel");
    return cv;
}

DeviceArray conv2d_forward(const DeviceArray& x, const DeviceArray& w, const std::optional<DeviceArray>& bias,
                           std::vector<int> s, std::vector<int> p, std::vector<int> d, int groups, bool tf32) {
    need_float(x, "conv2d");
    need_same(x, w, "conv2d");
    fvcuda::Conv2d cv = conv_geom(x.shape, w.shape, s, p, d, groups);
    if (bias) {
        need_same(x, *bias, "conv2d bias");
        need(bias->numel() == cv.k, "conv2d: bias has the wrong size");
    }
    DeviceArray y = empty({cv.n, cv.k, cv.p, cv.q}, x.dtype);
    GilRelease gr;
    fvcuda::conv2d_fwd(x.dtype, x.data(), w.data(), bias ? bias->data() : nullptr, y.data(), cv, tf32, stream());
    return y;
}

DeviceArray conv2d_backward_data(const DeviceArray& grad, const DeviceArray& w, const Shape& in_shape,
                                 std::vector<int> s, std::vector<int> p, std::vector<int> d, int groups, bool tf32) {
    need_f32(grad, "conv2d_backward_data");
    need_f32(w, "conv2d_backward_data weight");
    fvcuda::Conv2d cv = conv_geom(in_shape, w.shape, s, p, d, groups);
    need(grad.shape == Shape({cv.n, cv.k, cv.p, cv.q}), "conv2d_backward_data: gradient has the wrong shape");
    DeviceArray dx = empty(in_shape, DType::F32);
    GilRelease gr;
    fvcuda::conv2d_bwd_data((const float*)grad.data(), (const float*)w.data(), (float*)dx.data(), cv, tf32, stream());
    return dx;
}

DeviceArray conv2d_backward_weight(const DeviceArray& grad, const DeviceArray& x, const Shape& w_shape,
                                   std::vector<int> s, std::vector<int> p, std::vector<int> d, int groups, bool tf32) {
    need_f32(grad, "conv2d_backward_weight");
    need_f32(x, "conv2d_backward_weight input");
    fvcuda::Conv2d cv = conv_geom(x.shape, w_shape, s, p, d, groups);
    need(grad.shape == Shape({cv.n, cv.k, cv.p, cv.q}), "conv2d_backward_weight: gradient has the wrong shape");
    DeviceArray dw = empty(w_shape, DType::F32);
    GilRelease gr;
    fvcuda::conv2d_bwd_weight((const float*)grad.data(), (const float*)x.data(), (float*)dw.data(), cv, tf32, stream());
    return dw;
}

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


DeviceArray upsample_forward(const DeviceArray& x, int64_t oh, int64_t ow, const std::string& mode, bool align_corners,
                             float scale_h, float scale_w) {
    need_float(x, "interpolate");
    need(x.shape.size() >= 3, "interpolate: expected (N, C, H, W)");
    int64_t h = x.shape[x.shape.size() - 2], w = x.shape.back(), planes = h * w ? x.numel() / (h * w) : 0;
    DeviceArray y = empty(pooled_shape(x, oh, ow), x.dtype);
    GilRelease gr;
    if (mode == "bilinear")
        fvcuda::upsample_bilinear_fwd(x.dtype, x.data(), y.data(), planes, h, w, oh, ow, align_corners, scale_h, scale_w,
                                      stream());
    else if (mode == "nearest" || mode == "nearest-exact")
        fvcuda::upsample_nearest_fwd(x.dtype, x.data(), y.data(), planes, h, w, oh, ow, scale_h, scale_w,
                                     mode == "nearest-exact", stream());
    else
        throw py::value_error("interpolate: mode " + mode + " is not implemented on CUDA");
    return y;
}

DeviceArray upsample_backward(const DeviceArray& grad, const Shape& in_shape, const std::string& mode,
                              bool align_corners, float scale_h, float scale_w) {
    need_f32(grad, "interpolate_backward");
    int64_t h = in_shape[in_shape.size() - 2], w = in_shape.back();
    int64_t oh = grad.shape[grad.shape.size() - 2], ow = grad.shape.back();
    DeviceArray dx = empty(in_shape, DType::F32);
    int64_t planes = h * w ? dx.numel() / (h * w) : 0;
    GilRelease gr;
    if (mode == "bilinear")
        fvcuda::upsample_bilinear_bwd((const float*)grad.data(), (float*)dx.data(), planes, h, w, oh, ow, align_corners,
                                      scale_h, scale_w, stream());
    else if (mode == "nearest" || mode == "nearest-exact")
        fvcuda::upsample_nearest_bwd((const float*)grad.data(), (float*)dx.data(), planes, h, w, oh, ow, scale_h, scale_w,
                                     mode == "nearest-exact", stream());
    else
        throw py::value_error("interpolate: mode " + mode + " is not implemented on CUDA");
    return dx;
}

fvcuda::RoiAlign roi_geom(const Shape& x, const DeviceArray& rois, int64_t ph, int64_t pw, float scale, int sampling,
                          bool aligned) {
    need(x.size() == 4, "roi_align: expected a 4-d input");
    need(rois.shape.size() == 2 && rois.shape[1] == 5, "roi_align: rois must be (K, 5) [batch, x1, y1, x2, y2]");
    return fvcuda::RoiAlign{x[0], x[1], x[2], x[3], rois.shape[0], ph, pw, scale, sampling, aligned};
}

DeviceArray roi_align_forward(const DeviceArray& x, const DeviceArray& rois, int64_t ph, int64_t pw, float scale,
                              int sampling, bool aligned) {
    need_float(x, "roi_align");
    need_same(x, rois, "roi_align");
    fvcuda::RoiAlign p = roi_geom(x.shape, rois, ph, pw, scale, sampling, aligned);
    DeviceArray y = empty({p.rois, p.c, ph, pw}, x.dtype);
    GilRelease gr;
    fvcuda::roi_align_fwd(x.dtype, x.data(), rois.data(), y.data(), p, stream());
    return y;
}

DeviceArray roi_align_backward(const DeviceArray& grad, const DeviceArray& rois, const Shape& in_shape, float scale,
                               int sampling, bool aligned) {
    need_f32(grad, "roi_align_backward");
    need_f32(rois, "roi_align_backward rois");
    fvcuda::RoiAlign p = roi_geom(in_shape, rois, grad.shape[2], grad.shape[3], scale, sampling, aligned);
    DeviceArray dx = empty(in_shape, DType::F32);
    GilRelease gr;
    fvcuda::roi_align_bwd((const float*)grad.data(), (const float*)rois.data(), (float*)dx.data(), p, stream());
    return dx;
}

// Greedy NMS: the pairwise IoU bitmask is computed on the device; the sort and the O(n * n/64)
// sweep over the mask run in C++ on the host (torchvision's CUDA nms does the same sweep).
DeviceArray nms(const DeviceArray& boxes, const DeviceArray& scores, float iou_threshold) {
    need(boxes.shape.size() == 2 && boxes.shape[1] == 4, "nms: boxes must be (N, 4)");
    need(scores.shape.size() == 1 && scores.shape[0] == boxes.shape[0], "nms: scores must be (N,)");
    need_f32(boxes, "nms boxes");
    need_f32(scores, "nms scores");
    int64_t n = boxes.shape[0];
    if (n == 0) return empty({0}, DType::I64);
    py::array host_scores = to_host(scores);
    const float* sp = static_cast<const float*>(host_scores.data());
    std::vector<int64_t> order(n);
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [sp](int64_t a, int64_t b) { return sp[a] > sp[b]; });
    DeviceArray order_dev = from_host(py::array_t<int64_t>(n, order.data()), "int64");
    DeviceArray sorted = index_select(boxes, 0, order_dev);
    int64_t words = (n + 63) / 64;
    DeviceArray mask = empty({n * words}, DType::I64);
    std::vector<uint64_t> host_mask(n * words);
    {
        GilRelease gr;
        fvcuda::nms_mask((const float*)sorted.data(), n, iou_threshold, (uint64_t*)mask.data(), stream());
        fvcuda::copy_d2h(host_mask.data(), mask.data(), sizeof(uint64_t) * n * words, stream());
    }
    std::vector<uint64_t> removed(words, 0);
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < n; ++i) {
        if (removed[i / 64] >> (i % 64) & 1ULL) continue;
        keep.push_back(order[i]);
        const uint64_t* row = host_mask.data() + i * words;
        for (int64_t j = i / 64; j < words; ++j) removed[j] |= row[j];
    }
    return from_host(py::array_t<int64_t>((py::ssize_t)keep.size(), keep.data()), "int64");
}

int checked_count(int* err) {
    int n = 0;
    *err = fv_cuda_device_count(&n);
    return n;
}

std::string error_string(int e) { return fv_cuda_error_string(e); }

void check_rc(int e, const std::string& what) {
    if (e) throw std::runtime_error(what + ": " + error_string(e));
}

py::dict stats_dict() {
    fvcuda::MemoryStats s = fvcuda::memory_stats();
    py::dict d;
    d["allocated_bytes"] = s.allocated;
    d["max_allocated_bytes"] = s.max_allocated;
    d["reserved_bytes"] = s.reserved;
    d["max_reserved_bytes"] = s.max_reserved;
    d["num_allocs"] = s.num_allocs;
    d["num_frees"] = s.num_frees;
    d["cache_hits"] = s.cache_hits;
    return d;
}

uintptr_t handle(void* p) { return reinterpret_cast<uintptr_t>(p); }
void* ptr(uintptr_t h) { return reinterpret_cast<void*>(h); }

}  // namespace

PYBIND11_MODULE(_C_cuda, m) {
    m.doc() = "flowvision.backend CUDA runtime: device arrays, caching allocator, streams and kernels";

    // ---------------------------------------------------------------- device queries
    m.def("device_count", []() {
        int err;
        return checked_count(&err);
    });
    m.def("device_count_error", []() {
        int err;
        checked_count(&err);
        return err ? error_string(err) : std::string();
    });
    m.def("get_device_name", [](int i) {
        char buf[256];
        int e = fv_cuda_device_name(i, buf, sizeof(buf));
        if (e) throw std::runtime_error("CUDA device " + std::to_string(i) + ": " + error_string(e));
        return std::string(buf);
    }, py::arg("index"));
    m.def("get_device_capability", [](int i) {
        int major = 0, minor = 0;
        check_rc(fv_cuda_device_capability(i, &major, &minor), "get_device_capability");
        return py::make_tuple(major, minor);
    }, py::arg("index"));
    m.def("total_memory", [](int i) {
        size_t b = 0;
        check_rc(fv_cuda_total_memory(i, &b), "total_memory");
        return b;
    }, py::arg("index"));
    m.def("set_device", [](int i) { check_rc(fv_cuda_set_device(i), "set_device"); }, py::arg("index"));
    m.def("runtime_version", []() {
        int v = 0;
        fv_cuda_runtime_version(&v);
        return v;
    });
    m.def("driver_version", []() {
        int v = 0;
        fv_cuda_driver_version(&v);
        return v;
    });
    m.def("supports_tf32", []() { return fvcuda::device_supports_tf32(); });
    m.def("axpy", [](float a, py::array_t<float, py::array::c_style | py::array::forcecast> x,
                     py::array_t<float, py::array::c_style | py::array::forcecast> y) {
        if (x.size() != y.size()) throw std::invalid_argument("axpy: x and y sizes differ");
        py::array_t<float> out(y.size());
        std::memcpy(out.mutable_data(), y.data(), sizeof(float) * y.size());
        int e;
        {
            py::gil_scoped_release rel;
            e = fv_cuda_axpy(static_cast<int>(x.size()), a, x.data(), out.mutable_data());
        }
        if (e) throw std::runtime_error(std::string("CUDA axpy failed: ") + error_string(e));
        return out;
    }, "y + a*x computed on the GPU (smoke test)");

    // ---------------------------------------------------------------- memory
    m.def("memory_allocated", []() { return fvcuda::memory_stats().allocated; });
    m.def("max_memory_allocated", []() { return fvcuda::memory_stats().max_allocated; });
    m.def("memory_reserved", []() { return fvcuda::memory_stats().reserved; });
    m.def("max_memory_reserved", []() { return fvcuda::memory_stats().max_reserved; });
    m.def("memory_stats", &stats_dict);
    m.def("empty_cache", []() {
        py::gil_scoped_release rel;
        fvcuda::empty_cache();
    });
    m.def("reset_peak_memory_stats", &fvcuda::reset_peak_memory_stats);

    // ---------------------------------------------------------------- streams and events (handles as ints)
    m.def("synchronize", []() {
        py::gil_scoped_release rel;
        fvcuda::device_synchronize();
    });
    m.def("stream_create", [](bool non_blocking) { return handle(fvcuda::create_stream(non_blocking)); },
          py::arg("non_blocking") = false);
    m.def("stream_destroy", [](uintptr_t s) { fvcuda::destroy_stream(ptr(s)); });
    m.def("current_stream", []() { return handle(fvcuda::current_stream()); });
    m.def("set_current_stream", [](uintptr_t s) { fvcuda::set_current_stream(ptr(s)); });
    m.def("stream_synchronize", [](uintptr_t s) {
        py::gil_scoped_release rel;
        fvcuda::stream_synchronize(ptr(s));
    });
    m.def("stream_query", [](uintptr_t s) { return fvcuda::stream_query(ptr(s)); });
    m.def("stream_wait_event", [](uintptr_t s, uintptr_t e) { fvcuda::stream_wait_event(ptr(s), ptr(e)); });
    m.def("event_create", [](bool timing) { return handle(fvcuda::create_event(timing)); }, py::arg("timing") = false);
    m.def("event_destroy", [](uintptr_t e) { fvcuda::destroy_event(ptr(e)); });
    m.def("event_record", [](uintptr_t e, uintptr_t s) { fvcuda::record_event(ptr(e), ptr(s)); });
    m.def("event_synchronize", [](uintptr_t e) {
        py::gil_scoped_release rel;
        fvcuda::event_synchronize(ptr(e));
    });
    m.def("event_query", [](uintptr_t e) { return fvcuda::event_query(ptr(e)); });
    m.def("event_elapsed_ms", [](uintptr_t a, uintptr_t b) { return fvcuda::event_elapsed_ms(ptr(a), ptr(b)); });

    // ---------------------------------------------------------------- DeviceArray
    py::class_<DeviceArray>(m, "DeviceArray", "Dense row-major device memory of one dtype (a CUDA tensor's storage)")
        .def_property_readonly("shape", [](const DeviceArray& a) { return py::tuple(py::cast(a.shape)); })
        .def_property_readonly("ndim", [](const DeviceArray& a) { return a.shape.size(); })
        .def_property_readonly("size", &DeviceArray::numel)
        .def_property_readonly("dtype", [](const DeviceArray& a) { return std::string(dtype_name(a.dtype)); })
        .def_property_readonly("itemsize", &DeviceArray::itemsize)
        .def_property_readonly("nbytes", &DeviceArray::nbytes)
        .def_property_readonly("strides", [](const DeviceArray& a) {
            Shape st(a.shape.size());
            int64_t acc = a.itemsize();
            for (int d = (int)a.shape.size() - 1; d >= 0; --d) {
                st[d] = acc;
                acc *= std::max<int64_t>(a.shape[d], 1);
            }
            return py::tuple(py::cast(st));
        }, "numpy-style byte strides (always C-contiguous)")
        .def_property_readonly("flags", [](const DeviceArray&) {
            py::dict f;
            f["C_CONTIGUOUS"] = true;
            return f;
        })
        .def_property_readonly("data_ptr", [](const DeviceArray& a) { return handle(a.data()); })
        .def_property_readonly("storage_ptr",
                               [](const DeviceArray& a) { return a.storage ? handle(a.storage->ptr) : 0; })
        .def("__repr__", [](const DeviceArray& a) {
            return "DeviceArray(shape=" + shape_str(a.shape) + ", dtype=" + dtype_name(a.dtype) + ")";
        });
    m.def("empty", [](const Shape& shape, const std::string& dtype) { return empty(shape, dtype_from_name(dtype)); });
    m.def("full", &full);
    m.def("fill_", &fill_);
    m.def("from_host", &from_host, "copy a numpy array to the device (pinned staging, async on the current stream)");
    m.def("to_host", &to_host, "copy to a new numpy array (waits for the current stream)");
    m.def("reshape", &reshape);
    m.def("subarray", &subarray);
    m.def("copy_", &copy_);

    // ---------------------------------------------------------------- op codes
    py::dict bop, uop, rop;
#define FV_CODE(d, name, v) d[name] = static_cast<int>(v)
    FV_CODE(bop, "add", fvcuda::B_ADD); FV_CODE(bop, "sub", fvcuda::B_SUB); FV_CODE(bop, "mul", fvcuda::B_MUL);
    FV_CODE(bop, "div", fvcuda::B_DIV); FV_CODE(bop, "pow", fvcuda::B_POW); FV_CODE(bop, "maximum", fvcuda::B_MAX);
    FV_CODE(bop, "minimum", fvcuda::B_MIN); FV_CODE(bop, "eq", fvcuda::B_EQ); FV_CODE(bop, "ne", fvcuda::B_NE);
    FV_CODE(bop, "lt", fvcuda::B_LT); FV_CODE(bop, "le", fvcuda::B_LE); FV_CODE(bop, "gt", fvcuda::B_GT);
    FV_CODE(bop, "ge", fvcuda::B_GE); FV_CODE(bop, "logical_and", fvcuda::B_AND); FV_CODE(bop, "logical_or", fvcuda::B_OR);
    FV_CODE(bop, "logical_xor", fvcuda::B_XOR); FV_CODE(bop, "remainder", fvcuda::B_REM);
    FV_CODE(bop, "atan2", fvcuda::B_ATAN2); FV_CODE(bop, "floor_divide", fvcuda::B_FLOOR_DIV);
    const char* unames[] = {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf",
                            "floor", "ceil", "round", "reciprocal", "square", "log1p", "expm1", "sign", "relu", "relu6",
                            "leaky_relu", "elu", "gelu", "gelu_tanh", "silu", "hardswish", "hardsigmoid", "mish",
                            "softplus", "clamp", "pow_scalar", "add_scalar", "mul_scalar", "hardtanh", "selu",
                            "logsigmoid", "log2", "trunc"};
    static_assert(sizeof(unames) / sizeof(unames[0]) == fvcuda::U_COUNT, "unary op names out of date");
    for (int i = 0; i < fvcuda::U_COUNT; ++i) uop[unames[i]] = i;
    FV_CODE(rop, "sum", fvcuda::R_SUM); FV_CODE(rop, "mean", fvcuda::R_MEAN); FV_CODE(rop, "max", fvcuda::R_MAX);
    FV_CODE(rop, "min", fvcuda::R_MIN); FV_CODE(rop, "argmax", fvcuda::R_ARGMAX); FV_CODE(rop, "argmin", fvcuda::R_ARGMIN);
    FV_CODE(rop, "prod", fvcuda::R_PROD); FV_CODE(rop, "sumsq", fvcuda::R_SUMSQ);
#undef FV_CODE
    m.attr("BINARY_OPS") = bop;
    m.attr("UNARY_OPS") = uop;
    m.attr("REDUCE_OPS") = rop;

    // ---------------------------------------------------------------- kernels
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
    m.def("softmax_forward", &softmax_forward);
    m.def("softmax_backward", &softmax_backward);
    m.def("layer_norm_forward", &layer_norm_forward);
    m.def("layer_norm_backward", &layer_norm_backward);
    m.def("group_norm_forward", &group_norm_forward);
    m.def("group_norm_backward", &group_norm_backward);
    m.def("batch_norm_forward", &batch_norm_forward);
    m.def("batch_norm_backward", &batch_norm_backward);
    m.def("max_pool2d_forward", &max_pool2d_forward);
    m.def("max_pool2d_backward", &max_pool2d_backward);
    m.def("avg_pool2d_forward", &avg_pool2d_forward);
    m.def("avg_pool2d_backward", &avg_pool2d_backward);
    m.def("adaptive_avg_pool2d_forward", &adaptive_avg_pool2d_forward);
    m.def("adaptive_avg_pool2d_backward", &adaptive_avg_pool2d_backward);
    m.def("adaptive_max_pool2d_forward", &adaptive_max_pool2d_forward);
    m.def("conv2d_forward", &conv2d_forward);
    m.def("conv2d_backward_data", &conv2d_backward_data);
    m.def("conv2d_backward_weight", &conv2d_backward_weight);
    m.def("matmul", &matmul, py::arg("a"), py::arg("b"), py::arg("bias"), py::arg("trans_a"), py::arg("trans_b"),
          py::arg("alpha") = 1.f, py::arg("tf32") = false);
    m.def("upsample_forward", &upsample_forward);
    m.def("upsample_backward", &upsample_backward);
    m.def("roi_align_forward", &roi_align_forward);
    m.def("roi_align_backward", &roi_align_backward);
    m.def("nms", &nms);

    // host-only helpers, exposed so tests can check them without a GPU
    m.def("_broadcast", [](std::vector<Shape> shapes) {
        std::vector<const Shape*> ptrs;
        for (auto& s : shapes) ptrs.push_back(&s);
        Shape out;
        fvcuda::Broadcast bc = broadcast(ptrs, out);
        std::vector<Shape> strides;
        for (size_t k = 0; k < shapes.size(); ++k) strides.emplace_back(bc.stride[k], bc.stride[k] + bc.ndim);
        return py::make_tuple(out, strides);
    });
    m.def("_conv_output_size", [](const Shape& x, const Shape& w, std::vector<int> s, std::vector<int> p,
                                  std::vector<int> d, int groups) {
        fvcuda::Conv2d cv = conv_geom(x, w, s, p, d, groups);
        return py::make_tuple(cv.p, cv.q);
    });
}
