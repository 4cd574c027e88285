// flowvision.backend._C_cuda: device queries, the caching allocator, streams/events, DeviceArray
// (the storage of a CUDA tensor) and the kernel entry points used by flowvision/backend/_cuda.
// Built only where nvcc exists; cudart is linked statically, so the module imports on machines
// without a GPU or driver (every query then reports "no device" instead of failing).
//
// Kernel entry points take DeviceArrays, validate shapes and dtypes (bad input -> ValueError /
// RuntimeError with a message), allocate their outputs from the caching allocator, release the
// GIL and enqueue on the calling thread's current stream.
//
// Each kernel family registers its functions in cuda/bind_<family>.cpp (shared helpers: cuda/bind_util.h).
#include "cuda/bind_util.h"

using namespace fvcuda_bind;

PYBIND11_MODULE(_C_cuda, m) {
    m.doc() = "flowvision.backend CUDA runtime: device arrays, caching allocator, streams and kernels";

    bind_runtime(m);
    bind_elementwise(m);
    bind_nn(m);
    bind_gemm(m);
    bind_detection(m);

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
}
