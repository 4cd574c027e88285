// Swin window partition/reverse with the cyclic shift folded in (compiled once per ISA).
// Pure token moves (plus one add in reverse): each output token is one C-vector copied from (or added to) its
// source token, so the result is bit-identical for any thread count and ISA.
#include "cpu/common.h"

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

// y[0:C] = a[0:C] + b[0:C]
template <class T>
static inline void add_row(const T* a, const T* b, T* y, int64_t C) {
    typedef vec_t<T> V;
    constexpr int Wd = vec_width<T>();
    int64_t c = 0;
    for (; c + Wd <= C; c += Wd) vstore(y + c, vload<V>(a + c) + vload<V>(b + c));
    for (; c < C; ++c) y[c] = a[c] + b[c];
}

// Elements per task: a copy moves ~10 floats per ns, so waking a second thread (several us) pays off only for
// maps of ~100k+ elements (a 7x7x768 map ran 4 us on one thread, 15 us split over two).
constexpr int64_t kMinCopyPerTask = int64_t(1) << 17;

// y[0:C] = a[0:C], inlined: 10-20% faster than a libc memcpy call per token at Swin-T batch 1 (C = 96 / 384)
template <class T>
static inline void copy_row(const T* a, T* y, int64_t C) {
    typedef vec_t<T> V;
    constexpr int Wd = vec_width<T>();
    int64_t c = 0;
    for (; c + Wd <= C; c += Wd) vstore(y + c, vload<V>(a + c));
    for (; c < C; ++c) y[c] = a[c];
}

// One task per padded map row (b, hp): its Wp tokens go to the row i = hp % wh of the windows (hp / wh, *).
template <class T>
void partition(const T* x, T* windows, const WindowParams& p) {
    const int64_t H = p.H, W = p.W, C = p.C, wh = p.wh, ww = p.ww;
    const int64_t nwh = ceil_div(H, wh), nww = ceil_div(W, ww), Hp = nwh * wh;
    const int64_t row_bytes = C * (int64_t)sizeof(T);
    parallel_for(0, p.B * Hp, grain_for(nww * ww * C, kMinCopyPerTask), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t b = r / Hp, hp = r % Hp;
            const int64_t wy = hp / wh, i = hp % wh;
            // token (hp, wp) of the rolled map is x[(hp + sh) % H, (wp + sw) % W]
            const T* src_row = hp < H ? x + ((b * H + (hp + p.sh) % H) * W) * C : nullptr;
            for (int64_t wx = 0; wx < nww; ++wx) {
                T* dst = windows + (((b * nwh + wy) * nww + wx) * wh + i) * ww * C;
                for (int64_t j = 0; j < ww; ++j, dst += C) {
                    const int64_t wp = wx * ww + j;
                    if (src_row && wp < W) {
                        int64_t ws = wp + p.sw;
                        if (ws >= W) ws -= W;
                        copy_row(src_row + ws * C, dst, C);
                    } else {
                        memset(dst, 0, row_bytes);
                    }
                }
            }
        }
    });
}

// One task per output map row (b, h): token (h, w) comes from the rolled-map token ((h - sh) mod H, (w - sw) mod W).
template <class T>
void reverse(const T* windows, const T* shortcut, T* y, const WindowParams& p) {
    const int64_t H = p.H, W = p.W, C = p.C, wh = p.wh, ww = p.ww;
    const int64_t nwh = ceil_div(H, wh), nww = ceil_div(W, ww);
    parallel_for(0, p.B * H, grain_for(W * C, kMinCopyPerTask), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t b = r / H, h = r % H;
            int64_t hp = h - p.sh;
            if (hp < 0) hp += H;
            const int64_t wy = hp / wh, i = hp % wh;
            const T* win_row = windows + ((b * nwh + wy) * nww) * wh * ww * C + i * ww * C;
            T* yr = y + r * W * C;
            const T* sr = shortcut ? shortcut + r * W * C : nullptr;
            for (int64_t w = 0; w < W; ++w) {
                int64_t wp = w - p.sw;
                if (wp < 0) wp += W;
                const T* src = win_row + ((wp / ww) * wh * ww + wp % ww) * C;
                if (sr)
                    add_row(sr + w * C, src, yr + w * C, C);
                else
                    copy_row(src, yr + w * C, C);
            }
        }
    });
}

}  // namespace

FV_REGISTRATION void fill_window(KernelTable& t) {
    t.window.partition_f32 = &partition<float>;
    t.window.partition_f64 = &partition<double>;
    t.window.reverse_f32 = &reverse<float>;
    t.window.reverse_f64 = &reverse<double>;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
