"""Autograd semantics, each scenario run on flowvision.backend and on torch with the same values and compared:
backward(gradient), accumulation, retain_graph, grad modes, requires_grad_, detach, hooks, retain_grad,
autograd.grad, custom Functions, in-place ops on non-leaves and views, version-counter errors.

A scenario is ``f(m)`` with ``m`` the library module; it returns a dict of results (tensors, numbers, bools,
None or ``Raised(...)``) that must be equal for both libraries.
"""
import numpy as np
import pytest
import torch

import flowvision.backend as flow

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
V = RNG.standard_normal(3)


class Raised:
    def __init__(self, exc):
        self.type = type(exc).__name__
        self.msg = str(exc)

    def __eq__(self, other):
        return isinstance(other, Raised) and self.type == other.type

    def __repr__(self):
        return f"Raised({self.type}: {self.msg[:120]})"


def attempt(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the exception itself is the result being compared
        return Raised(e)


def leaf(m, a=A, grad=True):
    return m.tensor(np.array(a), dtype=m.float64, requires_grad=grad)


def _norm(v):
    if isinstance(v, (torch.Tensor, flow.Tensor)):
        return np.array(v.detach().numpy(), copy=True)
    if isinstance(v, (tuple, list)):
        return type(v)(_norm(x) for x in v)
    return v


def compare(scenario):
    got, want = scenario(flow), scenario(torch)
    assert got.keys() == want.keys()
    for k in want:
        g, w = _norm(got[k]), _norm(want[k])
        if isinstance(w, np.ndarray):
            assert isinstance(g, np.ndarray), f"{k}: flow {g!r}, torch array"
            assert g.shape == w.shape, f"{k}: shape {g.shape} vs {w.shape}"
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=k)
        elif isinstance(w, (tuple, list)):
            assert len(g) == len(w), k
            for gi, wi in zip(g, w):
                if isinstance(wi, np.ndarray):
                    np.testing.assert_allclose(gi, wi, rtol=1e-10, atol=1e-12, err_msg=k)
                else:
                    assert gi == wi, f"{k}: flow {gi!r} vs torch {wi!r}"
        else:
            assert g == w, f"{k}: flow {g!r} vs torch {w!r}"
    return got


# ------------------------------------------------------------------ backward basics
def test_backward_with_gradient_argument():
    def s(m):
        x = leaf(m)
        y = x * x + 3 * x
        y.backward(m.tensor(B, dtype=m.float64))
        z = leaf(m, V)
        (z.exp() * 2).backward(gradient=m.ones(3, dtype=m.float64) * 0.5)
        return {"x.grad": x.grad, "z.grad": z.grad, "nonscalar": attempt(lambda: (leaf(m) * 2).backward())}
    compare(s)


def test_grad_accumulates_over_two_backward_calls():
    def s(m):
        x = leaf(m)
        (x * 2).sum().backward()
        first = x.grad.clone()
        (x * x).sum().backward()
        y = leaf(m, V)
        for _ in range(3):
            (y ** 3).sum().backward()
        return {"first": first, "x.grad": x.grad, "y.grad": y.grad}
    compare(s)


def test_retain_graph():
    def s(m):
        x = leaf(m)
        h = x.exp()
        y = (h * h).sum()
        y.backward(retain_graph=True)
        g1 = x.grad.clone()
        y.backward()
        out = {"g1": g1, "g2": x.grad}
        out["third"] = attempt(lambda: y.backward())  # buffers freed now
        z = (leaf(m) * 2).sum()  # ops that save nothing may be backpropagated again in torch: don't rely on it
        z.backward(retain_graph=True)
        return out
    got = compare(s)
    assert isinstance(got["third"], Raised) and "retain_graph" in got["third"].msg


# ------------------------------------------------------------------ grad modes
def test_grad_mode_context_managers():
    def s(m):
        x = leaf(m)
        out = {}
        with m.no_grad():
            out["no_grad"] = (x * 2).requires_grad
            out["no_grad.enabled"] = m.is_grad_enabled()
            with m.enable_grad():
                out["nested_enable"] = (x * 2).requires_grad
            out["after_nested"] = (x * 2).requires_grad
        out["restored"] = (x * 2).requires_grad
        with m.set_grad_enabled(False):
            out["set_false"] = (x * 2).requires_grad
        with m.set_grad_enabled(True):
            out["set_true"] = (x * 2).requires_grad
        m.set_grad_enabled(False)  # as a plain call
        out["call_false"] = (x * 2).requires_grad
        m.set_grad_enabled(True)
        out["call_true"] = (x * 2).requires_grad
        with m.inference_mode():
            y = x * 2
            out["inference"] = y.requires_grad
            out["inference.grad_fn"] = y.grad_fn is None
        with m.inference_mode(False):
            out["inference_false"] = (x * 2).requires_grad
        out["leaf_flag_kept"] = x.requires_grad
        return out
    compare(s)


def test_grad_mode_decorators():
    def s(m):
        x = leaf(m)

        @m.no_grad()
        def f(t):
            return t * 2

        @m.enable_grad()
        def g(t):
            return t * 2

        @m.inference_mode()
        def h(t):
            return t * 2

        @m.set_grad_enabled(False)
        def k(t):
            return t * 2
        m.set_grad_enabled(True)  # the decorator instance switched the mode when created (torch does too)

        out = {"no_grad": f(x).requires_grad, "inference": h(x).requires_grad, "set_false": k(x).requires_grad}
        with m.no_grad():
            out["enable_in_no_grad"] = g(x).requires_grad
            out["still_off"] = m.is_grad_enabled()
        out["restored"] = m.is_grad_enabled()
        out["name"] = f.__name__
        return out
    compare(s)


def test_requires_grad_():
    def s(m):
        x = m.ones(3, dtype=m.float64)
        out = {"default": x.requires_grad, "ret_is_self": x.requires_grad_() is x, "now": x.requires_grad,
               "is_leaf": x.is_leaf}
        (x * x * 3).sum().backward()
        out["grad"] = x.grad
        out["off"] = x.requires_grad_(False).requires_grad
        out["int"] = attempt(lambda: m.ones(2, dtype=m.int64).requires_grad_())
        y = leaf(m) * 2
        out["nonleaf_off"] = attempt(lambda: y.requires_grad_(False))
        out["nonleaf_on"] = y.requires_grad_(True).requires_grad
        return out
    compare(s)


def test_detach_shares_storage():
    def s(m):
        x = leaf(m)
        d = x.detach()
        out = {"req": d.requires_grad, "leaf": d.is_leaf, "same_ptr": d.data_ptr() == x.data_ptr(),
               "grad_fn": d.grad_fn is None}
        d[0, 0] = 5.0  # writes through to x
        out["x_after"] = x
        y = x * 2
        yd = y.detach()
        yd.zero_()
        out["y_zeroed"] = y
        # the version counter is shared: modifying a detached alias of a saved tensor is caught
        z = leaf(m)
        w = z * z
        z.detach().add_(1)
        out["saved_modified"] = attempt(lambda: w.sum().backward())
        return out
    got = compare(s)
    assert "inplace" in got["saved_modified"].msg


# ------------------------------------------------------------------ hooks / retain_grad
def test_tensor_hooks():
    def s(m):
        seen = []
        x = leaf(m)
        h = x.register_hook(lambda g: g * 2)
        (x * x).sum().backward()
        out = {"leaf_hook": x.grad.clone()}
        h.remove()
        x.grad = None
        (x * x).sum().backward()
        out["after_remove"] = x.grad.clone()

        y = leaf(m, B)
        z = y * 3
        z.register_hook(lambda g: g + 1)
        z.register_hook(lambda g: seen.append(g.clone()))  # observe only (returns None)
        (z * z).sum().backward()
        out["nonleaf_hook"] = y.grad
        out["seen"] = seen[0]
        out["z.grad_not_kept"] = z.grad is None

        # two hooks compose in registration order; removing the first leaves the second
        w = leaf(m, V)
        h1 = w.register_hook(lambda g: g * 10)
        w.register_hook(lambda g: g + 1)
        (w * 1).sum().backward()
        out["composed"] = w.grad.clone()
        h1.remove()
        w.grad = None
        (w * 1).sum().backward()
        out["one_removed"] = w.grad
        out["no_grad_tensor"] = attempt(lambda: m.ones(2).register_hook(lambda g: g))
        return out
    compare(s)


def test_retain_grad():
    def s(m):
        x = leaf(m)
        z = x * 3
        z.retain_grad()
        u = z.exp()
        (u * 2).sum().backward()
        out = {"z.grad": z.grad, "retains": z.retains_grad, "x.grad": x.grad, "u.grad": u.grad is None,
               "leaf_retains": x.retains_grad}
        x.retain_grad()  # no-op on a leaf
        return out
    compare(s)


# ------------------------------------------------------------------ autograd.grad
def test_autograd_grad():
    def s(m):
        x, y = leaf(m), leaf(m, B)
        z = (x * y).sum() + (x ** 2).sum()
        gx, gy = m.autograd.grad(z, (x, y), retain_graph=True)
        out = {"gx": gx, "gy": gy, "x.grad_untouched": x.grad is None}
        (g1,) = m.autograd.grad([x * 2], [x], grad_outputs=[m.tensor(B, dtype=m.float64)])
        out["grad_outputs"] = g1
        u = leaf(m, V)
        out["unused_raises"] = attempt(lambda: m.autograd.grad((x * 2).sum(), [x, u]))
        gx2, gu = m.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
        out["allow_unused"] = (gx2, gu is None)
        (single,) = m.autograd.grad((u * u).sum(), u)
        out["single"] = single
        out["exp"] = m.autograd.grad((x * 3).exp().sum(), x)[0]
        w = x * 3
        out["wrt_intermediate"] = m.autograd.grad((w * w).sum(), w)[0]
        return out
    compare(s)


# ------------------------------------------------------------------ custom Function
def make_functions(m):
    class ScaledExp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale, y):
            out = (x * scale).exp() * y
            ctx.save_for_backward(x, y, out)
            ctx.scale = scale
            return out

        @staticmethod
        def backward(ctx, g):
            x, y, out = ctx.saved_tensors
            gx = g * out * ctx.scale if ctx.needs_input_grad[0] else None
            gy = g * (x * ctx.scale).exp() if ctx.needs_input_grad[2] else None
            return gx, None, gy

    class TwoOut(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x * x

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return g1 * 2 + g2 * 2 * x

    return ScaledExp, TwoOut


def test_custom_function():
    def s(m):
        ScaledExp, TwoOut = make_functions(m)
        x, y = leaf(m), leaf(m, B)
        out_t = ScaledExp.apply(x, 0.5, y)
        (out_t * out_t).sum().backward()
        res = {"out": out_t, "x.grad": x.grad, "y.grad": y.grad, "has_grad_fn": out_t.grad_fn is not None}
        x2 = leaf(m)
        y2 = leaf(m, B, grad=False)
        ScaledExp.apply(x2, 2.0, y2).sum().backward()
        res["x2.grad"] = x2.grad
        res["y2.grad"] = y2.grad is None
        x3 = leaf(m, V)
        a, b = TwoOut.apply(x3)
        (a.sum() + (b * 3).sum()).backward()
        res["two_out"] = x3.grad
        x4 = leaf(m, V)
        a4, b4 = TwoOut.apply(x4)
        b4.sum().backward()  # only one output used
        res["one_of_two"] = x4.grad
        with m.no_grad():
            res["no_grad"] = ScaledExp.apply(leaf(m), 1.0, leaf(m, B)).requires_grad
        # modifying a tensor saved by a custom Function is caught too
        x5 = leaf(m)
        h = x5 * 1
        o = ScaledExp.apply(h, 1.0, leaf(m, B))
        h.mul_(2)
        res["saved_modified"] = attempt(lambda: o.sum().backward())
        return res
    compare(s)


# ------------------------------------------------------------------ in-place ops
def test_inplace_on_non_leaf():
    def s(m):
        x, y = leaf(m), leaf(m, B)
        a = x * 1
        a.add_(y)
        a.mul_(y)
        a.clamp_(max=1.0)
        a.sub_(x, alpha=2)
        a.exp_()                   # last: torch's exp_ saves its output, which a later in-place op would clobber
        (a * a).sum().backward()
        out = {"a": a, "x.grad": x.grad, "y.grad": y.grad, "version": a._version if m is torch else a._version_counter}
        b = leaf(m) * 2
        b += 1
        b *= b                     # self-aliasing in-place mul saves the operand it then overwrites
        out["self_mul"] = attempt(lambda: b.sum().backward())
        return out
    compare(s)


def test_inplace_on_views():
    def s(m):
        x, y, w = leaf(m), leaf(m, V), leaf(m, B)
        a = x * 1
        a[:, 1] = y              # x[:, 1] = y on a non-leaf
        a[0].mul_(2)             # in place through a view
        v = a[1:]
        v[:, :2] += 5            # view of a view
        a.t()[0].sub_(y)         # through a transposed view
        out_v = v * 1            # v sees the base's later updates
        a.mul_(w)
        ((a + out_v.sum()) * w).sum().backward()
        out = {"a": a, "x.grad": x.grad, "y.grad": y.grad, "w.grad": w.grad, "v": v}

        x2, y2 = leaf(m), leaf(m, V)
        b = x2.clone()
        b[:, 0] = y2 * 3
        b[b > 0.5] = 0.0          # boolean mask assignment
        b[[0, 2]] = y2[:2].unsqueeze(1) * 0 + 1.5  # advanced-index assignment of a broadcast value
        (b * b).sum().backward()
        out.update({"b": b, "x2.grad": x2.grad, "y2.grad": y2.grad})

        x3 = leaf(m)
        c = x3.unsqueeze(0).squeeze(0) * 1
        c.view(-1)[::2] = 0.0
        c.sum().backward()
        out["x3.grad"] = x3.grad
        return out
    compare(s)


def test_inplace_on_leaf_view_is_an_error():
    def s(m):
        x = leaf(m)
        return {"leaf": attempt(lambda: x.add_(1)), "leaf_view": attempt(lambda: x[0].mul_(2)),
                "setitem": attempt(lambda: x.__setitem__(0, 1.0)),
                "no_grad_ok": _no_grad_inplace(m, x)}
    compare(s)


def _no_grad_inplace(m, x):
    with m.no_grad():
        x.mul_(2)
        x[0] = 1.0
    return x.requires_grad and x.is_leaf


def test_version_counter_error():
    def s(m):
        out = {}
        x = leaf(m)
        y = x.sigmoid()            # saves its output
        y.mul_(2)
        out["saved_output"] = attempt(lambda: y.sum().backward())
        a, b = leaf(m), leaf(m, B)
        u = a * 1
        z = u * b                  # saves u and b
        u.add_(1)
        out["saved_input"] = attempt(lambda: z.sum().backward())
        c = leaf(m)
        v = c * 1
        e = v.exp()                # saves the output, not v: modifying v afterwards is fine
        v.mul_(3)
        e.sum().backward()
        out["unsaved_ok"] = c.grad
        d = leaf(m)
        t = d * 1
        p = t.pow(2)
        t[0, 0] = 7.0              # a setitem bumps the version too
        out["setitem_bump"] = attempt(lambda: p.sum().backward())
        return out
    got = compare(s)
    for k in ("saved_output", "saved_input", "setitem_bump"):
        assert isinstance(got[k], Raised) and "modified by an inplace operation" in got[k].msg, got[k]
        assert "version" in got[k].msg


def test_inplace_chain_after_output_saving_op_deliberate_difference():
    """Deliberate difference: flowvision's ``x.op_()`` hands the op a private snapshot when autograd needs it
    (``_ops/inplace.make_inplace``), so what the op saves is never the storage a later in-place op overwrites.
    ``a.exp_(); a.mul_(2)`` therefore backpropagates (with the exact gradient of the out-of-place chain) where
    torch raises its version-counter error."""
    x_t = leaf(torch)
    a_t = x_t * 1
    a_t.exp_()
    a_t.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        a_t.sum().backward()
    x_f = leaf(flow)
    a_f = x_f * 1
    a_f.exp_()
    a_f.mul_(2)
    a_f.sum().backward()
    ref = leaf(torch)
    ((ref * 1).exp() * 2).sum().backward()
    np.testing.assert_allclose(x_f.grad.numpy(), ref.grad.numpy(), rtol=1e-12)


def test_view_sees_later_inplace_on_its_base():
    """A view taken before its base is modified in place backpropagates into what was written (torch
    regenerates the view's grad_fn; so does flowvision)."""
    def s(m):
        x, y = leaf(m), leaf(m, V)
        a = x * 1
        v = a[1:]                 # view recorded before the write
        a[:, 0] = y               # base modified in place
        (v * v).sum().backward()
        z = m.zeros(3, 4, dtype=m.float64)   # a base that does not require grad ...
        zv = z[:, 1:]
        z[:, 2] = y * 2           # ... until a value that does is written into it
        return {"x.grad": x.grad, "y.grad": y.grad, "zv.requires_grad": zv.requires_grad,
                "zv.is_leaf": zv.is_leaf, "zv": zv}
    compare(s)


def test_inplace_on_detached_alias_starts_a_new_history():
    """``d = x.detach()`` shares x's storage but is a new autograd root: writing a grad-requiring value into it
    gives d a history of its own and leaves x (leaf or not) untouched, like torch."""
    def s(m):
        x, y = leaf(m), leaf(m, B)
        d = x.detach()
        d.copy_(y * 3)
        (d * 2).sum().backward()
        out = {"x.is_leaf": x.is_leaf, "x.grad": x.grad is None, "y.grad": y.grad, "x": x, "d.req": d.requires_grad}
        a = leaf(m, V) * 1
        da = a.detach()
        da[0] = 5.0
        a.sum().backward()  # a's history is still its own MulBackward (da's write is not recorded in it)
        out["a"] = a
        big = m.arange(12.0, dtype=m.float64).reshape(3, 4)
        view = big[1:, 1:]
        dv = view.detach()
        out["offsets"] = (view.storage_offset(), dv.storage_offset(), dv[1].storage_offset())
        return out
    compare(s)


def test_more_backward_semantics():
    def s(m):
        out = {}
        x, y = leaf(m, V), leaf(m, V * 2)
        (x * y).sum().backward(inputs=[x])
        out["inputs="] = (x.grad, y.grad is None)
        seen = []
        a = leaf(m, V)
        z = a * 2
        z.register_hook(lambda g: seen.append(g.clone()))
        (z * z + z).sum().backward()
        out["hook_once_with_total"] = (len(seen), seen[0], a.grad)
        b = leaf(m, V)
        b.grad = m.ones(3, dtype=m.float64) * 10
        (b * 3).sum().backward()
        out["manual_grad_accumulates"] = b.grad
        c = leaf(m, V)
        with m.no_grad():
            d = c * 2
        d.requires_grad_()
        (d * 3).sum().backward()
        out["no_grad_result_as_new_leaf"] = (d.grad, c.grad is None, d.is_leaf)
        e = leaf(m, V)
        q = (e * e).sum()
        with m.no_grad():
            e.sub_(0.5)         # optimizer-style update of a leaf that q saved
        out["leaf_update_then_backward"] = attempt(lambda: q.backward())
        f = leaf(m, V)
        out["int_outputs"] = (f.argmax().requires_grad, (f > 0).requires_grad, f.max(0)[1].requires_grad)
        g = leaf(m, V)
        (gg,) = m.autograd.grad([(g * 2).sum(), (g ** 2).sum()], g)
        out["grad_of_several_outputs"] = gg
        h = leaf(m, A)
        (h.t().reshape(-1)[::2].unsqueeze(0).expand(2, 6) * m.arange(12.0, dtype=m.float64).reshape(2, 6)).sum().backward()
        out["view_chain"] = h.grad
        k = leaf(m, V)
        w = m.zeros(3, dtype=m.float64)
        w.copy_(k * 3)
        (w * w).sum().backward()
        out["copy_into_plain_tensor"] = k.grad
        return out
    got = compare(s)
    assert isinstance(got["leaf_update_then_backward"], Raised)


def test_custom_function_identity_and_non_differentiable_outputs():
    def s(m):
        class Id(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Sort(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                v, i = x.sort()
                ctx.mark_non_differentiable(i)
                ctx.save_for_backward(i)
                return v, i

            @staticmethod
            def backward(ctx, gv, gi):
                (i,) = ctx.saved_tensors
                g = m.zeros_like(gv)
                g[i] = gv
                return g

        x = leaf(m, V)
        y = Id.apply(x)
        (y * 3).sum().backward()
        z = leaf(m, V)
        v, i = Sort.apply(z)
        (v * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().backward()
        return {"identity": (x.grad, y is x), "sorted": (z.grad, i.requires_grad)}
    compare(s)


def test_second_backward_through_nodes_without_saved_tensors():
    """torch frees only saved tensors: a graph of adds/sums/views/indexing can be backpropagated twice without
    retain_graph, while one through exp/mul raises."""
    def s(m):
        out = {}
        for name, f in [("add_sum", lambda x: (x + 1).sum()), ("view_reshape", lambda x: x.view(3, 1).reshape(3).sum()),
                        ("index", lambda x: x[0]), ("mean", lambda x: x.mean()), ("exp", lambda x: x.exp().sum()),
                        ("mul", lambda x: (x * x).sum())]:
            x = leaf(m, V)
            y = f(x)
            y.backward()
            out[name] = attempt(lambda: y.backward())
            out[name + ".grad"] = x.grad
        return out
    compare(s)


def test_gradient_sums_in_place_match_torch_and_leave_inputs_alone():
    """Several large gradients reaching one output (a qkv tensor unbound into three slices, a residual stream, a
    tensor used four times) are summed by the threaded kernel, into the engine's own sum buffer after the first:
    values equal torch's, and neither the caller's gradient nor a hook's view of an earlier sum is written to."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 64, 96)).astype(np.float32)  # 73 728 elements: the threaded path
    w = rng.standard_normal((96,)).astype(np.float32)
    root = rng.standard_normal((4, 64, 96)).astype(np.float32)
    root_copy = root.copy()

    def run(lib, xt, wt, root_t):
        q, k, v = xt.unbind(1)
        h = q * wt + k.sigmoid() * v
        out = h + h * 2.0 + h.tanh() + h  # h reaches four consumers
        out.backward(root_t)
        return xt.grad, wt.grad

    fx, fw = flow.tensor(x, requires_grad=True), flow.tensor(w, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    froot = flow.tensor(root)
    fgx, fgw = run(flow, fx, fw, froot)
    tgx, tgw = run(torch, tx, tw, torch.tensor(root))
    np.testing.assert_allclose(fgx.numpy(), tgx.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fgw.numpy(), tgw.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(froot.numpy(), root_copy)


@pytest.mark.parametrize("case", ["slices_only", "dense_first", "dense_last", "overlapping", "dtype_change"])
def test_slice_gradients_summed_lazily_match_torch(case):
    """Slice gradients are kept lazy (zeros with one slice set) and written into one buffer when several reach a
    tensor: every order of dense and sliced contributions, overlapping slices and a dtype change at the boundary
    give torch's gradient, and a dense gradient a backward returned is not written to."""
    from flowvision.backend.autograd.graph import ScatteredGrad, _accumulate
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    w = rng.standard_normal((4, 5, 6)).astype(np.float32)

    def run(xt, wt):
        parts = {
            "slices_only": lambda: sum((u * (i + 1.0) * wt).sum() for i, u in enumerate(xt.unbind(0))),
            "dense_first": lambda: (xt * 3.0).sum() + (xt[1] * wt).sum() + xt[:, 2].sum(),
            "dense_last": lambda: xt[1].sum() + xt[:, 2:4].sum() * 2.0 + (xt * wt).sum(),
            "overlapping": lambda: xt[0:2].sum() + (xt[1:3] * 2.0).sum() + (xt[1, 2] * wt[0]).sum(),
            "dtype_change": lambda: xt.double()[0].sum() + (xt.double()[0:2] ** 2).sum(),
        }
        parts[case]().backward()
        return xt.grad

    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fw, tw = flow.tensor(w), torch.tensor(w)
    np.testing.assert_allclose(run(fx, fw).numpy(), run(tx, tw).numpy(), rtol=1e-6, atol=1e-6)

    dense = rng.standard_normal((3, 4)).astype(np.float32)
    before = dense.copy()
    owned = set()
    out = _accumulate(dense, ScatteredGrad((3, 4), (1,), np.ones(4, np.float32)), owned)
    np.testing.assert_array_equal(dense, before)  # not the engine's: copied, not written
    expected = before.copy()
    expected[1] += 1
    np.testing.assert_array_equal(out, expected)
    assert id(out) in owned


def test_binary_kernel_writes_into_out():
    from flowvision.backend import _C
    a = np.arange(20000, dtype=np.float32)
    b = np.ones(20000, np.float32)
    y = _C.binary(a, b, "add", 1, a.size, 0, out=a)
    assert y is a or np.shares_memory(y, a)
    np.testing.assert_array_equal(a, np.arange(20000, dtype=np.float32) + 1)
    with pytest.raises(Exception, match="out must be"):
        _C.binary(a, b, "add", 1, a.size, 0, out=np.zeros(10, np.float32))
