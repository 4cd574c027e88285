// Bindings of the Swin window kernels (cpu/window.cpp).
#include "core/bind_util.h"

void bind_window(py::module_& m) {
    (void)m;
}
