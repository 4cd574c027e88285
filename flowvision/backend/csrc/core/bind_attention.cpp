// Bindings of the fused attention kernel (cpu/attention.cpp): _C.sdpa.
// Operands are taken as they are (any strides, last dim contiguous), so permuted views of a qkv projection need
// no copy; the output may be a strided view too (e.g. the (B, H, L, D) view of a (B, L, H, D) buffer).
#include <cmath>

#include "core/bind_util.h"

namespace {

constexpr int kMaxBatchDims = 4;

// A float32 array viewed as (batch..., rows, cols) with element strides.
struct View {
    const char* name;
    py::array arr;
    std::vector<int64_t> shape, strides;  // in elements
};

View view_of(const py::handle& h, const char* name, bool writable = false) {
    need_f32("sdpa", name, h);
    View v{name, py::reinterpret_borrow<py::array>(h), {}, {}};
    if (v.arr.ndim() < 2) {
        std::ostringstream os;
        os << "sdpa: '" << name << "' must have at least 2 dims (..., L, E), got shape " << shp(v.arr);
        fail(os.str());
    }
    if (v.arr.ndim() > kMaxBatchDims + 2) {
        std::ostringstream os;
        os << "sdpa: '" << name << "' has " << v.arr.ndim() - 2 << " batch dims (at most " << kMaxBatchDims
           << " supported), shape " << shp(v.arr);
        fail(os.str());
    }
    if (writable && !v.arr.writeable()) fail(std::string("sdpa: '") + name + "' is read-only");
    for (py::ssize_t i = 0; i < v.arr.ndim(); ++i) {
        const py::ssize_t st = v.arr.strides(i);
        if (st % 4) fail(std::string("sdpa: '") + name + "' has a stride that is not a whole number of float32s");
        v.shape.push_back(v.arr.shape(i));
        v.strides.push_back(v.arr.shape(i) == 1 ? 0 : st / 4);
    }
    return v;
}

void need_contiguous_rows(const View& v) {
    if (v.shape.back() > 1 && v.strides.back() != 1) {
        std::ostringstream os;
        os << "sdpa: the last dim of '" << v.name << "' must be contiguous (stride 1), got strides (in elements) "
           << vstr(v.strides);
        fail(os.str());
    }
}

// Batch stride of `v` for each of the 4 right-aligned batch dims of `batch` (0 where v broadcasts).
void batch_strides(const View& v, const std::vector<int64_t>& batch, int64_t* out) {
    const int nb = (int)v.shape.size() - 2, pad = kMaxBatchDims - nb;
    for (int d = 0; d < kMaxBatchDims; ++d) {
        out[d] = 0;
        if (d < pad) continue;
        const int64_t n = v.shape[d - pad];
        if (n != 1 && n != batch[d]) {
            std::ostringstream os;
            os << "sdpa: batch dims of '" << v.name << "' " << vstr(v.shape) << " do not broadcast to "
               << vstr(batch);
            fail(os.str());
        }
        out[d] = n == 1 ? 0 : v.strides[d - pad];
    }
}

// The parameters shared by the forward and the backward: operands, broadcast batch, scale and mask.
struct Prepared {
    View q, k, v;
    fv::AttentionParams p;
    std::vector<int64_t> batch, out_shape;  // batch right-aligned to kMaxBatchDims; out (..., Lq, Dv)
    const float* mask;
};

Prepared prepare(const py::object& q_, const py::object& k_, const py::object& v_, const py::object& mask_,
                 const py::object& scale_, bool is_causal) {
    View q = view_of(q_, "query"), k = view_of(k_, "key"), v = view_of(v_, "value");
    for (const View* x : {&q, &k, &v}) need_contiguous_rows(*x);
    const int64_t Lq = q.shape[q.shape.size() - 2], D = q.shape.back();
    const int64_t Lk = k.shape[k.shape.size() - 2], Dv = v.shape.back();
    if (k.shape.back() != D) {
        std::ostringstream os;
        os << "sdpa: query " << vstr(q.shape) << " and key " << vstr(k.shape) << " must have the same last dim";
        fail(os.str());
    }
    if (v.shape[v.shape.size() - 2] != Lk) {
        std::ostringstream os;
        os << "sdpa: key " << vstr(k.shape) << " and value " << vstr(v.shape) << " must have the same length";
        fail(os.str());
    }
    // broadcast batch shape, right-aligned to kMaxBatchDims
    std::vector<int64_t> batch(kMaxBatchDims, 1);
    for (const View* x : {&q, &k, &v}) {
        const int nb = (int)x->shape.size() - 2, pad = kMaxBatchDims - nb;
        for (int d = 0; d < nb; ++d) {
            const int64_t n = x->shape[d];
            int64_t& b = batch[pad + d];
            if (n != 1 && b != 1 && n != b) {
                std::ostringstream os;
                os << "sdpa: batch dims of query " << vstr(q.shape) << ", key " << vstr(k.shape) << " and value "
                   << vstr(v.shape) << " do not broadcast";
                fail(os.str());
            }
            if (n != 1) b = n;
        }
    }
    int out_batch_dims = 0;
    for (const View* x : {&q, &k, &v}) out_batch_dims = std::max(out_batch_dims, (int)x->shape.size() - 2);
    std::vector<int64_t> out_shape(batch.end() - out_batch_dims, batch.end());
    out_shape.push_back(Lq);
    out_shape.push_back(Dv);

    fv::AttentionParams p{};
    for (int d = 0; d < kMaxBatchDims; ++d) p.batch[d] = batch[d];
    batch_strides(q, batch, p.q_bs);
    batch_strides(k, batch, p.k_bs);
    batch_strides(v, batch, p.v_bs);
    p.Lq = Lq;
    p.Lk = Lk;
    p.D = D;
    p.Dv = Dv;
    p.q_rs = q.strides[q.shape.size() - 2];
    p.k_rs = k.strides[k.shape.size() - 2];
    p.v_rs = v.strides[v.shape.size() - 2];
    p.causal = is_causal;
    p.scale = scale_.is_none() ? (float)(1.0 / std::sqrt((double)(D > 0 ? D : 1))) : scale_.cast<float>();

    const float* mask = nullptr;
    if (!mask_.is_none()) {
        if (is_causal) fail("sdpa: an explicit mask and is_causal=True cannot be combined");
        need_f32("sdpa", "mask", mask_);
        View m{"mask", py::reinterpret_borrow<py::array>(mask_), {}, {}};
        if (m.arr.ndim() > kMaxBatchDims + 2) fail("sdpa: 'mask' has too many dims, shape " + shp(m.arr));
        for (py::ssize_t i = 0; i < m.arr.ndim(); ++i) {
            if (m.arr.strides(i) % 4) fail("sdpa: 'mask' has a stride that is not a whole number of float32s");
            m.shape.push_back(m.arr.shape(i));
            m.strides.push_back(m.arr.shape(i) == 1 ? 0 : m.arr.strides(i) / 4);
        }
        if (m.shape.size() < 2) fail("sdpa: 'mask' must have at least 2 dims (..., Lq, Lk), got shape " + shp(m.arr));
        const size_t r = m.shape.size();
        const int64_t mq = m.shape[r - 2], mk = m.shape[r - 1];
        if ((mq != 1 && mq != Lq) || (mk != 1 && mk != Lk) || (int)r - 2 > out_batch_dims) {
            std::ostringstream os;
            os << "sdpa: mask of shape " << shp(m.arr) << " does not broadcast to " << vstr(batch) << " + (" << Lq
               << ", " << Lk << ")";
            fail(os.str());
        }
        batch_strides(m, batch, p.mask_bs);
        p.mask_rs = m.strides[r - 2];
        p.mask_cs = m.strides[r - 1];
        mask = static_cast<const float*>(m.arr.data());
    }
    return Prepared{q, k, v, p, batch, out_shape, mask};
}

py::object sdpa(const py::object& q_, const py::object& k_, const py::object& v_, const py::object& mask_,
                const py::object& scale_, bool is_causal, const py::object& out_, const py::object& probs_) {
    Prepared pr = prepare(q_, k_, v_, mask_, scale_, is_causal);
    fv::AttentionParams& p = pr.p;
    const std::vector<int64_t>& batch = pr.batch;
    const std::vector<int64_t>& out_shape = pr.out_shape;
    const int64_t Lq = p.Lq, Lk = p.Lk;
    py::array out;
    if (out_.is_none()) {
        out = empty<float>(out_shape);
    } else {
        View o = view_of(out_, "out", true);
        if (o.shape != out_shape) {
            std::ostringstream os;
            os << "sdpa: 'out' must have shape " << vstr(out_shape) << ", got " << vstr(o.shape);
            fail(os.str());
        }
        need_contiguous_rows(o);
        out = o.arr;
    }
    View o = view_of(out, "out", true);
    batch_strides(o, batch, p.out_bs);
    for (int d = 0; d < kMaxBatchDims; ++d)
        if (p.batch[d] > 1 && p.out_bs[d] == 0) fail("sdpa: 'out' must not broadcast (a batch stride is 0)");
    p.out_rs = Lq > 1 ? o.strides[o.shape.size() - 2] : 0;
    if (Lq > 1 && p.out_rs == 0) fail("sdpa: 'out' must not broadcast (its row stride is 0)");

    float* probs = nullptr;
    if (!probs_.is_none()) {
        need_f32("sdpa", "probs", probs_);
        auto pa = py::reinterpret_borrow<py::array>(probs_);
        std::vector<int64_t> want(out_shape.begin(), out_shape.end() - 1);
        want.push_back(Lk);
        std::vector<int64_t> got(pa.shape(), pa.shape() + pa.ndim());
        if (got != want) fail("sdpa: 'probs' must have shape " + vstr(want) + ", got " + vstr(got));
        if (!(pa.flags() & py::array::c_style) || !pa.writeable())
            fail("sdpa: 'probs' must be a writable C-contiguous float32 array");
        probs = static_cast<float*>(pa.mutable_data());
    }

    const float* qp = static_cast<const float*>(pr.q.arr.data());
    const float* kp = static_cast<const float*>(pr.k.arr.data());
    const float* vp = static_cast<const float*>(pr.v.arr.data());
    float* op = static_cast<float*>(out.mutable_data());
    const auto fn = table().attn.sdpa_f32;
    {
        py::gil_scoped_release nogil;
        fn(qp, kp, vp, pr.mask, op, probs, p);
    }
    return out;
}

py::tuple sdpa_backward(const py::object& q_, const py::object& k_, const py::object& v_, const py::object& mask_,
                        const py::object& scale_, bool is_causal, const py::object& grad_) {
    Prepared pr = prepare(q_, k_, v_, mask_, scale_, is_causal);
    fv::AttentionParams& p = pr.p;
    for (const View* x : {&pr.q, &pr.k, &pr.v}) {
        std::vector<int64_t> own(x->shape.begin(), x->shape.end() - 2);
        if (own != std::vector<int64_t>(pr.out_shape.begin(), pr.out_shape.end() - 2)) {
            std::ostringstream os;
            os << "sdpa_backward: '" << x->name << "' " << vstr(x->shape) << " broadcasts over the batch "
               << vstr(pr.out_shape) << " (only equal batch dims are supported)";
            fail(os.str());
        }
    }
    View g = view_of(grad_, "grad");
    if (g.shape != pr.out_shape) fail("sdpa_backward: 'grad' must have shape " + vstr(pr.out_shape) + ", got " +
                                      vstr(g.shape));
    need_contiguous_rows(g);
    batch_strides(g, pr.batch, p.out_bs);
    p.out_rs = g.strides[g.shape.size() - 2];
    std::vector<int64_t> lead(pr.out_shape.begin(), pr.out_shape.end() - 2), sq = lead, sk = lead, sv = lead;
    sq.insert(sq.end(), {p.Lq, p.D});
    sk.insert(sk.end(), {p.Lk, p.D});
    sv.insert(sv.end(), {p.Lk, p.Dv});
    py::array gq = empty<float>(sq), gk = empty<float>(sk), gv = empty<float>(sv);
    const float* qp = static_cast<const float*>(pr.q.arr.data());
    const float* kp = static_cast<const float*>(pr.k.arr.data());
    const float* vp = static_cast<const float*>(pr.v.arr.data());
    const float* gp = static_cast<const float*>(g.arr.data());
    float* gqp = static_cast<float*>(gq.mutable_data());
    float* gkp = static_cast<float*>(gk.mutable_data());
    float* gvp = static_cast<float*>(gv.mutable_data());
    const auto fn = table().attn.sdpa_backward_f32;
    {
        py::gil_scoped_release nogil;
        fn(qp, kp, vp, pr.mask, gp, gqp, gkp, gvp, p);
    }
    return py::make_tuple(gq, gk, gv);
}

}  // namespace

void bind_attention(py::module_& m) {
    m.def("sdpa", &sdpa, py::arg("q"), py::arg("k"), py::arg("v"), py::arg("mask") = py::none(),
          py::arg("scale") = py::none(), py::arg("is_causal") = false, py::arg("out") = py::none(),
          py::arg("probs") = py::none(),
          "Fused attention, float32: softmax(scale * q @ k^T + mask) @ v over up to 4 broadcast batch dims. q "
          "(..., Lq, D), k (..., Lk, D), v (..., Lk, Dv) and out (..., Lq, Dv) may be strided views (last dim "
          "contiguous); mask: additive float32, broadcastable to (..., Lq, Lk); scale None = 1/sqrt(D); a row "
          "with no visible key gives zeros. probs (optional, C-contiguous (..., Lq, Lk)) receives the "
          "probabilities. Returns out.");
    m.def("sdpa_backward", &sdpa_backward, py::arg("q"), py::arg("k"), py::arg("v"), py::arg("mask"), py::arg("scale"),
          py::arg("is_causal"), py::arg("grad"),
          "Gradients (gq, gk, gv) of the fused attention for the output gradient `grad`, one head per task; q, k "
          "and v as for sdpa but with equal batch dims (no broadcasting). The outputs are C-contiguous.");
}
