// Pillow's ImageEnhance brightness / contrast / colour (saturation) on 8-bit RGB pixels, fused into one call
// (compiled once per ISA, without FMA contraction: CMakeLists.txt). Each op is Image.blend(degenerate, image,
// factor) as Pillow computes it per byte, in C float: degenerate + factor * (value - degenerate), truncated and
// clamped to 0..255. Brightness and contrast blend with a constant, so they are one 256-entry table per op; colour
// blends with the pixel's own grey level.
#include "cpu/common.h"

#include <algorithm>
#include <cstring>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace fv {
namespace FV_ISA_NAMESPACE {
namespace {

static inline uint8_t blend_byte(int32_t degenerate, int32_t value, float factor) {
    const float t = float(degenerate) + factor * float(value - degenerate);
    if (t <= 0.0f) return 0;
    if (t >= 255.0f) return 255;
    return uint8_t(t);
}

// Pillow's RGB -> L: (19595 R + 38470 G + 7471 B + 0x8000) >> 16
static inline int32_t grey(const uint8_t* px) {
    return (int32_t(px[0]) * 19595 + int32_t(px[1]) * 38470 + int32_t(px[2]) * 7471 + 0x8000) >> 16;
}

void apply_table(uint8_t* img, int64_t n_px, int64_t pb, const uint8_t* table) {
    for (int64_t i = 0; i < n_px; ++i) {
        uint8_t* px = img + i * pb;
        px[0] = table[px[0]];
        px[1] = table[px[1]];
        px[2] = table[px[2]];
    }
}

void blend_constant(uint8_t* img, int64_t n_px, int64_t pb, int32_t degenerate, float factor) {
    uint8_t table[256];
    for (int32_t v = 0; v < 256; ++v) table[v] = blend_byte(degenerate, v, factor);
    apply_table(img, n_px, pb, table);
}

#if defined(__AVX2__)
// 8 pixels of 4 bytes (R, G, B, pad) -> the three channels as int32 lanes, and Pillow's grey level of each
static inline void split8(__m256i px, __m256i& r, __m256i& g, __m256i& b) {
    const __m256i lo = _mm256_set1_epi32(0xFF);
    r = _mm256_and_si256(px, lo);
    g = _mm256_and_si256(_mm256_srli_epi32(px, 8), lo);
    b = _mm256_and_si256(_mm256_srli_epi32(px, 16), lo);
}
static inline __m256i grey8(__m256i r, __m256i g, __m256i b) {
    __m256i s = _mm256_mullo_epi32(r, _mm256_set1_epi32(19595));
    s = _mm256_add_epi32(s, _mm256_mullo_epi32(g, _mm256_set1_epi32(38470)));
    s = _mm256_add_epi32(s, _mm256_mullo_epi32(b, _mm256_set1_epi32(7471)));
    return _mm256_srli_epi32(_mm256_add_epi32(s, _mm256_set1_epi32(0x8000)), 16);
}
// blend_byte on 8 lanes: the same float multiply and add (no FMA), clamp, truncate
static inline __m256i blend8(__m256i degenerate, __m256i value, __m256 factor) {
    const __m256 d = _mm256_cvtepi32_ps(degenerate);
    const __m256 diff = _mm256_cvtepi32_ps(_mm256_sub_epi32(value, degenerate));
    __m256 t = _mm256_add_ps(d, _mm256_mul_ps(factor, diff));
    t = _mm256_min_ps(_mm256_max_ps(t, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
    return _mm256_cvttps_epi32(t);
}
#endif

// ImageEnhance.Contrast's degenerate level: the grey image's mean, rounded half up (int(mean + 0.5))
int32_t grey_mean(const uint8_t* img, int64_t n_px, int64_t pb) {
    int64_t sum = 0, i = 0;
#if defined(__AVX2__)
    if (pb == 4) {
        // each int32 lane adds one grey level (<= 255) per step: moved into the int64 sum every 2^17 steps
        constexpr int64_t kStepsPerFlush = int64_t(1) << 17;
        while (i + 8 <= n_px) {
            const int64_t steps = std::min((n_px - i) / 8, kStepsPerFlush);
            __m256i acc = _mm256_setzero_si256();
            for (const int64_t end = i + steps * 8; i < end; i += 8) {
                __m256i r, g, b;
                split8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(img + i * 4)), r, g, b);
                acc = _mm256_add_epi32(acc, grey8(r, g, b));
            }
            alignas(32) int32_t lanes[8];
            _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
            for (int l = 0; l < 8; ++l) sum += lanes[l];
        }
    }
#endif
    for (; i < n_px; ++i) sum += grey(img + i * pb);
    return int32_t(double(sum) / double(n_px) + 0.5);
}

void saturate(uint8_t* img, int64_t n_px, int64_t pb, float factor) {
    int64_t i = 0;
#if defined(__AVX2__)
    if (pb == 4) {
        const __m256 f = _mm256_set1_ps(factor);
        const __m256i pad = _mm256_set1_epi32(int32_t(0xFF000000u));
        for (; i + 8 <= n_px; i += 8) {
            __m256i* p = reinterpret_cast<__m256i*>(img + i * 4);
            const __m256i px = _mm256_loadu_si256(p);
            __m256i r, g, b;
            split8(px, r, g, b);
            const __m256i y = grey8(r, g, b);
            __m256i out = _mm256_and_si256(px, pad);
            out = _mm256_or_si256(out, blend8(y, r, f));
            out = _mm256_or_si256(out, _mm256_slli_epi32(blend8(y, g, f), 8));
            out = _mm256_or_si256(out, _mm256_slli_epi32(blend8(y, b, f), 16));
            _mm256_storeu_si256(p, out);
        }
    }
#endif
    for (; i < n_px; ++i) {
        uint8_t* px = img + i * pb;
        const int32_t g = grey(px);
        px[0] = blend_byte(g, px[0], factor);
        px[1] = blend_byte(g, px[1], factor);
        px[2] = blend_byte(g, px[2], factor);
    }
}

void color_ops_u8(const uint8_t* src, int64_t src_rs, uint8_t* dst, int64_t H, int64_t W, int64_t pb,
                  const ColorOpU8* ops, int64_t n_ops) {
    for (int64_t y = 0; y < H; ++y) memcpy(dst + y * W * pb, src + y * src_rs, size_t(W * pb));
    const int64_t n_px = H * W;
    for (int64_t k = 0; k < n_ops; ++k) {
        const ColorOpU8& op = ops[k];
        if (op.kind == kBrightness) blend_constant(dst, n_px, pb, 0, op.factor);
        else if (op.kind == kContrast) blend_constant(dst, n_px, pb, grey_mean(dst, n_px, pb), op.factor);
        else saturate(dst, n_px, pb, op.factor);
    }
}

}  // namespace

FV_REGISTRATION void fill_color(KernelTable& t) { t.image.color_ops_u8 = &color_ops_u8; }

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
