"""The training kernels: blocked-image convolution (forward, input and weight gradients) against torch, and the fused
optimizer updates against the numpy updates (bit for bit) and torch's optimizers. Each runs under every ISA this
CPU supports (portable and avx2 here), switched in-process like ``FLOWVISION_ISA`` does at import."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from flowvision.backend import _C
import flowvision.backend as fb
from flowvision.backend.optim import _fused

ISAS = list(_C.supported_isas())


@pytest.fixture(params=ISAS)
def isa(request):
    before = _C.cpu_isa()
    _C._set_isa_for_testing(request.param)
    yield request.param
    _C._set_isa_for_testing(before)


# (N, C, H, W, O, k, stride, pad, dilation, groups): small output planes so images are blocked together; N=6 with a
# 16x16 output plane gives blocks of 4 + 2 images (a partial last block)
CONV_CASES = [
    (6, 8, 16, 16, 12, 3, 1, 1, 1, 1),
    (5, 6, 9, 9, 8, 3, 2, 1, 1, 2),
    (4, 8, 7, 7, 16, 1, 1, 0, 1, 1),      # 1x1 unit stride: the images' channels side by side
    (3, 4, 8, 8, 6, 1, 2, 0, 1, 1),       # strided 1x1
    (4, 6, 10, 10, 6, 3, 1, 2, 2, 3),     # dilated, grouped
    (3, 5, 6, 8, 7, (2, 3), (1, 2), (1, 0), 1, 1),
]


def _pair(v):
    return tuple(v) if isinstance(v, tuple) else (v, v)


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_conv_matches_torch(isa, case, dtype):
    n, c, h, w, o, k, s, p, d, g = case
    k, s, p, d = _pair(k), _pair(s), _pair(p), _pair(d)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = rng.standard_normal((o, c // g) + k).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    tx, tw, tb = (torch.from_numpy(a.copy()).requires_grad_() for a in (x, wt, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, s, p, d, g)
    gy = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.from_numpy(gy))
    y = _C.conv2d_forward(x, wt, b, list(s), list(p), list(d), g)
    gx = _C.conv2d_backward_input(gy, wt, x.shape, list(s), list(p), list(d), g)
    gw = _C.conv2d_backward_weight(gy, x, wt.shape, list(s), list(p), list(d), g)
    rtol = 1e-5 if dtype == np.float32 else 1e-11
    for got, ref in ((y, ty.detach().numpy()), (gx, tx.grad.numpy()), (gw, tw.grad.numpy())):
        # sums of up to ~1500 products: the error is relative to the largest magnitude, not to each element
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * float(np.abs(ref).max()))


def test_blocked_conv_weight_grad_same_for_any_thread_count():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((9, 16, 8, 8)).astype(np.float32)
    gy = rng.standard_normal((9, 32, 8, 8)).astype(np.float32)
    before = _C.get_num_threads()
    out = []
    try:
        for nt in (1, 2, 3):
            _C.set_num_threads(nt)
            out.append(_C.conv2d_backward_weight(gy, x, (32, 16, 3, 3), [1, 1], [1, 1], [1, 1], 1))
    finally:
        _C.set_num_threads(before)
    assert out[0].tobytes() == out[1].tobytes() == out[2].tobytes()


# ----------------------------------------------------------------------------------------- fused optimizer updates
def _params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(40000,), (7, 5), (3,), (64, 3, 3, 3)]  # one larger than a piece of the kernel's task split
    return [fb.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in shapes]


def _run(opt_cls, kw, dtype, fused, steps=3):
    params = _params(dtype)
    opt = opt_cls(params, **kw)
    rng = np.random.default_rng(5)
    old = _fused.enabled
    _fused.enabled = (lambda: True) if fused else (lambda: False)
    try:
        for _ in range(steps):
            for p in params:
                p.grad = fb.tensor(rng.standard_normal(tuple(p.shape)).astype(dtype))
            opt.step()
    finally:
        _fused.enabled = old
    return [p.detach().numpy().copy() for p in params], opt


SGD_CASES = [dict(lr=0.1), dict(lr=0.1, weight_decay=1e-4), dict(lr=0.05, momentum=0.9),
             dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=5e-4),
             dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4), dict(lr=0.05, momentum=0.9, maximize=True)]
ADAM_CASES = [(fb.optim.Adam, dict(lr=1e-3)), (fb.optim.Adam, dict(lr=1e-2, weight_decay=1e-2)),
              (fb.optim.AdamW, dict(lr=1e-3, weight_decay=0.05)),
              (fb.optim.AdamW, dict(lr=1e-3, betas=(0.3, 0.99), weight_decay=0.05, amsgrad=True)),
              (fb.optim.Adam, dict(lr=1e-3, maximize=True, amsgrad=True))]


@pytest.mark.parametrize("kw", SGD_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_sgd_bit_equal_to_numpy_update(isa, kw, dtype):
    a, _ = _run(fb.optim.SGD, kw, dtype, fused=True)
    b, _ = _run(fb.optim.SGD, kw, dtype, fused=False)
    for x, y in zip(a, b):
        assert x.tobytes() == y.tobytes()


@pytest.mark.parametrize("cls,kw", ADAM_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_adam_bit_equal_to_numpy_update(isa, cls, kw, dtype):
    a, oa = _run(cls, kw, dtype, fused=True)
    b, ob = _run(cls, kw, dtype, fused=False)
    for x, y in zip(a, b):
        assert x.tobytes() == y.tobytes()
    for sa, sb in zip(oa.state.values(), ob.state.values()):
        for k in sa:
            assert sa[k].numpy().tobytes() == sb[k].numpy().tobytes(), k


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)),
                                     ("AdamW", dict(lr=1e-3, weight_decay=0.05, amsgrad=True))])
def test_fused_update_matches_torch(name, kw):
    ours, _ = _run(getattr(fb.optim, name), kw, np.float32, fused=True)
    params = [torch.from_numpy(p.detach().numpy().copy()).requires_grad_() for p in _params(np.float32)]
    opt = getattr(torch.optim, name)(params, **kw)
    rng = np.random.default_rng(5)
    for _ in range(3):
        for p in params:
            p.grad = torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32))
        opt.step()
    for x, p in zip(ours, params):
        np.testing.assert_allclose(x, p.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_fused_update_falls_back_for_strided_params_and_checks_inputs():
    base = fb.tensor(np.arange(20, dtype=np.float32).reshape(4, 5))
    view = fb.Tensor._wrap(base.numpy()[:, ::2]) if hasattr(fb.Tensor, "_wrap") else None
    view.requires_grad_(True)
    view.grad = fb.ones(tuple(view.shape))
    opt = fb.optim.SGD([view], lr=0.5, momentum=0.9)
    assert _fused.sgd_group(opt, opt.param_groups[0]) is False  # a strided parameter takes the numpy update
    opt.step()
    np.testing.assert_array_equal(view.detach().numpy(), np.arange(20, dtype=np.float32).reshape(4, 5)[:, ::2] - 0.5)
    w = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="dtype"):
        _C.sgd_update_([w], [np.zeros(4, np.float64)], [], [], 0.1, 0.0, 1.0, 0.0, False)
    with pytest.raises(ValueError, match="elements"):
        _C.sgd_update_([w], [np.zeros(3, np.float32)], [], [], 0.1, 0.0, 1.0, 0.0, False)
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(4, np.float32)
        ro.flags.writeable = False
        _C.sgd_update_([ro], [np.zeros(4, np.float32)], [], [], 0.1, 0.0, 1.0, 0.0, False)


# ----------------------------------------------------------------------------------------- matmul backward
@pytest.mark.parametrize("sa,sb", [((2, 3, 5, 8), (8, 6)), ((2, 5, 8), (8, 6)), ((4, 8), (8, 6)), ((3, 5, 8), (8,)),
                                   ((2, 3, 5, 8), (3, 8, 6))])
def test_matmul_backward_with_shared_weight_matches_torch(sa, sb):
    """A 2-D right operand shared by every batch element (a linear layer on (B, H, W, C)) takes one GEMM over all
    rows for its gradient; every broadcast layout still equals torch."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    fa, fw = fb.tensor(a, requires_grad=True), fb.tensor(b, requires_grad=True)
    ta, tw = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    y = fb.matmul(fa, fw)
    g = rng.standard_normal(tuple(y.shape))
    y.backward(fb.tensor(g))
    torch.matmul(ta, tw).backward(torch.tensor(g))
    np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fw.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert tuple(fw.grad.shape) == sb


@pytest.mark.parametrize("shape", [(2, 5, 8), (4, 8)])
def test_linear_weight_grad_is_contiguous_like_the_weight(shape):
    """linear's weight gradient arrives C-contiguous (computed as (g.T @ x), not as the transpose of x.T @ g), so
    the fused optimizer update takes it without a copy; values equal torch's."""
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal(shape).astype(np.float32), rng.standard_normal((6, 8)).astype(np.float32)
    fx, fw = fb.tensor(x, requires_grad=True), fb.tensor(w, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    fb.nn.functional.linear(fx, fw).sum().backward()
    torch.nn.functional.linear(tx, tw).sum().backward()
    assert fw.grad.numpy().flags.c_contiguous
    np.testing.assert_allclose(fw.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_backward_kernel_matches_torch(dtype):
    """ReLU's gradient (threaded kernel, from the output) equals torch's threshold_backward, zeros, -0.0 and NaN
    included, on an array long enough to split over threads and with a tail shorter than a vector."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(100_003).astype(dtype)
    x[:4] = [0.0, -0.0, np.nan, -np.inf]
    g = rng.standard_normal(x.shape).astype(dtype)
    fx = fb.tensor(x, requires_grad=True)
    fb.nn.functional.relu(fx).backward(fb.tensor(g))
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.relu(tx).backward(torch.tensor(g))
    np.testing.assert_array_equal(fx.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(_C.relu_backward(g, np.maximum(x, 0)), np.where(np.maximum(x, 0) <= 0, 0, g))


def test_inplace_relu_without_snapshot_matches_torch():
    """relu(inplace=True) overwrites its input without a snapshot copy (ReLU saves only its output): gradients
    through it equal torch's, and overwriting a value another op saved is still caught at backward, as in torch."""
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    grads = []
    for lib, mk in ((fb, lambda a: fb.tensor(a, requires_grad=True)), (torch, lambda a: torch.tensor(a, requires_grad=True))):
        tx, tw = mk(x), mk(w)
        h = lib.nn.functional.relu(tx @ tw, inplace=True)
        z = h @ tw
        lib.nn.functional.relu(z[:, :8], inplace=True)  # a view: written back through its base
        ((z * z).sum() + h.sum()).backward()
        grads.append((tx.grad.numpy(), tw.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    s = fb.tensor(x, requires_grad=True).sigmoid()  # sigmoid saves its output
    fb.nn.functional.relu(s, inplace=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()


def test_inplace_relu_saves_the_tensor_itself():
    """relu_ under autograd writes into the tensor's own storage and saves that storage (torch's relu_ saves self):
    no second copy of the activation is held, the grad_fn is torch's ReluBackward0, and a later write to the tensor
    is caught at backward."""
    x = np.random.default_rng(7).standard_normal((64, 128)).astype(np.float32)
    a = fb.tensor(x, requires_grad=True)
    h = a * 2.0
    storage = h._data
    y = fb.nn.functional.relu(h, inplace=True)
    assert y is h and h._data is storage
    np.testing.assert_array_equal(storage, np.maximum(x * 2.0, 0))
    (saved,) = h.grad_fn.ctx.saved
    assert saved is storage and h.grad_fn.name() == "ReluBackward0"
    (h * h).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 8.0 * np.maximum(x, 0), rtol=1e-6)
    b = fb.tensor(x, requires_grad=True)
    hb = fb.nn.functional.relu(b * 1.0, inplace=True)
    out = hb.sum()
    hb.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
