// An inverted-residual block's 1x1 expansion fused with the depthwise conv that reads it (float32, NHWC, inference).
//
// MobileNet / EfficientNet blocks widen a narrow tensor 4-6x (e.g. 24 -> 144 channels at 56x56: 1.8 MB an image) only
// for a depthwise conv to read it back. At a batch of several images per thread the expanded tensor outgrows the
// last-level cache, and the expansion (K = 16-40 reduction steps per output) becomes bound by its stores. There each
// task walks the output rows of one image and keeps a band of expanded rows in a buffer sized for L2: the expansion
// fills the rows the next few output rows need (rows already in the band from the previous step are moved to its
// front, not recomputed), then the depthwise kernel runs on the band as on a short image, so the expanded tensor
// never exists in full. With fewer than two images per thread on several threads the two convs run one after the
// other (see below).
// Both parts are the unfused kernels themselves (cpu/gemm.cpp's packed GEMM, cpu/conv_nhwc.cpp's depthwise rows) and
// every output sums its terms in the same order: results are bit-identical to the two convs run separately, for any
// batch and thread count.
#include <cstring>

#include "cpu/common.h"
#include "cpu/conv_nhwc.h"

namespace fv {
namespace FV_ISA_NAMESPACE {

FV_REGISTRATION void fill_conv_pw_dw(KernelTable& t);

namespace {

// The band of expanded rows one task keeps (with the output rows it writes per step, this stays inside a 512 KB L2)
constexpr int64_t kBandBytes = 192 * 1024;
constexpr int64_t kMinStepRows = 4;

void conv_pw_dw(const float* x, int64_t cin, const float* pw, const float* pw_bias, int pw_act, float pw_lo,
                float pw_hi, const float* dw, const float* dw_bias, float* y, const ConvNhwcParams& p, int dw_act,
                float dw_lo, float dw_hi) {
    if (p.N <= 0 || p.OH <= 0 || p.OW <= 0 || p.C <= 0) return;
    const int64_t E = p.C, row_floats = p.W * E;
    const int nt = in_parallel_region() ? 1 : get_num_threads();
    if (nt > 1 && p.N < 2 * nt) {
        // Fewer than two images per thread: splitting images into bands cost more (recomputed halo rows, short
        // GEMMs, uneven tasks) than the cache saved, measured at batch 1 and 2 on 2 threads. The two convs then run
        // one after the other, each over all threads. One thread bands even a single image: it has no other thread
        // to balance against, and the bands saved 1-10% of MobileNetV3 / EfficientNet at batch 1 (the expanded
        // tensor, 1-3 MB, otherwise goes through L3).
        Buf<float> expanded(p.N * p.H * row_floats);
        gemm_packed_f32(x, p.N * p.H * p.W, cin, E, pw, expanded.get(), pw_bias, pw_act, pw_lo, pw_hi);
        parallel_for(0, p.N * p.OH, grain_for(p.OW * E * p.KH * p.KW, 1 << 16), [&](int64_t r0, int64_t r1) {
            depthwise_rows(expanded.get(), dw, dw_bias, y, p, dw_act, dw_lo, dw_hi, r0, r1);
        });
        return;
    }
    const int64_t span = (p.KH - 1) * p.dh + 1;  // input rows one output row reads
    // output rows per step: as many as the band holds, and at least kMinStepRows, so the rows moved to the band's
    // front each step (span - stride of them) stay few next to the rows expanded (a 5x5 / 2 conv moving 3 rows for
    // every 2 new ones was 0.8x the separate convs)
    const int64_t band_rows = mx<int64_t>(span + (kMinStepRows - 1) * p.sh,
                                          kBandBytes / int64_t(sizeof(float) * row_floats));
    const int64_t step_rows = mx<int64_t>(1, (band_rows - span) / p.sh + 1);
    const int64_t cap_rows = (step_rows - 1) * p.sh + span;
    // one task per image
    parallel_for_dynamic(0, p.N, [&](int64_t n0, int64_t n1) {
        Buf<float> band(cap_rows * row_floats);
        for (int64_t n = n0; n < n1; ++n) {
            const float* xn = x + n * p.H * p.W * cin;
            float* yn = y + n * p.OH * p.OW * E;
            int64_t have_lo = 0, have_hi = 0;  // expanded rows [have_lo, have_hi) are in the band, from its start
            for (int64_t o0 = 0; o0 < p.OH; o0 += step_rows) {
                const int64_t o1 = mn(p.OH, o0 + step_rows);
                const int64_t need_lo = o0 * p.sh - p.ph, need_hi = (o1 - 1) * p.sh - p.ph + span;
                const int64_t lo = mx<int64_t>(0, need_lo), hi = mn(p.H, need_hi);
                int64_t fill_from = lo;
                if (have_hi > lo) {  // keep the rows the previous step already expanded
                    if (lo > have_lo)
                        memmove(band.get(), band.get() + (lo - have_lo) * row_floats,
                                sizeof(float) * (have_hi - lo) * row_floats);
                    fill_from = have_hi;
                }
                if (hi > fill_from)
                    gemm_packed_f32(xn + fill_from * p.W * cin, (hi - fill_from) * p.W, cin, E, pw,
                                    band.get() + (fill_from - lo) * row_floats, pw_bias, pw_act, pw_lo, pw_hi);
                have_lo = lo;
                have_hi = hi;
                // the band as an image of hi - lo rows whose first row is lo - need_lo rows below the first one
                // output row o0 reads; rows outside the band are the real image's padding
                ConvNhwcParams b = p;
                b.N = 1;
                b.H = hi - lo;
                b.OH = o1 - o0;
                b.ph = lo - need_lo;
                depthwise_rows(band.get(), dw, dw_bias, yn + o0 * p.OW * E, b, dw_act, dw_lo, dw_hi, 0, o1 - o0);
            }
        }
    });
}

}  // namespace

FV_REGISTRATION void fill_conv_pw_dw(KernelTable& t) { t.nhwc.conv_pw_dw = &conv_pw_dw; }

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
