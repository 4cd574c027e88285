// conv2d forward / backward-input / backward-weight over blocks of images (training path for small feature maps).
//
// The per-image im2col + GEMM of cpu/conv.cpp has a GEMM dimension equal to the output plane OH*OW. On the deep
// layers of a network that plane is tiny (4x4 .. 14x14), so each image re-packs (and re-reads from memory) the whole
// weight, or re-reads and re-writes the whole weight gradient, for a few hundred FLOPs per weight element. Here the
// im2col columns of `nb` images sit side by side in one (C*kh*kw, nb*L) matrix, so one GEMM per block covers
// nb*L >= ~1024 columns. The block size depends only on the shapes (never on the thread count) and blocks are
// processed in order, so the weight gradient is bit-identical for any number of threads.
#include "cpu/conv_batched.h"
#include "cpu/im2col.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

constexpr int64_t kTargetCols = 1024;              // GEMM columns per block of images
constexpr int64_t kMaxScratch = int64_t(48) << 20;  // bytes of im2col scratch per block (at least one image)

inline bool pointwise(const ConvParams& p) {
    return p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1 && p.ph == 0 && p.pw == 0;
}

// Images per block: enough for kTargetCols GEMM columns, bounded by the scratch size; 0 = use the per-image path.
template <class T>
int64_t images_per_block(const ConvParams& p) {
    if (p.groups == p.C && p.O == p.C && p.C > 1) return 0;  // depthwise has its own kernels
    const int64_t L = p.OH * p.OW;
    if (p.N < 2 || L <= 0 || L >= kTargetCols) return 0;
    const int64_t rows = p.C * p.kh * p.kw;
    int64_t nb = mn<int64_t>(p.N, ceil_div(kTargetCols, L));
    const int64_t cap = kMaxScratch / (int64_t(sizeof(T)) * mx<int64_t>(rows, p.O) * L);
    nb = mn<int64_t>(nb, mx<int64_t>(cap, 1));
    return nb >= 2 ? nb : 0;
}

// cols (rows, nb*L) <- im2col of images [n0, n0+nb) (for a 1x1 unit-stride conv: the images' channels)
template <class T>
void gather_cols(const T* x, T* cols, const ConvParams& p, int64_t n0, int64_t nb) {
    const int64_t rows = p.C * p.kh * p.kw, L = p.OH * p.OW, HW = p.H * p.W, ld = nb * L;
    const bool pw1 = pointwise(p);
    parallel_for(0, nb * rows, grain_for(L), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t i = q / rows, r = q % rows;
            const T* xn = x + (n0 + i) * p.C * HW;
            T* out = cols + r * ld + i * L;
            if (pw1) memcpy(out, xn + r * L, sizeof(T) * L);
            else im2col_row(xn, out, p, r);
        }
    });
}

// buf (C, nb*L) <-> images [n0, n0+nb) of a (N, C, L) tensor
template <class T>
void gather_planes(const T* src, T* buf, int64_t C, int64_t L, int64_t n0, int64_t nb) {
    parallel_for(0, nb * C, grain_for(L), [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t i = q / C, c = q % C;
            memcpy(buf + c * nb * L + i * L, src + ((n0 + i) * C + c) * L, sizeof(T) * L);
        }
    });
}

}  // namespace

template <class T>
bool conv_blocked_forward(const T* x, const T* w, const T* bias, T* y, const ConvParams& p) {
    const int64_t nb_max = images_per_block<T>(p);
    if (!nb_max) return false;
    const int64_t G = p.groups, Og = p.O / G, Kd = (p.C / G) * p.kh * p.kw, L = p.OH * p.OW;
    Buf<T> cols(p.C * p.kh * p.kw * nb_max * L), out(p.O * nb_max * L);
    for (int64_t n0 = 0; n0 < p.N; n0 += nb_max) {
        const int64_t nb = mn<int64_t>(nb_max, p.N - n0), ld = nb * L;
        gather_cols(x, cols.get(), p, n0, nb);
        for (int64_t g = 0; g < G; ++g)
            gemm_strided<T>(Og, ld, Kd, w + g * Og * Kd, Kd, 1, cols.get() + g * Kd * ld, ld, 1,
                            out.get() + g * Og * ld, ld, false);
        const T* o = out.get();
        parallel_for(0, nb * p.O, grain_for(L), [&](int64_t q0, int64_t q1) {
            for (int64_t q = q0; q < q1; ++q) {
                const int64_t i = q / p.O, c = q % p.O;
                T* dst = y + ((n0 + i) * p.O + c) * L;
                const T* src = o + c * ld + i * L;
                if (bias) {
                    const T b = bias[c];
                    for (int64_t l = 0; l < L; ++l) dst[l] = src[l] + b;
                } else {
                    memcpy(dst, src, sizeof(T) * L);
                }
            }
        });
    }
    return true;
}

template <class T>
bool conv_blocked_backward_input(const T* gy, const T* w, T* gx, const ConvParams& p) {
    const int64_t nb_max = images_per_block<T>(p);
    if (!nb_max) return false;
    const int64_t G = p.groups, Og = p.O / G, Cg = p.C / G, Kd = Cg * p.kh * p.kw, L = p.OH * p.OW;
    const int64_t HW = p.H * p.W;
    const bool pw1 = pointwise(p);
    Buf<T> cols(p.C * p.kh * p.kw * nb_max * L), gyb(p.O * nb_max * L);
    for (int64_t n0 = 0; n0 < p.N; n0 += nb_max) {
        const int64_t nb = mn<int64_t>(nb_max, p.N - n0), ld = nb * L;
        gather_planes(gy, gyb.get(), p.O, L, n0, nb);
        // cols_g (Kd, ld) = W_g^T (Kd, Og) @ gy_g (Og, ld)
        for (int64_t g = 0; g < G; ++g)
            gemm_strided<T>(Kd, ld, Og, w + g * Og * Kd, 1, Kd, gyb.get() + g * Og * ld, ld, 1,
                            cols.get() + g * Kd * ld, ld, false);
        const T* cp = cols.get();
        parallel_for(0, nb * p.C, grain_for(p.kh * p.kw * L), [&](int64_t q0, int64_t q1) {
            for (int64_t q = q0; q < q1; ++q) {
                const int64_t i = q / p.C, c = q % p.C;
                T* gxn = gx + (n0 + i) * p.C * HW;
                if (pw1) {
                    memcpy(gxn + c * HW, cp + c * ld + i * L, sizeof(T) * L);
                } else {
                    memset(gxn + c * HW, 0, sizeof(T) * HW);
                    col2im_channel(cp + i * L, ld, gxn, p, c);
                }
            }
        });
    }
    return true;
}

template <class T>
bool conv_blocked_backward_weight(const T* gy, const T* x, T* gw, const ConvParams& p) {
    const int64_t nb_max = images_per_block<T>(p);
    if (!nb_max) return false;
    const int64_t G = p.groups, Og = p.O / G, Kd = (p.C / G) * p.kh * p.kw, L = p.OH * p.OW;
    const bool trans = weight_grad_transposed(Og, Kd);
    Buf<T> cols(p.C * p.kh * p.kw * nb_max * L), gyb(p.O * nb_max * L), gwt(trans ? p.O * Kd : 1);
    T* out = trans ? gwt.get() : gw;
    for (int64_t n0 = 0; n0 < p.N; n0 += nb_max) {
        const int64_t nb = mn<int64_t>(nb_max, p.N - n0), ld = nb * L;
        gather_cols(x, cols.get(), p, n0, nb);
        gather_planes(gy, gyb.get(), p.O, L, n0, nb);
        // gw_g (Og, Kd) (+)= gy_g (Og, ld) @ cols_g^T (ld, Kd)
        for (int64_t g = 0; g < G; ++g)
            weight_grad_gemm<T>(Og, Kd, ld, gyb.get() + g * Og * ld, cols.get() + g * Kd * ld, ld,
                                out + g * Og * Kd, n0 > 0);
    }
    if (trans) weight_grad_finish(out, gw, G, Og, Kd);
    return true;
}

template bool conv_blocked_forward<float>(const float*, const float*, const float*, float*, const ConvParams&);
template bool conv_blocked_forward<double>(const double*, const double*, const double*, double*, const ConvParams&);
template bool conv_blocked_backward_input<float>(const float*, const float*, float*, const ConvParams&);
template bool conv_blocked_backward_input<double>(const double*, const double*, double*, const ConvParams&);
template bool conv_blocked_backward_weight<float>(const float*, const float*, float*, const ConvParams&);
template bool conv_blocked_backward_weight<double>(const double*, const double*, double*, const ConvParams&);

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
