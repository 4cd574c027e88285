// Memory-bound kernels of the captured-plan executor (compiled once per ISA).
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

void fill_exec(KernelTable& t) {
    (void)t;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
