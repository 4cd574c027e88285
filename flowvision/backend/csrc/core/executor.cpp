// The captured-plan executor: runs a lowered flowvision.compile plan (flowvision/backend/_capture_native.py builds
// it) in C++. Values live in numbered slots (float32 tensor descriptors: data, shape, element strides, owner);
// each step reads slots and writes one. Compute steps write into arena buffers planned by liveness in Python
// (reused across calls) or, for values the plan returns, into per-call storage handed to numpy. View steps
// (reshape, permute, slice) only change strides. Steps with no native form call their Python closure with the
// GIL re-acquired. The GIL is released while the plan runs; one run at a time per plan (a mutex).
//
// Files: executor_internal.h (slots, per-call state, the Step interface), executor_values.cpp (outputs, strided
// copies), executor_compute_steps.cpp / executor_layout_steps.cpp / executor_python_step.cpp (the step kinds and
// their spec parsing), this file (plan building and validation, the run loop, the Python binding).
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>

#include "core/executor_internal.h"

namespace executor_detail {

// ---------------------------------------------------------------- the Python-facing plan
struct ExecPlan {
    std::shared_ptr<Plan> plan = std::make_shared<Plan>();

    void add(Step* s, const py::dict& d) {
        std::unique_ptr<Step> own(s);
        s->label = d["label"].cast<std::string>();
        s->ins = d["ins"].cast<std::vector<int>>();
        s->outs = d["outs"].cast<std::vector<int>>();
        s->drop = d["drop"].cast<std::vector<int>>();
        s->buf = d.contains("buf") ? d["buf"].cast<int>() : -1;
        for (int v : s->ins)
            if (v < 0 || v >= plan->n_slots) fail("ExecPlan: step '" + s->label + "' reads slot out of range");
        for (int v : s->outs)
            if (v < 0 || v >= plan->n_slots) fail("ExecPlan: step '" + s->label + "' writes slot out of range");
        if (s->buf >= int(plan->arena.size())) fail("ExecPlan: step '" + s->label + "': arena buffer out of range");
        plan->steps.push_back(std::move(own));
    }

    void add_step(const std::string& kind, const py::dict& d) {
        Step* s = make_compute_step(kind, d);
        if (!s) s = make_layout_step(kind, d);
        if (!s) s = make_python_step(kind, d);
        if (!s) fail("ExecPlan: unknown step kind '" + kind + "'");
        add(s, d);
    }

    py::object run(py::handle x_, bool dry, bool profile) {
        Plan& P = *plan;
        if (!py::isinstance<py::array>(x_)) fail("compiled plan: the input must be a numpy array");
        auto x0 = py::reinterpret_borrow<py::array>(x_);
        if (!(x0.dtype().kind() == 'f' && x0.itemsize() == 4))
            fail("compiled plan: expected a float32 input, got " + std::string(py::str(x0.dtype())));
        const Shape xs(x0.shape(), x0.shape() + x0.ndim());
        if (xs != P.in_shape)
            fail("compiled plan: expected an input of shape " + vstr(P.in_shape) + ", got " + vstr(xs));
        py::array x = py::array::ensure(x0, py::array::c_style);
        Run r(P, size_t(P.n_slots));
        r.dry = dry;
        r.no_copy_base = py::capsule(static_cast<void*>(&P), [](void*) {});
        Val& v0 = r.vals[0];
        v0.set = true;
        v0.shape = xs;
        v0.strides = contiguous_strides(xs);
        v0.data = static_cast<const float*>(x.data());
        v0.pyref = 0;
        r.objs.push_back(x);
        r.obj_uses.push_back(1);
        std::exception_ptr err;
        bool py_err = false;
        std::vector<double> seconds(profile ? P.steps.size() : 0);
        {
            py::gil_scoped_release rel;
            std::lock_guard<std::mutex> lock(P.mu);
            try {
                using clock = std::chrono::steady_clock;
                for (size_t i = 0; i < P.steps.size(); ++i) {
                    const auto t0 = profile ? clock::now() : clock::time_point();
                    auto& s = P.steps[i];
                    s->run(r);
                    for (int d : s->drop) r.drop(d);
                    if (profile) seconds[i] = std::chrono::duration<double>(clock::now() - t0).count();
                }
            } catch (const PyStepError&) {
                py_err = true;
            } catch (...) {
                err = std::current_exception();
            }
        }
        if (py_err) throw py::error_already_set();
        if (err) std::rethrow_exception(err);
        py::list res;
        for (int o : P.outputs) {
            const Val& v = r.vals[o];
            if (!v.set) throw std::runtime_error("flowvision executor: an output was not computed");
            if (!v.data) {
                res.append(r.objs[v.pyref]);
            } else if (!v.hold && v.pyref < 0) {  // arena memory must not escape (the lowering never plans it)
                res.append(to_numpy(r, v).attr("copy")());
            } else {
                res.append(to_numpy(r, v));
            }
        }
        if (profile) return py::make_tuple(res, py::cast(seconds));
        return std::move(res);
    }

    py::list step_info() const {
        py::list l;
        for (auto& s : plan->steps) l.append(py::make_tuple(s->label, s->native(), s->buf));
        return l;
    }
};

}  // namespace executor_detail

using executor_detail::ExecPlan;
using executor_detail::Storage;

void bind_executor(py::module_& m) {
    py::class_<ExecPlan>(m, "ExecPlan", "A captured plan run in C++ (built by flowvision/backend/_capture_native.py)")
        .def(py::init([](int n_slots, std::vector<int64_t> in_shape, std::vector<int> outputs,
                         std::vector<int64_t> arena_sizes) {
                 auto* e = new ExecPlan();
                 if (n_slots < 1) fail("ExecPlan: n_slots must be >= 1");
                 e->plan->n_slots = n_slots;
                 e->plan->in_shape = in_shape;
                 for (int o : outputs)
                     if (o < 0 || o >= n_slots) fail("ExecPlan: output slot out of range");
                 e->plan->outputs = outputs;
                 for (int64_t n : arena_sizes) {
                     if (n < 0) fail("ExecPlan: negative arena buffer size");
                     e->plan->arena.push_back(std::make_shared<Storage>(n));
                 }
                 return e;
             }),
             py::arg("n_slots"), py::arg("in_shape"), py::arg("outputs"), py::arg("arena_sizes"))
        .def("add_step", &ExecPlan::add_step, py::arg("kind"), py::arg("spec"),
             "Append a step: kind (conv, conv_pw_dw, linear, transpose, pool, binary, unary, layer_norm, softmax, "
             "matmul, cat, roll, reshape, permute, slice, python) and its spec dict (label, ins, outs, drop, buf, ...)")
        .def("run", &ExecPlan::run, py::arg("x"), py::arg("dry_run") = false, py::arg("profile") = false,
             "Run the plan on a float32 array of the captured shape; returns the outputs as numpy arrays that own "
             "their memory. dry_run: native steps skip their kernels and copies (outputs are garbage): times the "
             "executor's own per-step cost. profile: returns (outputs, wall seconds per step)")
        .def("steps", &ExecPlan::step_info, "(label, native, arena buffer) per step");
}
