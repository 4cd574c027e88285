// Detection kernels: NMS, RoIAlign (forward/backward), RoIPool (forward/backward).
//
// Unlike the other files in cpu/, this translation unit is compiled once, at the module's baseline
// ISA (it is listed with the pybind module's sources, not FV_KERNEL_SOURCES), so std:: containers
// and algorithms are fine here. Arithmetic follows torchvision's CPU kernels step by step (same
// operation order, computed in the element type T), so float32 results agree to the last bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "core/threadpool.h"

namespace fv {
namespace det {

// ------------------------------------------------------------------ NMS
template <class T>
int64_t nms(const T* boxes, const T* scores, int64_t n, double iou_threshold, int64_t* keep_out) {
    if (n == 0) return 0;
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    // stable descending sort (ties keep their input order)
    std::stable_sort(order.begin(), order.end(), [scores](int64_t a, int64_t b) { return scores[a] > scores[b]; });
    std::vector<T> x1(n), y1(n), x2(n), y2(n), area(n);
    for (int64_t k = 0; k < n; ++k) {
        const int64_t i = order[k];
        x1[k] = boxes[4 * i + 0];
        y1[k] = boxes[4 * i + 1];
        x2[k] = boxes[4 * i + 2];
        y2[k] = boxes[4 * i + 3];
        area[k] = (x2[k] - x1[k]) * (y2[k] - y1[k]);
    }
    std::vector<uint8_t> suppressed(n, 0);
    const T thr = static_cast<T>(iou_threshold);
    int64_t nkeep = 0;
    for (int64_t a = 0; a < n; ++a) {
        if (suppressed[a]) continue;
        keep_out[nkeep++] = order[a];
        const T ix1 = x1[a], iy1 = y1[a], ix2 = x2[a], iy2 = y2[a], iarea = area[a];
        for (int64_t b = a + 1; b < n; ++b) {
            if (suppressed[b]) continue;
            const T xx1 = std::max(ix1, x1[b]);
            const T yy1 = std::max(iy1, y1[b]);
            const T xx2 = std::min(ix2, x2[b]);
            const T yy2 = std::min(iy2, y2[b]);
            const T w = std::max(static_cast<T>(0), xx2 - xx1);
            const T h = std::max(static_cast<T>(0), yy2 - yy1);
            const T inter = w * h;
            const T ovr = inter / (iarea + area[b] - inter);
            if (ovr > thr) suppressed[b] = 1;
        }
    }
    return nkeep;
}

// ------------------------------------------------------------------ RoIAlign
template <class T>
struct Sample {
    int64_t p1, p2, p3, p4;
    T w1, w2, w3, w4;
};

template <class T>
struct RoiGeom {
    int64_t batch;
    T start_h, start_w, bin_h, bin_w;
    int grid_h, grid_w;
};

template <class T>
RoiGeom<T> roi_geom(const T* roi, T scale, int64_t ph, int64_t pw, int64_t sampling_ratio, bool aligned) {
    RoiGeom<T> g;
    g.batch = static_cast<int64_t>(roi[0]);
    const T offset = aligned ? static_cast<T>(0.5) : static_cast<T>(0.0);
    const T sw = roi[1] * scale - offset;
    const T sh = roi[2] * scale - offset;
    const T ew = roi[3] * scale - offset;
    const T eh = roi[4] * scale - offset;
    T rw = ew - sw, rh = eh - sh;
    if (!aligned) {
        rw = std::max(rw, static_cast<T>(1.));
        rh = std::max(rh, static_cast<T>(1.));
    }
    g.start_h = sh;
    g.start_w = sw;
    g.bin_h = rh / static_cast<T>(ph);
    g.bin_w = rw / static_cast<T>(pw);
    g.grid_h = sampling_ratio > 0 ? static_cast<int>(sampling_ratio) : static_cast<int>(std::ceil(rh / ph));
    g.grid_w = sampling_ratio > 0 ? static_cast<int>(sampling_ratio) : static_cast<int>(std::ceil(rw / pw));
    // an inverted box with aligned=True gives negative sizes: no samples, output 0 (torchvision's result)
    g.grid_h = std::max(g.grid_h, 0);
    g.grid_w = std::max(g.grid_w, 0);
    return g;
}

// Bilinear sample at (y, x): torchvision's rules (outside [-1, size] -> zero weights; clamp to the edge).
template <class T>
inline void bilinear(int64_t H, int64_t W, T y, T x, Sample<T>& s, bool& valid) {
    if (y < -1.0 || y > H || x < -1.0 || x > W) {
        s = Sample<T>{0, 0, 0, 0, 0, 0, 0, 0};
        valid = false;
        return;
    }
    valid = true;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
    if (y_low >= H - 1) {
        y_high = y_low = H - 1;
        y = static_cast<T>(y_low);
    } else {
        y_high = y_low + 1;
    }
    if (x_low >= W - 1) {
        x_high = x_low = W - 1;
        x = static_cast<T>(x_low);
    } else {
        x_high = x_low + 1;
    }
    const T ly = y - y_low, lx = x - x_low;
    const T hy = static_cast<T>(1.) - ly, hx = static_cast<T>(1.) - lx;
    s.w1 = hy * hx;
    s.w2 = hy * lx;
    s.w3 = ly * hx;
    s.w4 = ly * lx;
    s.p1 = y_low * W + x_low;
    s.p2 = y_low * W + x_high;
    s.p3 = y_high * W + x_low;
    s.p4 = y_high * W + x_high;
}

// samples of one roi in (ph, pw, iy, ix) order; `valid` flags for the backward's bounds rule
template <class T>
void roi_samples(const RoiGeom<T>& g, int64_t H, int64_t W, int64_t PH, int64_t PW, std::vector<Sample<T>>& out,
                 std::vector<uint8_t>& valid) {
    const int64_t per_bin = static_cast<int64_t>(g.grid_h) * g.grid_w;
    out.resize(PH * PW * per_bin);
    valid.resize(out.size());
    int64_t k = 0;
    for (int64_t ph = 0; ph < PH; ++ph)
        for (int64_t pw = 0; pw < PW; ++pw)
            for (int iy = 0; iy < g.grid_h; ++iy) {
                const T yy = g.start_h + ph * g.bin_h +
                             static_cast<T>(iy + .5f) * g.bin_h / static_cast<T>(g.grid_h);
                for (int ix = 0; ix < g.grid_w; ++ix, ++k) {
                    const T xx = g.start_w + pw * g.bin_w +
                                 static_cast<T>(ix + .5f) * g.bin_w / static_cast<T>(g.grid_w);
                    bool v;
                    bilinear<T>(H, W, yy, xx, out[k], v);
                    valid[k] = v;
                }
            }
}

template <class T>
void roi_align_forward(const T* x, const T* rois, T* y, int64_t N, int64_t C, int64_t H, int64_t W, int64_t K,
                       int64_t PH, int64_t PW, double scale_, int64_t sampling_ratio, bool aligned) {
    const T scale = static_cast<T>(scale_);
    if (H <= 0 || W <= 0) {  // empty feature map: nothing to sample (bilinear() would index before the plane)
        std::fill(y, y + K * C * PH * PW, static_cast<T>(0));
        return;
    }
    fv::parallel_for(0, K, 1, [&](int64_t kb, int64_t ke) {
        std::vector<Sample<T>> smp;
        std::vector<uint8_t> valid;
        for (int64_t k = kb; k < ke; ++k) {
            const RoiGeom<T> g = roi_geom<T>(rois + 5 * k, scale, PH, PW, sampling_ratio, aligned);
            T* yk = y + k * C * PH * PW;
            if (g.batch < 0 || g.batch >= N) {  // checked in the binding; keep the kernel safe anyway
                std::fill(yk, yk + C * PH * PW, static_cast<T>(0));
                continue;
            }
            roi_samples<T>(g, H, W, PH, PW, smp, valid);
            const int64_t per_bin = static_cast<int64_t>(g.grid_h) * g.grid_w;
            const T count = static_cast<T>(std::max<int64_t>(per_bin, 1));
            for (int64_t c = 0; c < C; ++c) {
                const T* xc = x + (g.batch * C + c) * H * W;
                T* yc = yk + c * PH * PW;
                const Sample<T>* s = smp.data();
                for (int64_t b = 0; b < PH * PW; ++b) {
                    T acc = 0;
                    for (int64_t i = 0; i < per_bin; ++i, ++s)
                        acc += s->w1 * xc[s->p1] + s->w2 * xc[s->p2] + s->w3 * xc[s->p3] + s->w4 * xc[s->p4];
                    yc[b] = acc / count;
                }
            }
        }
    });
}

// grad_x (N, C, H, W) must be zeroed by the caller. Threaded over channels: each channel plane is
// written by one thread only, and within a channel the accumulation order is torchvision's
// (roi, ph, pw, iy, ix), so results do not depend on the thread count.
template <class T>
void roi_align_backward(const T* gy, const T* rois, T* gx, int64_t N, int64_t C, int64_t H, int64_t W, int64_t K,
                        int64_t PH, int64_t PW, double scale_, int64_t sampling_ratio, bool aligned) {
    const T scale = static_cast<T>(scale_);
    if (H <= 0 || W <= 0) return;  // empty grad_x: nothing to scatter into
    fv::parallel_for(0, C, 1, [&](int64_t cb, int64_t ce) {
        std::vector<Sample<T>> smp;
        std::vector<uint8_t> valid;
        for (int64_t k = 0; k < K; ++k) {
            const RoiGeom<T> g = roi_geom<T>(rois + 5 * k, scale, PH, PW, sampling_ratio, aligned);
            if (g.batch < 0 || g.batch >= N) continue;
            roi_samples<T>(g, H, W, PH, PW, smp, valid);
            const int64_t per_bin = static_cast<int64_t>(g.grid_h) * g.grid_w;
            const T count = static_cast<T>(per_bin);
            for (int64_t c = cb; c < ce; ++c) {
                T* gxc = gx + (g.batch * C + c) * H * W;
                const T* gyc = gy + (k * C + c) * PH * PW;
                int64_t i = 0;
                for (int64_t b = 0; b < PH * PW; ++b) {
                    const T gb = gyc[b];
                    for (int64_t j = 0; j < per_bin; ++j, ++i) {
                        if (!valid[i]) continue;
                        const Sample<T>& s = smp[i];
                        gxc[s.p1] += gb * s.w1 / count;
                        gxc[s.p2] += gb * s.w2 / count;
                        gxc[s.p3] += gb * s.w3 / count;
                        gxc[s.p4] += gb * s.w4 / count;
                    }
                }
            }
        }
    });
}

// ------------------------------------------------------------------ RoIPool
template <class T>
void roi_pool_forward(const T* x, const T* rois, T* y, int64_t* argmax, int64_t N, int64_t C, int64_t H, int64_t W,
                      int64_t K, int64_t PH, int64_t PW, double scale_) {
    const T scale = static_cast<T>(scale_);
    fv::parallel_for(0, K, 1, [&](int64_t kb, int64_t ke) {
        for (int64_t k = kb; k < ke; ++k) {
            const T* r = rois + 5 * k;
            const int64_t batch = static_cast<int64_t>(r[0]);
            const int64_t sw = static_cast<int64_t>(std::round(r[1] * scale));
            const int64_t sh = static_cast<int64_t>(std::round(r[2] * scale));
            const int64_t ew = static_cast<int64_t>(std::round(r[3] * scale));
            const int64_t eh = static_cast<int64_t>(std::round(r[4] * scale));
            const int64_t rw = std::max<int64_t>(ew - sw + 1, 1), rh = std::max<int64_t>(eh - sh + 1, 1);
            const T bh = static_cast<T>(rh) / static_cast<T>(PH), bw = static_cast<T>(rw) / static_cast<T>(PW);
            for (int64_t ph = 0; ph < PH; ++ph) {
                int64_t hs = static_cast<int64_t>(std::floor(static_cast<T>(ph) * bh));
                int64_t he = static_cast<int64_t>(std::ceil(static_cast<T>(ph + 1) * bh));
                hs = std::min(std::max(hs + sh, int64_t(0)), H);
                he = std::min(std::max(he + sh, int64_t(0)), H);
                for (int64_t pw = 0; pw < PW; ++pw) {
                    int64_t ws = static_cast<int64_t>(std::floor(static_cast<T>(pw) * bw));
                    int64_t we = static_cast<int64_t>(std::ceil(static_cast<T>(pw + 1) * bw));
                    ws = std::min(std::max(ws + sw, int64_t(0)), W);
                    we = std::min(std::max(we + sw, int64_t(0)), W);
                    const bool empty = he <= hs || we <= ws || batch < 0 || batch >= N;
                    for (int64_t c = 0; c < C; ++c) {
                        T best = empty ? static_cast<T>(0) : std::numeric_limits<T>::lowest();
                        int64_t bi = -1;
                        if (!empty) {
                            const T* xc = x + (batch * C + c) * H * W;
                            for (int64_t h = hs; h < he; ++h)
                                for (int64_t w = ws; w < we; ++w) {
                                    const int64_t idx = h * W + w;
                                    if (xc[idx] > best) {
                                        best = xc[idx];
                                        bi = idx;
                                    }
                                }
                        }
                        const int64_t o = ((k * C + c) * PH + ph) * PW + pw;
                        y[o] = best;
                        argmax[o] = bi;
                    }
                }
            }
        }
    });
}

template <class T>
void roi_pool_backward(const T* gy, const int64_t* argmax, const T* rois, T* gx, int64_t N, int64_t C, int64_t H,
                       int64_t W, int64_t K, int64_t PH, int64_t PW) {
    fv::parallel_for(0, C, 1, [&](int64_t cb, int64_t ce) {
        for (int64_t k = 0; k < K; ++k) {
            const int64_t batch = static_cast<int64_t>(rois[5 * k]);
            if (batch < 0 || batch >= N) continue;
            for (int64_t c = cb; c < ce; ++c) {
                T* gxc = gx + (batch * C + c) * H * W;
                const int64_t o = (k * C + c) * PH * PW;
                for (int64_t b = 0; b < PH * PW; ++b) {
                    const int64_t a = argmax[o + b];
                    if (a >= 0 && a < H * W) gxc[a] += gy[o + b];  // argmax comes from the caller: bounds-check it
                }
            }
        }
    });
}

#define FV_DET_INSTANTIATE(T)                                                                                    \
    template int64_t nms<T>(const T*, const T*, int64_t, double, int64_t*);                                     \
    template void roi_align_forward<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t,     \
                                       int64_t, int64_t, double, int64_t, bool);                                 \
    template void roi_align_backward<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t,    \
                                        int64_t, int64_t, double, int64_t, bool);                                \
    template void roi_pool_forward<T>(const T*, const T*, T*, int64_t*, int64_t, int64_t, int64_t, int64_t,     \
                                      int64_t, int64_t, int64_t, double);                                        \
    template void roi_pool_backward<T>(const T*, const int64_t*, const T*, T*, int64_t, int64_t, int64_t,       \
                                       int64_t, int64_t, int64_t, int64_t);
FV_DET_INSTANTIATE(float)
FV_DET_INSTANTIATE(double)
#undef FV_DET_INSTANTIATE

}  // namespace det
}  // namespace fv
