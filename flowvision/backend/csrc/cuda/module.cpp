// flowvision.backend._C_cuda: device queries (built only where nvcc exists).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <stdexcept>
#include <string>

extern "C" {
int fv_cuda_device_count(int* count);
int fv_cuda_device_name(int index, char* buf, int n);
const char* fv_cuda_error_string(int e);
int fv_cuda_runtime_version(int* v);
int fv_cuda_axpy(int n, float a, const float* x, float* y);
}

namespace py = pybind11;

PYBIND11_MODULE(_C_cuda, m) {
    m.doc() = "flowvision.backend CUDA runtime queries";
    m.def("device_count", []() {
        int n = 0;
        fv_cuda_device_count(&n);
        return n;
    });
    m.def("device_count_error", []() {
        int n = 0;
        int e = fv_cuda_device_count(&n);
        return e ? std::string(fv_cuda_error_string(e)) : std::string();
    });
    m.def("get_device_name", [](int i) {
        char buf[256];
        int e = fv_cuda_device_name(i, buf, sizeof(buf));
        if (e) throw std::runtime_error("CUDA device " + std::to_string(i) + ": " + fv_cuda_error_string(e));
        return std::string(buf);
    }, py::arg("index"));
    m.def("runtime_version", []() {
        int v = 0;
        fv_cuda_runtime_version(&v);
        return v;
    });
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
        if (e) throw std::runtime_error(std::string("CUDA axpy failed: ") + fv_cuda_error_string(e));
        return out;
    }, "y + a*x computed on the GPU (smoke test)");
}
