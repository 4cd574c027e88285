#include <pybind11/pybind11.h>
namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
    m.doc() = "flowvision.backend compiled kernels";
    m.def("cpu_isa", []() { return std::string("portable"); });
}
