// Nearest / bilinear interpolation (torch's source-index rules), roi_align (torchvision's
// sampling rules) and the NMS suppression bitmask. Backward passes scatter with fp32 atomics.
#include <math.h>

#include "common.cuh"

namespace fvcuda {
namespace {

// One resize: planes of h x w into oh x ow with torch's per-axis scales; `flag` is nearest's "exact"
// (half-pixel centres) or bilinear's align_corners.
struct Resize {
    int64_t h, w, oh, ow;
    float sh, sw;
    bool flag;
};

FV_HD int64_t nearest_src(int64_t dst, float scale, int64_t in, bool exact) {
    float v = exact ? (dst + 0.5f) * scale : dst * scale;
    int64_t s = static_cast<int64_t>(floorf(v));
    return s < in - 1 ? s : in - 1;
}

struct Nearest {
    FV_HD static int64_t src(const Resize& r, int64_t i) {
        int64_t ox = i % r.ow, oy = (i / r.ow) % r.oh, plane = i / (r.ow * r.oh);
        return plane * r.h * r.w + nearest_src(oy, r.sh, r.h, r.flag) * r.w + nearest_src(ox, r.sw, r.w, r.flag);
    }
    template <typename T>
    FV_HD static void fwd_at(const T* x, T* y, const Resize& r, int64_t i) { y[i] = x[src(r, i)]; }
    FV_HD static void bwd_at(const float* g, float* dx, const Resize& r, int64_t i) {
        atomic_add_f(dx + src(r, i), g[i]);
    }
};

FV_HD void linear_src(int64_t dst, float scale, int64_t in, bool align, int64_t& i0, int64_t& i1, float& l1) {
    float src = align ? scale * dst : fmaxf(scale * (dst + 0.5f) - 0.5f, 0.f);
    i0 = static_cast<int64_t>(src);
    if (i0 > in - 1) i0 = in - 1;
    i1 = i0 + (i0 < in - 1 ? 1 : 0);
    l1 = fminf(fmaxf(src - i0, 0.f), 1.f);
}

struct Bilinear {
    // The four source taps of output i: rows y0/y1, columns x0/x1 of its plane (offset), weights from ly/lx.
    struct Taps {
        int64_t plane, y0, y1, x0, x1;
        float ly, lx;
    };
    FV_HD static Taps taps(const Resize& r, int64_t i) {
        int64_t ox = i % r.ow, oy = (i / r.ow) % r.oh;
        Taps t;
        t.plane = (i / (r.ow * r.oh)) * r.h * r.w;
        linear_src(oy, r.sh, r.h, r.flag, t.y0, t.y1, t.ly);
        linear_src(ox, r.sw, r.w, r.flag, t.x0, t.x1, t.lx);
        return t;
    }
    template <typename T>
    FV_HD static void fwd_at(const T* x, T* y, const Resize& r, int64_t i) {
        Taps t = taps(r, i);
        const T* p = x + t.plane;
        int64_t w = r.w;
        float v = (1.f - t.ly) * ((1.f - t.lx) * to_f(p[t.y0 * w + t.x0]) + t.lx * to_f(p[t.y0 * w + t.x1])) +
                  t.ly * ((1.f - t.lx) * to_f(p[t.y1 * w + t.x0]) + t.lx * to_f(p[t.y1 * w + t.x1]));
        y[i] = from_f<T>(v);
    }
    FV_HD static void bwd_at(const float* g, float* dx, const Resize& r, int64_t i) {
        Taps t = taps(r, i);
        float* p = dx + t.plane;
        int64_t w = r.w;
        float gv = g[i];
        atomic_add_f(p + t.y0 * w + t.x0, gv * (1.f - t.ly) * (1.f - t.lx));
        atomic_add_f(p + t.y0 * w + t.x1, gv * (1.f - t.ly) * t.lx);
        atomic_add_f(p + t.y1 * w + t.x0, gv * t.ly * (1.f - t.lx));
        atomic_add_f(p + t.y1 * w + t.x1, gv * t.ly * t.lx);
    }
};

template <class Mode, typename T>
__global__ void resize_fwd_kernel(const T* x, T* y, Resize r, int64_t total) {
    FV_GRID_LOOP(i, total) Mode::fwd_at(x, y, r, i);
}

template <class Mode>
__global__ void resize_bwd_kernel(const float* g, float* dx, Resize r, int64_t total) {
    FV_GRID_LOOP(i, total) Mode::bwd_at(g, dx, r, i);
}

template <class Mode>
void resize_fwd(DType dt, const void* x, void* y, int64_t planes, const Resize& r, void* stream, const char* name) {
    int64_t total = planes * r.oh * r.ow;
    if (total == 0) return;
    FV_DISPATCH_FLOAT(dt, T, resize_fwd_kernel<Mode, T><<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(
                                 (const T*)x, (T*)y, r, total));
    check_launch(name);
}

// Zeroes dx, then scatters each output gradient onto its source taps.
template <class Mode>
void resize_bwd(const float* g, float* dx, int64_t planes, const Resize& r, void* stream, const char* name) {
    cudaStream_t s = as_stream(stream);
    if (planes * r.h * r.w) cudaMemsetAsync(dx, 0, sizeof(float) * planes * r.h * r.w, s);
    int64_t total = planes * r.oh * r.ow;
    if (total == 0) return;
    resize_bwd_kernel<Mode><<<blocks_for(total), kThreads, 0, s>>>(g, dx, r, total);
    check_launch(name);
}

// torchvision's bilinear_interpolate: weights and corner offsets (all zero outside [-1, size]).
struct Corners {
    float w1, w2, w3, w4;
    int64_t o1, o2, o3, o4;
};
FV_HD Corners roi_corners(float y, float x, int64_t h, int64_t w) {
    Corners c{0.f, 0.f, 0.f, 0.f, 0, 0, 0, 0};
    if (y < -1.f || y > h || x < -1.f || x > w) return c;
    y = fmaxf(y, 0.f);
    x = fmaxf(x, 0.f);
    int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x), yh, xh;
    if (yl >= h - 1) { yh = yl = h - 1; y = static_cast<float>(yl); } else yh = yl + 1;
    if (xl >= w - 1) { xh = xl = w - 1; x = static_cast<float>(xl); } else xh = xl + 1;
    float ly = y - yl, lx = x - xl, hy = 1.f - ly, hx = 1.f - lx;
    c.w1 = hy * hx; c.w2 = hy * lx; c.w3 = ly * hx; c.w4 = ly * lx;
    c.o1 = yl * w + xl; c.o2 = yl * w + xh; c.o3 = yh * w + xl; c.o4 = yh * w + xh;
    return c;
}

struct RoiBin {
    int64_t batch;
    float y0, x0, bin_h, bin_w;
    int grid_h, grid_w;
    float count;
};
template <typename R>
FV_HD RoiBin roi_bin(const R* rois, const RoiAlign& p, int64_t roi, int64_t ph, int64_t pw) {
    const R* r = rois + roi * 5;
    float off = p.aligned ? 0.5f : 0.f;
    float sx = to_f(r[1]) * p.spatial_scale - off, sy = to_f(r[2]) * p.spatial_scale - off;
    float ex = to_f(r[3]) * p.spatial_scale - off, ey = to_f(r[4]) * p.spatial_scale - off;
    float rw = ex - sx, rh = ey - sy;
    if (!p.aligned) { rw = fmaxf(rw, 1.f); rh = fmaxf(rh, 1.f); }
    RoiBin b;
    b.batch = static_cast<int64_t>(to_f(r[0]));
    b.bin_h = rh / p.ph;
    b.bin_w = rw / p.pw;
    b.grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int>(ceilf(rh / p.ph));
    b.grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int>(ceilf(rw / p.pw));
    b.count = static_cast<float>(max(b.grid_h * b.grid_w, 1));
    b.y0 = sy + ph * b.bin_h;
    b.x0 = sx + pw * b.bin_w;
    return b;
}

// Calls f(y, x) at each of the bin's grid_h x grid_w sampling points (the centres of its sub-cells).
template <typename F>
FV_HD void for_each_bin_sample(const RoiBin& b, F&& f) {
    for (int iy = 0; iy < b.grid_h; ++iy) {
        float yy = b.y0 + (iy + 0.5f) * b.bin_h / b.grid_h;
        for (int ix = 0; ix < b.grid_w; ++ix) f(yy, b.x0 + (ix + 0.5f) * b.bin_w / b.grid_w);
    }
}

template <typename T>
FV_HD void roi_align_fwd_kernel_at(const T* x, const T* rois, T* y, RoiAlign p, int64_t i) {
    int64_t pw = i % p.pw, ph = (i / p.pw) % p.ph, c = (i / (p.pw * p.ph)) % p.c, roi = i / (p.pw * p.ph * p.c);
    RoiBin b = roi_bin(rois, p, roi, ph, pw);
    float acc = 0.f;
    if (b.batch >= 0 && b.batch < p.n) {
        const T* plane = x + (b.batch * p.c + c) * p.h * p.w;
        for_each_bin_sample(b, [&](float yy, float xx) {
            Corners k = roi_corners(yy, xx, p.h, p.w);
            acc += k.w1 * to_f(plane[k.o1]) + k.w2 * to_f(plane[k.o2]) + k.w3 * to_f(plane[k.o3]) +
                   k.w4 * to_f(plane[k.o4]);
        });
    }
    y[i] = from_f<T>(acc / b.count);
}

template <typename T>
__global__ void roi_align_fwd_kernel(const T* x, const T* rois, T* y, RoiAlign p, int64_t total) {
    FV_GRID_LOOP(i, total) roi_align_fwd_kernel_at(x, rois, y, p, i);
}

FV_HD void roi_align_bwd_kernel_at(const float* g, const float* rois, float* dx, RoiAlign p, int64_t i) {
    int64_t pw = i % p.pw, ph = (i / p.pw) % p.ph, c = (i / (p.pw * p.ph)) % p.c, roi = i / (p.pw * p.ph * p.c);
    RoiBin b = roi_bin(rois, p, roi, ph, pw);
    if (b.batch < 0 || b.batch >= p.n) return;
    float* plane = dx + (b.batch * p.c + c) * p.h * p.w;
    float gv = g[i] / b.count;
    for_each_bin_sample(b, [&](float yy, float xx) {
        if (yy < -1.f || yy > p.h || xx < -1.f || xx > p.w) return;  // all four weights are zero there
        Corners k = roi_corners(yy, xx, p.h, p.w);
        atomic_add_f(plane + k.o1, gv * k.w1);
        atomic_add_f(plane + k.o2, gv * k.w2);
        atomic_add_f(plane + k.o3, gv * k.w3);
        atomic_add_f(plane + k.o4, gv * k.w4);
    });
}

__global__ void roi_align_bwd_kernel(const float* g, const float* rois, float* dx, RoiAlign p, int64_t total) {
    FV_GRID_LOOP(i, total) roi_align_bwd_kernel_at(g, rois, dx, p, i);
}

constexpr int kNmsBlock = 64;

FV_HD float iou(const float* a, const float* b) {
    float l = fmaxf(a[0], b[0]), t = fmaxf(a[1], b[1]), r = fminf(a[2], b[2]), d = fminf(a[3], b[3]);
    float inter = fmaxf(r - l, 0.f) * fmaxf(d - t, 0.f);
    float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    return inter / (area_a + area_b - inter);
}

// Block (row, col): boxes row*64.. against col*64..; bit j of mask[i][col] = IoU(i, col*64+j) > thr, j > i.
__global__ void nms_kernel(const float* boxes, int64_t n, float thr, uint64_t* mask, int64_t words) {
    int64_t row = blockIdx.y, col = blockIdx.x;
    if (row > col) return;
    __shared__ float cb[kNmsBlock * 4];
    int64_t col_n = min(n - col * kNmsBlock, (int64_t)kNmsBlock), row_n = min(n - row * kNmsBlock, (int64_t)kNmsBlock);
    if (threadIdx.x < col_n)
        for (int k = 0; k < 4; ++k) cb[threadIdx.x * 4 + k] = boxes[(col * kNmsBlock + threadIdx.x) * 4 + k];
    __syncthreads();
    if (threadIdx.x < row_n) {
        int64_t i = row * kNmsBlock + threadIdx.x;
        const float* bi = boxes + i * 4;
        uint64_t bits = 0;
        for (int64_t j = (row == col ? threadIdx.x + 1 : 0); j < col_n; ++j)
            if (iou(bi, cb + j * 4) > thr) bits |= 1ULL << j;
        mask[i * words + col] = bits;
    }
}

}  // namespace

void upsample_nearest_fwd(DType dt, const void* x, void* y, int64_t planes, int64_t h, int64_t w, int64_t oh,
                          int64_t ow, float scale_h, float scale_w, bool exact, void* stream) {
    resize_fwd<Nearest>(dt, x, y, planes, Resize{h, w, oh, ow, scale_h, scale_w, exact}, stream, "upsample_nearest");
}

void upsample_nearest_bwd(const float* g, float* dx, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow,
                          float scale_h, float scale_w, bool exact, void* stream) {
    resize_bwd<Nearest>(g, dx, planes, Resize{h, w, oh, ow, scale_h, scale_w, exact}, stream,
                        "upsample_nearest_backward");
}

void upsample_bilinear_fwd(DType dt, const void* x, void* y, int64_t planes, int64_t h, int64_t w, int64_t oh,
                           int64_t ow, bool align_corners, float scale_h, float scale_w, void* stream) {
    resize_fwd<Bilinear>(dt, x, y, planes, Resize{h, w, oh, ow, scale_h, scale_w, align_corners}, stream,
                         "upsample_bilinear");
}

void upsample_bilinear_bwd(const float* g, float* dx, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow,
                           bool align_corners, float scale_h, float scale_w, void* stream) {
    resize_bwd<Bilinear>(g, dx, planes, Resize{h, w, oh, ow, scale_h, scale_w, align_corners}, stream,
                         "upsample_bilinear_backward");
}

void roi_align_fwd(DType dt, const void* x, const void* rois, void* y, const RoiAlign& p, void* stream) {
    int64_t total = p.rois * p.c * p.ph * p.pw;
    if (total == 0) return;
    FV_DISPATCH_FLOAT(dt, T, roi_align_fwd_kernel<T><<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(
                                 (const T*)x, (const T*)rois, (T*)y, p, total));
    check_launch("roi_align");
}

void roi_align_bwd(const float* g, const float* rois, float* dx, const RoiAlign& p, void* stream) {
    cudaStream_t s = as_stream(stream);
    int64_t in_total = p.n * p.c * p.h * p.w, total = p.rois * p.c * p.ph * p.pw;
    if (in_total) cudaMemsetAsync(dx, 0, sizeof(float) * in_total, s);
    if (total == 0) return;
    roi_align_bwd_kernel<<<blocks_for(total), kThreads, 0, s>>>(g, rois, dx, p, total);
    check_launch("roi_align_backward");
}

void nms_mask(const float* boxes, int64_t n, float iou_threshold, uint64_t* mask, void* stream) {
    if (n == 0) return;
    int64_t words = (n + kNmsBlock - 1) / kNmsBlock;
    if (words > 65535) fail("nms: too many boxes");
    dim3 grid((unsigned)words, (unsigned)words);
    nms_kernel<<<grid, kNmsBlock, 0, as_stream(stream)>>>(boxes, n, iou_threshold, mask, words);
    check_launch("nms");
}

}  // namespace fvcuda
