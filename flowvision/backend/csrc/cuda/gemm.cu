// Batched GEMM for matmul / linear / attention on the shared tile kernel (igemm.cuh): a tiled
// SGEMM of our own instead of cuBLAS, so _C_cuda imports and runs without libcublas.
#include <algorithm>

#include "igemm.cuh"

namespace fvcuda {
namespace {

template <typename T> struct GemmProblem {
    const T *A, *B, *bias;
    T* C;
    Gemm g;
    int64_t M, N, K;
    bool a_k_fast, b_k_fast, c_m_fast = false;
    FV_HD float a(int z, int64_t m, int64_t k) const {
        return to_f(A[z * g.stride_a + (g.trans_a ? k * g.lda + m : m * g.lda + k)]);
    }
    FV_HD float b(int z, int64_t k, int64_t n) const {
        return to_f(B[z * g.stride_b + (g.trans_b ? n * g.ldb + k : k * g.ldb + n)]);
    }
    FV_HD void store(int z, int64_t m, int64_t n, float v, bool) const {
        v *= g.alpha;
        if (bias) v += to_f(bias[n]);
        C[z * g.stride_c + m * g.ldc + n] = from_f<T>(v);
    }
};

}  // namespace

void gemm(DType dt, const void* a, const void* b, const void* bias, void* c, const Gemm& g, bool tf32, void* stream) {
    if (g.batch == 0 || g.m == 0 || g.n == 0) return;
    cudaStream_t s = as_stream(stream);
    tf32 = tf32 && device_supports_tf32();
    FV_DISPATCH_FLOAT(dt, T, {
        // gridDim.z is limited to 65535: long batches (window attention) run in chunks
        for (int64_t b0 = 0; b0 < g.batch; b0 += 65535) {
            int64_t nb = std::min<int64_t>(65535, g.batch - b0);
            GemmProblem<T> pr{(const T*)a + b0 * g.stride_a, (const T*)b + b0 * g.stride_b, (const T*)bias,
                              (T*)c + b0 * g.stride_c, g, g.m, g.n, g.k, !g.trans_a, g.trans_b};
            dim3 grid = igemm_grid(g.m, g.n, nb, 1);
            if (tf32) igemm_kernel<GemmProblem<T>, true><<<grid, TTHREADS, 0, s>>>(pr, 1);
            else igemm_kernel<GemmProblem<T>, false><<<grid, TTHREADS, 0, s>>>(pr, 1);
        }
    });
    check_launch("gemm");
}

}  // namespace fvcuda
