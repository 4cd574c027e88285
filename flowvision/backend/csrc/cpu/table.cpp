#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

void fill_conv_nhwc(KernelTable& t);  // cpu/conv_nhwc.cpp
void fill_pool_nhwc(KernelTable& t);  // cpu/pool_nhwc.cpp
void fill_attention(KernelTable& t);  // cpu/attention.cpp
void fill_window(KernelTable& t);  // cpu/window.cpp
void fill_exec(KernelTable& t);  // cpu/exec_kernels.cpp

void fill_table(KernelTable& t) {
    fill_gemm(t);
    fill_conv(t);
    fill_pool(t);
    fill_norm(t);
    fill_softmax(t);
    fill_interp(t);
    fill_conv_nhwc(t);
    fill_pool_nhwc(t);
    fill_attention(t);
    fill_window(t);
    fill_exec(t);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
