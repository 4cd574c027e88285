"""Fused scaled-dot-product attention (``_C.sdpa`` and ``F.scaled_dot_product_attention``) against torch's
``F.scaled_dot_product_attention`` on the same inputs: outputs and gradients, every ISA, any thread count."""
import numpy as np
import pytest
import torch

import flowvision.backend as flow
from flowvision.backend import _C
from flowvision.backend.nn import functional as F

# The kernel sums D (then Lk) products in its own blocked, FMA-contracted order: float32 differences of ~1e-6 for
# O(1) inputs.
ATOL = 2e-5


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def torch_sdpa(q, k, v, mask=None, causal=False, scale=None):
    t = lambda a: None if a is None else torch.from_numpy(np.array(a))  # noqa: E731
    return torch.nn.functional.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(mask), is_causal=causal,
                                                            scale=scale).numpy()


# ------------------------------------------------------------------------------------------------ kernel
@pytest.mark.parametrize("D,Dv", [(16, 16), (32, 32), (64, 64), (80, 80), (64, 24)])
@pytest.mark.parametrize("Lq,Lk", [(13, 13), (7, 1), (5, 301), (50, 49)])
def test_kernel_shapes(isa, D, Dv, Lq, Lk):
    rng = np.random.default_rng(D * 1000 + Lk)
    q, k, v = randn(rng, 2, 3, Lq, D), randn(rng, 2, 3, Lk, D), randn(rng, 2, 3, Lk, Dv)
    np.testing.assert_allclose(_C.sdpa(q, k, v), torch_sdpa(q, k, v), atol=ATOL, rtol=0)


@pytest.mark.parametrize("mask_shape", [(9, 11), (1, 11), (9, 1), (1, 9, 1), (3, 9, 11), (3, 1, 11), (2, 1, 9, 11),
                                        (2, 3, 9, 11), (1, 1, 1, 1)])
def test_kernel_float_mask_broadcast(isa, mask_shape):
    rng = np.random.default_rng(1)
    q, k, v = randn(rng, 2, 3, 9, 32), randn(rng, 2, 3, 11, 32), randn(rng, 2, 3, 11, 32)
    m = randn(rng, *mask_shape) * 3
    np.testing.assert_allclose(_C.sdpa(q, k, v, m), torch_sdpa(q, k, v, m), atol=ATOL, rtol=0)


def test_kernel_batch_dims_and_broadcast(isa):
    rng = np.random.default_rng(2)
    for qs, ks in [((10, 16), (12, 16)), ((4, 10, 16), (1, 12, 16)), ((2, 3, 10, 16), (3, 12, 16)),
                   ((2, 2, 3, 10, 16), (2, 1, 3, 12, 16)), ((2, 1, 2, 3, 10, 16), (1, 2, 1, 3, 12, 16))]:
        q, k, v = randn(rng, *qs), randn(rng, *ks), randn(rng, *ks)
        batch = np.broadcast_shapes(qs[:-2], ks[:-2])
        want = torch_sdpa(*(np.broadcast_to(a, batch + a.shape[-2:]) for a in (q, k, v)))
        np.testing.assert_allclose(_C.sdpa(q, k, v), want, atol=ATOL, rtol=0)


def test_kernel_long_keys_and_stride_tricks(isa):
    rng = np.random.default_rng(8)
    q, k, v = randn(rng, 2, 5, 16), randn(rng, 2, 4099, 16), randn(rng, 2, 4099, 8)
    np.testing.assert_allclose(_C.sdpa(q, k, v), torch_sdpa(q, k, v), atol=ATOL, rtol=0)
    # zero batch strides (np.broadcast_to), reversed rows (negative row stride)
    q, k, v = randn(rng, 3, 7, 16), np.broadcast_to(randn(rng, 1, 9, 16), (3, 9, 16)), randn(rng, 3, 9, 16)[:, ::-1]
    np.testing.assert_allclose(_C.sdpa(q, k, v), torch_sdpa(q, k, v), atol=ATOL, rtol=0)


def test_kernel_swin_window_layout(isa):
    """Swin: q (B, nW, heads, N, D) as views of the qkv Linear output, mask (nW, 1, N, N) / (1, heads, N, N)."""
    rng = np.random.default_rng(3)
    B, nW, H, N, D = 2, 4, 3, 49, 32
    qkv = randn(rng, B, nW, N, 3, H, D).transpose(3, 0, 1, 4, 2, 5)  # (3, B, nW, H, N, D) views
    q, k, v = qkv
    for m in (randn(rng, nW, 1, N, N), randn(rng, 1, H, N, N), randn(rng, nW, H, N, N)):
        np.testing.assert_allclose(_C.sdpa(q, k, v, m, 0.17), torch_sdpa(q, k, v, m, scale=0.17), atol=ATOL, rtol=0)


def test_kernel_causal_scale_and_strided_out(isa):
    rng = np.random.default_rng(4)
    qkv = randn(rng, 2, 37, 3, 4, 16).transpose(2, 0, 3, 1, 4)  # ViT: (3, B, H, N, D) views of (B, N, 3, H, D)
    q, k, v = qkv
    mem = np.full((2, 37, 4, 16), np.nan, np.float32)
    out = _C.sdpa(q, k, v, None, None, True, mem.transpose(0, 2, 1, 3))
    assert np.shares_memory(out, mem)
    np.testing.assert_allclose(mem.transpose(0, 2, 1, 3), torch_sdpa(q, k, v, causal=True), atol=ATOL, rtol=0)
    np.testing.assert_allclose(_C.sdpa(q, k[:, :, :20], v[:, :, :20], None, 0.3, True),
                               torch_sdpa(q, k[:, :, :20], v[:, :, :20], causal=True, scale=0.3), atol=ATOL, rtol=0)


def test_kernel_fully_masked_rows_are_zero_as_torch(isa):
    rng = np.random.default_rng(5)
    q, k, v = randn(rng, 1, 2, 6, 16), randn(rng, 1, 2, 8, 16), randn(rng, 1, 2, 8, 16)
    m = np.zeros((6, 8), np.float32)
    m[2] = -np.inf
    m[4, :7] = -np.inf
    want = torch_sdpa(q, k, v, m)
    assert np.all(want[:, :, 2] == 0)  # torch 2.x on CPU: a row with no visible key gives zeros
    np.testing.assert_allclose(_C.sdpa(q, k, v, m), want, atol=ATOL, rtol=0)


def test_kernel_probs_output():
    rng = np.random.default_rng(6)
    q, k, v, m = randn(rng, 2, 5, 16), randn(rng, 2, 7, 16), randn(rng, 2, 7, 8), randn(rng, 5, 7)
    probs = np.empty((2, 5, 7), np.float32)
    _C.sdpa(q, k, v, m, 0.5, False, None, probs)
    want = torch.softmax(torch.from_numpy(q) @ torch.from_numpy(k).transpose(-1, -2) * 0.5 + torch.from_numpy(m), -1)
    np.testing.assert_allclose(probs, want.numpy(), atol=1e-6, rtol=0)


def test_kernel_threads_bit_identical(isa):
    rng = np.random.default_rng(7)
    q, k, v, m = randn(rng, 1, 3, 200, 32), randn(rng, 1, 3, 150, 32), randn(rng, 1, 3, 150, 40), randn(rng, 200, 150)
    old = _C.get_num_threads()
    try:
        outs = []
        for n in (1, 2, 3):
            _C.set_num_threads(n)
            outs.append(_C.sdpa(q, k, v, m))
    finally:
        _C.set_num_threads(old)
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])


def test_kernel_bad_inputs():
    q = np.zeros((2, 4, 8), np.float32)
    k = np.zeros((2, 5, 8), np.float32)
    with pytest.raises(ValueError, match="float32"):
        _C.sdpa(q.astype(np.float64), k, k)
    with pytest.raises(ValueError, match="at least 2 dims"):
        _C.sdpa(q[0, 0], k, k)
    with pytest.raises(ValueError, match="same last dim"):
        _C.sdpa(q, k[..., :4], k)
    with pytest.raises(ValueError, match="same length"):
        _C.sdpa(q, k, k[:, :3])
    with pytest.raises(ValueError, match="do not broadcast"):
        _C.sdpa(q, np.zeros((3, 5, 8), np.float32), np.zeros((3, 5, 8), np.float32))
    with pytest.raises(ValueError, match="contiguous"):
        _C.sdpa(np.zeros((2, 8, 4), np.float32).transpose(0, 2, 1), k, k)
    with pytest.raises(ValueError, match="batch dims"):
        _C.sdpa(np.zeros((1,) * 5 + (4, 8), np.float32), k, k)
    with pytest.raises(ValueError, match="mask"):
        _C.sdpa(q, k, k, np.zeros((4, 6), np.float32))
    with pytest.raises(ValueError, match="at least 2 dims"):
        _C.sdpa(q, k, k, np.zeros((5,), np.float32))
    with pytest.raises(ValueError, match="cannot be combined"):
        _C.sdpa(q, k, k, np.zeros((4, 5), np.float32), None, True)
    with pytest.raises(ValueError, match="'out' must have shape"):
        _C.sdpa(q, k, k, None, None, False, np.zeros((2, 4, 7), np.float32))
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros((2, 4, 8), np.float32)
        ro.flags.writeable = False
        _C.sdpa(q, k, k, None, None, False, ro)
    with pytest.raises(ValueError, match="probs"):
        _C.sdpa(q, k, k, None, None, False, None, np.zeros((2, 4, 4), np.float32))


# ------------------------------------------------------------------------------------- functional + grads
def _grads_match(q, k, v, mask=None, causal=False, scale=None, mask_grad=False):
    fl = [flow.tensor(a, requires_grad=True) for a in (q, k, v)]
    th = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    fm = tm = None
    if mask is not None:
        fm = flow.tensor(mask, requires_grad=mask_grad)
        tm = torch.tensor(mask, requires_grad=mask_grad)
    fo = F.scaled_dot_product_attention(*fl, attn_mask=fm, is_causal=causal, scale=scale)
    to = torch.nn.functional.scaled_dot_product_attention(*th, attn_mask=tm, is_causal=causal, scale=scale)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), atol=ATOL, rtol=0)
    w = np.random.default_rng(0).standard_normal(to.shape).astype(np.float32)
    (fo * flow.tensor(w)).sum().backward()
    (to * torch.from_numpy(w)).sum().backward()
    for a, b in zip(fl + ([fm] if mask_grad else []), th + ([tm] if mask_grad else [])):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=5e-5, rtol=1e-4)
    return fo


def test_functional_grads_float_mask_broadcast():
    rng = np.random.default_rng(10)
    q, k, v = randn(rng, 2, 3, 9, 16), randn(rng, 2, 3, 11, 16), randn(rng, 2, 3, 11, 24)
    for shape in [(9, 11), (3, 1, 11), (2, 1, 9, 11)]:
        fo = _grads_match(q, k, v, randn(rng, *shape), mask_grad=True)
        assert fo.grad_fn is not None


def test_functional_grads_bool_mask_causal_scale_broadcast_batch():
    rng = np.random.default_rng(11)
    q, k, v = randn(rng, 2, 3, 9, 32), randn(rng, 3, 12, 32), randn(rng, 3, 12, 32)
    keep = rng.random((9, 12)) > 0.3
    keep[:, 0] = True
    _grads_match(q, k, v, keep)
    _grads_match(q, k, v, causal=True, scale=0.25)
    _grads_match(q[0, 0], k[0], v[0])  # no batch dims


def test_functional_fully_masked_row_grads_are_zero():
    rng = np.random.default_rng(12)
    q, k, v = randn(rng, 1, 4, 16), randn(rng, 1, 6, 16), randn(rng, 1, 6, 16)
    keep = np.ones((4, 6), bool)
    keep[1] = False
    _grads_match(q, k, v, keep)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_fused_backward_matches_torch(threads, monkeypatch):
    """Equal batch dims take the per-head fused backward (_C.sdpa_backward): heads in parallel (many heads) or
    one after the other with threaded GEMMs (fewer heads than 2x the threads); float and bool masks, causal, a
    key length that is not a whole number of vectors, Dv != D, and ViT's strided q/k/v/grad views."""
    from flowvision.backend import _C as C
    calls = []
    real = C.sdpa_backward
    monkeypatch.setattr(C, "sdpa_backward", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(20)
    before = flow.get_num_threads()
    flow.set_num_threads(threads)
    try:
        q, k, v = randn(rng, 2, 3, 13, 16), randn(rng, 2, 3, 11, 16), randn(rng, 2, 3, 11, 24)
        _grads_match(q, k, v)
        _grads_match(q, k, v, randn(rng, 13, 11))
        keep = rng.random((2, 1, 13, 11)) > 0.3
        keep[..., 0] = True
        _grads_match(q, k, v, keep)
        _grads_match(q[:1, :1], k[:1, :1], v[:1, :1], causal=True, scale=0.3)
        qkv = randn(rng, 3, 10, 3, 4, 8).transpose(2, 0, 3, 1, 4)  # (3, B, H, N, D) views of a qkv projection
        _grads_match(qkv[0], qkv[1], qkv[2])
    finally:
        flow.set_num_threads(before)
    assert len(calls) == 5


def test_fused_backward_errors():
    q = np.zeros((2, 4, 8), np.float32)
    with pytest.raises(ValueError, match="broadcasts over the batch"):
        _C.sdpa_backward(q, q[:1], q[:1], None, None, False, q)
    with pytest.raises(ValueError, match="'grad' must have shape"):
        _C.sdpa_backward(q, q, q, None, None, False, q[:, :3])


def test_functional_uses_fused_kernel_for_vit_views():
    """ViT's permuted q/k/v views go in without copies and the output is the (B, H, N, D) view of (B, N, H, D)
    memory, so the following transpose + reshape is free."""
    rng = np.random.default_rng(13)
    qkv = flow.tensor(randn(rng, 2, 10, 3 * 4 * 8)).reshape(2, 10, 3, 4, 8).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)
    out = F.scaled_dot_product_attention(q, k, v)
    assert out.grad_fn is None and tuple(out.shape) == (2, 4, 10, 8)
    merged = out.transpose(1, 2).reshape(2, 10, 32)
    assert np.shares_memory(merged.numpy(), out.numpy())
    np.testing.assert_allclose(out.numpy(), torch_sdpa(q.numpy(), k.numpy(), v.numpy()), atol=ATOL, rtol=0)


def test_functional_composite_paths_still_work():
    rng = np.random.default_rng(14)
    q, k, v = randn(rng, 1, 2, 5, 8), randn(rng, 1, 2, 6, 8), randn(rng, 1, 2, 6, 8)
    want = torch_sdpa(q, k, v).astype(np.float64)
    got = F.scaled_dot_product_attention(*(flow.tensor(a.astype(np.float64)) for a in (q, k, v)))
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(*(flow.tensor(a) for a in (q, k, v)), attn_mask=flow.tensor(q[0, 0, :, :6]),
                                       is_causal=True)


def test_functional_is_captured_by_compile():
    from flowvision.backend.nn import Module

    class Attn(Module):
        def forward(self, x):
            b, n, c = x.shape
            q, k, v = x.reshape(b, n, 3, 2, c // 6).permute(2, 0, 3, 1, 4).unbind(0)
            return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, c // 3)

    import flowvision
    x = flow.tensor(randn(np.random.default_rng(15), 2, 7, 48))
    m = Attn().eval()
    compiled = flowvision.compile(m, x)
    with flow.no_grad():
        want = m(x).numpy()
        got = compiled(x)
        got = got.numpy() if hasattr(got, "numpy") else got
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=0)
    plan = str(compiled.explain(x))
    assert "ScaledDotProductAttention" in plan and "eager fallback" not in plan
