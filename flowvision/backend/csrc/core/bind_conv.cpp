// Bindings of the convolution kernels: NCHW (cpu/conv.cpp: im2col + GEMM, and its backward) and the NHWC
// inference kernels (cpu/conv_nhwc.cpp: weights packed once, fused epilogues; layout transposes; the SE gate).
#include "core/bind_util.h"
#include "core/threadpool.h"
using fv::ConvParams;

namespace {

// ---------------------------------------------------------------- conv
ConvParams conv_params(const char* fn, const std::vector<int64_t>& xs, const std::vector<int64_t>& ws,
                       const std::vector<int64_t>& stride_, const std::vector<int64_t>& pad_,
                       const std::vector<int64_t>& dil_, int64_t groups) {
    auto st = pair(stride_, fn, "stride"), pd = pair(pad_, fn, "padding"), dl = pair(dil_, fn, "dilation");
    if (xs.size() != 4) fail(std::string(fn) + ": input must be 4-D (N, C, H, W), got shape " + vstr(xs));
    if (ws.size() != 4) fail(std::string(fn) + ": weight must be 4-D (O, C/groups, kh, kw), got shape " + vstr(ws));
    if (groups < 1) fail(std::string(fn) + ": groups must be >= 1, got " + std::to_string(groups));
    if (st[0] < 1 || st[1] < 1 || dl[0] < 1 || dl[1] < 1 || pd[0] < 0 || pd[1] < 0)
        fail(std::string(fn) + ": invalid stride " + vstr(st) + ", padding " + vstr(pd) + " or dilation " + vstr(dl));
    ConvParams p;
    p.N = xs[0]; p.C = xs[1]; p.H = xs[2]; p.W = xs[3];
    p.O = ws[0]; p.kh = ws[2]; p.kw = ws[3];
    p.sh = st[0]; p.sw = st[1]; p.ph = pd[0]; p.pw = pd[1]; p.dh = dl[0]; p.dw = dl[1];
    p.groups = groups;
    if (p.C % groups != 0 || p.O % groups != 0 || ws[1] * groups != p.C || p.kh < 1 || p.kw < 1) {
        std::ostringstream os;
        os << fn << ": input " << vstr(xs) << " and weight " << vstr(ws) << " are incompatible with groups=" << groups
           << " (need weight (O, C/groups, kh, kw) with O divisible by groups)";
        fail(os.str());
    }
    const int64_t eh = p.H + 2 * p.ph - p.dh * (p.kh - 1) - 1, ew = p.W + 2 * p.pw - p.dw * (p.kw - 1) - 1;
    if (eh < 0 || ew < 0) {
        std::ostringstream os;
        os << fn << ": kernel " << vstr({p.kh, p.kw}) << " with dilation " << vstr(dl) << " does not fit input "
           << vstr(xs) << " padded by " << vstr(pd);
        fail(os.str());
    }
    p.OH = eh / p.sh + 1;
    p.OW = ew / p.sw + 1;
    return p;
}

template <class T>
py::object conv2d_forward_impl(py::handle x_, py::handle w_, py::object bias_, std::vector<int64_t> stride,
                               std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups) {
    const char* fn = "conv2d_forward";
    auto x = as<T>(x_, fn, "x");
    auto w = as<T>(w_, fn, "weight");
    ConvParams p = conv_params(fn, shape_vec(x), shape_vec(w), stride, padding, dilation, groups);
    Arr<T> bk;
    const T* bias = opt_ptr<T>(bias_, bk, fn, "bias", p.O);
    auto y = empty<T>({p.N, p.O, p.OH, p.OW});
    {
        py::gil_scoped_release rel;
        ks<T>().conv2d_forward(x.data(), w.data(), bias, y.mutable_data(), p);
    }
    return std::move(y);
}

void check_grad_out(const char* fn, const py::array& gy, const ConvParams& p) {
    std::vector<int64_t> want{p.N, p.O, p.OH, p.OW};
    if (shape_vec(gy) != want)
        fail(std::string(fn) + ": grad_y has shape " + shp(gy) + " but the convolution output shape is " + vstr(want));
}

template <class T>
py::object conv2d_backward_input_impl(py::handle gy_, py::handle w_, std::vector<int64_t> input_shape,
                                      std::vector<int64_t> stride, std::vector<int64_t> padding,
                                      std::vector<int64_t> dilation, int64_t groups) {
    const char* fn = "conv2d_backward_input";
    auto gy = as<T>(gy_, fn, "grad_y");
    auto w = as<T>(w_, fn, "weight");
    ConvParams p = conv_params(fn, input_shape, shape_vec(w), stride, padding, dilation, groups);
    check_grad_out(fn, gy, p);
    auto gx = empty<T>({p.N, p.C, p.H, p.W});
    {
        py::gil_scoped_release rel;
        ks<T>().conv2d_backward_input(gy.data(), w.data(), gx.mutable_data(), p);
    }
    return std::move(gx);
}

template <class T>
py::object conv2d_backward_weight_impl(py::handle gy_, py::handle x_, std::vector<int64_t> weight_shape,
                                       std::vector<int64_t> stride, std::vector<int64_t> padding,
                                       std::vector<int64_t> dilation, int64_t groups) {
    const char* fn = "conv2d_backward_weight";
    auto gy = as<T>(gy_, fn, "grad_y");
    auto x = as<T>(x_, fn, "x");
    ConvParams p = conv_params(fn, shape_vec(x), weight_shape, stride, padding, dilation, groups);
    check_grad_out(fn, gy, p);
    auto gw = empty<T>(weight_shape);
    {
        py::gil_scoped_release rel;
        ks<T>().conv2d_backward_weight(gy.data(), x.data(), gw.mutable_data(), p);
    }
    return std::move(gw);
}

ConvParams unfold_params(const char* fn, int64_t N, int64_t C, int64_t H, int64_t W, std::vector<int64_t> kernel,
                         std::vector<int64_t> dilation, std::vector<int64_t> padding, std::vector<int64_t> stride) {
    auto k = pair(kernel, fn, "kernel_size");
    return conv_params(fn, {N, C, H, W}, {1, C, k[0], k[1]}, stride, padding, dilation, 1);
}

template <class T>
py::object im2col_impl(py::handle x_, std::vector<int64_t> kernel, std::vector<int64_t> dilation,
                       std::vector<int64_t> padding, std::vector<int64_t> stride) {
    const char* fn = "im2col";
    auto x = as<T>(x_, fn, "x");
    need_ndim(x, 4, fn, "x");
    ConvParams p = unfold_params(fn, x.shape(0), x.shape(1), x.shape(2), x.shape(3), kernel, dilation, padding, stride);
    auto cols = empty<T>({p.N, p.C * p.kh * p.kw, p.OH * p.OW});
    {
        py::gil_scoped_release rel;
        ks<T>().im2col(x.data(), cols.mutable_data(), p);
    }
    return std::move(cols);
}

template <class T>
py::object col2im_impl(py::handle c_, std::vector<int64_t> out_hw, std::vector<int64_t> kernel,
                       std::vector<int64_t> dilation, std::vector<int64_t> padding, std::vector<int64_t> stride) {
    const char* fn = "col2im";
    auto cols = as<T>(c_, fn, "cols");
    need_ndim(cols, 3, fn, "cols");
    auto k = pair(kernel, fn, "kernel_size");
    auto o = pair(out_hw, fn, "output_size");
    if (k[0] < 1 || k[1] < 1)  // checked before the modulo below (kernel_size 0 would divide by zero)
        fail(std::string(fn) + ": kernel_size must be positive, got " + vstr(k));
    if (cols.shape(1) % (k[0] * k[1]) != 0)
        fail(std::string(fn) + ": cols shape " + shp(cols) + " dim 1 is not divisible by kernel size " + vstr(k));
    const int64_t C = cols.shape(1) / (k[0] * k[1]);
    ConvParams p = unfold_params(fn, cols.shape(0), C, o[0], o[1], kernel, dilation, padding, stride);
    if (cols.shape(2) != p.OH * p.OW)
        fail(std::string(fn) + ": cols shape " + shp(cols) + " has " + std::to_string(cols.shape(2)) +
             " blocks but output_size " + vstr(o) + " gives " + std::to_string(p.OH * p.OW));
    auto x = empty<T>({p.N, C, o[0], o[1]});
    {
        py::gil_scoped_release rel;
        ks<T>().col2im(cols.data(), x.mutable_data(), p);
    }
    return std::move(x);
}

// Convolution weights packed once for the ISA in use (pack_conv), applied to NHWC activations by conv2d_nhwc;
// NHWC pooling. Used by the eager inference fast path and the captured inference path.
PackedConv pack_conv_impl(py::handle w_, int64_t groups, bool winograd) {
    const char* fn = "pack_conv";
    need_f32(fn, "w", w_);
    auto w = as<float>(w_, fn, "w");
    need_ndim(w, 4, fn, "w");
    if (groups < 1) fail(std::string(fn) + ": groups must be >= 1, got " + std::to_string(groups));
    PackedConv pk;
    pk.O = w.shape(0);
    pk.C = w.shape(1) * groups;
    pk.KH = w.shape(2);
    pk.KW = w.shape(3);
    pk.groups = groups;
    pk.isa = &table();
    if (pk.O < 1 || w.shape(1) < 1 || pk.KH < 1 || pk.KW < 1 || pk.O % groups != 0)
        fail(std::string(fn) + ": weight " + shp(w) + " must be (O, C/groups, KH, KW) with positive sizes and O "
             "divisible by groups=" + std::to_string(groups));
    fv::ConvNhwcParams p{};
    p.O = pk.O; p.C = pk.C; p.KH = pk.KH; p.KW = pk.KW; p.groups = groups;
    const auto& nk = table().nhwc;
    const bool one = pk.KH == 1 && pk.KW == 1 && groups == 1;
    auto out = empty<float>({one ? int64_t(1) : nk.conv_packed_size(p) + 16});
    Arr<float> g;
    if (one) g = empty<float>({ks<float>().packed_b_size(pk.C, pk.O) + 16});
    {
        py::gil_scoped_release rel;
        if (!one) nk.conv_pack(w.data(), packed_ptr(out.mutable_data()), p);
        // the (O, C) weight is op(B) transposed for C(pixels, O) = X(pixels, C) @ W^T
        if (one) ks<float>().pack_b(w.data(), true, pk.C, pk.O, packed_ptr(g.mutable_data()));
    }
    pk.data = std::move(out);
    if (one) pk.gemm = std::move(g);
    pk.has_gemm = one;
    if (winograd) {
        if (pk.KH != 3 || pk.KW != 3 || groups != 1)
            fail(std::string(fn) + ": winograd=True needs an ungrouped 3x3 weight, got " + shp(w) + " with groups=" +
                 std::to_string(groups));
        auto u = empty<float>({36 * pk.C * pk.O + 16});
        bool packed;
        {
            py::gil_scoped_release rel;
            packed = table().nhwc.winograd_pack(w.data(), packed_ptr(u.mutable_data()), pk.C, pk.O);
        }
        if (!packed)
            fail(std::string(fn) + ": winograd=True needs channel counts that are whole vectors of the ISA in use, "
                 "got C=" + std::to_string(pk.C) + ", O=" + std::to_string(pk.O));
        pk.winograd = std::move(u);
        pk.has_winograd = true;
    }
    return pk;
}

bool overlaps(const py::array& a, const py::array& b) {
    const char* a0 = static_cast<const char*>(a.data());
    const char* b0 = static_cast<const char*>(b.data());
    return a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

py::object conv2d_nhwc_impl(py::handle x_, const PackedConv& pk, py::object bias_, std::vector<int64_t> stride_,
                            std::vector<int64_t> pad_, std::vector<int64_t> dil_, const std::string& ep,
                            py::object res_, double lo, double hi, py::object out_, bool nchw_out = false) {
    const char* fn = nchw_out ? "conv2d_nhwc_to_nchw" : "conv2d_nhwc";
    if (pk.isa != &table())
        fail(std::string(fn) + ": the weight was packed for ISA '" + pk.isa->isa + "' but '" + table().isa +
             "' is in use; pack it again");
    need_f32(fn, "x", x_);
    auto x = as<float>(x_, fn, "x");
    fv::ConvNhwcParams p = conv_nhwc_params(fn, pk, shape_vec(x), stride_, pad_, dil_);
    const int act = epilogue_code(ep, fn);
    p.out_nchw = nchw_out ? 1 : 0;
    const std::vector<int64_t> oshape = nchw_out ? std::vector<int64_t>{p.N, p.O, p.OH, p.OW}
                                                 : std::vector<int64_t>{p.N, p.OH, p.OW, p.O};
    Arr<float> bk, rk;
    const float* bias = opt_ptr<float>(bias_, bk, fn, "bias", p.O);
    py::array y;
    if (out_.is_none()) {
        y = empty<float>(oshape);
    } else {
        need_f32(fn, "out", out_);
        y = py::reinterpret_borrow<py::array>(out_);
        if (shape_vec(y) != oshape || !(y.flags() & py::array::c_style) || !y.writeable())
            fail(std::string(fn) + ": out must be a writeable C-contiguous float32 array of shape " + vstr(oshape) +
                 ", got " + shp(y));
        if (overlaps(y, x)) fail(std::string(fn) + ": out must not overlap x");
    }
    const float* res = nullptr;
    if (!res_.is_none()) {
        rk = as<float>(res_, fn, "residual");
        if (shape_vec(rk) != oshape)
            fail(std::string(fn) + ": residual must have the output's shape " + vstr(oshape) + ", got " + shp(rk));
        res = rk.data();
    }
    float* yp = static_cast<float*>(y.mutable_data());
    const bool gemm = pk.has_gemm;
    // a strided or padded 1x1 gathers its input pixels (zeros where the pixel is padding) into a compact
    // (N, OH, OW, C) copy first; an NCHW output is computed NHWC and transposed
    Arr<float> xg, yt;
    if (conv_nhwc_gathers(pk, p)) xg = empty<float>({p.N, p.OH, p.OW, p.C});
    if (gemm && nchw_out) yt = empty<float>({p.N, p.OH, p.OW, p.O});
    if (gemm && res && overlaps(rk, y)) {  // the GEMM writes partial sums into y before reading the residual
        py::object copy = rk.attr("copy")();
        rk = as<float>(copy, fn, "residual");
        res = rk.data();
    }
    {
        py::gil_scoped_release rel;
        conv_nhwc_compute(pk, p, x.data(), bias, res, yp, act, float(lo), float(hi),
                          conv_nhwc_gathers(pk, p) ? xg.mutable_data() : nullptr,
                          gemm && nchw_out ? yt.mutable_data() : nullptr);
    }
    return std::move(y);
}
py::object layout_impl(py::handle x_, bool to_nhwc) {
    const char* fn = to_nhwc ? "nchw_to_nhwc" : "nhwc_to_nchw";
    need_f32(fn, "x", x_);
    auto x = as<float>(x_, fn, "x");
    need_ndim(x, 4, fn, "x");
    const int64_t N = x.shape(0);
    // NCHW -> NHWC: per image (C, H*W) -> (H*W, C); NHWC -> NCHW: (H*W, C) -> (C, H*W)
    const int64_t rows = to_nhwc ? x.shape(1) : x.shape(1) * x.shape(2);
    const int64_t cols = to_nhwc ? x.shape(2) * x.shape(3) : x.shape(3);
    auto y = to_nhwc ? empty<float>({N, x.shape(2), x.shape(3), x.shape(1)})
                     : empty<float>({N, x.shape(3), x.shape(1), x.shape(2)});
    {
        py::gil_scoped_release rel;
        table().nhwc.transpose(x.data(), y.mutable_data(), N, rows, cols);
    }
    return std::move(y);
}
// Squeeze-excitation gate over NHWC x: y = x * act(gate) per (image, channel); act computed once per gate value
// by the pointwise kernel (so equal to _C.pointwise(gate, kind) then a broadcast multiply, bit for bit).
py::object channel_gate_nhwc_impl(py::handle x_, py::handle gate_, const std::string& kind, py::object out_) {
    const char* fn = "channel_gate_nhwc";
    auto x = nhwc_input(fn, x_);
    const int64_t N = x.shape(0), P = x.shape(1) * x.shape(2), C = x.shape(3);
    need_f32(fn, "gate", gate_);
    auto g = as<float>(gate_, fn, "gate");
    if (g.ndim() < 1 || g.shape(0) != N || g.size() != N * C)
        fail(std::string(fn) + ": gate must hold one value per (image, channel) of x " + shp(x) +
             ", e.g. (N, C) or (N, 1, 1, C), got " + shp(g));
    const int act = channel_gate_act(fn, kind);
    py::array y;
    if (out_.is_none()) {
        y = empty<float>({x.shape(0), x.shape(1), x.shape(2), C});
    } else {
        need_f32(fn, "out", out_);
        y = py::reinterpret_borrow<py::array>(out_);
        if (shape_vec(y) != shape_vec(x) || !(y.flags() & py::array::c_style) || !y.writeable())
            fail(std::string(fn) + ": out must be a writeable C-contiguous float32 array of x's shape " + shp(x) +
                 ", got " + shp(y));
        // in place (out is x) is fine: each element is read right before it is written
        if (y.data() != x.data() && overlaps(y, x)) fail(std::string(fn) + ": out must be x itself or not overlap it");
    }
    Arr<float> ga;
    if (act >= 0) ga = empty<float>({N * C});
    {
        py::gil_scoped_release rel;
        channel_gate_compute(x.data(), g.data(), static_cast<float*>(y.mutable_data()),
                             act >= 0 ? ga.mutable_data() : nullptr, N, P, C, act);
    }
    return std::move(y);
}

}  // namespace

// Shared with the plan executor (core/executor*.cpp) (declared in core/bind_util.h): the checks and the compute of conv2d_nhwc.
fv::ConvNhwcParams conv_nhwc_params(const char* fn, const PackedConv& pk, const std::vector<int64_t>& xshape,
                                    const std::vector<int64_t>& stride_, const std::vector<int64_t>& pad_,
                                    const std::vector<int64_t>& dil_) {
    if (pk.isa != &table())
        fail(std::string(fn) + ": the weight was packed for ISA '" + pk.isa->isa + "' but '" + table().isa +
             "' is in use; pack it again");
    if (xshape.size() != 4 || xshape[3] != pk.C) {
        std::ostringstream os;
        os << fn << ": x must be (N, H, W, C) with C=" << pk.C << " (the packed weight's input channels), got "
           << vstr(xshape);
        fail(os.str());
    }
    auto st = pair(stride_, fn, "stride"), pd = pair(pad_, fn, "padding"), dl = pair(dil_, fn, "dilation");
    if (st[0] < 1 || st[1] < 1 || dl[0] < 1 || dl[1] < 1 || pd[0] < 0 || pd[1] < 0)
        fail(std::string(fn) + ": invalid stride " + vstr(st) + ", padding " + vstr(pd) + " or dilation " + vstr(dl));
    fv::ConvNhwcParams p{};
    p.N = xshape[0]; p.H = xshape[1]; p.W = xshape[2]; p.C = pk.C;
    p.O = pk.O; p.KH = pk.KH; p.KW = pk.KW; p.groups = pk.groups;
    p.sh = st[0]; p.sw = st[1]; p.ph = pd[0]; p.pw = pd[1]; p.dh = dl[0]; p.dw = dl[1];
    const int64_t eh = p.H + 2 * p.ph - p.dh * (p.KH - 1) - 1, ew = p.W + 2 * p.pw - p.dw * (p.KW - 1) - 1;
    if (eh < 0 || ew < 0) {
        std::ostringstream os;
        os << fn << ": kernel " << vstr({p.KH, p.KW}) << " with dilation " << vstr(dl) << " does not fit input "
           << vstr(xshape) << " padded by " << vstr(pd);
        fail(os.str());
    }
    p.OH = eh / p.sh + 1;
    p.OW = ew / p.sw + 1;
    return p;
}

bool conv_nhwc_gathers(const PackedConv& pk, const fv::ConvNhwcParams& p) {
    return pk.has_gemm && (p.sh != 1 || p.sw != 1 || p.ph != 0 || p.pw != 0);
}

void conv_nhwc_compute(const PackedConv& pk, const fv::ConvNhwcParams& p, const float* x, const float* bias,
                       const float* res, float* yp, int act, float lo, float hi, float* gathered, float* nhwc_tmp) {
    if (pk.has_gemm) {
        const float* xa = x;
        if (conv_nhwc_gathers(pk, p)) {
            float* g = gathered;
            // threaded over output rows, like the GEMM that follows (otherwise the one serial part of the op)
            const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(1, p.OW * p.C));
            fv::parallel_for(0, p.N * p.OH, grain, [&](int64_t r0, int64_t r1) {
                for (int64_t r = r0; r < r1; ++r) {
                    const int64_t n = r / p.OH, oh = r % p.OH, ih = oh * p.sh - p.ph;
                    for (int64_t ow = 0; ow < p.OW; ++ow) {
                        const int64_t iw = ow * p.sw - p.pw;
                        float* d = g + (r * p.OW + ow) * p.C;
                        if (ih >= 0 && ih < p.H && iw >= 0 && iw < p.W)
                            std::memcpy(d, x + ((n * p.H + ih) * p.W + iw) * p.C, sizeof(float) * p.C);
                        else
                            std::memset(d, 0, sizeof(float) * p.C);
                    }
                }
            });
            xa = gathered;
        }
        const float* bp = packed_ptr(static_cast<float*>(const_cast<void*>(pk.gemm.data())));
        float* yg = p.out_nchw ? nhwc_tmp : yp;
        ks<float>().gemm_packed(xa, p.N * p.OH * p.OW, p.C, p.O, bp, yg, bias, res, act, lo, hi);
        if (p.out_nchw) table().nhwc.transpose(yg, yp, p.N, p.OH * p.OW, p.O);
    } else if (pk.has_winograd && table().nhwc.winograd_suits(p)) {
        const float* u = packed_ptr(static_cast<float*>(const_cast<void*>(pk.winograd.data())));
        table().nhwc.conv_winograd(x, u, bias, res, yp, p, act, lo, hi);
    } else {
        const float* wp = packed_ptr(static_cast<float*>(const_cast<void*>(pk.data.data())));
        table().nhwc.conv_forward(x, wp, bias, res, yp, p, act, lo, hi);
    }
}

// shared with the plan executor (core/executor*.cpp) (the plan's channel_gate step)
int channel_gate_act(const char* fn, const std::string& kind) {
    if (kind == "sigmoid") return fv::kPwSigmoid;
    if (kind == "hardsigmoid") return fv::kPwHardsigmoid;
    if (kind != "none") fail(std::string(fn) + ": unknown kind '" + kind + "' (sigmoid, hardsigmoid, none)");
    return -1;
}

void channel_gate_compute(const float* x, const float* gate, float* y, float* act_tmp, int64_t N, int64_t P,
                          int64_t C, int act) {
    if (act >= 0) {
        ks<float>().pointwise(act, gate, act_tmp, N * C, 0.0f, 0.0f);
        gate = act_tmp;
    }
    table().nhwc.channel_scale(x, gate, y, N, P, C);
}
void bind_conv(py::module_& m) {
    using v64 = std::vector<int64_t>;
    using obj = py::object;
    using hnd = py::handle;
    m.def("conv2d_forward", [](hnd x, hnd w, obj bias, v64 s, v64 p, v64 d, int64_t g) {
        return FV_DISPATCH(conv2d_forward_impl, is_f64(x) || is_f64(w), x, w, bias, s, p, d, g);
    }, py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"), py::arg("dilation"),
          py::arg("groups") = 1);
    m.def("conv2d_backward_input", [](hnd gy, hnd w, v64 ishape, v64 s, v64 p, v64 d, int64_t g) {
        return FV_DISPATCH(conv2d_backward_input_impl, is_f64(gy) || is_f64(w), gy, w, ishape, s, p, d, g);
    }, py::arg("grad_y"), py::arg("weight"), py::arg("input_shape"), py::arg("stride"), py::arg("padding"),
          py::arg("dilation"), py::arg("groups") = 1);
    m.def("conv2d_backward_weight", [](hnd gy, hnd x, v64 wshape, v64 s, v64 p, v64 d, int64_t g) {
        return FV_DISPATCH(conv2d_backward_weight_impl, is_f64(gy) || is_f64(x), gy, x, wshape, s, p, d, g);
    }, py::arg("grad_y"), py::arg("x"), py::arg("weight_shape"), py::arg("stride"), py::arg("padding"),
          py::arg("dilation"), py::arg("groups") = 1);
    m.def("im2col", [](hnd x, v64 k, v64 d, v64 p, v64 s) { return FV_DISPATCH(im2col_impl, is_f64(x), x, k, d, p, s); },
          py::arg("x"), py::arg("kernel_size"), py::arg("dilation"), py::arg("padding"), py::arg("stride"));
    m.def("col2im", [](hnd c, v64 o, v64 k, v64 d, v64 p, v64 s) {
        return FV_DISPATCH(col2im_impl, is_f64(c), c, o, k, d, p, s);
    }, py::arg("cols"), py::arg("output_size"), py::arg("kernel_size"), py::arg("dilation"), py::arg("padding"),
          py::arg("stride"));

    // NHWC inference kernels (float32): packed direct convolution and pooling
    py::class_<PackedConv>(m, "PackedConv", "A conv weight packed once for the ISA in use (from pack_conv)")
        .def_readonly("O", &PackedConv::O)
        .def_readonly("C", &PackedConv::C)
        .def_readonly("KH", &PackedConv::KH)
        .def_readonly("KW", &PackedConv::KW)
        .def_readonly("groups", &PackedConv::groups)
        .def_readonly("winograd", &PackedConv::has_winograd)
        .def_property_readonly("isa", [](const PackedConv& p) { return std::string(p.isa->isa); })
        .def_property_readonly("nbytes", [](const PackedConv& p) {
            return p.data.nbytes() + (p.has_gemm ? p.gemm.nbytes() : 0) + (p.has_winograd ? p.winograd.nbytes() : 0);
        })
        .def("__repr__", [](const PackedConv& p) {
            return "PackedConv(O=" + std::to_string(p.O) + ", C=" + std::to_string(p.C) + ", KH=" +
                   std::to_string(p.KH) + ", KW=" + std::to_string(p.KW) + ", groups=" + std::to_string(p.groups) +
                   ", isa=" + p.isa->isa + ")";
        });
    m.def("pack_conv", &pack_conv_impl, py::arg("w"), py::arg("groups") = 1, py::arg("winograd") = false,
          "Pack a float32 conv weight (O, C/groups, KH, KW) once for conv2d_nhwc (output-channel-blocked panels); "
          "winograd=True also keeps its Winograd F(4x4, 3x3) transform, which conv2d_nhwc runs where "
          "winograd_plan_suits");
    m.def("winograd_plan_suits", [](v64 xshape, v64 wshape, v64 s, v64 p, v64 d, int64_t groups) {
        // xshape (N, C, H, W): the conv's input in a captured plan
        if (xshape.size() != 4 || wshape.size() != 4) fail("winograd_plan_suits: 4-d shapes expected");
        fv::ConvNhwcParams q{};
        q.N = xshape[0]; q.C = xshape[1]; q.H = xshape[2]; q.W = xshape[3];
        q.O = wshape[0]; q.KH = wshape[2]; q.KW = wshape[3]; q.groups = groups;
        auto st = pair(s, "winograd_plan_suits", "stride"), pd = pair(p, "winograd_plan_suits", "padding"),
             dl = pair(d, "winograd_plan_suits", "dilation");
        q.sh = st[0]; q.sw = st[1]; q.ph = pd[0]; q.pw = pd[1]; q.dh = dl[0]; q.dw = dl[1];
        if (q.sh < 1 || q.sw < 1 || q.dh < 1 || q.dw < 1) return false;
        const int64_t eh = q.H + 2 * q.ph - q.dh * (q.KH - 1) - 1, ew = q.W + 2 * q.pw - q.dw * (q.KW - 1) - 1;
        if (eh < 0 || ew < 0) return false;
        q.OH = eh / q.sh + 1;
        q.OW = ew / q.sw + 1;
        return table().nhwc.winograd_suits(q);
    }, py::arg("x_shape"), py::arg("w_shape"), py::arg("stride"), py::arg("padding"), py::arg("dilation"),
          py::arg("groups") = 1);
    m.def("conv2d_nhwc_to_nchw", [](hnd x, const PackedConv& pk, obj bias, v64 s, v64 p, v64 d, const std::string& ep,
                                     double lo, double hi) {
        return conv2d_nhwc_impl(x, pk, bias, s, p, d, ep, py::none(), lo, hi, py::none(), true);
    }, py::arg("x"), py::arg("packed"), py::arg("bias") = py::none(), py::arg("stride") = v64{1, 1},
       py::arg("padding") = v64{0, 0}, py::arg("dilation") = v64{1, 1}, py::arg("epilogue") = "none",
       py::arg("lo") = 0.0, py::arg("hi") = 0.0,
       "conv2d_nhwc with the output written as (N, O, OH, OW) (the eager NCHW path: the general kernel stores its "
       "tiles transposed, saving a layout pass); no residual");
    m.def("conv2d_nhwc", [](hnd x, const PackedConv& pk, obj bias, v64 s, v64 p, v64 d, const std::string& ep,
                            obj res, double lo, double hi, obj out) {
        return conv2d_nhwc_impl(x, pk, bias, s, p, d, ep, res, lo, hi, out);
    }, py::arg("x"), py::arg("packed"), py::arg("bias") = py::none(),
          py::arg("stride") = v64{1, 1}, py::arg("padding") = v64{0, 0}, py::arg("dilation") = v64{1, 1},
          py::arg("epilogue") = "none", py::arg("residual") = py::none(), py::arg("lo") = 0.0, py::arg("hi") = 0.0,
          py::arg("out") = py::none(),
          "y (N, OH, OW, O) = epilogue(conv(x (N, H, W, C) float32, packed) + bias + residual); the residual is "
          "added before the activation; epilogue: none, relu, relu6, gelu, gelu_tanh, silu, hardswish, clamp (to "
          "[lo, hi]), leaky_relu (slope lo); out: a preallocated C-contiguous float32 output to write into (returned)");
    m.def("nchw_to_nhwc", [](hnd x) { return layout_impl(x, true); }, py::arg("x"),
          "float32 (N, C, H, W) -> C-contiguous (N, H, W, C) copy (threaded, cache-blocked)");
    m.def("nhwc_to_nchw", [](hnd x) { return layout_impl(x, false); }, py::arg("x"),
          "float32 (N, H, W, C) -> C-contiguous (N, C, H, W) copy (threaded, cache-blocked)");
    m.def("channel_gate_nhwc", &channel_gate_nhwc_impl, py::arg("x"), py::arg("gate"), py::arg("kind") = "sigmoid",
          py::arg("out") = py::none(),
          "y (N, H, W, C) = x * act(gate) for NHWC float32 x and a gate of one value per (image, channel) "
          "((N, C) or (N, 1, 1, C)); kind: sigmoid, hardsigmoid or none (gate used as is); out: a preallocated "
          "output, may be x itself (in place)");
}
