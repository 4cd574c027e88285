// flowvision.backend._C_cuda: softmax, layer/group/batch norm, pools, conv2d, upsample.
#include "cuda/bind_util.h"

namespace fvcuda_bind {

namespace {

DeviceArray softmax_forward(const DeviceArray& x, int64_t outer, int64_t d, int64_t inner, bool log) {
    need_float(x, "softmax");
    need(outer * d * inner == x.numel(), "softmax: (outer, d, inner) does not match the tensor size");
    DeviceArray y = empty(x.shape, x.dtype);
    GilRelease g;
    fvcuda::softmax_fwd(x.dtype, x.data(), y.data(), outer, d, inner, log, stream());
    return y;
}

DeviceArray softmax_backward(const DeviceArray& grad, const DeviceArray& y, int64_t outer, int64_t d, int64_t inner,
                             bool log) {
    need_same(grad, y, "softmax_backward");
    need(outer * d * inner == y.numel() && grad.numel() == y.numel(), "softmax_backward: size mismatch");
    DeviceArray dx = empty(y.shape, y.dtype);
    GilRelease g;
    fvcuda::softmax_bwd(y.dtype, grad.data(), y.data(), dx.data(), outer, d, inner, log, stream());
    return dx;
}

py::tuple layer_norm_forward(const DeviceArray& x, int64_t cols, const std::optional<DeviceArray>& w,
                             const std::optional<DeviceArray>& b, float eps) {
    need_float(x, "layer_norm");
    need(cols > 0 && x.numel() % cols == 0, "layer_norm: normalized size does not divide the input");
    int64_t rows = x.numel() / cols;
    const float *wp = fptr(w, cols, "layer_norm weight"), *bp = fptr(b, cols, "layer_norm bias");
    DeviceArray y = empty(x.shape, x.dtype), mean = empty({rows}, DType::F32), rstd = empty({rows}, DType::F32);
    {
        GilRelease g;
        fvcuda::layer_norm_fwd(x.dtype, x.data(), wp, bp, y.data(), (float*)mean.data(), (float*)rstd.data(), rows, cols,
                               eps, stream());
    }
    return py::make_tuple(y, mean, rstd);
}

py::tuple layer_norm_backward(const DeviceArray& grad, const DeviceArray& x, const std::optional<DeviceArray>& w,
                              const DeviceArray& mean, const DeviceArray& rstd, int64_t cols, bool need_dx,
                              bool need_dw, bool need_db) {
    need_same(grad, x, "layer_norm_backward");
    int64_t rows = x.numel() / cols;
    const float* wp = fptr(w, cols, "layer_norm weight");
    std::optional<DeviceArray> dx, dw, db;
    if (need_dx) dx = empty(x.shape, x.dtype);
    if (need_dw) dw = empty({cols}, DType::F32);
    if (need_db) db = empty({cols}, DType::F32);
    {
        GilRelease g;
        fvcuda::layer_norm_bwd(x.dtype, grad.data(), x.data(), wp, (const float*)mean.data(), (const float*)rstd.data(),
                               dx ? dx->data() : nullptr, dw ? (float*)dw->data() : nullptr,
                               db ? (float*)db->data() : nullptr, rows, cols, stream());
    }
    auto opt = [](const std::optional<DeviceArray>& a) { return a ? py::cast(*a) : py::none(); };
    return py::make_tuple(opt(dx), opt(dw), opt(db));
}

py::tuple group_norm_forward(const DeviceArray& x, int64_t groups, const std::optional<DeviceArray>& w,
                             const std::optional<DeviceArray>& b, float eps) {
    need_float(x, "group_norm");
    need(x.shape.size() >= 2, "group_norm: expected at least 2 dims (N, C, ...)");
    int64_t n = x.shape[0], c = x.shape[1], hw = c && n ? x.numel() / (n * c) : 0;
    need(groups > 0 && c % groups == 0, "group_norm: num_channels must be divisible by num_groups");
    const float *wp = fptr(w, c, "group_norm weight"), *bp = fptr(b, c, "group_norm bias");
    DeviceArray y = empty(x.shape, x.dtype), mean = empty({n * groups}, DType::F32),
                rstd = empty({n * groups}, DType::F32);
    {
        GilRelease g;
        fvcuda::group_norm_fwd(x.dtype, x.data(), wp, bp, y.data(), (float*)mean.data(), (float*)rstd.data(), n, c, hw,
                               groups, eps, stream());
    }
    return py::make_tuple(y, mean, rstd);
}

py::tuple group_norm_backward(const DeviceArray& grad, const DeviceArray& x, const std::optional<DeviceArray>& w,
                              const DeviceArray& mean, const DeviceArray& rstd, int64_t groups, bool need_dx,
                              bool need_dw, bool need_db) {
    need_same(grad, x, "group_norm_backward");
    int64_t n = x.shape[0], c = x.shape[1], hw = c && n ? x.numel() / (n * c) : 0;
    const float* wp = fptr(w, c, "group_norm weight");
    std::optional<DeviceArray> dx, dw, db;
    if (need_dx) dx = empty(x.shape, x.dtype);
    if (need_dw) dw = empty({c}, DType::F32);
    if (need_db) db = empty({c}, DType::F32);
    {
        GilRelease g;
        fvcuda::group_norm_bwd(x.dtype, grad.data(), x.data(), wp, (const float*)mean.data(), (const float*)rstd.data(),
                               dx ? dx->data() : nullptr, dw ? (float*)dw->data() : nullptr,
                               db ? (float*)db->data() : nullptr, n, c, hw, groups, stream());
    }
    auto opt = [](const std::optional<DeviceArray>& a) { return a ? py::cast(*a) : py::none(); };
    return py::make_tuple(opt(dx), opt(dw), opt(db));
}

void nchw(const DeviceArray& x, int64_t& n, int64_t& c, int64_t& hw, const char* op) {
    need(x.shape.size() >= 2, std::string(op) + ": expected (N, C, ...) input");
    n = x.shape[0];
    c = x.shape[1];
    hw = 1;
    for (size_t d = 2; d < x.shape.size(); ++d) hw *= x.shape[d];
}

// Training: returns (y, mean, invstd, unbiased var); eval (mean/var given): (y, mean, invstd, None).
py::tuple batch_norm_forward(const DeviceArray& x, const std::optional<DeviceArray>& running_mean,
                             const std::optional<DeviceArray>& running_var, const std::optional<DeviceArray>& w,
                             const std::optional<DeviceArray>& b, bool training, float eps) {
    need_float(x, "batch_norm");
    int64_t n, c, hw;
    nchw(x, n, c, hw, "batch_norm");
    const float *wp = fptr(w, c, "batch_norm weight"), *bp = fptr(b, c, "batch_norm bias");
    DeviceArray y = empty(x.shape, x.dtype), mean = empty({c}, DType::F32), invstd = empty({c}, DType::F32);
    std::optional<DeviceArray> var;
    if (training) {
        var = empty({c}, DType::F32);
        GilRelease g;
        fvcuda::batch_norm_stats(x.dtype, x.data(), (float*)mean.data(), (float*)invstd.data(), (float*)var->data(), n,
                                 c, hw, eps, stream());
    } else {
        need(running_mean && running_var, "batch_norm: running_mean and running_var are required in eval mode");
        const float* rm = fptr(running_mean, c, "running_mean");
        fptr(running_var, c, "running_var");
        GilRelease g;
        fvcuda::copy_d2d(mean.data(), rm, sizeof(float) * c, stream());
        fvcuda::unary(fvcuda::U_RSQRT, DType::F32, running_var->data(), invstd.data(), c, eps, 0.f, stream());
    }
    {
        GilRelease g;
        fvcuda::batch_norm_apply(x.dtype, x.data(), (const float*)mean.data(), (const float*)invstd.data(), wp, bp,
                                 y.data(), n, c, hw, stream());
    }
    return py::make_tuple(y, mean, invstd, var ? py::cast(*var) : py::none());
}

// Returns (dx, dweight, dbias) (fp32 parameter gradients).
py::tuple batch_norm_backward(const DeviceArray& grad, const DeviceArray& x, const DeviceArray& mean,
                              const DeviceArray& invstd, const std::optional<DeviceArray>& w, bool training) {
    need_same(grad, x, "batch_norm_backward");
    int64_t n, c, hw;
    nchw(x, n, c, hw, "batch_norm_backward");
    const float* wp = fptr(w, c, "batch_norm weight");
    DeviceArray dx = empty(x.shape, x.dtype), sum_dy = empty({c}, DType::F32), sum_dy_xmu = empty({c}, DType::F32);
    DeviceArray dw = empty({c}, DType::F32);
    {
        GilRelease g;
        fvcuda::batch_norm_bwd_reduce(x.dtype, grad.data(), x.data(), (const float*)mean.data(), (float*)sum_dy.data(),
                                      (float*)sum_dy_xmu.data(), n, c, hw, stream());
        fvcuda::batch_norm_bwd_apply(x.dtype, grad.data(), x.data(), (const float*)mean.data(),
                                     (const float*)invstd.data(), wp, (const float*)sum_dy.data(),
                                     (const float*)sum_dy_xmu.data(), dx.data(), n, c, hw, training, stream());
        // dweight = sum(g * (x - mean)) * invstd
        fvcuda::Broadcast bc{};
        fvcuda::binary(fvcuda::B_MUL, DType::F32, DType::F32, sum_dy_xmu.data(), invstd.data(), dw.data(), bc, c, 1.0,
                       0.0, false, stream());
    }
    return py::make_tuple(dx, dw, sum_dy);
}

fvcuda::Pool2d pool_geom(const DeviceArray& x, int64_t oh, int64_t ow, std::vector<int> k, std::vector<int> s,
                         std::vector<int> p, std::vector<int> d, const char* op) {
    need(x.shape.size() == 4 || x.shape.size() == 3, std::string(op) + ": expected a 3-d or 4-d input");
    need(k.size() == 2 && s.size() == 2 && p.size() == 2 && d.size() == 2, std::string(op) + ": expected pairs");
    size_t nd = x.shape.size();
    int64_t h = x.shape[nd - 2], w = x.shape[nd - 1];
    fvcuda::Pool2d g{x.numel() / std::max<int64_t>(h * w, 1), h, w, oh, ow, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1]};
    if (h * w == 0) g.planes = 0;
    return g;
}

Shape pooled_shape(const DeviceArray& x, int64_t oh, int64_t ow) {
    Shape out = x.shape;
    out[out.size() - 2] = oh;
    out[out.size() - 1] = ow;
    return out;
}

py::tuple max_pool2d_forward(const DeviceArray& x, int64_t oh, int64_t ow, std::vector<int> k, std::vector<int> s,
                             std::vector<int> p, std::vector<int> d, bool indices) {
    need_float(x, "max_pool2d");
    fvcuda::Pool2d g = pool_geom(x, oh, ow, k, s, p, d, "max_pool2d");
    DeviceArray y = empty(pooled_shape(x, oh, ow), x.dtype);
    std::optional<DeviceArray> idx;
    if (indices) idx = empty(y.shape, DType::I64);
    {
        GilRelease gr;
        fvcuda::max_pool2d_fwd(x.dtype, x.data(), y.data(), idx ? (int64_t*)idx->data() : nullptr, g, stream());
    }
    return py::make_tuple(y, idx ? py::cast(*idx) : py::none());
}

DeviceArray max_pool2d_backward(const DeviceArray& grad, const DeviceArray& idx, const Shape& in_shape) {
    need_f32(grad, "max_pool2d_backward");
    need(idx.numel() == grad.numel(), "max_pool2d_backward: indices do not match the gradient");
    int64_t h = in_shape[in_shape.size() - 2], w = in_shape[in_shape.size() - 1];
    int64_t oh = grad.shape[grad.shape.size() - 2], ow = grad.shape[grad.shape.size() - 1];
    DeviceArray dx = empty(in_shape, DType::F32);
    int64_t planes = h * w ? dx.numel() / (h * w) : 0;
    GilRelease gr;
    fvcuda::max_pool2d_bwd((const float*)grad.data(), (const int64_t*)idx.data(), (float*)dx.data(), planes, h * w,
                           oh * ow, stream());
    return dx;
}

DeviceArray avg_pool2d_forward(const DeviceArray& x, int64_t oh, int64_t ow, std::vector<int> k, std::vector<int> s,
                               std::vector<int> p, bool cip, int divisor) {
    need_float(x, "avg_pool2d");
    fvcuda::Pool2d g = pool_geom(x, oh, ow, k, s, p, {1, 1}, "avg_pool2d");
    DeviceArray y = empty(pooled_shape(x, oh, ow), x.dtype);
    GilRelease gr;
    fvcuda::avg_pool2d_fwd(x.dtype, x.data(), y.data(), g, cip, divisor, stream());
    return y;
}

DeviceArray avg_pool2d_backward(const DeviceArray& grad, const Shape& in_shape, std::vector<int> k, std::vector<int> s,
                                std::vector<int> p, bool cip, int divisor) {
    need_f32(grad, "avg_pool2d_backward");
    DeviceArray dx = empty(in_shape, DType::F32);
    fvcuda::Pool2d g = pool_geom(dx, grad.shape[grad.shape.size() - 2], grad.shape.back(), k, s, p, {1, 1},
                                 "avg_pool2d_backward");
    GilRelease gr;
    fvcuda::avg_pool2d_bwd((const float*)grad.data(), (float*)dx.data(), g, cip, divisor, stream());
    return dx;
}

DeviceArray adaptive_avg_pool2d_forward(const DeviceArray& x, int64_t oh, int64_t ow) {
    need_float(x, "adaptive_avg_pool2d");
    need(x.shape.size() >= 2, "adaptive_avg_pool2d: expected (..., H, W)");
    int64_t h = x.shape[x.shape.size() - 2], w = x.shape.back(), planes = h * w ? x.numel() / (h * w) : 0;
    DeviceArray y = empty(pooled_shape(x, oh, ow), x.dtype);
    GilRelease gr;
    fvcuda::adaptive_avg_pool2d_fwd(x.dtype, x.data(), y.data(), planes, h, w, oh, ow, stream());
    return y;
}

DeviceArray adaptive_avg_pool2d_backward(const DeviceArray& grad, const Shape& in_shape) {
    need_f32(grad, "adaptive_avg_pool2d_backward");
    int64_t h = in_shape[in_shape.size() - 2], w = in_shape.back();
    int64_t oh = grad.shape[grad.shape.size() - 2], ow = grad.shape.back();
    DeviceArray dx = empty(in_shape, DType::F32);
    int64_t planes = h * w ? dx.numel() / (h * w) : 0;
    GilRelease gr;
    fvcuda::adaptive_avg_pool2d_bwd((const float*)grad.data(), (float*)dx.data(), planes, h, w, oh, ow, stream());
    return dx;
}

py::tuple adaptive_max_pool2d_forward(const DeviceArray& x, int64_t oh, int64_t ow) {
    need_float(x, "adaptive_max_pool2d");
    need(x.shape.size() >= 2, "adaptive_max_pool2d: expected (..., H, W)");
    int64_t h = x.shape[x.shape.size() - 2], w = x.shape.back(), planes = h * w ? x.numel() / (h * w) : 0;
    need(h > 0 && w > 0, "adaptive_max_pool2d: empty input plane");
    DeviceArray y = empty(pooled_shape(x, oh, ow), x.dtype), idx = empty(pooled_shape(x, oh, ow), DType::I64);
    {
        GilRelease gr;
        fvcuda::adaptive_max_pool2d_fwd(x.dtype, x.data(), y.data(), (int64_t*)idx.data(), planes, h, w, oh, ow,
                                        stream());
    }
    return py::make_tuple(y, idx);
}

fvcuda::Conv2d conv_geom(const Shape& x, const Shape& w, std::vector<int> s, std::vector<int> p, std::vector<int> d,
                         int groups) {
    need(x.size() == 4 && w.size() == 4, "conv2d: expected 4-d input and weight");
    need(s.size() == 2 && p.size() == 2 && d.size() == 2, "conv2d: stride/padding/dilation must be pairs");
    need(groups > 0 && x[1] % groups == 0 && w[0] % groups == 0, "conv2d: channels must be divisible by groups");
    need(w[1] * groups == x[1], "conv2d: weight of shape " + shape_str(w) + " expects " + std::to_string(w[1] * groups) +
                                    " input channels, got " + std::to_string(x[1]));
    fvcuda::Conv2d cv{};
    cv.n = x[0]; cv.c = x[1]; cv.h = x[2]; cv.w = x[3]; cv.k = w[0];
    cv.r = (int)w[2]; cv.s = (int)w[3];
    cv.sh = s[0]; cv.sw = s[1]; cv.ph = p[0]; cv.pw = p[1]; cv.dh = d[0]; cv.dw = d[1]; cv.groups = groups;
    cv.p = (cv.h + 2 * cv.ph - (int64_t)cv.dh * (cv.r - 1) - 1) / cv.sh + 1;
    cv.q = (cv.w + 2 * cv.pw - (int64_t)cv.dw * (cv.s - 1) - 1) / cv.sw + 1;
    need(cv.p > 0 && cv.q > 0, "conv2d: input " + shape_str(x) + " is smaller than the (dilated) kernel");
    return cv;
}

DeviceArray conv2d_forward(const DeviceArray& x, const DeviceArray& w, const std::optional<DeviceArray>& bias,
                           std::vector<int> s, std::vector<int> p, std::vector<int> d, int groups, bool tf32) {
    need_float(x, "conv2d");
    need_same(x, w, "conv2d");
    fvcuda::Conv2d cv = conv_geom(x.shape, w.shape, s, p, d, groups);
    if (bias) {
        need_same(x, *bias, "conv2d bias");
        need(bias->numel() == cv.k, "conv2d: bias has the wrong size");
    }
    DeviceArray y = empty({cv.n, cv.k, cv.p, cv.q}, x.dtype);
    GilRelease gr;
    fvcuda::conv2d_fwd(x.dtype, x.data(), w.data(), bias ? bias->data() : nullptr, y.data(), cv, tf32, stream());
    return y;
}

DeviceArray conv2d_backward_data(const DeviceArray& grad, const DeviceArray& w, const Shape& in_shape,
                                 std::vector<int> s, std::vector<int> p, std::vector<int> d, int groups, bool tf32) {
    need_f32(grad, "conv2d_backward_data");
    need_f32(w, "conv2d_backward_data weight");
    fvcuda::Conv2d cv = conv_geom(in_shape, w.shape, s, p, d, groups);
    need(grad.shape == Shape({cv.n, cv.k, cv.p, cv.q}), "conv2d_backward_data: gradient has the wrong shape");
    DeviceArray dx = empty(in_shape, DType::F32);
    GilRelease gr;
    fvcuda::conv2d_bwd_data((const float*)grad.data(), (const float*)w.data(), (float*)dx.data(), cv, tf32, stream());
    return dx;
}

DeviceArray conv2d_backward_weight(const DeviceArray& grad, const DeviceArray& x, const Shape& w_shape,
                                   std::vector<int> s, std::vector<int> p, std::vector<int> d, int groups, bool tf32) {
    need_f32(grad, "conv2d_backward_weight");
    need_f32(x, "conv2d_backward_weight input");
    fvcuda::Conv2d cv = conv_geom(x.shape, w_shape, s, p, d, groups);
    need(grad.shape == Shape({cv.n, cv.k, cv.p, cv.q}), "conv2d_backward_weight: gradient has the wrong shape");
    DeviceArray dw = empty(w_shape, DType::F32);
    GilRelease gr;
    fvcuda::conv2d_bwd_weight((const float*)grad.data(), (const float*)x.data(), (float*)dw.data(), cv, tf32, stream());
    return dw;
}

DeviceArray upsample_forward(const DeviceArray& x, int64_t oh, int64_t ow, const std::string& mode, bool align_corners,
                             float scale_h, float scale_w) {
    need_float(x, "interpolate");
    need(x.shape.size() >= 3, "interpolate: expected (N, C, H, W)");
    int64_t h = x.shape[x.shape.size() - 2], w = x.shape.back(), planes = h * w ? x.numel() / (h * w) : 0;
    DeviceArray y = empty(pooled_shape(x, oh, ow), x.dtype);
    GilRelease gr;
    if (mode == "bilinear")
        fvcuda::upsample_bilinear_fwd(x.dtype, x.data(), y.data(), planes, h, w, oh, ow, align_corners, scale_h, scale_w,
                                      stream());
    else if (mode == "nearest" || mode == "nearest-exact")
        fvcuda::upsample_nearest_fwd(x.dtype, x.data(), y.data(), planes, h, w, oh, ow, scale_h, scale_w,
                                     mode == "nearest-exact", stream());
    else
        throw py::value_error("interpolate: mode " + mode + " is not implemented on CUDA");
    return y;
}

DeviceArray upsample_backward(const DeviceArray& grad, const Shape& in_shape, const std::string& mode,
                              bool align_corners, float scale_h, float scale_w) {
    need_f32(grad, "interpolate_backward");
    int64_t h = in_shape[in_shape.size() - 2], w = in_shape.back();
    int64_t oh = grad.shape[grad.shape.size() - 2], ow = grad.shape.back();
    DeviceArray dx = empty(in_shape, DType::F32);
    int64_t planes = h * w ? dx.numel() / (h * w) : 0;
    GilRelease gr;
    if (mode == "bilinear")
        fvcuda::upsample_bilinear_bwd((const float*)grad.data(), (float*)dx.data(), planes, h, w, oh, ow, align_corners,
                                      scale_h, scale_w, stream());
    else if (mode == "nearest" || mode == "nearest-exact")
        fvcuda::upsample_nearest_bwd((const float*)grad.data(), (float*)dx.data(), planes, h, w, oh, ow, scale_h, scale_w,
                                     mode == "nearest-exact", stream());
    else
        throw py::value_error("interpolate: mode " + mode + " is not implemented on CUDA");
    return dx;
}

}  // namespace

void bind_nn(py::module_& m) {
    m.def("softmax_forward", &softmax_forward);
    m.def("softmax_backward", &softmax_backward);
    m.def("layer_norm_forward", &layer_norm_forward);
    m.def("layer_norm_backward", &layer_norm_backward);
    m.def("group_norm_forward", &group_norm_forward);
    m.def("group_norm_backward", &group_norm_backward);
    m.def("batch_norm_forward", &batch_norm_forward);
    m.def("batch_norm_backward", &batch_norm_backward);
    m.def("max_pool2d_forward", &max_pool2d_forward);
    m.def("max_pool2d_backward", &max_pool2d_backward);
    m.def("avg_pool2d_forward", &avg_pool2d_forward);
    m.def("avg_pool2d_backward", &avg_pool2d_backward);
    m.def("adaptive_avg_pool2d_forward", &adaptive_avg_pool2d_forward);
    m.def("adaptive_avg_pool2d_backward", &adaptive_avg_pool2d_backward);
    m.def("adaptive_max_pool2d_forward", &adaptive_max_pool2d_forward);
    m.def("conv2d_forward", &conv2d_forward);
    m.def("conv2d_backward_data", &conv2d_backward_data);
    m.def("conv2d_backward_weight", &conv2d_backward_weight);
    m.def("upsample_forward", &upsample_forward);
    m.def("upsample_backward", &upsample_backward);

    // host-only helper, exposed so tests can check it without a GPU
    m.def("_conv_output_size", [](const Shape& x, const Shape& w, std::vector<int> s, std::vector<int> p,
                                  std::vector<int> d, int groups) {
        fvcuda::Conv2d cv = conv_geom(x, w, s, p, d, groups);
        return py::make_tuple(cv.p, cv.q);
    });
}

}  // namespace fvcuda_bind
