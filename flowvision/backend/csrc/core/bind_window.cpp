// Bindings of the Swin window kernels (cpu/window.cpp).
#include "core/bind_util.h"

#include <type_traits>

namespace {

using v64 = std::vector<int64_t>;

// float32 or float64, nothing else: an int or float16 map here is a caller bug, not something to cast silently.
bool window_dtype_is_f64(const char* fn, const char* name, const py::handle& h) {
    if (!py::isinstance<py::array>(h)) fail(std::string(fn) + ": '" + name + "' must be a numpy array");
    auto dt = py::reinterpret_borrow<py::array>(h).dtype();
    if (dt.kind() != 'f' || (dt.itemsize() != 4 && dt.itemsize() != 8))
        fail(std::string(fn) + ": '" + name + "' must be float32 or float64, got " + std::string(py::str(dt)));
    return dt.itemsize() == 8;
}

fv::WindowParams window_params(const char* fn, int64_t B, int64_t H, int64_t W, int64_t C, const v64& window_size,
                               const v64& shift) {
    auto ws = pair(window_size, fn, "window_size");
    auto sh = pair(shift, fn, "shift");
    if (ws[0] < 1 || ws[1] < 1) fail(std::string(fn) + ": window_size must be positive, got " + vstr(ws));
    if (H < 1 || W < 1) {
        std::ostringstream os;
        os << fn << ": the map must have a non-empty spatial size, got H=" << H << ", W=" << W;
        fail(os.str());
    }
    fv::WindowParams p;
    p.B = B; p.H = H; p.W = W; p.C = C;
    p.wh = ws[0]; p.ww = ws[1];
    // a cyclic shift: any integer, taken modulo the map size (torch.roll's semantics)
    p.sh = ((sh[0] % H) + H) % H;
    p.sw = ((sh[1] % W) + W) % W;
    return p;
}

template <class T> void partition_call(const T* x, T* y, const fv::WindowParams& p);
template <> void partition_call<float>(const float* x, float* y, const fv::WindowParams& p) { table().window.partition_f32(x, y, p); }
template <> void partition_call<double>(const double* x, double* y, const fv::WindowParams& p) { table().window.partition_f64(x, y, p); }
template <class T> void reverse_call(const T* w, const T* s, T* y, const fv::WindowParams& p);
template <> void reverse_call<float>(const float* w, const float* s, float* y, const fv::WindowParams& p) { table().window.reverse_f32(w, s, y, p); }
template <> void reverse_call<double>(const double* w, const double* s, double* y, const fv::WindowParams& p) { table().window.reverse_f64(w, s, y, p); }

template <class T>
py::object partition_impl(py::handle x_, const v64& window_size, const v64& shift) {
    const char* fn = "window_partition";
    auto x = as<T>(x_, fn, "x");
    need_ndim(x, 4, fn, "x");
    auto p = window_params(fn, x.shape(0), x.shape(1), x.shape(2), x.shape(3), window_size, shift);
    const int64_t n_windows = p.B * ((p.H + p.wh - 1) / p.wh) * ((p.W + p.ww - 1) / p.ww);
    auto y = empty<T>({n_windows, p.wh * p.ww, p.C});
    {
        py::gil_scoped_release rel;
        partition_call<T>(x.data(), y.mutable_data(), p);
    }
    return std::move(y);
}

template <class T>
py::object reverse_impl(py::handle w_, const v64& window_size, const v64& shift, const v64& hw, py::object sc_) {
    const char* fn = "window_reverse";
    auto win = as<T>(w_, fn, "windows");
    need_ndim(win, 3, fn, "windows");
    auto size = pair(hw, fn, "size");
    auto p = window_params(fn, 0, size[0], size[1], win.shape(2), window_size, shift);
    const int64_t per_image = ((p.H + p.wh - 1) / p.wh) * ((p.W + p.ww - 1) / p.ww);
    if (win.shape(1) != p.wh * p.ww || win.shape(0) % per_image) {
        std::ostringstream os;
        os << fn << ": windows " << shp(win) << " do not tile a " << p.H << "x" << p.W << " map with "
           << p.wh << "x" << p.ww << " windows (expected (B*" << per_image << ", " << p.wh * p.ww << ", C))";
        fail(os.str());
    }
    p.B = win.shape(0) / per_image;
    Arr<T> sc;
    const T* sc_ptr = nullptr;
    if (!sc_.is_none()) {
        if (window_dtype_is_f64(fn, "shortcut", sc_) != std::is_same<T, double>::value)
            fail(std::string(fn) + ": 'shortcut' must have the dtype of 'windows'");
        sc = as<T>(sc_, fn, "shortcut");
        if (sc.ndim() != 4 || sc.shape(0) != p.B || sc.shape(1) != p.H || sc.shape(2) != p.W || sc.shape(3) != p.C) {
            std::ostringstream os;
            os << fn << ": 'shortcut' must have shape " << vstr({p.B, p.H, p.W, p.C}) << ", got " << shp(sc);
            fail(os.str());
        }
        sc_ptr = sc.data();
    }
    auto y = empty<T>({p.B, p.H, p.W, p.C});
    {
        py::gil_scoped_release rel;
        reverse_call<T>(win.data(), sc_ptr, y.mutable_data(), p);
    }
    return std::move(y);
}

}  // namespace

void bind_window(py::module_& m) {
    m.def("window_partition", [](py::handle x, v64 window_size, v64 shift) {
        if (window_dtype_is_f64("window_partition", "x", x)) return partition_impl<double>(x, window_size, shift);
        return partition_impl<float>(x, window_size, shift);
    }, py::arg("x"), py::arg("window_size"), py::arg("shift") = v64{0, 0},
          "Swin windows of x (B, H, W, C) rolled by -shift and zero-padded bottom/right to whole windows -> "
          "(B*nW, wh*ww, C); float32/float64, threaded");
    m.def("window_reverse", [](py::handle windows, v64 window_size, v64 shift, v64 size, py::object shortcut) {
        if (window_dtype_is_f64("window_reverse", "windows", windows))
            return reverse_impl<double>(windows, window_size, shift, size, shortcut);
        return reverse_impl<float>(windows, window_size, shift, size, shortcut);
    }, py::arg("windows"), py::arg("window_size"), py::arg("shift"), py::arg("size"),
          py::arg("shortcut") = py::none(),
          "Inverse of window_partition: windows (B*nW, wh*ww, C) -> y (B, H, W, C) = shortcut + the map "
          "(padding cropped, rolled back by +shift); shortcut None means 0");
}
