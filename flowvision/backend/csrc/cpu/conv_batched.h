// Blocked-image convolution kernels (cpu/conv_batched.cpp), called by cpu/conv.cpp's im2col path. Each returns
// false (and does nothing) when the per-image path suits the shapes better: depthwise, one image, or output
// planes that already give the GEMM enough columns.
#pragma once
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

template <class T>
bool conv_blocked_forward(const T* x, const T* w, const T* bias, T* y, const ConvParams& p);
template <class T>
bool conv_blocked_backward_input(const T* gy, const T* w, T* gx, const ConvParams& p);
template <class T>
bool conv_blocked_backward_weight(const T* gy, const T* x, T* gw, const ConvParams& p);

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
