// The captured-plan executor: runs a lowered flowvision.compile plan in C++.
#include "core/bind_util.h"

void bind_executor(py::module_& m) {
    (void)m;
}
