// Fused scaled-dot-product attention (compiled once per ISA).
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

void fill_attention(KernelTable& t) {
    (void)t;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
