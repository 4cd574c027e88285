// Compute steps of the captured-plan executor (convolution, GEMM, pooling, elementwise, normalisation, softmax,
// matmul, mean, attention) and the factory that builds them from their spec dicts.
#include <algorithm>
#include <cstring>

#include "core/executor_internal.h"
#include "core/threadpool.h"

namespace executor_detail {

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

// A 1x1 expansion and the depthwise conv reading it, as one step (cpu/conv_pw_dw.cpp)
struct PwDwStep : Step {
    py::object pw_obj, pw_bias_obj, dw_obj, dw_bias_obj;
    const PackedConv* pw = nullptr;
    const PackedConv* dw = nullptr;
    const float* pw_bias = nullptr;
    const float* dw_bias = nullptr;
    fv::ConvNhwcParams p{};  // the depthwise conv's
    int64_t cin = 0;
    int pw_act = 0, act = 0;
    float pw_lo = 0, pw_hi = 0, lo = 0, hi = 0;
    StoragePtr xs;
    void run(Run& r) override {
        const Val& x = in(r, *this, 0);
        if (x.shape != Shape{p.N, p.H, p.W, cin}) internal(*this, "input shape " + vstr(x.shape));
        const float* xp = contiguous(r, x, xs);
        float* y = out(r, *this, {p.N, p.OH, p.OW, p.O});
        if (r.dry) return;
        const float* pwp = packed_ptr(static_cast<float*>(const_cast<void*>(pw->gemm.data())));
        const float* dwp = packed_ptr(static_cast<float*>(const_cast<void*>(dw->data.data())));
        table().nhwc.conv_pw_dw(xp, cin, pwp, pw_bias, pw_act, pw_lo, pw_hi, dwp, dw_bias, y, p, act, lo, hi);
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

// The step of kind `kind` (conv, conv_pw_dw, linear, transpose, pool, binary, unary, channel_gate, layer_norm,
// softmax, matmul, mean, sdpa) from its spec dict; nullptr for a kind of another group.
Step* make_compute_step(const std::string& kind, const py::dict& d) {
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
        return s;
    } else if (kind == "conv_pw_dw") {
        auto* s = new PwDwStep();
        s->pw_obj = d["pw_packed"];
        s->pw = &s->pw_obj.cast<const PackedConv&>();
        s->dw_obj = d["packed"];
        s->dw = &s->dw_obj.cast<const PackedConv&>();
        if (!s->pw->has_gemm || s->pw->isa != &table())
            fail("ExecPlan: conv_pw_dw needs a 1x1 weight packed for this ISA");
        s->pw_bias_obj = d["pw_bias"];
        s->pw_bias = f32_ptr(s->pw_bias_obj, "pw_bias");
        s->dw_bias_obj = d["bias"];
        s->dw_bias = f32_ptr(s->dw_bias_obj, "bias");
        const Shape xs = shape_of("in_shape");  // the expansion's input (N, H, W, cin)
        if (xs.size() != 4 || xs[3] != s->pw->C) fail("ExecPlan: conv_pw_dw input channels");
        s->cin = xs[3];
        const int64_t E = s->pw->O;
        if (s->dw->groups != E || s->dw->O != E || s->dw->C != E)
            fail("ExecPlan: conv_pw_dw needs a depthwise conv over the expansion");
        if ((s->pw_bias && py::reinterpret_borrow<py::array>(s->pw_bias_obj).size() != E) ||
            (s->dw_bias && py::reinterpret_borrow<py::array>(s->dw_bias_obj).size() != E))
            fail("ExecPlan: conv_pw_dw bias size");
        s->p = conv_nhwc_params("ExecPlan conv_pw_dw", *s->dw, {xs[0], xs[1], xs[2], E}, shape_of("stride"),
                                shape_of("padding"), shape_of("dilation"));
        s->pw_act = epilogue_code(d["pw_ep"].cast<std::string>());
        s->pw_lo = d["pw_lo"].cast<float>();
        s->pw_hi = d["pw_hi"].cast<float>();
        get_ep(s);
        return s;
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
        return s;
    } else if (kind == "transpose") {
        auto* s = new TransposeStep();
        s->to_nhwc = d["to_nhwc"].cast<bool>();
        return s;
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
        return s;
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
        return s;
    } else if (kind == "unary") {
        auto* s = new UnaryStep();
        s->kind = d["unary"].cast<int>();
        s->lo = d["lo"].cast<float>();
        s->hi = d["hi"].cast<float>();
        return s;
    } else if (kind == "channel_gate") {
        auto* s = new ChannelGateStep();
        s->act = channel_gate_act("ExecPlan channel_gate", d["gate_kind"].cast<std::string>());
        s->in_place = d["in_place"].cast<bool>();
        if (s->in_place && d.contains("buf") && d["buf"].cast<int>() >= 0) fail("ExecPlan: an in-place channel_gate step has no arena buffer");
        return s;
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
        return s;
    } else if (kind == "softmax") {
        auto* s = new SoftmaxStep();
        s->log = d["log"].cast<bool>();
        return s;
    } else if (kind == "matmul") {
        return new MatmulStep();
    } else if (kind == "mean") {
        auto* s = new MeanStep();
        for (bool b : d["reduced"].cast<std::vector<bool>>()) s->reduced.push_back(b);
        s->out_shape = shape_of("out_shape");
        return s;
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
        return s;
    }
    return nullptr;
}

}  // namespace executor_detail
