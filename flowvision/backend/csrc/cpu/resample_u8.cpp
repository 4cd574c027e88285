// Pillow-exact resampling of 8-bit images (compiled once per ISA). Integer arithmetic only: every output byte is
// (1 << 21) + sum(input byte * 22-bit weight), shifted right by 22 and clamped, once per pass, as Pillow's
// Resample.c computes it. The sums are exact in int32, so the bytes do not depend on the ISA, the vector width or
// the thread count. The vertical pass is a weighted sum of whole rows (vectorised by the compiler); the horizontal
// pass sums a few neighbouring pixels per output pixel with one accumulator per channel.
#include "cpu/common.h"

#include <cstring>
#include <vector>
#if defined(__SSE4_1__)
#include <immintrin.h>
#endif

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

constexpr int kPrecisionBits = 22;
constexpr int32_t kHalf = int32_t(1) << (kPrecisionBits - 1);

static inline uint8_t clip8(int32_t ss) {
    const int32_t v = ss >> kPrecisionBits;  // arithmetic shift: floor, as Pillow's table lookup
    return uint8_t(v < 0 ? 0 : (v > 255 ? 255 : v));
}

#if defined(__SSE4_1__)
// 3- or 4-byte pixels: one 4-lane int32 multiply-add per tap covers every channel (a 3-byte pixel's fourth lane
// is the next pixel's first byte, summed and then dropped). A load or store of 4 bytes at the last pixel of a row
// of 3-byte pixels would reach one byte past it, so that pixel goes through a 3-byte copy.
template <int C>
void horizontal_rows_sse(const uint8_t* src, int64_t src_rs, uint8_t* dst, int64_t rows, int64_t W, int64_t OW,
                         const ResampleAxis& ax) {
    const __m128i half = _mm_set1_epi32(kHalf);
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t* in = src + r * src_rs;
        uint8_t* out = dst + r * OW * C;
        for (int64_t o = 0; o < OW; ++o) {
            const int32_t x0 = ax.bounds[2 * o], n = ax.bounds[2 * o + 1];
            const uint8_t* p = in + int64_t(x0) * C;
            const int32_t* k = ax.coeffs + o * ax.ksize;
            // taps whose 4-byte load stays inside the row
            const int32_t safe = (C == 4 || x0 + n < W) ? n : n - 1;
            __m128i acc = half;
            int32_t t = 0;
            for (; t < safe; ++t) {
                int32_t px;
                memcpy(&px, p + t * C, 4);
                const __m128i v = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(px));
                acc = _mm_add_epi32(acc, _mm_mullo_epi32(v, _mm_set1_epi32(k[t])));
            }
            for (; t < n; ++t) {
                int32_t px = 0;
                memcpy(&px, p + t * C, C);
                const __m128i v = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(px));
                acc = _mm_add_epi32(acc, _mm_mullo_epi32(v, _mm_set1_epi32(k[t])));
            }
            // >> 22 (floor), then saturate to 0..255 through int16: Pillow's clamp
            const __m128i b = _mm_packus_epi16(_mm_packs_epi32(_mm_srai_epi32(acc, kPrecisionBits), acc), acc);
            const int32_t packed = _mm_cvtsi128_si32(b);
            if (C == 4 || o + 1 < OW) memcpy(out + o * C, &packed, 4);
            else memcpy(out + o * C, &packed, 3);
        }
    }
}
#endif

// Output pixels of `rows` rows, each (OW, C), from input rows `src_rs` bytes apart.
template <int C>
void horizontal_rows(const uint8_t* src, int64_t src_rs, uint8_t* dst, int64_t rows, int64_t W, int64_t OW,
                     const ResampleAxis& ax) {
#if defined(__SSE4_1__)
    if constexpr (C >= 3) return horizontal_rows_sse<C>(src, src_rs, dst, rows, W, OW, ax);
#endif
    (void)W;
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t* in = src + r * src_rs;
        uint8_t* out = dst + r * OW * C;
        for (int64_t o = 0; o < OW; ++o) {
            const uint8_t* p = in + int64_t(ax.bounds[2 * o]) * C;
            const int32_t n = ax.bounds[2 * o + 1];
            const int32_t* k = ax.coeffs + o * ax.ksize;
            int32_t s[C];
            for (int c = 0; c < C; ++c) s[c] = kHalf;
            for (int32_t t = 0; t < n; ++t) {
                const int32_t w = k[t];
#pragma GCC unroll 4
                for (int c = 0; c < C; ++c) s[c] += int32_t(p[t * C + c]) * w;
            }
            for (int c = 0; c < C; ++c) out[o * C + c] = clip8(s[c]);
        }
    }
}

void horizontal(const uint8_t* src, int64_t src_rs, uint8_t* dst, int64_t rows, int64_t W, int64_t OW, int64_t C,
                const ResampleAxis& ax) {
    // rows are independent: threads take row ranges (a DataLoader worker runs one thread; a large image splits)
    parallel_for(0, rows, grain_for(OW * C * ax.ksize, int64_t(1) << 18), [&](int64_t r0, int64_t r1) {
        const uint8_t* s = src + r0 * src_rs;
        uint8_t* d = dst + r0 * OW * C;
        switch (C) {
            case 1: horizontal_rows<1>(s, src_rs, d, r1 - r0, W, OW, ax); break;
            case 2: horizontal_rows<2>(s, src_rs, d, r1 - r0, W, OW, ax); break;
            case 3: horizontal_rows<3>(s, src_rs, d, r1 - r0, W, OW, ax); break;
            default: horizontal_rows<4>(s, src_rs, d, r1 - r0, W, OW, ax); break;
        }
    });
}

// Output rows [0, OH) of `row_len` bytes each from input rows `src_rs` bytes apart: a weighted sum of rows.
void vertical(const uint8_t* src, int64_t src_rs, uint8_t* dst, int64_t OH, int64_t row_len, const ResampleAxis& ax) {
    // columns in chunks whose int32 sums stay in L1 while every tap's row adds into them
    constexpr int64_t kChunk = 2048;
    parallel_for(0, OH, grain_for(row_len * ax.ksize, int64_t(1) << 18), [&](int64_t o0, int64_t o1) {
        alignas(64) int32_t acc[kChunk];
        for (int64_t o = o0; o < o1; ++o) {
            const uint8_t* first = src + int64_t(ax.bounds[2 * o]) * src_rs;
            const int32_t n = ax.bounds[2 * o + 1];
            const int32_t* k = ax.coeffs + o * ax.ksize;
            uint8_t* out = dst + o * row_len;
            for (int64_t j0 = 0; j0 < row_len; j0 += kChunk) {
                const int64_t len = row_len - j0 < kChunk ? row_len - j0 : kChunk;
                for (int64_t j = 0; j < len; ++j) acc[j] = kHalf;
                for (int32_t t = 0; t < n; ++t) {
                    const uint8_t* in = first + t * src_rs + j0;
                    const int32_t w = k[t];
                    for (int64_t j = 0; j < len; ++j) acc[j] += int32_t(in[j]) * w;
                }
                for (int64_t j = 0; j < len; ++j) out[j0 + j] = clip8(acc[j]);
            }
        }
    });
}

void resample_u8(const uint8_t* src, uint8_t* dst, const ResampleU8Params& p) {
    const int64_t C = p.C;
    if (!p.need_h && !p.need_v) {
        for (int64_t y = 0; y < p.H; ++y) memcpy(dst + y * p.W * C, src + y * p.src_rs, size_t(p.W * C));
        return;
    }
    if (!p.need_v) return horizontal(src, p.src_rs, dst, p.H, p.W, p.OW, C, p.h);
    if (!p.need_h) return vertical(src, p.src_rs, dst, p.OH, p.W * C, p.v);
    if (p.vertical_first) {
        // rows first: (OH, W, C), then each of its rows across
        std::vector<uint8_t> tmp(size_t(p.OH * p.W * C));
        vertical(src, p.src_rs, tmp.data(), p.OH, p.W * C, p.v);
        horizontal(tmp.data(), p.W * C, dst, p.OH, p.W, p.OW, C, p.h);
        return;
    }
    // across first, only over the input rows the vertical pass reads (Pillow's ybox): (rows, OW, C)
    const int64_t y_first = p.v.bounds[0];
    const int64_t y_last = int64_t(p.v.bounds[2 * (p.OH - 1)]) + p.v.bounds[2 * (p.OH - 1) + 1];
    const int64_t rows = y_last - y_first;
    std::vector<uint8_t> tmp(size_t(rows * p.OW * C));
    horizontal(src + y_first * p.src_rs, p.src_rs, tmp.data(), rows, p.W, p.OW, C, p.h);
    // the vertical weights index input rows: shift them to the intermediate's first row
    std::vector<int32_t> shifted(p.v.bounds, p.v.bounds + 2 * p.OH);
    for (int64_t o = 0; o < p.OH; ++o) shifted[2 * o] -= int32_t(y_first);
    ResampleAxis v = p.v;
    v.bounds = shifted.data();
    vertical(tmp.data(), p.OW * C, dst, p.OH, p.OW * C, v);
}

}  // namespace

FV_REGISTRATION void fill_image(KernelTable& t) { t.image.resample_u8 = &resample_u8; }

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
