#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

void fill_conv_nhwc(KernelTable& t);  // cpu/conv_nhwc.cpp
void fill_pool_nhwc(KernelTable& t);  // cpu/pool_nhwc.cpp

void fill_table(KernelTable& t) {
    fill_gemm(t);
    fill_conv(t);
    fill_pool(t);
    fill_norm(t);
    fill_softmax(t);
    fill_interp(t);
    fill_conv_nhwc(t);
    fill_pool_nhwc(t);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
