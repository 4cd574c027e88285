#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

FV_REGISTRATION void fill_conv_nhwc(KernelTable& t);  // cpu/conv_nhwc.cpp
FV_REGISTRATION void fill_conv_winograd(KernelTable& t);  // cpu/conv_winograd.cpp
FV_REGISTRATION void fill_conv_pw_dw(KernelTable& t);  // cpu/conv_pw_dw.cpp
FV_REGISTRATION void fill_pool_nhwc(KernelTable& t);  // cpu/pool_nhwc.cpp
FV_REGISTRATION void fill_attention(KernelTable& t);  // cpu/attention.cpp
FV_REGISTRATION void fill_window(KernelTable& t);  // cpu/window.cpp
FV_REGISTRATION void fill_exec(KernelTable& t);  // cpu/exec_kernels.cpp
FV_REGISTRATION void fill_optim(KernelTable& t);  // cpu/optim.cpp
FV_REGISTRATION void fill_image(KernelTable& t);  // cpu/resample_u8.cpp
FV_REGISTRATION void fill_color(KernelTable& t);  // cpu/color_u8.cpp
FV_REGISTRATION void fill_affine(KernelTable& t);  // cpu/affine_u8.cpp

FV_REGISTRATION void fill_table(KernelTable& t) {
    fill_gemm(t);
    fill_conv(t);
    fill_pool(t);
    fill_norm(t);
    fill_softmax(t);
    fill_activation(t);
    fill_elementwise(t);
    fill_interp(t);
    fill_conv_nhwc(t);
    fill_conv_winograd(t);
    fill_conv_pw_dw(t);
    fill_pool_nhwc(t);
    fill_attention(t);
    fill_window(t);
    fill_exec(t);
    fill_optim(t);
    fill_image(t);
    fill_color(t);
    fill_affine(t);
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
