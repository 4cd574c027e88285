// Bindings of the 8-bit image kernels (cpu/resample_u8.cpp, cpu/color_u8.cpp, cpu/affine_u8.cpp). The resampling
// weights are derived here, at the baseline ISA and without FMA contraction (CMakeLists.txt), in the same
// double-precision steps as Pillow's precompute_coeffs and normalize_coeffs_8bpc: one rounding differing from
// Pillow's would change output bytes.
#include "core/bind_util.h"

#include <cmath>
#include <cstring>

namespace {

using v64 = std::vector<int64_t>;

double box_filter(double x) { return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0; }
double bilinear_filter(double x) {
    if (x < 0.0) x = -x;
    return x < 1.0 ? 1.0 - x : 0.0;
}
double hamming_filter(double x) {
    if (x < 0.0) x = -x;
    if (x == 0.0) return 1.0;
    if (x >= 1.0) return 0.0;
    x = x * M_PI;
    return sin(x) / x * (0.54f + 0.46f * cos(x));  // float constants, as Pillow writes them
}
double bicubic_filter(double x) {
    constexpr double a = -0.5;
    if (x < 0.0) x = -x;
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}
double sinc_filter(double x) {
    if (x == 0.0) return 1.0;
    x = x * M_PI;
    return sin(x) / x;
}
double lanczos_filter(double x) {
    return (-3.0 <= x && x < 3.0) ? sinc_filter(x) * sinc_filter(x / 3) : 0.0;
}

struct Filter {
    const char* name;
    double (*fn)(double);
    double support;
};
const Filter kFilters[] = {{"box", box_filter, 0.5},         {"bilinear", bilinear_filter, 1.0},
                           {"hamming", hamming_filter, 1.0}, {"bicubic", bicubic_filter, 2.0},
                           {"lanczos", lanczos_filter, 3.0}};

// One axis's bounds (first input, count) and 22-bit integer weights for resizing in_size -> out_size.
struct Axis {
    std::vector<int32_t> bounds, coeffs;
    int64_t ksize = 0;
};

Axis pillow_axis(int64_t in_size, int64_t out_size, const Filter& f) {
    // the whole axis as Pillow's box (in0, in1) in float
    const float in0 = 0.0f, in1 = float(in_size);
    const double scale = double(in1 - in0) / double(out_size);
    const double filterscale = scale < 1.0 ? 1.0 : scale;
    const double support = f.support * filterscale;
    Axis ax;
    ax.ksize = int64_t(std::ceil(support)) * 2 + 1;
    ax.bounds.resize(size_t(2 * out_size));
    ax.coeffs.assign(size_t(out_size * ax.ksize), 0);
    std::vector<double> k(size_t(ax.ksize));
    const double inv_filterscale = 1.0 / filterscale;
    for (int64_t xx = 0; xx < out_size; ++xx) {
        const double center = in0 + (double(xx) + 0.5) * scale;
        int xmin = int(center - support + 0.5);
        if (xmin < 0) xmin = 0;
        int xmax = int(center + support + 0.5);
        if (xmax > in_size) xmax = int(in_size);
        xmax -= xmin;
        double ww = 0.0;
        for (int x = 0; x < xmax; ++x) {
            const double w = f.fn((double(x + xmin) - center + 0.5) * inv_filterscale);
            k[size_t(x)] = w;
            ww += w;
        }
        if (ww != 0.0)
            for (int x = 0; x < xmax; ++x) k[size_t(x)] /= ww;
        int32_t* kk = ax.coeffs.data() + xx * ax.ksize;
        for (int x = 0; x < xmax; ++x) {
            const double v = k[size_t(x)] * double(1 << 22);
            kk[x] = k[size_t(x)] < 0 ? int32_t(-0.5 + v) : int32_t(0.5 + v);
        }
        ax.bounds[size_t(2 * xx)] = xmin;
        ax.bounds[size_t(2 * xx + 1)] = xmax;
    }
    return ax;
}

const Filter& find_filter(const char* fn, const std::string& filter) {
    for (const auto& cand : kFilters)
        if (filter == cand.name) return cand;
    fail(std::string(fn) + ": unknown filter '" + filter + "' (box, bilinear, hamming, bicubic, lanczos)");
}

// (OH, OW, C) (or (OH, OW) when `two_d`) resampled from H x W pixels of C bytes, rows src_rs bytes apart
py::object run_resample(const char* fn, const uint8_t* src, int64_t H, int64_t W, int64_t C, int64_t src_rs,
                        const v64& size, const std::string& filter, bool vertical_first, bool two_d) {
    auto o = pair(size, fn, "size");
    if (o[0] < 1 || o[1] < 1) fail(std::string(fn) + ": size must be positive, got " + vstr(o));
    const Filter& f = find_filter(fn, filter);
    fv::ResampleU8Params p;
    p.H = H; p.W = W; p.C = C;
    p.src_rs = src_rs;
    p.OH = o[0]; p.OW = o[1];
    p.need_h = p.OW != W;
    p.need_v = p.OH != H;
    p.vertical_first = vertical_first;
    Axis ah, av;
    if (p.need_h) ah = pillow_axis(W, p.OW, f);
    if (p.need_v) av = pillow_axis(H, p.OH, f);
    p.h = {ah.bounds.data(), ah.coeffs.data(), ah.ksize};
    p.v = {av.bounds.data(), av.coeffs.data(), av.ksize};
    std::vector<py::ssize_t> shape{p.OH, p.OW};
    if (!two_d) shape.push_back(C);
    py::array_t<uint8_t> y(shape);
    {
        py::gil_scoped_release rel;
        table().image.resample_u8(src, y.mutable_data(), p);
    }
    return std::move(y);
}

// x (H, W) or (H, W, C) itself when its pixels are contiguous (a crop view of an image is: rows may be any positive
// stride apart), else a contiguous copy
py::array with_contiguous_pixels(const py::array& x, int64_t C) {
    const int64_t W = x.shape(1);
    if ((x.ndim() == 2 || x.strides(2) == 1) && x.strides(1) == C && x.strides(0) >= W * C) return x;
    return py::module_::import("numpy").attr("ascontiguousarray")(x);
}

py::object resample_u8_array(py::handle x_, const v64& size, const std::string& filter, bool vertical_first) {
    const char* fn = "resample_u8";
    if (!py::isinstance<py::array>(x_)) fail(std::string(fn) + ": 'x' must be a numpy array");
    auto x = py::reinterpret_borrow<py::array>(x_);
    if (x.dtype().kind() != 'u' || x.dtype().itemsize() != 1)
        fail(std::string(fn) + ": 'x' must be uint8, got " + std::string(py::str(x.dtype())));
    if (x.ndim() != 2 && x.ndim() != 3)
        fail(std::string(fn) + ": 'x' must be (H, W) or (H, W, C), got shape " + shp(x));
    const int64_t H = x.shape(0), W = x.shape(1), C = x.ndim() == 3 ? x.shape(2) : 1;
    if (C < 1 || C > 4) fail(std::string(fn) + ": 'x' must have 1 to 4 channels, got shape " + shp(x));
    if (H < 1 || W < 1) fail(std::string(fn) + ": 'x' is empty, shape " + shp(x));
    py::array src = with_contiguous_pixels(x, C);
    return run_resample(fn, static_cast<const uint8_t*>(src.data()), H, W, C, src.strides(0), size, filter,
                        vertical_first, x.ndim() == 2);
}

// The Arrow C data interface's array (a fixed ABI, arrow.apache.org/docs/format/CDataInterface.html): Pillow
// exports an image's memory through it without a copy, where tobytes()/np.asarray copy it through an encoder.
struct ArrowArray {
    int64_t length, null_count, offset, n_buffers, n_children;
    const void** buffers;
    ArrowArray** children;
    ArrowArray* dictionary;
    void (*release)(ArrowArray*);
    void* private_data;
};

// The pixels of a PIL image exported through Arrow: one block of H * W pixels of pixel_bytes bytes, rows
// W * pixel_bytes apart (Pillow exports only single-block images). The capsule stays the caller's: its destructor
// releases the export.
const uint8_t* arrow_pixels(const char* fn, py::handle capsule, int64_t H, int64_t W, int64_t pixel_bytes) {
    if (!PyCapsule_CheckExact(capsule.ptr()) || !PyCapsule_IsValid(capsule.ptr(), "arrow_array"))
        fail(std::string(fn) + ": expected an 'arrow_array' capsule (PIL.Image.Image.__arrow_c_array__()[1])");
    auto* a = static_cast<ArrowArray*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_array"));
    if (!a || !a->release) fail(std::string(fn) + ": the Arrow array was already released");
    if (H < 1 || W < 1 || (pixel_bytes != 1 && pixel_bytes != 4))
        fail(std::string(fn) + ": an image of 1- or 4-byte pixels and positive size is required");
    // one band: the pixels are the array's data buffer; several bands: a fixed-size list of 4 bytes a pixel whose
    // child holds the bytes
    const ArrowArray* data = a;
    if (pixel_bytes == 4) {
        if (a->n_children != 1 || !a->children || !a->children[0]) fail(std::string(fn) + ": not a pixel-list array");
        data = a->children[0];
    }
    if (data->n_buffers != 2 || !data->buffers || !data->buffers[1] || data->offset != 0 ||
        data->length != H * W * pixel_bytes)
        fail(std::string(fn) + ": the Arrow array is not one block of " + std::to_string(H) + "x" + std::to_string(W) +
             " pixels of " + std::to_string(pixel_bytes) + " bytes");
    return static_cast<const uint8_t*>(data->buffers[1]);
}

py::object resample_u8_arrow(py::handle capsule, int64_t H, int64_t W, int64_t pixel_bytes, const v64& size,
                             const std::string& filter, bool vertical_first) {
    const char* fn = "resample_u8_arrow";
    const uint8_t* px = arrow_pixels(fn, capsule, H, W, pixel_bytes);
    return run_resample(fn, px, H, W, pixel_bytes, W * pixel_bytes, size, filter, vertical_first, pixel_bytes == 1);
}

// ops: a sequence of (name, factor), name one of brightness / contrast / saturation
std::vector<fv::ColorOpU8> color_ops(const char* fn, const std::vector<std::pair<std::string, double>>& ops) {
    std::vector<fv::ColorOpU8> out;
    for (const auto& [name, factor] : ops) {
        fv::ColorOpU8 op;
        if (name == "brightness") op.kind = fv::kBrightness;
        else if (name == "contrast") op.kind = fv::kContrast;
        else if (name == "saturation") op.kind = fv::kSaturation;
        else fail(std::string(fn) + ": unknown op '" + name + "' (brightness, contrast, saturation)");
        if (!(factor >= 0.0) || !std::isfinite(factor))
            fail(std::string(fn) + ": the " + name + " factor must be a finite non-negative number");
        op.factor = float(factor);
        out.push_back(op);
    }
    return out;
}

py::object run_color_ops(const char* fn, const uint8_t* src, int64_t H, int64_t W, int64_t pb, int64_t rs,
                         const std::vector<std::pair<std::string, double>>& ops) {
    auto list = color_ops(fn, ops);
    py::array_t<uint8_t> y(std::vector<py::ssize_t>{H, W, pb});
    {
        py::gil_scoped_release rel;
        table().image.color_ops_u8(src, rs, y.mutable_data(), H, W, pb, list.data(), int64_t(list.size()));
    }
    return std::move(y);
}

py::object color_ops_u8_array(py::handle x_, const std::vector<std::pair<std::string, double>>& ops) {
    const char* fn = "color_ops_u8";
    if (!py::isinstance<py::array>(x_)) fail(std::string(fn) + ": 'x' must be a numpy array");
    auto x = py::reinterpret_borrow<py::array>(x_);
    if (x.dtype().kind() != 'u' || x.dtype().itemsize() != 1 || x.ndim() != 3 || x.shape(2) < 3 || x.shape(2) > 4)
        fail(std::string(fn) + ": 'x' must be a uint8 (H, W, 3) or (H, W, 4) image, got " +
             std::string(py::str(x.dtype())) + " " + shp(x));
    const int64_t H = x.shape(0), W = x.shape(1), C = x.shape(2);
    if (H < 1 || W < 1) fail(std::string(fn) + ": 'x' is empty, shape " + shp(x));
    py::array src = with_contiguous_pixels(x, C);
    return run_color_ops(fn, static_cast<const uint8_t*>(src.data()), H, W, C, src.strides(0), ops);
}

py::object color_ops_u8_arrow(py::handle capsule, int64_t H, int64_t W,
                              const std::vector<std::pair<std::string, double>>& ops) {
    const char* fn = "color_ops_u8_arrow";
    const uint8_t* px = arrow_pixels(fn, capsule, H, W, 4);
    return run_color_ops(fn, px, H, W, 4, W * 4, ops);
}

int affine_filter(const char* fn, const std::string& filter) {
    if (filter == "nearest") return fv::kAffineNearest;
    if (filter == "bilinear") return fv::kAffineBilinear;
    if (filter == "bicubic") return fv::kAffineBicubic;
    fail(std::string(fn) + ": unknown filter '" + filter + "' (nearest, bilinear, bicubic)");
}

// (OH, OW) or (OH, OW, pixel_bytes) transformed from H x W pixels of pixel_bytes bytes, rows src_rs bytes apart
py::object run_affine(const char* fn, const uint8_t* src, int64_t H, int64_t W, int64_t pb, int64_t src_rs,
                      const std::vector<double>& matrix, const v64& size, const std::string& filter,
                      const std::vector<int64_t>& fill, bool two_d) {
    if (matrix.size() != 6) fail(std::string(fn) + ": 'matrix' must have 6 values (a, b, c, d, e, f), got " +
                                 std::to_string(matrix.size()));
    for (double v : matrix)
        if (!std::isfinite(v)) fail(std::string(fn) + ": 'matrix' must be finite");
    auto o = pair(size, fn, "size");
    if (o[0] < 1 || o[1] < 1 || o[0] > (1 << 20) || o[1] > (1 << 20))
        fail(std::string(fn) + ": size must be positive (and at most 2^20), got " + vstr(o));
    if (int64_t(fill.size()) != pb)
        fail(std::string(fn) + ": 'fill' must have " + std::to_string(pb) + " byte values, got " +
             std::to_string(fill.size()));
    uint8_t fb[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < fill.size(); ++i) {
        if (fill[i] < 0 || fill[i] > 255) fail(std::string(fn) + ": 'fill' values must be 0..255");
        fb[i] = uint8_t(fill[i]);
    }
    const int f = affine_filter(fn, filter);
    std::vector<py::ssize_t> shape{o[0], o[1]};
    if (!two_d) shape.push_back(pb);
    py::array_t<uint8_t> y(shape);
    {
        py::gil_scoped_release rel;
        table().image.affine_u8(src, src_rs, H, W, pb, y.mutable_data(), o[0], o[1], matrix.data(), f, fb);
    }
    return std::move(y);
}

py::object affine_u8_array(py::handle x_, const std::vector<double>& matrix, const v64& size,
                           const std::string& filter, const std::vector<int64_t>& fill) {
    const char* fn = "affine_u8";
    if (!py::isinstance<py::array>(x_)) fail(std::string(fn) + ": 'x' must be a numpy array");
    auto x = py::reinterpret_borrow<py::array>(x_);
    if (x.dtype().kind() != 'u' || x.dtype().itemsize() != 1)
        fail(std::string(fn) + ": 'x' must be uint8, got " + std::string(py::str(x.dtype())));
    if (!(x.ndim() == 2 || (x.ndim() == 3 && (x.shape(2) == 1 || x.shape(2) == 4))))
        fail(std::string(fn) + ": 'x' must be (H, W), (H, W, 1) or (H, W, 4) (RGBX), got shape " + shp(x));
    const int64_t H = x.shape(0), W = x.shape(1), C = x.ndim() == 3 ? x.shape(2) : 1;
    if (H < 1 || W < 1 || H > (1 << 24) || W > (1 << 24)) fail(std::string(fn) + ": bad image shape " + shp(x));
    py::array src = with_contiguous_pixels(x, C);
    return run_affine(fn, static_cast<const uint8_t*>(src.data()), H, W, C, src.strides(0), matrix, size, filter,
                      fill, x.ndim() == 2);
}

py::object affine_u8_arrow(py::handle capsule, int64_t H, int64_t W, int64_t pixel_bytes,
                           const std::vector<double>& matrix, const v64& size, const std::string& filter,
                           const std::vector<int64_t>& fill) {
    const char* fn = "affine_u8_arrow";
    const uint8_t* px = arrow_pixels(fn, capsule, H, W, pixel_bytes);
    return run_affine(fn, px, H, W, pixel_bytes, W * pixel_bytes, matrix, size, filter, fill, pixel_bytes == 1);
}

}  // namespace

void bind_image(py::module_& m) {
    m.def("resample_u8", &resample_u8_array, py::arg("x"), py::arg("size"), py::arg("filter") = "bilinear",
          py::arg("vertical_first") = false,
          "Resize a uint8 image (H, W) or (H, W, C), C <= 4, to size (oh, ow) with Pillow's antialiased filters and "
          "fixed-point arithmetic (equal to PIL.Image.resize byte for byte given Pillow's pass order, "
          "vertical_first); rows may be strided (a crop view); threaded");
    m.def("resample_u8_arrow", &resample_u8_arrow, py::arg("array_capsule"), py::arg("height"), py::arg("width"),
          py::arg("pixel_bytes"), py::arg("size"), py::arg("filter") = "bilinear", py::arg("vertical_first") = false,
          "resample_u8 reading a PIL image's memory in place through its Arrow export (the 'arrow_array' capsule): "
          "1-byte pixels ('L') -> (OH, OW), 4-byte pixels (Pillow's 'RGB' memory, RGBX) -> (OH, OW, 4)");
    m.def("color_ops_u8", &color_ops_u8_array, py::arg("x"), py::arg("ops"),
          "Pillow's ImageEnhance Brightness / Contrast / Color applied in order to a uint8 (H, W, 3|4) image, byte "
          "for byte; ops = [(name, factor), ...] with name brightness, contrast or saturation");
    m.def("color_ops_u8_arrow", &color_ops_u8_arrow, py::arg("array_capsule"), py::arg("height"), py::arg("width"),
          py::arg("ops"),
          "color_ops_u8 reading a PIL 'RGB' image's memory in place through its Arrow export -> (H, W, 4) RGBX");
    m.def("affine_u8", &affine_u8_array, py::arg("x"), py::arg("matrix"), py::arg("size"),
          py::arg("filter") = "bilinear", py::arg("fill"),
          "PIL.Image.transform(size, AFFINE, matrix, filter, fillcolor) byte for byte on a uint8 (H, W) 'L' image "
          "or (H, W, 4) RGBX pixels (Pillow's 'RGB' memory; fill has one byte per channel); filter nearest, "
          "bilinear or bicubic; bilinear / bicubic threaded over rows");
    m.def("affine_u8_arrow", &affine_u8_arrow, py::arg("array_capsule"), py::arg("height"), py::arg("width"),
          py::arg("pixel_bytes"), py::arg("matrix"), py::arg("size"), py::arg("filter") = "bilinear",
          py::arg("fill"),
          "affine_u8 reading a PIL 'L' or 'RGB' image's memory in place through its Arrow export: 1-byte pixels -> "
          "(OH, OW), 4-byte pixels -> (OH, OW, 4) RGBX");
}
