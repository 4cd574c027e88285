// The NHWC direct convolution (cpu/conv_nhwc.cpp) as a step of the NCHW conv2d forward (cpu/conv.cpp).
#pragma once
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

// y (N, O, OH, OW) = conv(x, w) + bias for NCHW x and a torch-layout weight (O, C/groups, KH, KW): x transposed to
// NHWC, the weight packed for this call (it changes every training step), the direct kernel writing NCHW.
// w_flipped (groups == 1 only): w is (C, O, KH, KW) and the conv uses it transposed and flipped in both spatial
// dims (w'[o][c][i][j] = w[c][o][KH-1-i][KW-1-j]), the weight of a unit-stride conv's input gradient.
// y (B, cols, rows) = x (B, rows, cols) transposed per batch: NCHW <-> NHWC.
void transpose_batched(const float* x, float* y, int64_t B, int64_t rows, int64_t cols);

// Output rows [r0, r1) (row r = image r / OH, output row r % OH) of a depthwise conv (p.groups == p.C == p.O) with
// weights packed by conv_pack, y = act(conv + bias), run serially on the calling thread.
void depthwise_rows(const float* x, const float* wp, const float* bias, float* y, const ConvNhwcParams& p, int act,
                    float lo, float hi, int64_t r0, int64_t r1);

void conv_forward_nchw_direct(const float* x, const float* w, const float* bias, float* y, const ConvParams& p,
                              bool w_flipped = false);

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
