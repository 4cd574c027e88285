// The captured-plan executor: runs a lowered flowvision.compile plan (flowvision/backend/_capture_native.py builds
// it) in C++. Values live in numbered slots (float32 tensor descriptors: data, shape, element strides, owner);
// each step reads slots and writes one. Compute steps write into arena buffers planned by liveness in Python
// (reused across calls) or, for values the plan returns, into per-call storage handed to numpy. View steps
// (reshape, permute, slice) only change strides. Steps with no native form call their Python closure with the
// GIL re-acquired. The GIL is released while the plan runs; one run at a time per plan (a mutex).
#include <algorithm>
#include <chrono>
#include <array>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>

#include "core/bind_util.h"
#include "core/threadpool.h"

namespace {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

Shape contiguous_strides(const Shape& s) {
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

[[noreturn]] void internal(const Step& s, const std::string& what) {
    throw std::runtime_error("flowvision executor: step '" + s.label + "': " + what +
                             " (a bug in the plan lowering; compile with executor='python' to work around it)");
}

const Val& in(Run& r, const Step& s, int k) {
    const Val& v = r.vals[s.ins[k]];
    if (!v.set || !v.data) internal(s, "input " + std::to_string(k) + " is not a float32 value");
    return v;
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

// ---------------------------------------------------------------- compute steps
struct ConvStep : Step {
    py::object pk_obj, bias_obj;
    const PackedConv* pk = nullptr;
    const float* bias = nullptr;
    fv::ConvNhwcParams p{};
    int act = 0;
    float lo = 0, hi = 0;
    StoragePtr xs, rs, gathered;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        if (x.shape != Shape{p.N, p.H, p.W, p.C}) internal(*this, "input shape " + vstr(x.shape));
        const float* xp = contiguous(r, x, xs);
        const float* res = nullptr;
        if (ins.size() > 1) {
            const Val& rv = in(r, *this, 1);
            if (rv.shape != Shape{p.N, p.OH, p.OW, p.O}) internal(*this, "residual shape " + vstr(rv.shape));
            res = contiguous(r, rv, rs);
        }
        if (conv_nhwc_gathers(*pk, p)) {
            const int64_t n = p.N * p.OH * p.OW * p.C;
            if (!gathered || gathered->n < n) gathered = std::make_shared<Storage>(n);
        }
        float* y = out(r, *this, {p.N, p.OH, p.OW, p.O});
        if (r.dry) return;
        conv_nhwc_compute(*pk, p, xp, bias, res, y, act, lo, hi, gathered ? gathered->p : nullptr, nullptr);
    }
};

struct LinearStep : Step {
    py::object pk_obj, bias_obj;
    const PackedB* pk = nullptr;
    const float* bias = nullptr;
    int act = 0;
    float lo = 0, hi = 0;
    Shape out_shape;
    StoragePtr xs, rs;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        const int64_t M = numel(x.shape) / pk->K;
        if (x.shape.empty() || x.shape.back() != pk->K || M * pk->N != numel(out_shape))
            internal(*this, "input shape " + vstr(x.shape));
        const float* xp = contiguous(r, x, xs);
        const float* res = nullptr;
        if (ins.size() > 1) {
            const Val& rv = in(r, *this, 1);
            if (numel(rv.shape) != M * pk->N) internal(*this, "residual shape " + vstr(rv.shape));
            res = contiguous(r, rv, rs);
        }
        float* y = out(r, *this, out_shape);
        if (r.dry) return;
        const float* bp = packed_ptr(static_cast<float*>(const_cast<void*>(pk->data.data())));
        ks<float>().gemm_packed(xp, M, pk->K, pk->N, bp, y, bias, res, act, lo, hi);
    }
};

// NCHW <-> NHWC (per image (rows, cols) -> (cols, rows))
struct TransposeStep : Step {
    bool to_nhwc = true;
    StoragePtr xs;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        if (x.shape.size() != 4) internal(*this, "input must be 4-D");
        const Shape& s = x.shape;
        const int64_t rows = to_nhwc ? s[1] : s[1] * s[2], cols = to_nhwc ? s[2] * s[3] : s[3];
        const float* xp = contiguous(r, x, xs);
        float* y = out(r, *this, to_nhwc ? Shape{s[0], s[2], s[3], s[1]} : Shape{s[0], s[3], s[1], s[2]});
        if (r.dry) return;
        table().nhwc.transpose(xp, y, s[0], rows, cols);
    }
};

// NHWC pooling (a PoolKind; adaptive avg to (OH, OW)); the output is then viewed as out_shape
struct PoolStep : Step {
    int kind = 0;
    fv::PoolParams p{};
    int64_t C = 0, N = 0;
    Shape out_shape;
    StoragePtr xs;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        if (x.shape != Shape{N, p.H, p.W, C}) internal(*this, "input shape " + vstr(x.shape));
        const float* xp = contiguous(r, x, xs);
        float* y = out(r, *this, out_shape);
        if (r.dry) return;
        const auto& nk = table().nhwc;
        if (kind == fv::kPoolMax) nk.max_pool(xp, y, p, C);
        else if (kind == fv::kPoolAvg) nk.avg_pool(xp, y, p, C);
        else nk.adaptive_avg_pool(xp, y, N, p.H, p.W, C, p.OH, p.OW);
    }
};

// a op b with numpy broadcasting; an operand is a slot or a constant array
struct BinaryStep : Step {
    int op = 0;
    int const_pos = -1;  // which operand is the constant (-1: none)
    py::object const_obj;
    Val cval;
    Shape out_shape;
    void run(Run& r) override {
        const Val* ops[2];
        int k = 0;
        for (int i = 0; i < 2; ++i) ops[i] = i == const_pos ? &cval : &in(r, *this, k++);
        const size_t nd = out_shape.size();
        Shape st[2];
        for (int i = 0; i < 2; ++i) {
            const Val& v = *ops[i];
            if (v.shape.size() > nd) internal(*this, "operand has more dims than the output");
            st[i].assign(nd, 0);
            const size_t lead = nd - v.shape.size();
            for (size_t d = 0; d < v.shape.size(); ++d) {
                if (v.shape[d] == out_shape[lead + d]) st[i][lead + d] = v.strides[d];
                else if (v.shape[d] != 1) internal(*this, "operand shape " + vstr(v.shape) + " vs " + vstr(out_shape));
            }
        }
        float* y = out(r, *this, out_shape);
        if (r.dry) return;
        if (numel(out_shape) == 0) return;
        Shape shape = out_shape, ys = contiguous_strides(out_shape);
        const int n = collapse(shape, {&st[0], &st[1], &ys});
        table().exec.binary(op, ops[0]->data, st[0].data(), ops[1]->data, st[1].data(), y, shape.data(), n);
    }
};

// unary: a Pointwise kind or a UnaryStep kind (gelu, gelu_tanh, silu)
struct UnaryStep : Step {
    int kind = 0;
    float lo = 0, hi = 0;
    StoragePtr xs;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        const float* xp = contiguous(r, x, xs);
        const Shape shape = x.shape;
        float* y = out(r, *this, shape);
        if (r.dry) return;
        const int64_t n = numel(shape);
        const auto& k = ks<float>();
        if (kind == fv::kUnGelu || kind == fv::kUnGeluTanh) k.gelu_forward(xp, y, n, kind == fv::kUnGeluTanh);
        else if (kind == fv::kUnSilu) k.silu_forward(xp, y, n);
        else k.pointwise(kind, xp, y, n, lo, hi);
    }
};

// squeeze-excitation gate over NHWC x (N, H, W, C): y = x * act(gate), gate one value per (image, channel); the
// binding's compute (channel_gate_compute). in_place: y is x's memory (the lowering checked that nothing reads x
// afterwards and that x is a convolution's own, contiguous output)
struct ChannelGateStep : Step {
    int act = -1;
    bool in_place = false;
    StoragePtr xs, gs, act_tmp;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        const Val& g = in(r, *this, 1);
        if (x.shape.size() != 4 || numel(g.shape) != x.shape[0] * x.shape[3] || g.shape.empty() ||
            g.shape[0] != x.shape[0])
            internal(*this, "x " + vstr(x.shape) + " / gate " + vstr(g.shape));
        const int64_t N = x.shape[0], P = x.shape[1] * x.shape[2], C = x.shape[3];
        const float* gp = contiguous(r, g, gs);
        if (act >= 0 && (!act_tmp || act_tmp->n < N * C)) act_tmp = std::make_shared<Storage>(N * C);
        float* y;
        const float* xp;
        if (in_place) {
            if (!x.contiguous()) internal(*this, "in-place input is not contiguous");
            Val v = x;  // y shares x's memory (and keeps its owner alive)
            r.retain(v);
            xp = x.data;
            r.drop(outs[0]);
            r.vals[outs[0]] = std::move(v);
            y = const_cast<float*>(xp);
        } else {
            xp = contiguous(r, x, xs);
            y = out(r, *this, x.shape);
        }
        if (r.dry) return;
        channel_gate_compute(xp, gp, y, act >= 0 ? act_tmp->p : nullptr, N, P, C, act);
    }
};

struct LayerNormStep : Step {
    py::object w_obj, b_obj;
    const float* w = nullptr;
    const float* b = nullptr;
    int64_t N = 0;
    double eps = 1e-5;
    StoragePtr xs, stats;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        const int64_t total = numel(x.shape), M = N ? total / N : 0;
        if (M * N != total) internal(*this, "input shape " + vstr(x.shape));
        const float* xp = contiguous(r, x, xs);
        const Shape shape = x.shape;
        float* y = out(r, *this, shape);
        if (r.dry) return;
        if (!stats || stats->n < 2 * M) stats = std::make_shared<Storage>(2 * M);
        ks<float>().layer_norm_forward(xp, w, b, y, stats->p, stats->p + M, M, N, eps);
    }
};

struct SoftmaxStep : Step {
    bool log = false;
    StoragePtr xs;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        const float* xp = contiguous(r, x, xs);
        const Shape shape = x.shape;
        const int64_t N = shape.empty() ? 1 : shape.back(), M = N ? numel(shape) / N : 0;
        float* y = out(r, *this, shape);
        if (r.dry) return;
        if (M > 0 && N > 0) ks<float>().softmax_forward(xp, y, M, N, log);
    }
};

// (..., M, K) @ (..., K, N), batch dims broadcast; the operands are handed to the GEMM as flowvision's matmul
// (backend/_kernels.py) hands them: as they are when C-contiguous or transposed-contiguous, else copied
struct MatmulStep : Step {
    StoragePtr as_, bs_;
    // `v` broadcast to batch + its last two dims, as (B, r, c) contiguous or transposed; the data pointer
    const float* as_3d(const Run& r, const Val& v, const Shape& batch, bool& transposed, StoragePtr& scratch) {
        const size_t nd = v.shape.size();
        Shape shape(batch), strides(batch.size(), 0);
        const size_t lead = batch.size() - (nd - 2);
        for (size_t d = 0; d + 2 < nd; ++d)
            if (v.shape[d] == batch[lead + d]) strides[lead + d] = v.strides[d];
        shape.push_back(v.shape[nd - 2]);
        shape.push_back(v.shape[nd - 1]);
        strides.push_back(v.strides[nd - 2]);
        strides.push_back(v.strides[nd - 1]);
        Val b;
        b.shape = shape;
        b.strides = strides;
        Val t = b;  // the last two dims swapped
        std::swap(t.shape[t.shape.size() - 1], t.shape[t.shape.size() - 2]);
        std::swap(t.strides[t.strides.size() - 1], t.strides[t.strides.size() - 2]);
        transposed = false;
        if (!b.contiguous() && t.contiguous()) {
            transposed = true;
            return v.data;
        }
        if (b.contiguous() || r.dry) return v.data;
        const int64_t n = numel(shape);
        if (!scratch || scratch->n < n) scratch = std::make_shared<Storage>(n);
        copy_strided(v.data, strides, scratch->p, contiguous_strides(shape), shape);
        return scratch->p;
    }
    void run(Run& r) override {
        const Val& a = in(r, *this, 0);
        const Val& b = in(r, *this, 1);
        const size_t na = a.shape.size(), nb = b.shape.size();
        if (na < 2 || nb < 2 || a.shape[na - 1] != b.shape[nb - 2]) internal(*this, "operand shapes");
        const int64_t M = a.shape[na - 2], K = a.shape[na - 1], N = b.shape[nb - 1];
        StoragePtr keep;
        if (nb == 2 && na > 2) {  // fold a's batch into M: one GEMM
            Shape oshape(a.shape.begin(), a.shape.end() - 1);
            oshape.push_back(N);
            const int64_t rows = numel(a.shape) / K;
            const float* ap = contiguous(r, a, as_);
            bool tb;
            const float* bp = as_3d(r, b, {}, tb, bs_);
            float* y = out(r, *this, oshape);
            if (r.dry) return;
            ks<float>().gemm(ap, bp, y, 1, rows, N, K, false, tb);
            return;
        }
        const size_t nbatch = std::max(na, nb) - 2;
        Shape batch(nbatch, 1);
        for (size_t d = 0; d < nbatch; ++d) {
            const int64_t da = d + na >= nbatch + 2 ? a.shape[d + na - nbatch - 2] : 1;
            const int64_t db = d + nb >= nbatch + 2 ? b.shape[d + nb - nbatch - 2] : 1;
            if (da != db && da != 1 && db != 1) internal(*this, "batch dims do not broadcast");
            batch[d] = std::max(da, db);
        }
        bool ta, tb;
        const float* ap = as_3d(r, a, batch, ta, as_);
        const float* bp = as_3d(r, b, batch, tb, bs_);
        Shape oshape = batch;
        oshape.push_back(M);
        oshape.push_back(N);
        float* y = out(r, *this, oshape);
        if (r.dry) return;
        ks<float>().gemm(ap, bp, y, numel(batch), M, N, K, ta, tb);
    }
};

// pieces: k >= 0 the k-th input slot, k < 0 the constant -k-1 (a class token, ...)
struct CatStep : Step {
    int64_t dim = 0;
    Shape out_shape;
    std::vector<int> pieces;
    std::vector<py::object> const_objs;
    std::vector<Val> consts;
    void run(Run& r) override {
        float* y = out(r, *this, out_shape);
        if (r.dry) return;
        const Shape ys = contiguous_strides(out_shape);
        int64_t at = 0;
        for (int k : pieces) {
            const Val& x = k >= 0 ? in(r, *this, k) : consts[size_t(-k - 1)];
            if (x.shape.size() != out_shape.size()) internal(*this, "input rank");
            copy_strided(x.data, x.strides, y + at * ys[dim], ys, x.shape);
            at += x.shape[dim];
        }
        if (at != out_shape[dim]) internal(*this, "input sizes along the cat dim");
    }
};

// numpy.roll over `dims`: 2^len(dims) block copies
struct RollStep : Step {
    Shape shifts, dims;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        const Shape shape = x.shape;
        float* y = out(r, *this, shape);
        if (r.dry) return;
        const Shape ys = contiguous_strides(shape);
        const size_t k = dims.size();
        for (int64_t mask = 0; mask < (int64_t(1) << k); ++mask) {
            Shape bshape = shape;
            int64_t xo = 0, yo = 0;
            bool empty = false;
            for (size_t i = 0; i < k; ++i) {
                const int64_t d = dims[i], n = shape[d];
                const int64_t s = n ? ((shifts[i] % n) + n) % n : 0;
                // block 0: y[s:] = x[:n-s]; block 1: y[:s] = x[n-s:]
                if (mask >> i & 1) {
                    bshape[d] = s;
                    xo += (n - s) * x.strides[d];
                } else {
                    bshape[d] = n - s;
                    yo += s * ys[d];
                }
                empty = empty || bshape[d] == 0;
            }
            if (!empty) copy_strided(x.data + xo, x.strides, y + yo, ys, bshape);
        }
    }
};

// numpy's mean over axes that exclude the last one, of a C-contiguous float32 array: numpy adds the reduced
// elements one by one in memory order into each output element (no pairwise summation off the last axis), then
// divides in float64 (the count is an intp scalar) and rounds to float32. Done the same way, so bit-identical.
struct MeanStep : Step {
    std::vector<bool> reduced;  // per input dim
    Shape out_shape;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        const size_t nd = x.shape.size();
        if (reduced.size() != nd || nd == 0 || reduced[nd - 1]) internal(*this, "reduced dims");
        if (!x.contiguous() && !r.dry) internal(*this, "input must be C-contiguous");
        const Shape xs = contiguous_strides(x.shape);
        size_t last_red = 0;
        for (size_t d = 0; d < nd; ++d)
            if (reduced[d]) last_red = d;
        int64_t L = 1;  // the kept block after the last reduced dim
        for (size_t d = last_red + 1; d < nd; ++d) L *= x.shape[d];
        Shape koff{0}, roff{0};  // offsets of the kept-prefix and reduced indices, row-major
        for (size_t d = 0; d <= last_red; ++d) {
            Shape& o = reduced[d] ? roff : koff;
            Shape next;
            for (int64_t base : o)
                for (int64_t i = 0; i < x.shape[d]; ++i) next.push_back(base + i * xs[d]);
            o.swap(next);
        }
        float* y = out(r, *this, out_shape);
        if (r.dry) return;
        if (numel(out_shape) != int64_t(koff.size()) * L) internal(*this, "output shape");
        const double count = double(roff.size());
        constexpr int64_t kBlock = 256;
        const int64_t nblk = (L + kBlock - 1) / kBlock;
        const float* xp = x.data;
        fv::parallel_for(0, int64_t(koff.size()) * nblk, 1, [&](int64_t lo, int64_t hi) {
            float acc[kBlock];
            for (int64_t t = lo; t < hi; ++t) {
                const int64_t o = t / nblk, c0 = (t % nblk) * kBlock, n = std::min(kBlock, L - c0);
                const float* base = xp + koff[size_t(o)] + c0;
                for (int64_t c = 0; c < n; ++c) acc[c] = base[roff[0] + c];
                for (size_t j = 1; j < roff.size(); ++j) {
                    const float* row = base + roff[j];
                    for (int64_t c = 0; c < n; ++c) acc[c] += row[c];
                }
                float* yo = y + o * L + c0;
                for (int64_t c = 0; c < n; ++c) yo[c] = float(double(acc[c]) / count);
            }
        });
    }
};

// Fused attention (cpu/attention.cpp, the kernel _C.sdpa runs): q, k, v with contiguous rows (else copied, as
// the Python step does); the output memory is (batch[:-1], Lq, batch[-1], Dv), the value its (batch, Lq, Dv) view
struct SdpaStep : Step {
    static constexpr int kMaxBatch = 4;
    py::object mask_obj;
    Val mask;  // additive float32 mask (a constant), or data == nullptr
    float scale = 1;
    bool causal = false;
    StoragePtr scratch[3];
    static void batch_strides(const Val& v, int64_t* out) {  // 0 where v broadcasts
        const int nb = int(v.shape.size()) - 2, pad = kMaxBatch - nb;
        for (int d = 0; d < kMaxBatch; ++d)
            out[d] = d < pad || v.shape[d - pad] == 1 ? 0 : v.strides[d - pad];
    }
    void run(Run& r) override {
        Val x[3];
        for (int i = 0; i < 3; ++i) {
            const Val& v = in(r, *this, i);
            if (v.shape.size() < 2 || v.shape.size() > size_t(kMaxBatch + 2)) internal(*this, "operand rank");
            x[i] = v;  // a descriptor copy (the storage is held by the slot)
            x[i].hold.reset();
            x[i].pyref = -1;
            if (v.shape.back() > 1 && v.strides.back() != 1) {
                x[i].data = contiguous(r, v, scratch[i]);
                x[i].strides = contiguous_strides(v.shape);
            }
        }
        const Val &q = x[0], &k = x[1], &v = x[2];
        const int64_t Lq = q.shape[q.shape.size() - 2], D = q.shape.back();
        const int64_t Lk = k.shape[k.shape.size() - 2], Dv = v.shape.back();
        if (k.shape.back() != D || v.shape[v.shape.size() - 2] != Lk) internal(*this, "q / k / v shapes");
        Shape batch(kMaxBatch, 1);
        int nbo = 0;
        for (const Val* t : {&q, &k, &v}) {
            const int nb = int(t->shape.size()) - 2, pad = kMaxBatch - nb;
            nbo = std::max(nbo, nb);
            for (int d = 0; d < nb; ++d) {
                const int64_t n = t->shape[d];
                if (n != 1 && batch[pad + d] != 1 && n != batch[pad + d]) internal(*this, "batch dims");
                if (n != 1) batch[pad + d] = n;
            }
        }
        fv::AttentionParams p{};
        for (int d = 0; d < kMaxBatch; ++d) p.batch[d] = batch[d];
        batch_strides(q, p.q_bs);
        batch_strides(k, p.k_bs);
        batch_strides(v, p.v_bs);
        p.Lq = Lq; p.Lk = Lk; p.D = D; p.Dv = Dv;
        p.q_rs = q.shape[q.shape.size() - 2] == 1 ? 0 : q.strides[q.shape.size() - 2];
        p.k_rs = k.shape[k.shape.size() - 2] == 1 ? 0 : k.strides[k.shape.size() - 2];
        p.v_rs = v.shape[v.shape.size() - 2] == 1 ? 0 : v.strides[v.shape.size() - 2];
        p.scale = scale;
        p.causal = causal;
        if (mask.data) {
            const size_t mr = mask.shape.size();
            Val m = mask;
            for (size_t d = 0; d < mr; ++d)
                if (m.shape[d] == 1) m.strides[d] = 0;
            batch_strides(m, p.mask_bs);
            p.mask_rs = m.strides[mr - 2];
            p.mask_cs = m.strides[mr - 1];
        }
        // >= 2 batch dims: memory (batch[:-1], Lq, batch[-1], Dv) viewed as (batch, Lq, Dv), as _ops/attention.py
        // allocates it; fewer: plain (batch, Lq, Dv)
        Shape oshape(batch.end() - nbo, batch.end());
        Shape mem(oshape);
        if (nbo < 2) {
            mem.push_back(Lq);
            mem.push_back(Dv);
        } else {
            mem.insert(mem.end() - 1, Lq);
            mem.push_back(Dv);
        }
        float* y = out(r, *this, mem);
        Val& o = r.vals[outs[0]];
        oshape.push_back(Lq);
        oshape.push_back(Dv);
        if (nbo >= 2) {
            const Shape ms = contiguous_strides(mem);
            Shape st(ms);
            std::swap(st[st.size() - 2], st[st.size() - 3]);
            o.strides = st;
        }
        o.shape = oshape;
        Val ov = o;
        for (size_t d = 0; d < ov.shape.size(); ++d)
            if (ov.shape[d] == 1) ov.strides[d] = 0;
        batch_strides(ov, p.out_bs);
        p.out_rs = Lq > 1 ? ov.strides[ov.shape.size() - 2] : 0;
        if (!r.dry) table().attn.sdpa_f32(q.data, k.data, v.data, mask.data, y, nullptr, p);
    }
};

// Swin windows (cpu/window.cpp): partition (x (B, H, W, C) -> (B*nW, wh*ww, C)) or reverse (+ shortcut)
struct WindowStep : Step {
    bool reverse = false;
    fv::WindowParams p{};
    Shape out_shape;
    StoragePtr xs, ss;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        const float* xp = contiguous(r, x, xs);
        const float* sp = ins.size() > 1 ? contiguous(r, in(r, *this, 1), ss) : nullptr;
        float* y = out(r, *this, out_shape);
        if (r.dry) return;
        if (reverse) table().window.reverse_f32(xp, sp, y, p);
        else table().window.partition_f32(xp, y, p);
    }
};

// ---------------------------------------------------------------- view steps (no data movement)
Val view_of(Run& r, const Val& x) {
    Val v = x;
    r.retain(v);
    return v;
}

// 0 identity; 1 reshape (a view when the strides allow, else a contiguous copy in per-call storage); 2 reshape
// always copied (into the arena buffer); 3 make contiguous (view if already)
struct ReshapeStep : Step {
    int mode = 1;
    Shape out_shape;
    // numpy's no-copy reshape: the new strides, or false when the layout needs a copy
    static bool view_strides(const Val& x, const Shape& ns, Shape& out) {
        Shape os, ost;  // drop size-1 dims
        for (size_t i = 0; i < x.shape.size(); ++i)
            if (x.shape[i] != 1) {
                os.push_back(x.shape[i]);
                ost.push_back(x.strides[i]);
            }
        out.assign(ns.size(), 0);
        size_t oi = 0, oj = 1, ni = 0, nj = 1;
        const size_t on = os.size(), nn = ns.size();
        if (numel(ns) == 0 || numel(x.shape) == 0) {
            out = contiguous_strides(ns);
            return true;
        }
        while (ni < nn && oi < on) {
            int64_t np_ = ns[ni], op_ = os[oi];
            while (np_ != op_) {
                if (np_ < op_) np_ *= ns[nj++];
                else op_ *= os[oj++];
            }
            for (size_t k = oi; k + 1 < oj; ++k)
                if (ost[k] != os[k + 1] * ost[k + 1]) return false;
            out[nj - 1] = ost[oj - 1];
            for (size_t k = nj - 1; k > ni; --k) out[k - 1] = out[k] * ns[k];
            ni = nj++;
            oi = oj++;
        }
        // trailing size-1 dims of the new shape
        int64_t last = ni > 0 ? out[ni - 1] : 1;
        for (size_t k = ni; k < nn; ++k) out[k] = last;
        return true;
    }
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        if (numel(x.shape) != numel(out_shape)) internal(*this, "reshape of " + vstr(x.shape) + " to " + vstr(out_shape));
        Shape st;
        if (mode == 0 || (mode == 1 && view_strides(x, out_shape, st)) || (mode == 3 && x.contiguous())) {
            Val v = view_of(r, x);
            if (mode == 1) {
                v.shape = out_shape;
                v.strides = st;
            } else if (mode == 3) {
                v.shape = out_shape;
                v.strides = contiguous_strides(out_shape);
            }
            r.vals[outs[0]] = std::move(v);
            return;
        }
        const Val xc = x;  // out() may overwrite the slot vector's entry, not x's storage
        float* y = out(r, *this, out_shape);
        if (r.dry) return;
        copy_strided(xc.data, xc.strides, y, contiguous_strides(xc.shape), xc.shape);
    }
};

struct PermuteStep : Step {
    Shape perm;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        if (perm.size() != x.shape.size()) internal(*this, "permute rank");
        Val v = view_of(r, x);
        for (size_t i = 0; i < perm.size(); ++i) {
            v.shape[i] = x.shape[perm[i]];
            v.strides[i] = x.strides[perm[i]];
        }
        r.vals[outs[0]] = std::move(v);
    }
};

// basic indexing: per output dim (input dim, start, step, length) or a new axis (input dim -1); dropped input dims
// (an integer index) contribute their offset
struct SliceStep : Step {
    std::vector<std::array<int64_t, 4>> dims;
    std::vector<std::array<int64_t, 2>> fixed;  // (input dim, index)
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        Val v = view_of(r, x);
        int64_t off = 0;
        v.shape.clear();
        v.strides.clear();
        for (const auto& f : fixed) off += f[1] * x.strides[f[0]];
        for (const auto& d : dims) {
            if (d[0] < 0) {
                v.shape.push_back(1);
                v.strides.push_back(0);
                continue;
            }
            if (d[3] > 0) off += d[1] * x.strides[d[0]];
            v.shape.push_back(d[3]);
            v.strides.push_back(d[2] * x.strides[d[0]]);
        }
        v.data = x.data + off;
        r.vals[outs[0]] = std::move(v);
    }
};

// ---------------------------------------------------------------- Python steps
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

struct PyStepError : std::exception {};

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
        auto shape_of = [&](const char* k) { return d[k].cast<Shape>(); };
        auto get_ep = [&](auto* s) {
            s->act = epilogue_code(d["ep"].cast<std::string>());
            s->lo = d["lo"].cast<float>();
            s->hi = d["hi"].cast<float>();
        };
        if (kind == "conv") {
            auto* s = new ConvStep();
            s->pk_obj = d["packed"];
            s->pk = &s->pk_obj.cast<const PackedConv&>();
            s->bias_obj = d["bias"];
            s->bias = f32_ptr(s->bias_obj, "bias");
            if (s->bias && py::reinterpret_borrow<py::array>(s->bias_obj).size() != s->pk->O)
                fail("ExecPlan: conv bias size");
            s->p = conv_nhwc_params("ExecPlan conv", *s->pk, shape_of("in_shape"), shape_of("stride"),
                                    shape_of("padding"), shape_of("dilation"));
            get_ep(s);
            add(s, d);
        } else if (kind == "linear") {
            auto* s = new LinearStep();
            s->pk_obj = d["packed"];
            s->pk = &s->pk_obj.cast<const PackedB&>();
            if (s->pk->f64) fail("ExecPlan: linear weight must be packed float32");
            if (s->pk->isa != &table()) fail("ExecPlan: the linear weight was packed for another ISA");
            s->bias_obj = d["bias"];
            s->bias = f32_ptr(s->bias_obj, "bias");
            if (s->bias && py::reinterpret_borrow<py::array>(s->bias_obj).size() != s->pk->N)
                fail("ExecPlan: linear bias size");
            s->out_shape = shape_of("out_shape");
            get_ep(s);
            add(s, d);
        } else if (kind == "transpose") {
            auto* s = new TransposeStep();
            s->to_nhwc = d["to_nhwc"].cast<bool>();
            add(s, d);
        } else if (kind == "pool") {
            auto* s = new PoolStep();
            s->kind = d["pool"].cast<int>();
            const Shape xs = shape_of("in_shape");  // NHWC
            if (xs.size() != 4) fail("ExecPlan: pool input must be 4-D");
            s->N = xs[0];
            s->C = xs[3];
            if (s->kind == fv::kPoolAdaptiveAvg) {
                const Shape o = shape_of("output_size");
                s->p.H = xs[1];
                s->p.W = xs[2];
                s->p.OH = o.at(0);
                s->p.OW = o.at(1);
            } else {
                s->p = nchw_pool_params("ExecPlan pool", {xs[0], xs[3], xs[1], xs[2]}, shape_of("kernel"),
                                        shape_of("stride"), shape_of("padding"), shape_of("dilation"),
                                        d["ceil_mode"].cast<bool>());
                s->p.planes = xs[0];
                s->p.count_include_pad = d["count_include_pad"].cast<bool>();
            }
            s->out_shape = shape_of("out_shape");
            if (numel(s->out_shape) != s->N * s->p.OH * s->p.OW * s->C) fail("ExecPlan: pool output shape");
            add(s, d);
        } else if (kind == "binary") {
            auto* s = new BinaryStep();
            s->op = d["op"].cast<int>();
            s->const_pos = d["const_pos"].cast<int>();
            s->out_shape = shape_of("out_shape");
            if (s->const_pos >= 0) {
                s->const_obj = d["const"];
                s->cval.data = f32_ptr(s->const_obj, "const");
                auto a = py::reinterpret_borrow<py::array>(s->const_obj);
                s->cval.shape.assign(a.shape(), a.shape() + a.ndim());
                s->cval.strides = contiguous_strides(s->cval.shape);
                s->cval.set = true;
            }
            add(s, d);
        } else if (kind == "unary") {
            auto* s = new UnaryStep();
            s->kind = d["unary"].cast<int>();
            s->lo = d["lo"].cast<float>();
            s->hi = d["hi"].cast<float>();
            add(s, d);
        } else if (kind == "channel_gate") {
            auto* s = new ChannelGateStep();
            s->act = channel_gate_act("ExecPlan channel_gate", d["gate_kind"].cast<std::string>());
            s->in_place = d["in_place"].cast<bool>();
            if (s->in_place && d.contains("buf") && d["buf"].cast<int>() >= 0) fail("ExecPlan: an in-place channel_gate step has no arena buffer");
            add(s, d);
        } else if (kind == "layer_norm") {
            auto* s = new LayerNormStep();
            s->N = d["n"].cast<int64_t>();
            s->eps = d["eps"].cast<double>();
            s->w_obj = d["weight"];
            s->b_obj = d["bias"];
            s->w = f32_ptr(s->w_obj, "weight");
            s->b = f32_ptr(s->b_obj, "bias");
            for (auto* o : {&s->w_obj, &s->b_obj})
                if (!o->is_none() && py::reinterpret_borrow<py::array>(*o).size() != s->N)
                    fail("ExecPlan: layer_norm weight / bias size");
            add(s, d);
        } else if (kind == "softmax") {
            auto* s = new SoftmaxStep();
            s->log = d["log"].cast<bool>();
            add(s, d);
        } else if (kind == "matmul") {
            add(new MatmulStep(), d);
        } else if (kind == "cat") {
            auto* s = new CatStep();
            s->dim = d["dim"].cast<int64_t>();
            s->out_shape = shape_of("out_shape");
            s->pieces = d["pieces"].cast<std::vector<int>>();
            for (auto& c : d["consts"].cast<std::vector<py::object>>()) {
                Val v;
                v.data = f32_ptr(c, "const");
                auto a = py::reinterpret_borrow<py::array>(c);
                v.shape.assign(a.shape(), a.shape() + a.ndim());
                v.strides = contiguous_strides(v.shape);
                v.set = true;
                s->const_objs.push_back(c);
                s->consts.push_back(v);
            }
            const int n_in = int(d["ins"].cast<std::vector<int>>().size());
            for (int k : s->pieces)
                if (k >= n_in || -k - 1 >= int(s->consts.size()))
                    fail("ExecPlan: cat pieces out of range");
            if (s->dim < 0 || s->dim >= int64_t(s->out_shape.size())) fail("ExecPlan: cat dim");
            add(s, d);
        } else if (kind == "roll") {
            auto* s = new RollStep();
            s->shifts = shape_of("shifts");
            s->dims = shape_of("dims");
            if (s->shifts.size() != s->dims.size() || s->dims.size() > 16) fail("ExecPlan: roll shifts / dims");
            add(s, d);
        } else if (kind == "reshape") {
            auto* s = new ReshapeStep();
            s->mode = d["mode"].cast<int>();
            s->out_shape = shape_of("out_shape");
            add(s, d);
        } else if (kind == "permute") {
            auto* s = new PermuteStep();
            s->perm = shape_of("perm");
            add(s, d);
        } else if (kind == "slice") {
            auto* s = new SliceStep();
            for (auto& t : d["dims"].cast<std::vector<std::vector<int64_t>>>()) {
                if (t.size() != 4) fail("ExecPlan: slice spec");
                s->dims.push_back({t[0], t[1], t[2], t[3]});
            }
            for (auto& t : d["fixed"].cast<std::vector<std::vector<int64_t>>>()) {
                if (t.size() != 2) fail("ExecPlan: slice spec");
                s->fixed.push_back({t[0], t[1]});
            }
            add(s, d);
        } else if (kind == "mean") {
            auto* s = new MeanStep();
            for (bool b : d["reduced"].cast<std::vector<bool>>()) s->reduced.push_back(b);
            s->out_shape = shape_of("out_shape");
            add(s, d);
        } else if (kind == "sdpa") {
            auto* s = new SdpaStep();
            s->scale = d["scale"].cast<float>();
            s->causal = d["causal"].cast<bool>();
            s->mask_obj = d["mask"];
            if (!s->mask_obj.is_none()) {
                s->mask.data = f32_ptr(s->mask_obj, "mask");
                auto a = py::reinterpret_borrow<py::array>(s->mask_obj);
                if (a.ndim() < 2 || a.ndim() > 6) fail("ExecPlan: sdpa mask rank");
                s->mask.shape.assign(a.shape(), a.shape() + a.ndim());
                s->mask.strides = contiguous_strides(s->mask.shape);
                s->mask.set = true;
            }
            add(s, d);
        } else if (kind == "window") {
            auto* s = new WindowStep();
            s->reverse = d["reverse"].cast<bool>();
            const Shape m = shape_of("map_shape"), ws = shape_of("window_size"), sh = shape_of("shift");
            if (m.size() != 4 || ws.size() != 2 || sh.size() != 2 || ws[0] < 1 || ws[1] < 1 || m[1] < 1 || m[2] < 1)
                fail("ExecPlan: window spec");
            s->p.B = m[0]; s->p.H = m[1]; s->p.W = m[2]; s->p.C = m[3];
            s->p.wh = ws[0]; s->p.ww = ws[1];
            s->p.sh = ((sh[0] % m[1]) + m[1]) % m[1];  // a cyclic shift, as torch.roll
            s->p.sw = ((sh[1] % m[2]) + m[2]) % m[2];
            s->out_shape = shape_of("out_shape");
            add(s, d);
        } else if (kind == "python") {
            auto* s = new PyStep();
            s->fn = d["fn"];
            add(s, d);
        } else {
            fail("ExecPlan: unknown step kind '" + kind + "'");
        }
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

}  // namespace

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
             "Append a step: kind (conv, linear, transpose, pool, binary, unary, layer_norm, softmax, matmul, cat, "
             "roll, reshape, permute, slice, python) and its spec dict (label, ins, outs, drop, buf, ...)")
        .def("run", &ExecPlan::run, py::arg("x"), py::arg("dry_run") = false, py::arg("profile") = false,
             "Run the plan on a float32 array of the captured shape; returns the outputs as numpy arrays that own "
             "their memory. dry_run: native steps skip their kernels and copies (outputs are garbage): times the "
             "executor's own per-step cost. profile: returns (outputs, wall seconds per step)")
        .def("steps", &ExecPlan::step_info, "(label, native, arena buffer) per step");
}
