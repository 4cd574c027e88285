#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

void fill_table(KernelTable& t) {
    fill_gemm(t);
    fill_conv(t);
    fill_pool(t);
    fill_norm(t);
    fill_softmax(t);
    fill_interp(t);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
