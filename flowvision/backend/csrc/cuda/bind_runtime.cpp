// flowvision.backend._C_cuda: device queries, the caching allocator, streams/events, DeviceArray and its
// creation/copy functions, and the op-code tables.
#include "cuda/bind_util.h"

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

namespace fvcuda_bind {

namespace {

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

void copy_(DeviceArray& dst, const DeviceArray& src) {
    need(dst.nbytes() == src.nbytes(), "copy_: sizes differ");
    GilRelease g;
    fvcuda::copy_d2d(dst.data(), src.data(), static_cast<size_t>(src.nbytes()), stream());
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

void bind_runtime(py::module_& m) {
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
}

}  // namespace fvcuda_bind
