// Bindings of the detection kernels (cpu/detection.cpp): nms, roi_align_forward/backward,
// roi_pool_forward/backward. numpy in, numpy out, float32 or float64 (float64 when any float
// input is float64), shapes validated here, GIL released while the kernels run.
#include "core/bind_util.h"

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fv {
namespace det {
template <class T> int64_t nms(const T*, const T*, int64_t, double, int64_t*);
template <class T>
void roi_align_forward(const T*, const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, double,
                       int64_t, bool);
template <class T>
void roi_align_backward(const T*, const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, double,
                        int64_t, bool);
template <class T>
void roi_pool_forward(const T*, const T*, T*, int64_t*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                      double);
template <class T>
void roi_pool_backward(const T*, const int64_t*, const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t);
}  // namespace det
}  // namespace fv

namespace {

using I64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

void check_rois(const py::array& rois, const char* fn) {
    if (rois.ndim() != 2 || rois.shape(1) != 5)
        fail(std::string(fn) + ": 'rois' must have shape (K, 5) (batch_index, x1, y1, x2, y2), got " + shp(rois));
}

template <class T> void check_batch(const Arr<T>& rois, int64_t N, const char* fn) {
    const T* r = rois.data();
    for (py::ssize_t k = 0; k < rois.shape(0); ++k) {
        const double b = static_cast<double>(r[5 * k]);
        if (!(b >= 0 && static_cast<int64_t>(b) < N)) {
            std::ostringstream os;
            os << fn << ": roi " << k << " has batch index " << b << " but the input has batch size " << N;
            fail(os.str());
        }
    }
}

void check_out_size(int64_t ph, int64_t pw, const char* fn) {
    if (ph < 1 || pw < 1)
        fail(std::string(fn) + ": output_size must be positive, got (" + std::to_string(ph) + ", " +
             std::to_string(pw) + ")");
}

// The checked arrays and sizes of one RoI op: `data` is the input (forward) or grad_y (backward), the feature
// map is (N, C, H, W) and there are K rois.
template <class T>
struct RoiArgs {
    Arr<T> data, rois;
    int64_t N, C, H, W, K;
};

// Forward: a 4-D input, rois whose batch indices lie in it, a positive output size.
template <class T>
RoiArgs<T> roi_forward_args(const char* fn, py::handle x_, py::handle r_, int64_t ph, int64_t pw) {
    auto x = as<T>(x_, fn, "input");
    auto r = as<T>(r_, fn, "rois");
    if (x.ndim() != 4) fail(std::string(fn) + ": input must be 4-D (N, C, H, W), got " + shp(x));
    check_rois(r, fn);
    check_out_size(ph, pw, fn);
    RoiArgs<T> a{x, r, x.shape(0), x.shape(1), x.shape(2), x.shape(3), r.shape(0)};
    check_batch<T>(r, a.N, fn);
    return a;
}

// Backward: grad_y and rois, the input's shape given as `ishape` (the caller checks grad_y's shape and then the
// rois' batch indices).
template <class T>
RoiArgs<T> roi_backward_args(const char* fn, py::handle g_, py::handle r_, const std::vector<int64_t>& ishape) {
    auto g = as<T>(g_, fn, "grad_y");
    auto r = as<T>(r_, fn, "rois");
    check_rois(r, fn);
    if (ishape.size() != 4) fail(std::string(fn) + ": input_shape must have 4 elements");
    return RoiArgs<T>{g, r, ishape[0], ishape[1], ishape[2], ishape[3], r.shape(0)};
}

template <class T> py::object nms_impl(py::handle b_, py::handle s_, double thr) {
    auto b = as<T>(b_, "nms", "boxes");
    auto s = as<T>(s_, "nms", "scores");
    if (b.ndim() != 2 || b.shape(1) != 4) fail("nms: boxes should have shape (N, 4), got " + shp(b));
    if (s.ndim() != 1) fail("nms: scores should be 1-D, got " + shp(s));
    if (s.shape(0) != b.shape(0))
        fail("nms: boxes and scores should have the same number of elements, got " + shp(b) + " and " + shp(s));
    const int64_t n = b.shape(0);
    std::vector<int64_t> keep(n);
    int64_t m;
    {
        py::gil_scoped_release rel;
        m = fv::det::nms<T>(b.data(), s.data(), n, thr, keep.data());
    }
    I64 out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(m)});
    std::copy(keep.begin(), keep.begin() + m, out.mutable_data());
    return std::move(out);
}

template <class T>
py::object roi_align_fwd_impl(py::handle x_, py::handle r_, double scale, int64_t ph, int64_t pw, int64_t sr,
                              bool aligned) {
    auto a = roi_forward_args<T>("roi_align_forward", x_, r_, ph, pw);
    Arr<T> y(std::vector<py::ssize_t>{a.K, a.C, ph, pw});
    {
        py::gil_scoped_release rel;
        fv::det::roi_align_forward<T>(a.data.data(), a.rois.data(), y.mutable_data(), a.N, a.C, a.H, a.W, a.K, ph, pw,
                                      scale, sr, aligned);
    }
    return std::move(y);
}

template <class T>
py::object roi_align_bwd_impl(py::handle g_, py::handle r_, std::vector<int64_t> ishape, double scale, int64_t sr,
                              bool aligned) {
    const char* fn = "roi_align_backward";
    auto a = roi_backward_args<T>(fn, g_, r_, ishape);
    const auto &g = a.data, &r = a.rois;
    const int64_t N = a.N, C = a.C, H = a.H, W = a.W, K = a.K;
    if (g.ndim() != 4 || g.shape(0) != K || g.shape(1) != C)
        fail(std::string(fn) + ": grad_y has shape " + shp(g) + ", expected (K=" + std::to_string(K) +
             ", C=" + std::to_string(C) + ", PH, PW)");
    check_batch<T>(r, N, fn);
    const int64_t ph = g.shape(2), pw = g.shape(3);
    Arr<T> gx(std::vector<py::ssize_t>{N, C, H, W});
    {
        py::gil_scoped_release rel;
        std::fill(gx.mutable_data(), gx.mutable_data() + N * C * H * W, static_cast<T>(0));
        fv::det::roi_align_backward<T>(g.data(), r.data(), gx.mutable_data(), N, C, H, W, K, ph, pw, scale, sr,
                                       aligned);
    }
    return std::move(gx);
}

template <class T>
py::object roi_pool_fwd_impl(py::handle x_, py::handle r_, double scale, int64_t ph, int64_t pw) {
    auto a = roi_forward_args<T>("roi_pool_forward", x_, r_, ph, pw);
    Arr<T> y(std::vector<py::ssize_t>{a.K, a.C, ph, pw});
    I64 am(std::vector<py::ssize_t>{a.K, a.C, ph, pw});
    {
        py::gil_scoped_release rel;
        fv::det::roi_pool_forward<T>(a.data.data(), a.rois.data(), y.mutable_data(), am.mutable_data(), a.N, a.C, a.H,
                                     a.W, a.K, ph, pw, scale);
    }
    return py::make_tuple(y, am);
}

template <class T>
py::object roi_pool_bwd_impl(py::handle g_, py::handle am_, py::handle r_, std::vector<int64_t> ishape) {
    const char* fn = "roi_pool_backward";
    auto a = roi_backward_args<T>(fn, g_, r_, ishape);
    const auto &g = a.data, &r = a.rois;
    const int64_t N = a.N, C = a.C, H = a.H, W = a.W, K = a.K;
    auto am = I64::ensure(am_);
    if (!am) {
        PyErr_Clear();
        fail("roi_pool_backward: 'argmax' is not convertible to int64");
    }
    if (g.ndim() != 4 || g.shape(0) != K || g.shape(1) != C || am.ndim() != 4 || am.shape(0) != K ||
        am.shape(1) != C || am.shape(2) != g.shape(2) || am.shape(3) != g.shape(3))
        fail(std::string(fn) + ": grad_y " + shp(g) + " and argmax " + shp(am) + " do not match K=" +
             std::to_string(K) + ", C=" + std::to_string(C));
    check_batch<T>(r, N, fn);
    Arr<T> gx(std::vector<py::ssize_t>{N, C, H, W});
    {
        py::gil_scoped_release rel;
        std::fill(gx.mutable_data(), gx.mutable_data() + N * C * H * W, static_cast<T>(0));
        fv::det::roi_pool_backward<T>(g.data(), am.data(), r.data(), gx.mutable_data(), N, C, H, W, K, g.shape(2),
                                      g.shape(3));
    }
    return std::move(gx);
}

}  // namespace

void bind_detection(py::module_& m) {
    using hnd = py::handle;
    using v64 = std::vector<int64_t>;
    m.def("nms", [](hnd b, hnd s, double thr) {
        return (is_f64(b) || is_f64(s)) ? nms_impl<double>(b, s, thr) : nms_impl<float>(b, s, thr);
    }, py::arg("boxes"), py::arg("scores"), py::arg("iou_threshold"));
    m.def("roi_align_forward", [](hnd x, hnd r, double scale, int64_t ph, int64_t pw, int64_t sr, bool aligned) {
        return (is_f64(x) || is_f64(r)) ? roi_align_fwd_impl<double>(x, r, scale, ph, pw, sr, aligned)
                                        : roi_align_fwd_impl<float>(x, r, scale, ph, pw, sr, aligned);
    }, py::arg("input"), py::arg("rois"), py::arg("spatial_scale"), py::arg("pooled_height"), py::arg("pooled_width"),
          py::arg("sampling_ratio"), py::arg("aligned"));
    m.def("roi_align_backward", [](hnd g, hnd r, v64 ishape, double scale, int64_t sr, bool aligned) {
        return (is_f64(g) || is_f64(r)) ? roi_align_bwd_impl<double>(g, r, ishape, scale, sr, aligned)
                                        : roi_align_bwd_impl<float>(g, r, ishape, scale, sr, aligned);
    }, py::arg("grad_y"), py::arg("rois"), py::arg("input_shape"), py::arg("spatial_scale"), py::arg("sampling_ratio"),
          py::arg("aligned"));
    m.def("roi_pool_forward", [](hnd x, hnd r, double scale, int64_t ph, int64_t pw) {
        return (is_f64(x) || is_f64(r)) ? roi_pool_fwd_impl<double>(x, r, scale, ph, pw)
                                        : roi_pool_fwd_impl<float>(x, r, scale, ph, pw);
    }, py::arg("input"), py::arg("rois"), py::arg("spatial_scale"), py::arg("pooled_height"), py::arg("pooled_width"));
    m.def("roi_pool_backward", [](hnd g, hnd am, hnd r, v64 ishape) {
        return (is_f64(g) || is_f64(r)) ? roi_pool_bwd_impl<double>(g, am, r, ishape)
                                        : roi_pool_bwd_impl<float>(g, am, r, ishape);
    }, py::arg("grad_y"), py::arg("argmax"), py::arg("rois"), py::arg("input_shape"));
}
