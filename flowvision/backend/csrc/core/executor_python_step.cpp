// Python steps of the captured-plan executor: ops with no native form call their Python closure with the GIL
// re-acquired; their results come back as numpy-owned values.

#include "core/executor_internal.h"

namespace executor_detail {

py::array to_numpy(Run& r, const Val& v) {
    std::vector<py::ssize_t> shape(v.shape.begin(), v.shape.end()), strides;
    for (int64_t s : v.strides) strides.push_back(s * py::ssize_t(sizeof(float)));
    py::object base;
    if (v.hold) {
        auto* keep = new StoragePtr(v.hold);
        base = py::capsule(keep, [](void* p) { delete static_cast<StoragePtr*>(p); });
    } else if (v.pyref >= 0) {
        base = r.objs[v.pyref];
    } else {
        base = r.no_copy_base;
    }
    return py::array(py::dtype::of<float>(), shape, strides, v.data, base);
}

struct PyStep : Step {
    py::object fn;
    bool native() const override { return false; }
    void run(Run& r) override {
        py::gil_scoped_acquire gil;
        try {
            r.release_dead_objects();
            py::tuple args(ins.size());
            for (size_t k = 0; k < ins.size(); ++k) {
                const Val& v = r.vals[ins[k]];
                if (!v.set) internal(*this, "input not computed");
                args[k] = v.data ? py::object(to_numpy(r, v)) : r.objs[v.pyref];
            }
            py::object res = fn(*args);
            for (size_t k = 0; k < outs.size(); ++k) {
                py::object o = outs.size() == 1 ? res : py::object(res[py::int_(k)]);
                py::array a = py::array::ensure(o);
                if (!a) internal(*this, "the Python step did not return an array");
                Val v;
                v.set = true;
                v.shape.assign(a.shape(), a.shape() + a.ndim());
                bool f32 = a.dtype().kind() == 'f' && a.itemsize() == 4;
                for (py::ssize_t d = 0; d < a.ndim() && f32; ++d) f32 = a.strides(d) % 4 == 0;
                if (f32) {
                    for (py::ssize_t d = 0; d < a.ndim(); ++d) v.strides.push_back(a.strides(d) / 4);
                    v.data = static_cast<const float*>(a.data());
                }
                v.pyref = int(r.objs.size());
                r.objs.push_back(a);
                r.obj_uses.push_back(1);
                r.drop(outs[k]);
                r.vals[outs[k]] = std::move(v);
            }
        } catch (py::error_already_set& e) {
            e.restore();  // re-raised by the caller, with the GIL
            throw PyStepError();
        }
    }
};

// The step of kind `kind` (python) from its spec dict; nullptr for a kind of another group.
Step* make_python_step(const std::string& kind, const py::dict& d) {
    if (kind == "python") {
        auto* s = new PyStep();
        s->fn = d["fn"];
        return s;
    }
    return nullptr;
}

}  // namespace executor_detail
