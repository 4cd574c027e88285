// Bindings of the fused optimizer updates (cpu/optim.cpp): one call per parameter group, the GIL released, the
// elements of all the group's parameters cut into fixed pieces that the thread pool shares.
#include "core/bind_util.h"
#include "core/threadpool.h"

#include <type_traits>

namespace {

constexpr int64_t kPiece = 16384;  // elements per task (the update is memory-bound; tasks only balance the threads)

struct Piece {
    size_t t;  // parameter index
    int64_t begin, end;
};

// The arrays of one role (params, grads, ...) as raw pointers: numpy arrays of the params' dtype and size,
// C-contiguous, writeable when updated in place. Nothing is converted: an in-place update of a copy would be lost.
template <class T>
std::vector<T*> pointers(const char* fn, const char* role, const py::list& arrs, const std::vector<int64_t>& sizes,
                         bool writeable) {
    if (arrs.size() != sizes.size()) {
        std::ostringstream os;
        os << fn << ": " << sizes.size() << " parameters but " << arrs.size() << " " << role;
        fail(os.str());
    }
    std::vector<T*> out;
    for (size_t i = 0; i < arrs.size(); ++i) {
        py::handle h = arrs[i];
        if (!py::isinstance<py::array>(h)) fail(std::string(fn) + ": " + role + "[" + std::to_string(i) + "] is not a numpy array");
        auto a = py::reinterpret_borrow<py::array>(h);
        if (!a.dtype().equal(py::dtype::of<T>()))
            fail(std::string(fn) + ": " + role + "[" + std::to_string(i) + "] has dtype " + std::string(py::str(a.dtype())) +
                 ", expected " + std::string(py::str(py::dtype::of<T>())));
        if (!(a.flags() & py::array::c_style)) fail(std::string(fn) + ": " + role + "[" + std::to_string(i) + "] is not C-contiguous");
        if (writeable && !a.writeable()) fail(std::string(fn) + ": " + role + "[" + std::to_string(i) + "] is read-only");
        if (a.size() != sizes[i]) {
            std::ostringstream os;
            os << fn << ": " << role << "[" << i << "] has " << a.size() << " elements, the parameter " << sizes[i];
            fail(os.str());
        }
        out.push_back(static_cast<T*>(const_cast<void*>(a.data())));
    }
    return out;
}

std::vector<int64_t> sizes_of(const char* fn, const py::list& params) {
    std::vector<int64_t> s;
    for (size_t i = 0; i < params.size(); ++i) {
        if (!py::isinstance<py::array>(params[i])) fail(std::string(fn) + ": params[" + std::to_string(i) + "] is not a numpy array");
        s.push_back(py::reinterpret_borrow<py::array>(params[i]).size());
    }
    return s;
}

bool group_is_f64(const char* fn, const py::list& params) {
    if (params.size() == 0) return false;
    auto dt = py::reinterpret_borrow<py::array>(params[0]).dtype();
    if (dt.kind() != 'f' || (dt.itemsize() != 4 && dt.itemsize() != 8))
        fail(std::string(fn) + ": parameters must be float32 or float64, got " + std::string(py::str(dt)));
    return dt.itemsize() == 8;
}

// runs fn(t, begin, end) over every parameter's elements, in pieces shared by the thread pool
template <class F>
void run_pieces(const std::vector<int64_t>& sizes, const F& fn) {
    std::vector<Piece> pieces;
    int64_t total = 0;
    for (size_t t = 0; t < sizes.size(); ++t) {
        for (int64_t b = 0; b < sizes[t]; b += kPiece) pieces.push_back({t, b, std::min(sizes[t], b + kPiece)});
        total += sizes[t];
    }
    auto body = [&](int64_t p0, int64_t p1) {
        for (int64_t q = p0; q < p1; ++q) fn(pieces[q].t, pieces[q].begin, pieces[q].end);
    };
    if (total >= 4 * kPiece && pieces.size() > 1) fv::parallel_for(0, (int64_t)pieces.size(), 1, body);
    else body(0, (int64_t)pieces.size());
}

template <class T>
void sgd_impl(const py::list& params, const py::list& grads, const py::list& bufs, const std::vector<bool>& fresh,
              const fv::SgdScalars& base) {
    const char* fn = "sgd_update_";
    auto sizes = sizes_of(fn, params);
    auto w = pointers<T>(fn, "params", params, sizes, true);
    auto g = pointers<T>(fn, "grads", grads, sizes, false);
    std::vector<T*> b;
    if (base.use_momentum) {
        b = pointers<T>(fn, "momentum_buffers", bufs, sizes, true);
        if (fresh.size() != sizes.size()) fail(std::string(fn) + ": 'fresh' needs one flag per parameter");
    }
    auto kern = [] {
        if constexpr (std::is_same<T, float>::value) return table().optim.sgd_f32;
        else return table().optim.sgd_f64;
    }();
    py::gil_scoped_release rel;
    run_pieces(sizes, [&](size_t t, int64_t b0, int64_t b1) {
        fv::SgdScalars s = base;
        s.fresh = base.use_momentum && fresh[t];
        kern(w[t] + b0, g[t] + b0, base.use_momentum ? b[t] + b0 : nullptr, b1 - b0, s);
    });
}

template <class T>
void adam_impl(const py::list& params, const py::list& grads, const py::list& m, const py::list& v,
               const py::list& vmax, const std::vector<double>& neg_step, const std::vector<double>& bc2,
               const fv::AdamScalars& base) {
    const char* fn = "adam_update_";
    auto sizes = sizes_of(fn, params);
    auto w = pointers<T>(fn, "params", params, sizes, true);
    auto g = pointers<T>(fn, "grads", grads, sizes, false);
    auto mp = pointers<T>(fn, "exp_avgs", m, sizes, true);
    auto vp = pointers<T>(fn, "exp_avg_sqs", v, sizes, true);
    std::vector<T*> xp;
    if (base.amsgrad) xp = pointers<T>(fn, "max_exp_avg_sqs", vmax, sizes, true);
    if (neg_step.size() != sizes.size() || bc2.size() != sizes.size())
        fail(std::string(fn) + ": 'neg_step_sizes' and 'bias_corrections2_sqrt' need one value per parameter");
    auto kern = [] {
        if constexpr (std::is_same<T, float>::value) return table().optim.adam_f32;
        else return table().optim.adam_f64;
    }();
    py::gil_scoped_release rel;
    run_pieces(sizes, [&](size_t t, int64_t b0, int64_t b1) {
        fv::AdamScalars s = base;
        s.neg_step_size = neg_step[t];
        s.bias_correction2_sqrt = bc2[t];
        kern(w[t] + b0, g[t] + b0, mp[t] + b0, vp[t] + b0, base.amsgrad ? xp[t] + b0 : nullptr, b1 - b0, s);
    });
}

}  // namespace

void bind_optim(py::module_& m) {
    m.def("sgd_update_", [](const py::list& params, const py::list& grads, const py::list& momentum_buffers,
                            const std::vector<bool>& fresh, double lr, double momentum, double one_minus_dampening,
                            double weight_decay, bool nesterov) {
        fv::SgdScalars s{lr, momentum, one_minus_dampening, weight_decay, momentum != 0.0, nesterov, false};
        if (group_is_f64("sgd_update_", params)) sgd_impl<double>(params, grads, momentum_buffers, fresh, s);
        else sgd_impl<float>(params, grads, momentum_buffers, fresh, s);
    }, py::arg("params"), py::arg("grads"), py::arg("momentum_buffers"), py::arg("fresh"), py::arg("lr"),
       py::arg("momentum"), py::arg("one_minus_dampening"), py::arg("weight_decay"), py::arg("nesterov"),
       "SGD step of one parameter group in place (torch's rule; momentum_buffers[i] is set to the first d_p where "
       "fresh[i]); every array C-contiguous and of the parameters' dtype");
    m.def("adam_update_", [](const py::list& params, const py::list& grads, const py::list& exp_avgs,
                             const py::list& exp_avg_sqs, const py::list& max_exp_avg_sqs,
                             const std::vector<double>& neg_step_sizes, const std::vector<double>& bias_corrections2_sqrt,
                             double decay_factor, double weight_decay, double lerp_w, double one_minus_lerp_w,
                             double beta2, double one_minus_beta2, double eps, bool decoupled, bool amsgrad) {
        fv::AdamScalars s{decay_factor, weight_decay, lerp_w, one_minus_lerp_w, beta2, one_minus_beta2, 1.0, eps,
                          0.0, decoupled, weight_decay != 0.0, amsgrad};
        if (group_is_f64("adam_update_", params))
            adam_impl<double>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, neg_step_sizes,
                              bias_corrections2_sqrt, s);
        else
            adam_impl<float>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, neg_step_sizes,
                             bias_corrections2_sqrt, s);
    }, py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"), py::arg("max_exp_avg_sqs"),
       py::arg("neg_step_sizes"), py::arg("bias_corrections2_sqrt"), py::arg("decay_factor"), py::arg("weight_decay"),
       py::arg("lerp_w"), py::arg("one_minus_lerp_w"), py::arg("beta2"), py::arg("one_minus_beta2"), py::arg("eps"),
       py::arg("decoupled"), py::arg("amsgrad"),
       "Adam / AdamW step of one parameter group in place (torch's single-tensor rule; the per-parameter step size "
       "and bias correction come from the caller)");
}
