// Interface between the pybind11 module (baseline ISA) and the kernel translation units
// (compiled once per ISA, each inside its own namespace fv::<isa>). Only plain structs and
// declarations here: no inline code, so nothing can be shared across ISAs by the linker.
#pragma once
#include <cstdint>

#include "cpu/epilogue.h"  // enum Epilogue (and, in the kernel units, epilogue_apply)

namespace fv {

struct ConvParams {
    int64_t N, C, H, W;    // input
    int64_t O, kh, kw;     // weight (O, C/groups, kh, kw)
    int64_t sh, sw, ph, pw, dh, dw, groups;
    int64_t OH, OW;        // output
};

struct PoolParams {
    int64_t planes, H, W, OH, OW;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    bool count_include_pad;
    int64_t divisor_override;  // 0 = none
};

enum InterpMode : int { kNearest = 0, kNearestExact = 1, kBilinear = 2, kBicubic = 3 };

struct InterpParams {
    int64_t planes, H, W, OH, OW;
    int mode;
    bool align_corners;
    double scale_h, scale_w;  // user scale factors (output/input); <= 0 = not given
    bool antialias;
};

template <class T>
struct KernelSet {
    // C[b] = op(A[b]) @ op(B[b]); op(A) is (M,K), op(B) is (K,N)
    void (*gemm)(const T* a, const T* b, T* c, int64_t batch, int64_t M, int64_t N, int64_t K, bool ta, bool tb);
    // Weights packed once: packed_b_size(K, N) elements; pack_b packs op(B) (K, N) (tb: B is (N, K));
    // gemm_packed: C(M, N) = act(A(M, K) @ op(B) + bias[N] + residual(M, N)), row-major, act = Epilogue
    int64_t (*packed_b_size)(int64_t K, int64_t N);
    void (*pack_b)(const T* b, bool tb, int64_t K, int64_t N, T* out);
    void (*gemm_packed)(const T* a, int64_t M, int64_t K, int64_t N, const T* bp, T* c, const T* bias,
                        const T* residual, int act, T lo, T hi);
    // Left operand packed once (a 1x1 convolution's weight in NCHW): packed_a_size(M, K) elements; then for each
    // of `batch` pairs C_b(M, N) = act(A @ B_b(K, N) + bias[M] (per row) + residual_b), all row-major, contiguous
    int64_t (*packed_a_size)(int64_t M, int64_t K);
    void (*pack_a)(const T* a, int64_t M, int64_t K, T* out);
    void (*gemm_packed_a)(const T* ap, int64_t M, int64_t K, int64_t N, int64_t batch, const T* b, T* c,
                          const T* bias, const T* residual, int act, T lo, T hi);
    void (*conv2d_forward)(const T* x, const T* w, const T* bias, T* y, const ConvParams& p);
    void (*conv2d_backward_input)(const T* gy, const T* w, T* gx, const ConvParams& p);
    void (*conv2d_backward_weight)(const T* gy, const T* x, T* gw, const ConvParams& p);
    void (*im2col)(const T* x, T* cols, const ConvParams& p);
    void (*col2im)(const T* cols, T* x, const ConvParams& p);

    void (*max_pool2d_forward)(const T* x, T* y, int64_t* idx, const PoolParams& p);
    void (*max_pool2d_backward)(const T* gy, const int64_t* idx, T* gx, int64_t planes, int64_t in_plane, int64_t out_plane);
    void (*avg_pool2d_forward)(const T* x, T* y, const PoolParams& p);
    void (*avg_pool2d_backward)(const T* gy, T* gx, const PoolParams& p);
    void (*adaptive_avg_pool2d_forward)(const T* x, T* y, int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW);
    void (*adaptive_avg_pool2d_backward)(const T* gy, T* gx, int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW);
    void (*adaptive_max_pool2d_forward)(const T* x, T* y, int64_t* idx, int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW);

    // x is (N, C, S)
    void (*batch_norm_train_forward)(const T* x, const T* w, const T* b, T* y, T* mean, T* invstd,
                                     int64_t N, int64_t C, int64_t S, double eps);
    void (*batch_norm_infer_forward)(const T* x, const T* rm, const T* rv, const T* w, const T* b, T* y,
                                     int64_t N, int64_t C, int64_t S, double eps);
    void (*batch_norm_backward)(const T* gy, const T* x, const T* w, const T* mean, const T* invstd,
                                T* gx, T* gw, T* gb, int64_t N, int64_t C, int64_t S, bool training);
    void (*layer_norm_forward)(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t M, int64_t N, double eps);
    void (*layer_norm_backward)(const T* gy, const T* x, const T* w, const T* mean, const T* rstd,
                                T* gx, T* gw, T* gb, int64_t M, int64_t N);
    void (*group_norm_forward)(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd,
                               int64_t N, int64_t C, int64_t S, int64_t G, double eps);
    void (*group_norm_backward)(const T* gy, const T* x, const T* w, const T* mean, const T* rstd,
                                T* gx, T* gw, T* gb, int64_t N, int64_t C, int64_t S, int64_t G);

    void (*softmax_forward)(const T* x, T* y, int64_t M, int64_t N, bool log);
    void (*softmax_backward)(const T* gy, const T* y, T* gx, int64_t M, int64_t N, bool log);

    void (*interpolate_forward)(const T* x, T* y, const InterpParams& p);
    void (*interpolate_backward)(const T* gy, T* gx, const InterpParams& p);

    void (*gelu_forward)(const T* x, T* y, int64_t n, bool tanh_approx);
    void (*gelu_backward)(const T* gy, const T* x, T* gx, int64_t n, bool tanh_approx);
    void (*silu_forward)(const T* x, T* y, int64_t n);
    void (*silu_backward)(const T* gy, const T* x, T* gx, int64_t n);
    // ReLU's input gradient from its output, torch's threshold_backward: 0 where y <= 0, gy elsewhere (NaN y: gy)
    void (*relu_backward)(const T* gy, const T* y, T* gx, int64_t n);
    // y = f(x) elementwise, f = Pointwise (clamp uses lo/hi); y may alias x. NaN in, NaN out (as torch).
    void (*pointwise)(int kind, const T* x, T* y, int64_t n, T lo, T hi);
    // y = epilogue(y) in place over n contiguous values, any Epilogue kind (the fused kernels' math)
    void (*epilogue)(int act, T* y, int64_t n, T lo, T hi);
    // y (R, L) = a (R, L) op b, op 0 = add, 1 = mul; b is (R, L) (b_mode 0), one value per row (R, 1) (1), or one
    // row repeated (1, L) (2). Exactly rounded per element, so equal to numpy's broadcast result bit for bit.
    void (*binary)(int op, const T* a, const T* b, T* y, int64_t R, int64_t L, int b_mode);
    void (*scale_backward)(const T* gy, const T* x, const T* s, T* gx, T* gs, int64_t A, int64_t C, int64_t B);
};

// The kinds of the pointwise kernel (its math: pw_apply / pw_scalar in cpu/activation.cpp), X(id, name) in code
// order; _C.Pointwise binds this list. clamp uses lo / hi, leaky_relu's slope is lo.
#define FV_POINTWISE_KINDS(X)      \
    X(kPwRelu, relu)               \
    X(kPwClamp, clamp)             \
    X(kPwSigmoid, sigmoid)         \
    X(kPwHardswish, hardswish)     \
    X(kPwHardsigmoid, hardsigmoid) \
    X(kPwLeakyRelu, leaky_relu)
#define FV_PW_ENUMERATOR(id, name) id,
enum Pointwise : int { FV_POINTWISE_KINDS(FV_PW_ENUMERATOR) kPwCount };
#undef FV_PW_ENUMERATOR
// A native plan's unary step: a Pointwise kind, or one of these activations with kernels of their own.
enum UnaryStep : int { kUnGelu = 100, kUnGeluTanh = 101, kUnSilu = 102 };
// A native plan's pool step, and the two ops of the binary kernels.
enum PoolKind : int { kPoolMax = 0, kPoolAvg = 1, kPoolAdaptiveAvg = 2 };
enum BinaryOp : int { kBinAdd = 0, kBinMul = 1 };

// NHWC inference kernels (float32 only): direct convolution with weights packed once (cpu/conv_nhwc.cpp) and
// pooling over channels-last activations (cpu/pool_nhwc.cpp).
struct ConvNhwcParams {
    int64_t N, H, W, C;    // input (N, H, W, C)
    int64_t O, KH, KW, groups;
    int64_t sh, sw, ph, pw, dh, dw;
    int64_t OH, OW;        // output (N, OH, OW, O)
    int64_t ocb;           // output channels per packed block (set by conv_packed_size)
    int64_t out_nchw;      // 1: write y as (N, O, OH, OW) (general kernel only; no residual)
};

struct NhwcKernels {
    // floats of the packed weight; sets p.ocb (only O, C, KH, KW, groups are read)
    int64_t (*conv_packed_size)(ConvNhwcParams& p);
    // w (O, C/groups, KH, KW) -> the ISA's blocked layout
    void (*conv_pack)(const float* w, float* out, const ConvNhwcParams& p);
    // y = act(conv(x, w) + bias + residual), act = Epilogue (clamp to [lo, hi])
    void (*conv_forward)(const float* x, const float* wpacked, const float* bias, const float* residual, float* y,
                         const ConvNhwcParams& p, int act, float lo, float hi);
    // PoolParams.planes = N; x (N, H, W, C)
    void (*max_pool)(const float* x, float* y, const PoolParams& p, int64_t C);
    void (*avg_pool)(const float* x, float* y, const PoolParams& p, int64_t C);
    void (*adaptive_avg_pool)(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C, int64_t OH,
                              int64_t OW);
    // y (B, cols, rows) = per-batch transpose of x (B, rows, cols): NCHW <-> NHWC
    void (*transpose)(const float* x, float* y, int64_t B, int64_t rows, int64_t cols);
    // y (N, P, C) = x (N, P, C) * gate (N, C) (squeeze-excitation); y may be x
    void (*channel_scale)(const float* x, const float* gate, float* y, int64_t N, int64_t P, int64_t C);
    // Winograd F(4x4, 3x3) on NHWC activations (cpu/conv_winograd.cpp): whether the conv p (and its input shape)
    // takes it in a captured plan; the transformed filters (36 x C x O floats) from w (O, C, 3, 3); and
    // y = act(conv + bias + residual) like conv_forward (out_nchw: y written NCHW, no residual)
    bool (*winograd_suits)(const ConvNhwcParams& p);
    bool (*winograd_pack)(const float* w, float* u, int64_t C, int64_t O);  // false: channels not whole vectors
    void (*conv_winograd)(const float* x, const float* u, const float* bias, const float* residual, float* y,
                          const ConvNhwcParams& p, int act, float lo, float hi);
    // An inverted-residual block's 1x1 expansion and the depthwise conv that reads it, band by band so the expanded
    // tensor stays in cache (cpu/conv_pw_dw.cpp): e = pw_act(x (N, H, W, cin) @ pw + pw_bias) with pw packed by
    // pack_b as a (cin, E) operand, y = dw_act(depthwise(e) + dw_bias) with dw packed by conv_pack; p is the
    // depthwise conv's params (C = O = groups = E). Equal, bit for bit, to the two convs run one after the other.
    void (*conv_pw_dw)(const float* x, int64_t cin, const float* pw, const float* pw_bias, int pw_act, float pw_lo,
                       float pw_hi, const float* dw, const float* dw_bias, float* y, const ConvNhwcParams& p,
                       int dw_act, float dw_lo, float dw_hi);
};

// Fused scaled-dot-product attention (cpu/attention.cpp). Every operand is addressed by element strides: up to 4
// leading (broadcast) batch dims, each operand with its own batch strides (0 = broadcast), then rows; the last dim of
// q, k, v and out is contiguous. The mask (optional) is additive and may broadcast along any dim (stride 0).
struct AttentionParams {
    int64_t batch[4];                                          // leading dims, unused ones = 1
    int64_t q_bs[4], k_bs[4], v_bs[4], mask_bs[4], out_bs[4];  // batch strides
    int64_t Lq, Lk, D, Dv;
    int64_t q_rs, k_rs, v_rs, out_rs;  // row strides
    int64_t mask_rs, mask_cs;          // mask row (query) and column (key) strides
    float scale;
    bool causal;  // key j is visible to query i iff j <= i (top-left aligned, as torch)
};

struct AttentionKernels {
    // out = softmax(scale * q @ k^T + mask) @ v; a row with no visible key gives zeros (as torch 2.x on CPU).
    // probs (optional, contiguous (batch..., Lq, Lk)) receives the probabilities (for the backward pass).
    void (*sdpa_f32)(const float* q, const float* k, const float* v, const float* mask, float* out, float* probs,
                     const AttentionParams& p);
    // gq, gk, gv (contiguous (batch, L, D)) of sum(g * out) for the gradient g of out (read through p.out_bs and
    // p.out_rs); q, k and v must not broadcast over the batch.
    void (*sdpa_backward_f32)(const float* q, const float* k, const float* v, const float* mask, const float* g,
                              float* gq, float* gk, float* gv, const AttentionParams& p);
};

// Swin window partition/reverse with the cyclic shift (cpu/window.cpp). The (B, H, W, C) map is rolled by
// (-sh, -sw), zero-padded bottom/right to whole windows (Hp = ceil(H/wh)*wh, Wp likewise) and cut into
// B * (Hp/wh) * (Wp/ww) windows of wh*ww tokens, row-major within the map and the window (as timm's Swin).
struct WindowParams {
    int64_t B, H, W, C;  // the map (B, H, W, C), C-contiguous
    int64_t wh, ww;      // window size
    int64_t sh, sw;      // cyclic shift, 0 <= sh < H, 0 <= sw < W
};

struct WindowKernels {
    // windows (B*nW, wh*ww, C) = partition(pad(roll(x, -shift))); padded tokens are 0
    void (*partition_f32)(const float* x, float* windows, const WindowParams& p);
    void (*partition_f64)(const double* x, double* windows, const WindowParams& p);
    // y (B, H, W, C) = shortcut + roll(crop(reverse(windows)), +shift); shortcut may be null (then 0) and may
    // alias y. The exact inverse of partition on the map's tokens (padded tokens are dropped).
    void (*reverse_f32)(const float* windows, const float* shortcut, float* y, const WindowParams& p);
    void (*reverse_f64)(const double* windows, const double* shortcut, double* y, const WindowParams& p);
};

// Memory-bound helpers of the captured-plan executor (cpu/exec_kernels.cpp; core/executor.cpp runs the plan).
// Shapes come collapsed by the caller (adjacent dims merged where every operand allows), ndim 1..kExecMaxDims,
// strides in elements; both threaded over the outer index space.
constexpr int kExecMaxDims = 8;
struct ExecKernels {
    // y[i] = x[i] for every index i of `shape`, x and y strided (y may be a block of a larger array: cat, roll)
    void (*copy)(const float* x, const int64_t* x_strides, float* y, const int64_t* y_strides, const int64_t* shape,
                 int ndim);
    // y (contiguous) = a op b, op 0 = add, 1 = mul; a / b strided, stride 0 along broadcast dims. One rounding per
    // element, so equal to numpy's broadcast result bit for bit.
    void (*binary)(int op, const float* a, const int64_t* a_strides, const float* b, const int64_t* b_strides,
                   float* y, const int64_t* shape, int ndim);
};

// Fused in-place optimizer updates over one parameter (cpu/optim.cpp). The scalars are the ones the Python
// optimizer derives (in double) and each is rounded to the parameter's dtype before use, and every operation is
// rounded separately (no FMA contraction), so the result equals the numpy update bit for bit.
struct SgdScalars {
    double lr, momentum, one_minus_dampening, weight_decay;
    bool use_momentum, nesterov, fresh;  // fresh: the momentum buffer is created by this step (buf = d_p)
};
struct AdamScalars {
    double decay_factor;   // w *= decay_factor first (decoupled weight decay), when decoupled and wd != 0
    double weight_decay;   // grad += weight_decay * w (coupled), when !decoupled and wd != 0
    double lerp_w, one_minus_lerp_w;  // exp_avg.lerp_(grad, lerp_w), torch's two-sided formula
    double beta2, one_minus_beta2, bias_correction2_sqrt, eps, neg_step_size;
    bool decoupled, apply_wd, amsgrad;
};
struct OptimKernels {
    // w, buf updated in place over [0, n); g read (buf unused without momentum)
    void (*sgd_f32)(float* w, const float* g, float* buf, int64_t n, const SgdScalars& s);
    void (*sgd_f64)(double* w, const double* g, double* buf, int64_t n, const SgdScalars& s);
    // w, exp_avg, exp_avg_sq (and max_exp_avg_sq under amsgrad) updated in place over [0, n)
    void (*adam_f32)(float* w, const float* g, float* m, float* v, float* vmax, int64_t n, const AdamScalars& s);
    void (*adam_f64)(double* w, const double* g, double* m, double* v, double* vmax, int64_t n,
                     const AdamScalars& s);
};

// Antialiased resampling of 8-bit images with Pillow's fixed-point arithmetic (cpu/resample_u8.cpp), so the result
// equals PIL.Image.resize byte for byte. One axis: output index o sums bounds[2o+1] inputs from bounds[2o] with the
// integer weights coeffs[o * ksize ...] (22 fractional bits; core/bind_image.cpp derives them exactly as Pillow's
// precompute_coeffs + normalize_coeffs_8bpc), each pass rounding once and clamping to 0..255.
struct ResampleAxis {
    const int32_t* bounds;  // (out_size, 2): first input, input count
    const int32_t* coeffs;  // (out_size, ksize)
    int64_t ksize;
};
struct ResampleU8Params {
    int64_t H, W, C;      // input (H, W) pixels of C bytes (1..4; Pillow's "RGB" memory is 4 bytes a pixel)
    int64_t src_rs;       // bytes between input rows (pixels within a row are contiguous)
    int64_t OH, OW;       // output (OH, OW, C), contiguous
    ResampleAxis h, v;    // horizontal (W -> OW) and vertical (H -> OH) weights; an axis not resized is skipped
    bool need_h, need_v;  // whether each pass runs (Pillow skips an axis whose size does not change)
    bool vertical_first;  // the pass order (it changes the intermediate rounding, so it is Pillow's choice)
};
// Pillow's ImageEnhance colour ops on 8-bit RGB pixels (cpu/color_u8.cpp), applied in sequence, byte for byte as
// Pillow computes them: the blend with a degenerate image in float32 (truncated, clamped), the grey level as
// (19595 R + 38470 G + 7471 B + 0x8000) >> 16, the contrast mean rounded from the grey histogram's mean.
enum ColorOpKind : int { kBrightness = 0, kContrast = 1, kSaturation = 2 };
struct ColorOpU8 {
    int kind;
    float factor;  // Pillow's blend alpha is a C float
};
// Pillow's affine transform of 8-bit pixels (cpu/affine_u8.cpp), byte for byte: the filter ids are Pillow's.
enum AffineFilter : int { kAffineNearest = 0, kAffineBilinear = 2, kAffineBicubic = 3 };
struct ImageKernels {
    void (*resample_u8)(const uint8_t* src, uint8_t* dst, const ResampleU8Params& p);
    // dst (OH, OW, pixel_bytes) contiguous: output pixel (x, y) samples src at matrix . (x + .5, y + .5, 1) (rows
    // src_rs bytes apart, pixel_bytes 1 or 4 = Pillow's "L" / "RGB" memory); `fill` (pixel_bytes bytes) where the
    // point falls outside the image
    void (*affine_u8)(const uint8_t* src, int64_t src_rs, int64_t H, int64_t W, int64_t pixel_bytes, uint8_t* dst,
                      int64_t OH, int64_t OW, const double* matrix, int filter, const uint8_t* fill);
    // dst (H, W, pixel_bytes) contiguous = the ops applied in order to src (rows src_rs bytes apart); pixel_bytes 3
    // or 4 (a fourth byte is copied unchanged)
    void (*color_ops_u8)(const uint8_t* src, int64_t src_rs, uint8_t* dst, int64_t H, int64_t W, int64_t pixel_bytes,
                         const ColorOpU8* ops, int64_t n_ops);
};

struct KernelTable {
    const char* isa;
    // Runs `iters` iterations of an FMA loop (24 independent vector accumulators) on the calling thread;
    // returns the FLOPs done (the harness times it and divides: the measured FMA peak).
    double (*fma_loop)(int64_t iters);
    KernelSet<float> f32;
    KernelSet<double> f64;
    NhwcKernels nhwc;
    AttentionKernels attn;
    WindowKernels window;
    ExecKernels exec;
    OptimKernels optim;
    ImageKernels image;
};

// Table registration only stores function addresses, but it lives in the per-ISA translation units, whose -m flags
// would let the compiler use AVX-512 stores even there. FV_REGISTRATION pins every fill_* function to the baseline
// x86-64 ISA, so filling a table can never execute an instruction the CPU lacks; core/module.cpp still fills only
// the tables of the ISAs cpuid reports (tests/test_isa_audit.py checks both in the built module).
#if defined(__x86_64__) || defined(__i386__)
#define FV_REGISTRATION __attribute__((target("arch=x86-64,tune=generic,no-avx,no-avx2,no-fma,no-f16c,no-avx512f")))
#else
#define FV_REGISTRATION
#endif

#ifndef FV_PORTABLE_ONLY
namespace avx512 { FV_REGISTRATION void fill_table(KernelTable& t); }
namespace avx2 { FV_REGISTRATION void fill_table(KernelTable& t); }
#endif
namespace portable { FV_REGISTRATION void fill_table(KernelTable& t); }

}  // namespace fv
