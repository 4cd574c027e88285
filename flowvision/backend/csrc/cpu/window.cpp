// Swin window partition/reverse with the cyclic shift (compiled once per ISA).
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

void fill_window(KernelTable& t) {
    (void)t;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
