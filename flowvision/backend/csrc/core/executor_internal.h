// Internal to the captured-plan executor (executor*.cpp): value slots, per-call state, the Step interface and the
// helpers every step kind uses. Not an API: only the executor's translation units include it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/bind_util.h"

namespace executor_detail {

using Shape = std::vector<int64_t>;

inline int64_t numel(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

inline Shape contiguous_strides(const Shape& s) {
    Shape st(s.size());
    int64_t k = 1;
    for (size_t i = s.size(); i-- > 0;) {
        st[i] = k;
        k *= s[i];
    }
    return st;
}

// 64-byte aligned float storage (arena buffers, per-call outputs, scratch)
struct Storage {
    float* p = nullptr;
    int64_t n = 0;
    explicit Storage(int64_t count) : n(count) {
        const size_t bytes = ((size_t(count > 0 ? count : 1) * sizeof(float) + 63) / 64) * 64;
        p = static_cast<float*>(std::aligned_alloc(64, bytes));
        if (!p) throw std::bad_alloc();
    }
    ~Storage() { std::free(p); }
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
};
using StoragePtr = std::shared_ptr<Storage>;

// A value slot. Memory: `hold` (per-call storage), a Python object (`pyref`, an index into the run's objects: a
// Python step's result or the input) or, when neither, an arena buffer of the plan.
struct Val {
    const float* data = nullptr;  // nullptr: not float32 (only Python steps read it)
    Shape shape, strides;
    StoragePtr hold;
    int pyref = -1;
    bool set = false;

    bool contiguous() const {  // numpy's rule: dims of size 1 do not matter
        int64_t k = 1;
        for (size_t i = shape.size(); i-- > 0;) {
            if (shape[i] != 1 && strides[i] != k) return false;
            k *= shape[i];
        }
        return true;
    }
};

struct Plan;

// Per-call state. Python objects are only created / released with the GIL held (Python steps, start, end).
struct Run {
    Plan& plan;
    std::vector<Val> vals;
    std::vector<py::object> objs;  // Python objects the values point into
    std::vector<int> obj_uses;     // live values per object
    py::object no_copy_base;       // base of numpy wrappers of arena memory (numpy must not copy)
    bool dry = false;              // measure the executor alone: native steps skip their kernels and copies
    explicit Run(Plan& p, size_t n) : plan(p), vals(n) {}

    void retain(const Val& v) {
        if (v.pyref >= 0) ++obj_uses[v.pyref];
    }
    void drop(int slot) {
        Val& v = vals[slot];
        if (v.pyref >= 0) --obj_uses[v.pyref];
        v = Val();
    }
    void release_dead_objects() {  // GIL held
        for (size_t i = 0; i < objs.size(); ++i)
            if (obj_uses[i] == 0 && objs[i]) objs[i] = py::object();
    }
};

struct Step {
    std::string label;
    std::vector<int> ins, outs, drop;
    int buf = -1;  // arena buffer of the output; -1: per-call storage
    virtual ~Step() = default;
    virtual bool native() const { return true; }
    virtual void run(Run& r) = 0;
};

struct Plan {
    std::vector<std::unique_ptr<Step>> steps;
    std::vector<StoragePtr> arena;
    int n_slots = 0;
    Shape in_shape;
    std::vector<int> outputs;
    std::mutex mu;
};

[[noreturn]] void internal(const Step& s, const std::string& what);

inline const Val& in(Run& r, const Step& s, int k) {
    const Val& v = r.vals[s.ins[k]];
    if (!v.set || !v.data) internal(s, "input " + std::to_string(k) + " is not a float32 value");
    return v;
}

// The step's (single, contiguous) output of `shape`: its arena buffer or new per-call storage.
float* out(Run& r, const Step& s, const Shape& shape);
// Merge adjacent dims that are contiguous with each other in every operand (fewer, longer rows for the kernels).
int collapse(Shape& shape, std::vector<Shape*> strides);
void copy_strided(const float* x, Shape xs, float* y, Shape ys, Shape shape);
// A contiguous view of v: its own data, or a copy in `scratch` (kept by the step across calls).
const float* contiguous(const Run& r, const Val& v, StoragePtr& scratch);
// The data of a C-contiguous float32 array argument of a step spec (nullptr for None).
const float* f32_ptr(const py::object& a, const char* what);
// A numpy view of a float32 value (its owner kept alive: per-call storage, the Python object, or the plan).
py::array to_numpy(Run& r, const Val& v);

// A Python step raised: the error is restored in Python's error state, re-raised by ExecPlan::run with the GIL.
struct PyStepError : std::exception {};

// Step factories, one per group of step kinds: a new step built from its spec dict (label, ins, outs, drop, buf
// are filled in by ExecPlan::add), or nullptr when `kind` is not of the group.
Step* make_compute_step(const std::string& kind, const py::dict& d);  // executor_compute_steps.cpp
Step* make_layout_step(const std::string& kind, const py::dict& d);   // executor_layout_steps.cpp
Step* make_python_step(const std::string& kind, const py::dict& d);   // executor_python_step.cpp

}  // namespace executor_detail
