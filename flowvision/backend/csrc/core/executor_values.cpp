// Value slots of the captured-plan executor: internal errors, step outputs (arena or per-call storage), strided
// copies and the float32 arguments of step specs.
#include <cstdlib>

#include "core/executor_internal.h"

namespace executor_detail {

[[noreturn]] void internal(const Step& s, const std::string& what) {
    throw std::runtime_error("flowvision executor: step '" + s.label + "': " + what +
                             " (a bug in the plan lowering; compile with executor='python' to work around it)");
}

// The step's (single, contiguous) output of `shape`: its arena buffer or new per-call storage.
float* out(Run& r, const Step& s, const Shape& shape) {
    Val& v = r.vals[s.outs[0]];
    v = Val();
    v.shape = shape;
    v.strides = contiguous_strides(shape);
    v.set = true;
    const int64_t n = numel(shape);
    float* p;
    if (s.buf >= 0) {
        const auto& b = r.plan.arena[s.buf];
        if (b->n < n) internal(s, "arena buffer too small");
        p = b->p;
    } else {
        v.hold = std::make_shared<Storage>(n);
        p = v.hold->p;
    }
    v.data = p;
    return p;
}

// Merge adjacent dims that are contiguous with each other in every operand (fewer, longer rows for the kernels).
int collapse(Shape& shape, std::vector<Shape*> strides) {
    Shape s2;
    std::vector<Shape> st2(strides.size());
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 1) continue;
        bool merge = !s2.empty();
        for (size_t k = 0; merge && k < strides.size(); ++k)
            merge = st2[k].back() == (*strides[k])[d] * shape[d];
        if (merge) {
            s2.back() *= shape[d];
            for (size_t k = 0; k < strides.size(); ++k) st2[k].back() = (*strides[k])[d];
        } else {
            s2.push_back(shape[d]);
            for (size_t k = 0; k < strides.size(); ++k) st2[k].push_back((*strides[k])[d]);
        }
    }
    if (s2.empty()) {
        s2.push_back(1);
        for (auto& t : st2) t.push_back(1);
    }
    if (s2.size() > size_t(fv::kExecMaxDims)) throw std::runtime_error("flowvision executor: too many dims");
    shape = s2;
    for (size_t k = 0; k < strides.size(); ++k) *strides[k] = st2[k];
    return int(shape.size());
}

void copy_strided(const float* x, Shape xs, float* y, Shape ys, Shape shape) {
    if (numel(shape) == 0) return;
    const int nd = collapse(shape, {&xs, &ys});
    table().exec.copy(x, xs.data(), y, ys.data(), shape.data(), nd);
}

// A contiguous view of v: its own data, or a copy in `scratch` (kept by the step across calls).
const float* contiguous(const Run& r, const Val& v, StoragePtr& scratch) {
    if (v.contiguous() || r.dry) return v.data;
    const int64_t n = numel(v.shape);
    if (!scratch || scratch->n < n) scratch = std::make_shared<Storage>(n);
    copy_strided(v.data, v.strides, scratch->p, contiguous_strides(v.shape), v.shape);
    return scratch->p;
}

const float* f32_ptr(const py::object& a, const char* what) {
    if (a.is_none()) return nullptr;
    need_f32("ExecPlan", what, a);
    auto arr = py::reinterpret_borrow<py::array>(a);
    if (!(arr.flags() & py::array::c_style)) fail(std::string("ExecPlan: '") + what + "' must be C-contiguous");
    return static_cast<const float*>(arr.data());
}

}  // namespace executor_detail
