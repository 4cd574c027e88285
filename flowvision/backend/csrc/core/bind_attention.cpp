// Bindings of the fused attention kernel (cpu/attention.cpp).
#include "core/bind_util.h"

void bind_attention(py::module_& m) {
    (void)m;
}
