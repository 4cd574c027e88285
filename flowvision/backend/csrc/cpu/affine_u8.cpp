// Pillow's affine transform (Image.transform(size, AFFINE, ...) and Image.rotate) on 8-bit "L" and "RGB" pixels,
// byte for byte (compiled once per ISA, without FMA contraction: CMakeLists.txt).
//
// Pillow picks one of four engines, and each rounds differently, so each is reproduced as Pillow runs it:
// - bilinear / bicubic: the generic transform. Every output pixel's source point is a0 (x + .5) + a1 (y + .5) + a2 in
//   double; a point outside the image gives the fill colour; else the taps are clamped to the image and blended in
//   double (the first tap row clamped, rows below it past the edge repeat the previous row's value), and the result
//   is truncated (bicubic: clamped to 0..255 first).
// - nearest, a scale / translation (a1 = a3 = 0): one table of source columns, rows and columns stepped by repeated
//   double additions;
// - nearest, other matrices whose corners stay within +-32768: 16.16 fixed point;
// - nearest otherwise: double coordinates stepped by repeated additions.
// Pixels are 1 byte (bands 1) or Pillow's 4-byte RGBX memory (bands 3; the fourth byte of a sampled pixel is
// Pillow's too: nearest copies whole pixels, the filters write three bands and leave the fill's fourth byte).
#include "cpu/common.h"

#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace fv {
namespace FV_ISA_NAMESPACE {

FV_REGISTRATION void fill_affine(KernelTable& t);

namespace {

// Pillow's COORD and FLOOR (Geometry.c): C casts truncate toward zero
static inline int coord(double v) { return v < 0.0 ? -1 : int(v); }
static inline int floor_int(double v) { return v < 0.0 ? int(std::floor(v)) : int(v); }
static inline int clip(int v, int n) { return v < 0 ? 0 : v < n ? v : n - 1; }

struct Src {
    const uint8_t* px;
    int64_t rs;  // bytes between rows
    int W, H;
    const uint8_t* row(int y) const { return px + y * rs; }
};

template <int PB>
static inline void put_fill(uint8_t* out, const uint8_t* fill) {
    memcpy(out, fill, PB);
}

// Pillow's BILINEAR(v, a, b, d): v = a + (b - a) * d, with a and b bytes (their difference is an int)
static inline double lerp_bytes(int a, int b, double d) { return double(a) + double(b - a) * d; }

template <int PB, int BANDS>
static inline bool bilinear_pixel(uint8_t* out, const Src& s, double xin, double yin) {
    if (xin < 0.0 || xin >= s.W || yin < 0.0 || yin >= s.H) return false;
    xin -= 0.5;
    yin -= 0.5;
    const int x = floor_int(xin), y = floor_int(yin);
    const double dx = xin - x, dy = yin - y;
    const int x0 = clip(x, s.W) * PB, x1 = clip(x + 1, s.W) * PB;
    const uint8_t* r0 = s.row(clip(y, s.H));
    const bool second = y + 1 >= 0 && y + 1 < s.H;
    const uint8_t* r1 = second ? s.row(y + 1) : r0;
    uint8_t v[BANDS];  // stored after all reads: a byte store may alias the source for the compiler
    for (int b = 0; b < BANDS; ++b) {
        const double v1 = lerp_bytes(r0[x0 + b], r0[x1 + b], dx);
        const double v2 = second ? lerp_bytes(r1[x0 + b], r1[x1 + b], dx) : v1;
        v[b] = uint8_t(v1 + (v2 - v1) * dy);
    }
    memcpy(out, v, BANDS);
    return true;
}

// Pillow's BICUBIC(v, v1, v2, v3, v4, d) on four taps: with byte taps the p's are int sums, with double taps
// double sums, each evaluated left to right as C does
static inline double cubic_bytes(int v1, int v2, int v3, int v4, double d) {
    const double p1 = v2, p2 = -v1 + v3, p3 = 2 * (v1 - v2) + v3 - v4, p4 = -v1 + v2 - v3 + v4;
    return p1 + d * (p2 + d * (p3 + d * p4));
}
static inline double cubic(double v1, double v2, double v3, double v4, double d) {
    const double p1 = v2, p2 = -v1 + v3, p3 = 2 * (v1 - v2) + v3 - v4, p4 = -v1 + v2 - v3 + v4;
    return p1 + d * (p2 + d * (p3 + d * p4));
}

template <int PB, int BANDS>
static inline bool bicubic_pixel(uint8_t* out, const Src& s, double xin, double yin) {
    if (xin < 0.0 || xin >= s.W || yin < 0.0 || yin >= s.H) return false;
    xin -= 0.5;
    yin -= 0.5;
    int x = floor_int(xin), y = floor_int(yin);
    const double dx = xin - x, dy = yin - y;
    --x;
    --y;
    int xo[4];
    for (int k = 0; k < 4; ++k) xo[k] = clip(x + k, s.W) * PB;
    const uint8_t* rows[4];
    bool has[4];
    rows[0] = s.row(clip(y, s.H));
    has[0] = true;
    for (int k = 1; k < 4; ++k) {
        has[k] = y + k >= 0 && y + k < s.H;
        rows[k] = has[k] ? s.row(y + k) : nullptr;
    }
    uint8_t res[BANDS];
    for (int b = 0; b < BANDS; ++b) {
        double v[4];
        for (int k = 0; k < 4; ++k) {
            const uint8_t* r = rows[k];
            v[k] = has[k] ? cubic_bytes(r[xo[0] + b], r[xo[1] + b], r[xo[2] + b], r[xo[3] + b], dx) : v[k - 1];
        }
        const double t = cubic(v[0], v[1], v[2], v[3], dy);
        res[b] = t <= 0.0 ? 0 : t >= 255.0 ? 255 : uint8_t(t);
    }
    memcpy(out, res, BANDS);
    return true;
}

#if defined(__AVX2__)
// Where four output pixels sample (the heads of Pillow's bilinear and bicubic filters, lane for lane): which lanes'
// points lie inside the image, the floors of the points shifted by half a pixel, and the fractions past them.
// floor(v) equals Pillow's FLOOR(v) wherever the point is inside; lanes outside take the fill.
struct Points4 {
    __m256d inside, dx, dy;
    __m128i xi, yi;  // floor of x - .5 and y - .5
};
static inline bool locate4(const Src& s, __m256d xin, __m256d yin, Points4& p) {
    const __m256d zero = _mm256_setzero_pd(), half = _mm256_set1_pd(0.5);
    p.inside = _mm256_and_pd(
        _mm256_and_pd(_mm256_cmp_pd(xin, zero, _CMP_GE_OQ), _mm256_cmp_pd(xin, _mm256_set1_pd(s.W), _CMP_LT_OQ)),
        _mm256_and_pd(_mm256_cmp_pd(yin, zero, _CMP_GE_OQ), _mm256_cmp_pd(yin, _mm256_set1_pd(s.H), _CMP_LT_OQ)));
    if (_mm256_movemask_pd(p.inside) == 0) return false;
    const __m256d xs = _mm256_sub_pd(xin, half), ys = _mm256_sub_pd(yin, half);
    const __m256d fx = _mm256_floor_pd(xs), fy = _mm256_floor_pd(ys);
    p.dx = _mm256_sub_pd(xs, fx);
    p.dy = _mm256_sub_pd(ys, fy);
    p.xi = _mm256_cvttpd_epi32(fx);
    p.yi = _mm256_cvttpd_epi32(fy);
    return true;
}
// The four RGBX pixels: pix where the point is inside, the fill elsewhere
static inline void store4(uint8_t* out, __m128i pix, __m256d inside, __m128i fill4) {
    const __m128i in4 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
        _mm256_castpd_si256(inside), _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_blendv_epi8(fill4, pix, in4));
}

// Four bilinear RGBX output pixels at once: lane for lane the double operations of bilinear_pixel (lanes outside
// read only clamped, in-image taps).
static inline void bilinear4_rgbx(uint8_t* out, const Src& s, __m256d xin, __m256d yin, uint32_t fill_px) {
    const __m128i fill4 = _mm_set1_epi32(int(fill_px));
    Points4 pt;
    if (!locate4(s, xin, yin, pt)) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), fill4);
        return;
    }
    const __m256d dx = pt.dx, dy = pt.dy;
    const __m128i xi = pt.xi, yi = pt.yi, one = _mm_set1_epi32(1);
    const __m128i wmax = _mm_set1_epi32(s.W - 1), hmax = _mm_set1_epi32(s.H - 1), z = _mm_setzero_si128();
    auto clamp = [&](__m128i v, __m128i hi) { return _mm_min_epi32(_mm_max_epi32(v, z), hi); };
    const __m128i x0 = _mm_slli_epi32(clamp(xi, wmax), 2), x1 = _mm_slli_epi32(clamp(_mm_add_epi32(xi, one), wmax), 2);
    const __m128i yn = _mm_add_epi32(yi, one);
    const __m128i second =
        _mm_and_si128(_mm_cmpgt_epi32(yn, _mm_set1_epi32(-1)), _mm_cmplt_epi32(yn, _mm_set1_epi32(s.H)));
    const __m128i rs = _mm_set1_epi32(int(s.rs));
    const __m128i r0 = _mm_mullo_epi32(clamp(yi, hmax), rs), r1 = _mm_mullo_epi32(clamp(yn, hmax), rs);
    // the taps by scalar loads: four 4-byte pixels per vector (a gather is no faster here)
    alignas(16) int32_t o[4][4];
    _mm_store_si128(reinterpret_cast<__m128i*>(o[0]), _mm_add_epi32(r0, x0));
    _mm_store_si128(reinterpret_cast<__m128i*>(o[1]), _mm_add_epi32(r0, x1));
    _mm_store_si128(reinterpret_cast<__m128i*>(o[2]), _mm_add_epi32(r1, x0));
    _mm_store_si128(reinterpret_cast<__m128i*>(o[3]), _mm_add_epi32(r1, x1));
    auto taps = [&](const int32_t* off) {
        uint32_t v[4];
        for (int i = 0; i < 4; ++i) memcpy(&v[i], s.px + off[i], 4);
        return _mm_setr_epi32(int(v[0]), int(v[1]), int(v[2]), int(v[3]));
    };
    const __m128i p00 = taps(o[0]), p01 = taps(o[1]), p10 = taps(o[2]), p11 = taps(o[3]);
    const __m256d second_pd = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(second));
    const __m128i byte = _mm_set1_epi32(255);
    __m128i pix = _mm_and_si128(fill4, _mm_set1_epi32(int(0xff000000u)));  // the fill's fourth byte
    for (int b = 0; b < 3; ++b) {
        auto band = [&](__m128i p) { return _mm_and_si128(_mm_srli_epi32(p, 8 * b), byte); };
        const __m128i a00 = band(p00), a01 = band(p01), a10 = band(p10), a11 = band(p11);
        const __m256d v1 = _mm256_add_pd(_mm256_cvtepi32_pd(a00),
                                         _mm256_mul_pd(_mm256_cvtepi32_pd(_mm_sub_epi32(a01, a00)), dx));
        __m256d v2 = _mm256_add_pd(_mm256_cvtepi32_pd(a10),
                                   _mm256_mul_pd(_mm256_cvtepi32_pd(_mm_sub_epi32(a11, a10)), dx));
        v2 = _mm256_blendv_pd(v1, v2, second_pd);
        const __m256d r = _mm256_add_pd(v1, _mm256_mul_pd(_mm256_sub_pd(v2, v1), dy));
        pix = _mm_or_si128(pix, _mm_slli_epi32(_mm256_cvttpd_epi32(r), 8 * b));
    }
    store4(out, pix, pt.inside, fill4);
}

// Four bicubic RGBX output pixels at once, lane for lane the operations of bicubic_pixel: the first-pass cubic's
// p terms are exact integer sums of byte taps, the second pass sums doubles in C's left-to-right order.
static inline void bicubic4_rgbx(uint8_t* out, const Src& s, __m256d xin, __m256d yin, uint32_t fill_px) {
    const __m128i fill4 = _mm_set1_epi32(int(fill_px));
    Points4 pt;
    if (!locate4(s, xin, yin, pt)) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), fill4);
        return;
    }
    const __m256d dx = pt.dx, dy = pt.dy;
    const __m128i one = _mm_set1_epi32(1), z = _mm_setzero_si128();
    const __m128i xi = _mm_sub_epi32(pt.xi, one), yi = _mm_sub_epi32(pt.yi, one);
    const __m128i wmax = _mm_set1_epi32(s.W - 1), hmax = _mm_set1_epi32(s.H - 1);
    auto clamp = [&](__m128i v, __m128i hi) { return _mm_min_epi32(_mm_max_epi32(v, z), hi); };
    alignas(16) int32_t col[4][4], row[4][4], has[4][4];
    for (int k = 0; k < 4; ++k) {
        const __m128i kk = _mm_set1_epi32(k);
        _mm_store_si128(reinterpret_cast<__m128i*>(col[k]), _mm_slli_epi32(clamp(_mm_add_epi32(xi, kk), wmax), 2));
        const __m128i yk = _mm_add_epi32(yi, kk);
        _mm_store_si128(reinterpret_cast<__m128i*>(row[k]),
                        _mm_mullo_epi32(clamp(yk, hmax), _mm_set1_epi32(int(s.rs))));
        _mm_store_si128(reinterpret_cast<__m128i*>(has[k]),
                        _mm_and_si128(_mm_cmpgt_epi32(yk, _mm_set1_epi32(-1)),
                                      _mm_cmplt_epi32(yk, _mm_set1_epi32(s.H))));
    }
    // taps[k][j]: row k, column j of the four lanes' windows (row 0 is clamped like Pillow's first row)
    __m128i taps[4][4];
    for (int k = 0; k < 4; ++k)
        for (int j = 0; j < 4; ++j) {
            uint32_t v[4];
            for (int i = 0; i < 4; ++i) memcpy(&v[i], s.px + row[k][i] + col[j][i], 4);
            taps[k][j] = _mm_setr_epi32(int(v[0]), int(v[1]), int(v[2]), int(v[3]));
        }
    __m256d has_pd[4];
    for (int k = 1; k < 4; ++k)
        has_pd[k] =
            _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_load_si128(reinterpret_cast<const __m128i*>(has[k]))));
    const __m128i byte = _mm_set1_epi32(255);
    const __m256d neg = _mm256_set1_pd(-0.0), two = _mm256_set1_pd(2.0);
    auto poly = [](__m256d p1, __m256d p2, __m256d p3, __m256d p4, __m256d d) {
        const __m256d inner = _mm256_add_pd(p3, _mm256_mul_pd(d, p4));
        return _mm256_add_pd(p1, _mm256_mul_pd(d, _mm256_add_pd(p2, _mm256_mul_pd(d, inner))));
    };
    __m128i pix = _mm_and_si128(fill4, _mm_set1_epi32(int(0xff000000u)));
    for (int b = 0; b < 3; ++b) {
        __m256d v[4];
        for (int k = 0; k < 4; ++k) {
            __m128i t[4];
            for (int j = 0; j < 4; ++j) t[j] = _mm_and_si128(_mm_srli_epi32(taps[k][j], 8 * b), byte);
            const __m128i p2 = _mm_sub_epi32(t[2], t[0]);
            const __m128i p3 = _mm_sub_epi32(_mm_add_epi32(_mm_slli_epi32(_mm_sub_epi32(t[0], t[1]), 1), t[2]), t[3]);
            const __m128i p4 = _mm_add_epi32(_mm_sub_epi32(_mm_sub_epi32(t[1], t[0]), t[2]), t[3]);
            const __m256d r = poly(_mm256_cvtepi32_pd(t[1]), _mm256_cvtepi32_pd(p2), _mm256_cvtepi32_pd(p3),
                                   _mm256_cvtepi32_pd(p4), dx);
            v[k] = k == 0 ? r : _mm256_blendv_pd(v[k - 1], r, has_pd[k]);
        }
        const __m256d m1 = _mm256_xor_pd(v[0], neg);  // -v1 (exact)
        const __m256d p2 = _mm256_add_pd(m1, v[2]);
        const __m256d p3 = _mm256_sub_pd(_mm256_add_pd(_mm256_mul_pd(two, _mm256_sub_pd(v[0], v[1])), v[2]), v[3]);
        const __m256d p4 = _mm256_add_pd(_mm256_sub_pd(_mm256_add_pd(m1, v[1]), v[2]), v[3]);
        __m256d t = poly(v[1], p2, p3, p4, dy);
        // t <= 0 -> 0, t >= 255 -> 255, else truncated: max / min keep the in-range values, then truncation
        t = _mm256_min_pd(_mm256_max_pd(t, _mm256_setzero_pd()), _mm256_set1_pd(255.0));
        pix = _mm_or_si128(pix, _mm_slli_epi32(_mm256_cvttpd_epi32(t), 8 * b));
    }
    store4(out, pix, pt.inside, fill4);
}
#endif

// The generic engine: rows [y0, y1) of the output
template <int PB, int BANDS, bool CUBIC>
void generic_rows(const Src& s, uint8_t* dst, int64_t OW, const double* a, const uint8_t* fill, int64_t y0,
                  int64_t y1) {
    for (int64_t y = y0; y < y1; ++y) {
        uint8_t* out = dst + y * OW * PB;
        const double yc = double(int(y)) + 0.5;
        int64_t x = 0;
#if defined(__AVX2__)
        if (PB == 4 && BANDS == 3 && s.rs * int64_t(s.H) < (int64_t(1) << 31)) {
            uint32_t fill_px;
            memcpy(&fill_px, fill, 4);
            const __m256d a0 = _mm256_set1_pd(a[0]), a3 = _mm256_set1_pd(a[3]);
            const __m256d by = _mm256_set1_pd(a[1] * yc), dy = _mm256_set1_pd(a[4] * yc);
            const __m256d c2 = _mm256_set1_pd(a[2]), c5 = _mm256_set1_pd(a[5]);
            for (; x + 4 <= OW; x += 4, out += 4 * PB) {
                const __m256d xc = _mm256_add_pd(_mm256_cvtepi32_pd(_mm_add_epi32(_mm_set1_epi32(int(x)),
                                                                                 _mm_setr_epi32(0, 1, 2, 3))),
                                                  _mm256_set1_pd(0.5));
                const __m256d xin = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(a0, xc), by), c2);
                const __m256d yin = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(a3, xc), dy), c5);
                if (CUBIC) bicubic4_rgbx(out, s, xin, yin, fill_px);
                else bilinear4_rgbx(out, s, xin, yin, fill_px);
            }
        }
#endif
        for (; x < OW; ++x, out += PB) {
            const double xc = double(int(x)) + 0.5;
            const double xin = a[0] * xc + a[1] * yc + a[2];
            const double yin = a[3] * xc + a[4] * yc + a[5];
            const bool inside = CUBIC ? bicubic_pixel<PB, BANDS>(out, s, xin, yin)
                                      : bilinear_pixel<PB, BANDS>(out, s, xin, yin);
            if (!inside) put_fill<PB>(out, fill);
            else if (PB > BANDS) memcpy(out + BANDS, fill + BANDS, PB - BANDS);  // the fill image's own X byte
        }
    }
}

template <int PB>
void nearest(const Src& s, uint8_t* dst, int64_t OW, int64_t OH, const double* a, const uint8_t* fill) {
    using Px = typename std::conditional<PB == 4, uint32_t, uint8_t>::type;  // a pixel as one value
    Px fill_px;
    memcpy(&fill_px, fill, PB);
    Px* out = reinterpret_cast<Px*>(dst);
    for (int64_t i = 0; i < OW * OH; ++i) out[i] = fill_px;
    auto copy = [&](int64_t y, int64_t x, int xin, int yin) {
        Px v;
        memcpy(&v, s.row(yin) + int64_t(xin) * PB, PB);
        out[y * OW + x] = v;
    };
    if (a[1] == 0 && a[3] == 0) {  // Pillow's ImagingScaleAffine
        std::vector<int> xintab(size_t(OW), 0);
        double xo = a[2] + a[0] * 0.5, yo = a[5] + a[4] * 0.5;
        int64_t xmin = OW, xmax = 0;
        for (int64_t x = 0; x < OW; ++x) {
            const int xin = coord(xo);
            if (xin >= 0 && xin < s.W) {
                xmax = x + 1;
                if (x < xmin) xmin = x;
                xintab[size_t(x)] = xin;
            }
            xo += a[0];
        }
        for (int64_t y = 0; y < OH; ++y) {
            const int yi = coord(yo);
            if (yi >= 0 && yi < s.H)
                for (int64_t x = xmin; x < xmax; ++x) copy(y, x, xintab[size_t(x)], yi);
            yo += a[4];
        }
        return;
    }
    auto fits = [&](double x, double y) {
        return std::fabs(x * a[0] + y * a[1] + a[2]) < 32768.0 && std::fabs(x * a[3] + y * a[4] + a[5]) < 32768.0;
    };
    const double w = double(int(OW)), h = double(int(OH));
    if (fits(0, 0) && fits(w, h) && fits(0, h) && fits(w, 0)) {  // Pillow's affine_fixed: 16.16 fixed point
        auto fix = [](double v) { return floor_int(v * 65536.0 + 0.5); };
        const int a0 = fix(a[0]), a1 = fix(a[1]), a3 = fix(a[3]), a4 = fix(a[4]);
        int a2 = fix(a[2] + a[0] * 0.5 + a[1] * 0.5), a5 = fix(a[5] + a[3] * 0.5 + a[4] * 0.5);
        for (int64_t y = 0; y < OH; ++y) {
            int xx = a2, yy = a5;
            for (int64_t x = 0; x < OW; ++x) {
                const int xin = xx >> 16;
                if (xin >= 0 && xin < s.W) {
                    const int yin = yy >> 16;
                    if (yin >= 0 && yin < s.H) copy(y, x, xin, yin);
                }
                xx += a0;
                yy += a3;
            }
            a2 += a1;
            a5 += a4;
        }
        return;
    }
    double xo = a[2] + a[1] * 0.5 + a[0] * 0.5, yo = a[5] + a[4] * 0.5 + a[3] * 0.5;
    for (int64_t y = 0; y < OH; ++y) {
        double xx = xo, yy = yo;
        for (int64_t x = 0; x < OW; ++x) {
            const int xin = coord(xx);
            if (xin >= 0 && xin < s.W) {
                const int yin = coord(yy);
                if (yin >= 0 && yin < s.H) copy(y, x, xin, yin);
            }
            xx += a[0];
            yy += a[3];
        }
        xo += a[1];
        yo += a[4];
    }
}

template <int PB, int BANDS>
void affine_typed(const Src& s, uint8_t* dst, int64_t OH, int64_t OW, const double* a, int filter,
                  const uint8_t* fill) {
    if (filter == kAffineNearest) return nearest<PB>(s, dst, OW, OH, a, fill);
    // rows are independent in the generic engine: threads over row blocks of at least ~16k pixels
    parallel_for(0, OH, grain_for(OW, 1 << 14), [&](int64_t y0, int64_t y1) {
        if (filter == kAffineBicubic) generic_rows<PB, BANDS, true>(s, dst, OW, a, fill, y0, y1);
        else generic_rows<PB, BANDS, false>(s, dst, OW, a, fill, y0, y1);
    });
}

void affine_u8(const uint8_t* src, int64_t src_rs, int64_t H, int64_t W, int64_t pixel_bytes, uint8_t* dst,
               int64_t OH, int64_t OW, const double* matrix, int filter, const uint8_t* fill) {
    const Src s{src, src_rs, int(W), int(H)};
    if (pixel_bytes == 1) affine_typed<1, 1>(s, dst, OH, OW, matrix, filter, fill);
    else affine_typed<4, 3>(s, dst, OH, OW, matrix, filter, fill);
}

}  // namespace

FV_REGISTRATION void fill_affine(KernelTable& t) { t.image.affine_u8 = &affine_u8; }

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
