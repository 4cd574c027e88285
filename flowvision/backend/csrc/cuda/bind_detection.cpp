// flowvision.backend._C_cuda: roi_align and nms.
#include "cuda/bind_util.h"

namespace fvcuda_bind {

namespace {

fvcuda::RoiAlign roi_geom(const Shape& x, const DeviceArray& rois, int64_t ph, int64_t pw, float scale, int sampling,
                          bool aligned) {
    need(x.size() == 4, "roi_align: expected a 4-d input");
    need(rois.shape.size() == 2 && rois.shape[1] == 5, "roi_align: rois must be (K, 5) [batch, x1, y1, x2, y2]");
    return fvcuda::RoiAlign{x[0], x[1], x[2], x[3], rois.shape[0], ph, pw, scale, sampling, aligned};
}

DeviceArray roi_align_forward(const DeviceArray& x, const DeviceArray& rois, int64_t ph, int64_t pw, float scale,
                              int sampling, bool aligned) {
    need_float(x, "roi_align");
    need_same(x, rois, "roi_align");
    fvcuda::RoiAlign p = roi_geom(x.shape, rois, ph, pw, scale, sampling, aligned);
    DeviceArray y = empty({p.rois, p.c, ph, pw}, x.dtype);
    GilRelease gr;
    fvcuda::roi_align_fwd(x.dtype, x.data(), rois.data(), y.data(), p, stream());
    return y;
}

DeviceArray roi_align_backward(const DeviceArray& grad, const DeviceArray& rois, const Shape& in_shape, float scale,
                               int sampling, bool aligned) {
    need_f32(grad, "roi_align_backward");
    need_f32(rois, "roi_align_backward rois");
    fvcuda::RoiAlign p = roi_geom(in_shape, rois, grad.shape[2], grad.shape[3], scale, sampling, aligned);
    DeviceArray dx = empty(in_shape, DType::F32);
    GilRelease gr;
    fvcuda::roi_align_bwd((const float*)grad.data(), (const float*)rois.data(), (float*)dx.data(), p, stream());
    return dx;
}

// Greedy NMS: the pairwise IoU bitmask is computed on the device; the sort and the O(n * n/64)
// sweep over the mask run in C++ on the host (torchvision's CUDA nms does the same sweep).
DeviceArray nms(const DeviceArray& boxes, const DeviceArray& scores, float iou_threshold) {
    need(boxes.shape.size() == 2 && boxes.shape[1] == 4, "nms: boxes must be (N, 4)");
    need(scores.shape.size() == 1 && scores.shape[0] == boxes.shape[0], "nms: scores must be (N,)");
    need_f32(boxes, "nms boxes");
    need_f32(scores, "nms scores");
    int64_t n = boxes.shape[0];
    if (n == 0) return empty({0}, DType::I64);
    py::array host_scores = to_host(scores);
    const float* sp = static_cast<const float*>(host_scores.data());
    std::vector<int64_t> order(n);
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [sp](int64_t a, int64_t b) { return sp[a] > sp[b]; });
    DeviceArray order_dev = from_host(py::array_t<int64_t>(n, order.data()), "int64");
    DeviceArray sorted = index_select(boxes, 0, order_dev);
    int64_t words = (n + 63) / 64;
    DeviceArray mask = empty({n * words}, DType::I64);
    std::vector<uint64_t> host_mask(n * words);
    {
        GilRelease gr;
        fvcuda::nms_mask((const float*)sorted.data(), n, iou_threshold, (uint64_t*)mask.data(), stream());
        fvcuda::copy_d2h(host_mask.data(), mask.data(), sizeof(uint64_t) * n * words, stream());
    }
    std::vector<uint64_t> removed(words, 0);
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < n; ++i) {
        if (removed[i / 64] >> (i % 64) & 1ULL) continue;
        keep.push_back(order[i]);
        const uint64_t* row = host_mask.data() + i * words;
        for (int64_t j = i / 64; j < words; ++j) removed[j] |= row[j];
    }
    return from_host(py::array_t<int64_t>((py::ssize_t)keep.size(), keep.data()), "int64");
}

}  // namespace

void bind_detection(py::module_& m) {
    m.def("roi_align_forward", &roi_align_forward);
    m.def("roi_align_backward", &roi_align_backward);
    m.def("nms", &nms);
}

}  // namespace fvcuda_bind
