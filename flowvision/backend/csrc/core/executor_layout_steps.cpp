// Data-movement and view steps of the captured-plan executor (cat, roll, Swin windows, reshape, permute, slice)
// and the factory that builds them from their spec dicts.
#include <algorithm>
#include <array>
#include <cstring>

#include "core/executor_internal.h"

namespace executor_detail {

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

// The step of kind `kind` (cat, roll, reshape, permute, slice, window) from its spec dict; nullptr for a kind of
// another group.
Step* make_layout_step(const std::string& kind, const py::dict& d) {
    auto shape_of = [&](const char* k) { return d[k].cast<Shape>(); };
    if (kind == "cat") {
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
        return s;
    } else if (kind == "roll") {
        auto* s = new RollStep();
        s->shifts = shape_of("shifts");
        s->dims = shape_of("dims");
        if (s->shifts.size() != s->dims.size() || s->dims.size() > 16) fail("ExecPlan: roll shifts / dims");
        return s;
    } else if (kind == "reshape") {
        auto* s = new ReshapeStep();
        s->mode = d["mode"].cast<int>();
        s->out_shape = shape_of("out_shape");
        return s;
    } else if (kind == "permute") {
        auto* s = new PermuteStep();
        s->perm = shape_of("perm");
        return s;
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
        return s;
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
        return s;
    }
    return nullptr;
}

}  // namespace executor_detail
