// Winograd F(4x4, 3x3) convolution (cpu/conv_winograd.cpp): the unit-stride 3x3 convs of a training step
// (forward, input gradient, weight gradient), chosen by cpu/conv.cpp.
#pragma once
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

// Whether a float32 conv runs as Winograd F(4x4, 3x3): ungrouped, undilated, unit-stride 3x3 with channel counts
// that fill whole vectors (ResNet / VGG / U-Net widths), padding at most 2 (so the input gradient, a conv padded
// by 2 - p, is one too), and a map whose 4x4 output tiles waste little: the transformed domain multiplies 36 values
// per tile where a direct conv multiplies 9 per output pixel, and Winograd runs only where that is at most 60% of
// the direct count (a 7x7 map: 4 tiles, 33%; 5x5: 64%, direct).
bool winograd_suits(const ConvParams& p);

// Whether the forward (and the input gradient, a forward conv) gains more than it spends on transforming the
// filters: 36 x C x O values written, packed and streamed per call whatever the batch, against 9 x pixels - 36 x
// tiles multiplies saved per channel pair. Measured on AVX2 (one thread): a 512-channel 7x7 conv breaks even near
// 3000 saved per pair (batch 8: 2376, 0.86x; batch 16: 4752, 1.13x), a 256-channel 14x14 one near 1200 (batch 1:
// 1.01x), so the bar is 6 x sqrt(C x O). The weight gradient transforms no filters: it needs only winograd_suits.
bool winograd_pays_for_filters(const ConvParams& p);

// y (N, O, OH, OW) = conv(x, w) + bias, NCHW; w (O, C, 3, 3), or with w_flipped a (C, O, 3, 3) weight used
// transposed and flipped (the weight of a unit-stride conv's input gradient; see conv_nhwc.h).
void conv_forward_winograd(const float* x, const float* w, const float* bias, float* y, const ConvParams& p,
                           bool w_flipped = false);

// gw (O, C, 3, 3) = the weight gradient of the conv p for output gradient gy (N, O, OH, OW) and input x (N, C, H, W).
void conv_backward_weight_winograd(const float* gy, const float* x, float* gw, const ConvParams& p);

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
