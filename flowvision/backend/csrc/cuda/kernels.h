// Host-callable launchers of the flowvision CUDA kernels. Plain C++ (no CUDA types), so the
// pybind module compiles with the host compiler. Every launcher enqueues work on `stream`
// (a cudaStream_t passed as void*) and returns without synchronising; launch errors throw
// std::runtime_error through fvcuda::fail.
//
// Conventions: tensors are dense row-major (NCHW for images). Float kernels take fp32, fp16
// or bf16 storage and accumulate in fp32. Backward kernels and normalisation statistics are
// fp32 (the Python dispatch upcasts half gradients), which keeps the instantiation count and
// the build time small. Norm affine parameters and statistics are fp32 pointers.
#pragma once
#include <stdint.h>

#include <string>

namespace fvcuda {

enum class DType : int { F32 = 0, F16 = 1, BF16 = 2, I64 = 3, I32 = 4, U8 = 5, I8 = 6, BOOL = 7, I16 = 8 };
int dtype_size(DType d);
[[noreturn]] void fail(const std::string& msg);

constexpr int kMaxDims = 8;
// Output shape plus, per operand, element strides (0 on broadcast dimensions).
struct Broadcast {
    int ndim;
    int64_t size[kMaxDims];
    int64_t stride[3][kMaxDims];
};

// ---------------------------------------------------------------- elementwise.cu
enum BinaryOp : int {
    B_ADD = 0, B_SUB, B_MUL, B_DIV, B_POW, B_MAX, B_MIN, B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE,
    B_AND, B_OR, B_XOR, B_REM, B_ATAN2, B_FLOOR_DIV, B_COUNT
};
// y = op(a, alpha * b) (alpha used by add/sub); comparisons write bool. Both inputs share `in`.
// b == nullptr: b is the Python scalar `scalar`; swap: compute op(b, a) (reflected operators).
void binary(int op, DType in, DType out, const void* a, const void* b, void* y, const Broadcast& bc,
            int64_t n, double alpha, double scalar, bool swap, void* stream);

enum UnaryOp : int {
    U_NEG = 0, U_ABS, U_EXP, U_LOG, U_SQRT, U_RSQRT, U_SIN, U_COS, U_TANH, U_SIGMOID, U_ERF, U_FLOOR,
    U_CEIL, U_ROUND, U_RECIP, U_SQUARE, U_LOG1P, U_EXPM1, U_SIGN, U_RELU, U_RELU6, U_LEAKY_RELU, U_ELU,
    U_GELU, U_GELU_TANH, U_SILU, U_HARDSWISH, U_HARDSIGMOID, U_MISH, U_SOFTPLUS, U_CLAMP, U_POW_SCALAR,
    U_ADD_SCALAR, U_MUL_SCALAR, U_HARDTANH, U_SELU, U_LOGSIGMOID, U_LOG2, U_TRUNC, U_COUNT
};
// Same float dtype in and out; p0/p1 are the op's parameters (slope, alpha, min/max, exponent...).
void unary(int op, DType dt, const void* x, void* y, int64_t n, float p0, float p1, void* stream);
// dx = g * d op(x)/dx for the activations and unary math (x = forward input, y = forward output).
void unary_backward(int op, DType dt, const void* g, const void* x, const void* y, void* dx, int64_t n,
                    float p0, float p1, void* stream);
void cast(DType from, DType to, const void* x, void* y, int64_t n, void* stream);
void fill(DType dt, void* y, int64_t n, double value, void* stream);
// y (contiguous, shape bc.size) = x at element strides bc.stride[0] (permute/slice/expand/flip).
void strided_copy(int itemsize, const void* x, void* y, const Broadcast& bc, int64_t n, void* stream);
// y at element strides bc.stride[0] = x (contiguous): writes into a strided view (slice backward, cat).
void strided_write(int itemsize, const void* x, void* y, const Broadcast& bc, int64_t n, void* stream);
// y = cond ? a : b with broadcasting (stride[0]: cond, stride[1]: a, stride[2]: b).
void where(int itemsize, const void* cond, const void* a, const void* b, void* y, const Broadcast& bc,
           int64_t n, void* stream);
// y[o, j, i] = x[o, idx[j], i]; index_add: dx[o, idx[j], i] += g[o, j, i] (fp32, atomic).
void index_select(int itemsize, const void* x, const int64_t* idx, void* y, int64_t outer, int64_t dim_in,
                  int64_t dim_out, int64_t inner, void* stream);
void index_add_f32(const float* g, const int64_t* idx, float* dx, int64_t outer, int64_t dim_in, int64_t dim_out,
                   int64_t inner, void* stream);

// ---------------------------------------------------------------- reduce.cu
enum ReduceOp : int { R_SUM = 0, R_MEAN, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN, R_PROD, R_SUMSQ };
// Reduce the middle axis of a (outer, r, inner) array. ARGMAX/ARGMIN write the values to y (may be
// null) and int64 positions to idx. dt: a float type or I64 (sum/max/min/prod).
void reduce(int op, DType dt, const void* x, void* y, int64_t* idx, int64_t outer, int64_t r, int64_t inner,
            void* stream);

// ---------------------------------------------------------------- softmax.cu
void softmax_fwd(DType dt, const void* x, void* y, int64_t outer, int64_t d, int64_t inner, bool log, void* stream);
void softmax_bwd(DType dt, const void* g, const void* y, void* dx, int64_t outer, int64_t d, int64_t inner, bool log,
                 void* stream);

// ---------------------------------------------------------------- norm.cu
void layer_norm_fwd(DType dt, const void* x, const float* w, const float* b, void* y, float* mean, float* rstd,
                    int64_t rows, int64_t cols, float eps, void* stream);
// dw/db: fp32 accumulators (zeroed here), either may be null.
void layer_norm_bwd(DType dt, const void* g, const void* x, const float* w, const float* mean, const float* rstd,
                    void* dx, float* dw, float* db, int64_t rows, int64_t cols, void* stream);
void group_norm_fwd(DType dt, const void* x, const float* w, const float* b, void* y, float* mean, float* rstd,
                    int64_t n, int64_t c, int64_t hw, int64_t groups, float eps, void* stream);
void group_norm_bwd(DType dt, const void* g, const void* x, const float* w, const float* mean, const float* rstd,
                    void* dx, float* dw, float* db, int64_t n, int64_t c, int64_t hw, int64_t groups, void* stream);
// Training statistics over (N, HW) per channel (Welford): mean, invstd = 1/sqrt(var + eps), unbiased var.
void batch_norm_stats(DType dt, const void* x, float* mean, float* invstd, float* var_unbiased, int64_t n,
                      int64_t c, int64_t hw, float eps, void* stream);
// y = (x - mean) * invstd * w + b (w/b may be null).
void batch_norm_apply(DType dt, const void* x, const float* mean, const float* invstd, const float* w,
                      const float* b, void* y, int64_t n, int64_t c, int64_t hw, void* stream);
// Per channel: sum_dy = sum(g), sum_dy_xmu = sum(g * (x - mean)).
void batch_norm_bwd_reduce(DType dt, const void* g, const void* x, const float* mean, float* sum_dy,
                           float* sum_dy_xmu, int64_t n, int64_t c, int64_t hw, void* stream);
// training: dx = (g - sum_dy/M - (x-mean)*invstd^2*sum_dy_xmu/M) * invstd * w; eval: dx = g * invstd * w.
void batch_norm_bwd_apply(DType dt, const void* g, const void* x, const float* mean, const float* invstd,
                          const float* w, const float* sum_dy, const float* sum_dy_xmu, void* dx, int64_t n,
                          int64_t c, int64_t hw, bool training, void* stream);

// ---------------------------------------------------------------- pool.cu (NCHW, planes = N*C)
struct Pool2d {
    int64_t planes, h, w, oh, ow;
    int kh, kw, sh, sw, ph, pw, dh, dw;
};
void max_pool2d_fwd(DType dt, const void* x, void* y, int64_t* idx, const Pool2d& p, void* stream);
// dx (fp32, zeroed here) += g at idx (flat position in the input plane); also adaptive max pool's backward.
void max_pool2d_bwd(const float* g, const int64_t* idx, float* dx, int64_t planes, int64_t in_plane,
                    int64_t out_plane, void* stream);
void avg_pool2d_fwd(DType dt, const void* x, void* y, const Pool2d& p, bool count_include_pad, int divisor,
                    void* stream);
void avg_pool2d_bwd(const float* g, float* dx, const Pool2d& p, bool count_include_pad, int divisor, void* stream);
void adaptive_avg_pool2d_fwd(DType dt, const void* x, void* y, int64_t planes, int64_t h, int64_t w, int64_t oh,
                             int64_t ow, void* stream);
void adaptive_avg_pool2d_bwd(const float* g, float* dx, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow,
                             void* stream);
void adaptive_max_pool2d_fwd(DType dt, const void* x, void* y, int64_t* idx, int64_t planes, int64_t h, int64_t w,
                             int64_t oh, int64_t ow, void* stream);

// ---------------------------------------------------------------- conv.cu / gemm.cu
struct Conv2d {
    int64_t n, c, h, w, k, p, q;  // input N,C,H,W; output channels K and size PxQ
    int r, s, sh, sw, ph, pw, dh, dw, groups;
};
// Implicit GEMM (M = N*P*Q, N = K/groups, K = C/groups*R*S per group); depthwise convs use a direct
// kernel. tf32: use the tensor-core path (sm_80+, checked at run time; otherwise SIMT fp32).
void conv2d_fwd(DType dt, const void* x, const void* w, const void* bias, void* y, const Conv2d& cv, bool tf32,
                void* stream);
void conv2d_bwd_data(const float* g, const float* w, float* dx, const Conv2d& cv, bool tf32, void* stream);
// dw (fp32, zeroed here) accumulated with split-K atomics.
void conv2d_bwd_weight(const float* g, const float* x, float* dw, const Conv2d& cv, bool tf32, void* stream);
// C[b] = alpha * op(A[b]) @ op(B[b]) (+ bias[n]); op = transpose if trans*. Batch strides may be 0.
struct Gemm {
    int64_t batch, m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c;
    bool trans_a, trans_b;
    float alpha;
};
void gemm(DType dt, const void* a, const void* b, const void* bias, void* c, const Gemm& g, bool tf32, void* stream);
bool device_supports_tf32();

// ---------------------------------------------------------------- interp_roi.cu
void upsample_nearest_fwd(DType dt, const void* x, void* y, int64_t planes, int64_t h, int64_t w, int64_t oh,
                          int64_t ow, float scale_h, float scale_w, bool exact, void* stream);
void upsample_nearest_bwd(const float* g, float* dx, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow,
                          float scale_h, float scale_w, bool exact, void* stream);
// scale_*: torch's area_pixel scale (align_corners: (in-1)/(out-1); else in/out or 1/scale_factor).
void upsample_bilinear_fwd(DType dt, const void* x, void* y, int64_t planes, int64_t h, int64_t w, int64_t oh,
                           int64_t ow, bool align_corners, float scale_h, float scale_w, void* stream);
void upsample_bilinear_bwd(const float* g, float* dx, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow,
                           bool align_corners, float scale_h, float scale_w, void* stream);
struct RoiAlign {
    int64_t n, c, h, w, rois, ph, pw;
    float spatial_scale;
    int sampling_ratio;
    bool aligned;
};
void roi_align_fwd(DType dt, const void* x, const void* rois, void* y, const RoiAlign& p, void* stream);
void roi_align_bwd(const float* g, const float* rois, float* dx, const RoiAlign& p, void* stream);
// Suppression bitmask of boxes already sorted by score: mask[i * words + j/64] bit j set when IoU(i, j) > thr.
void nms_mask(const float* boxes, int64_t n, float iou_threshold, uint64_t* mask, void* stream);

}  // namespace fvcuda
