"""One declaration per op: sinc and rrelu are each one Function (forward and backward over the array namespace
``ctx.xp``, capture traits), checked against torch on the CPU, on the CUDA side (the host emulation of ``_C_cuda``
from tests/cuda_emulator.py) and through compile."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import flowvision.backend as fb
from flowvision.backend import cuda, nn
from flowvision.backend.autograd import graph as G
from flowvision.backend.nn import functional as F
from flowvision.backend import _C
from flowvision.backend._ops import traits

RNG = np.random.default_rng(16)


def _x(*shape, dtype=np.float32):
    x = RNG.uniform(-3, 3, shape).astype(dtype)
    x.reshape(-1)[:2] = 0.0  # the removable singularity of sinc / the kink of rrelu
    return x


def _grad_pair(fn_fb, fn_torch, x):
    a = fb.tensor(x).requires_grad_(True)
    t = torch.tensor(x, requires_grad=True)
    y, yt = fn_fb(a), fn_torch(t)
    g = RNG.standard_normal(yt.shape).astype(x.dtype)
    y.backward(fb.tensor(g))
    yt.backward(torch.tensor(g))
    return (y.detach().numpy(), a.grad.numpy()), (yt.detach().numpy(), t.grad.numpy())


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-6), (np.float64, 1e-12)])
def test_sinc_matches_torch(dtype, tol):
    (y, g), (yt, gt) = _grad_pair(fb.sinc, torch.sinc, _x(4, 7, dtype=dtype))
    assert y.dtype == dtype and g.dtype == dtype
    np.testing.assert_allclose(y, yt, rtol=tol, atol=tol)
    np.testing.assert_allclose(g, gt, rtol=1e-5 if dtype == np.float32 else 1e-10, atol=tol * 10)
    assert fb.sinc(fb.tensor([0, 1, 2])).dtype is fb.float32  # integers give the default float dtype
    np.testing.assert_allclose(fb.special.sinc(fb.tensor([0.5])).numpy(), torch.special.sinc(torch.tensor([0.5])))


def test_rrelu_eval_matches_torch_and_module():
    x = _x(3, 5, 4)
    for lo, hi in ((1 / 8, 1 / 3), (0.0, 0.5)):
        (y, g), (yt, gt) = _grad_pair(lambda a: F.rrelu(a, lo, hi), lambda t: TF.rrelu(t, lo, hi), x)
        np.testing.assert_allclose(y, yt, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(g, gt, rtol=1e-6, atol=1e-7)
    m = nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(m(fb.tensor(x)).numpy(), torch.nn.RReLU(0.1, 0.3).eval()(torch.tensor(x)).numpy(),
                               rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="lower bound"):
        F.rrelu(fb.tensor(x), 0.5, 0.1)


def test_rrelu_training_draws_slopes_in_range_and_differentiates_through_them():
    x = _x(50, 40)
    a = fb.tensor(x).requires_grad_(True)
    y = F.rrelu(a, 0.1, 0.3, training=True)
    y.sum().backward()
    yn, gn = y.detach().numpy(), a.grad.numpy()
    pos, neg = x > 0, x < 0
    np.testing.assert_array_equal(yn[pos], x[pos])
    np.testing.assert_array_equal(gn[pos], 1.0)
    slopes = yn[neg] / x[neg]
    assert slopes.min() >= 0.1 - 1e-6 and slopes.max() <= 0.3 + 1e-6 and slopes.std() > 0.03  # drawn per element
    np.testing.assert_allclose(gn[neg], slopes, rtol=1e-5)  # the gradient uses the drawn slope
    b = fb.tensor(x)
    assert F.rrelu_(b, 0.1, 0.3, training=False) is b
    np.testing.assert_allclose(b.numpy(), TF.rrelu(torch.tensor(x), 0.1, 0.3).numpy(), rtol=1e-6)


def test_declarations_carry_their_device_kernel_and_traits():
    from flowvision.backend._ops.elementwise import Sinc
    for cls in (Sinc, F._RRelu):
        assert cls.forward_cuda is cls.forward  # one forward, written against ctx.xp, is the CUDA kernel too
        assert traits.is_elementwise(cls)


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 6, 1)
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        y = F.rrelu(self.c2(fb.sinc(self.c1(x))), 0.1, 0.2)
        return self.fc(y.mean((2, 3)))


def test_compile_equals_eager():
    fb.manual_seed(0)
    model = _Net().eval()
    rs = np.random.RandomState(0)
    x = fb.from_numpy(rs.randn(2, 3, 9, 9).astype(np.float32))
    x2 = fb.from_numpy(rs.randn(2, 3, 9, 9).astype(np.float32))
    cm = fb.compile(model, x)
    plan = cm.explain(x)
    # sinc is elementwise: it runs inside the native plan on its channels-last activations, no layout conversion
    # around it; rrelu (eval) declares an activation: it is the epilogue of the conv before it, no step of its own
    assert "Sinc" in plan and "_RRelu" not in plan and "to_nchw" not in plan, plan
    with fb.no_grad():
        ref = model(x2).numpy()
    np.testing.assert_allclose(cm(x2).numpy(), ref, rtol=1e-5, atol=1e-6)


class _LeakyEpilogues(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = F.rrelu(self.conv(x), 0.1, 0.3)
        return F.leaky_relu(self.fc(y.mean((2, 3))), 0.2)


def _torch_leaky_epilogues(model, x):
    p = {k: torch.tensor(v.detach().numpy()) for k, v in model.state_dict().items()}
    y = TF.rrelu(TF.conv2d(torch.tensor(x), p["conv.weight"], p["conv.bias"], padding=1), 0.1, 0.3)
    return TF.leaky_relu(TF.linear(y.mean((2, 3)), p["fc.weight"], p["fc.bias"]), 0.2).numpy()


@pytest.mark.parametrize("dtype,executor", [(np.float32, "native"), (np.float32, "python"), (np.float64, "native")])
def test_rrelu_and_leaky_relu_fuse_as_conv_and_linear_epilogues(dtype, executor):
    """Declaring the activation trait is all it takes: conv -> rrelu (eval) and linear -> leaky_relu become one
    kernel step each (the leaky_relu epilogue, slope (lower + upper) / 2 for rrelu), equal to eager and torch."""
    assert traits.activation(F._RRelu, (0.2,), {}) == ("leaky_relu", 0.2, 0.0)
    assert traits.activation(F._LeakyRelu, (0.01,), {}) == ("leaky_relu", 0.01, 0.0)
    assert traits.activation(F._RRelu, (np.full(3, 0.2, np.float32),), {}) is None  # training: drawn slopes
    fb.manual_seed(0)
    model = _LeakyEpilogues().eval()
    if dtype == np.float64:
        model = model.double()
    x = _x(2, 3, 9, 9, dtype=dtype) * 2
    cm = fb.compile(model, fb.tensor(x), executor=executor)
    plan = cm.explain(fb.tensor(x))
    assert "RRelu" not in plan and "LeakyRelu" not in plan and "PYTHON" not in plan, plan
    assert plan.count("leaky_relu") == 2, plan
    with fb.no_grad():
        eager = model(fb.tensor(x)).numpy()
    got = cm(fb.tensor(x)).numpy()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, eager, rtol=tol, atol=tol)
    np.testing.assert_allclose(got, _torch_leaky_epilogues(model, x), rtol=tol * 10, atol=tol * 10)


# every fused epilogue kind as (flowvision op, torch op); the NCHW float64 conv applies each one in place
_EPILOGUE_OPS = {
    "relu": (F.relu, TF.relu), "relu6": (F.relu6, TF.relu6), "gelu": (F.gelu, TF.gelu),
    "gelu_tanh": (lambda t: F.gelu(t, approximate="tanh"), lambda t: TF.gelu(t, approximate="tanh")),
    "silu": (F.silu, TF.silu), "hardswish": (F.hardswish, TF.hardswish),
    "clamp": (lambda t: F.hardtanh(t, -0.5, 0.7), lambda t: TF.hardtanh(t, -0.5, 0.7)),
    "leaky_relu": (lambda t: F.leaky_relu(t, 0.2), lambda t: TF.leaky_relu(t, 0.2)),
}


class _ConvAct(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.act = act

    def forward(self, x):
        return self.act(self.conv(x))


@pytest.mark.parametrize("kind", sorted(_EPILOGUE_OPS))
def test_every_epilogue_fuses_into_the_float64_nchw_conv(kind):
    """The float64 conv (NCHW kernel, no epilogue of its own) takes every epilogue kind through
    _C.epilogue_inplace: one step, equal to eager and torch."""
    assert set(_EPILOGUE_OPS) == set(_C.Epilogue.__members__) - {"none"}  # a new kind needs its row here
    ours, theirs = _EPILOGUE_OPS[kind]
    fb.manual_seed(0)
    model = _ConvAct(ours).eval().double()
    x = _x(2, 3, 9, 9, dtype=np.float64)
    cm = fb.compile(model, fb.tensor(x))
    plan = cm.explain(fb.tensor(x))
    assert f"conv+{kind}" in plan and plan.count("conv") == 1, plan
    with fb.no_grad():
        eager = model(fb.tensor(x)).numpy()
    got = cm(fb.tensor(x)).numpy()
    np.testing.assert_allclose(got, eager, rtol=1e-12, atol=1e-12)
    p = {k: torch.tensor(v.detach().numpy()) for k, v in model.state_dict().items()}
    want = theirs(TF.conv2d(torch.tensor(x), p["conv.weight"], p["conv.bias"], padding=1)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threshold_keeps_nan_like_torch(dtype):
    x = np.array([np.nan, -np.inf, -1.0, 0.1, 0.1000001, 2.0, np.inf, -0.0], dtype)
    (y, g), (yt, gt) = _grad_pair(lambda t: F.threshold(t, 0.1, -2.0), lambda t: TF.threshold(t, 0.1, -2.0), x)
    np.testing.assert_array_equal(y, yt)
    np.testing.assert_array_equal(g, gt)


@pytest.fixture
def emulated(monkeypatch):
    """The CUDA side of the engine over the host emulation of _C_cuda (tests/cuda_emulator.py)."""
    from cuda_emulator import FakeCudaModule
    from flowvision.backend._cuda import dispatch, runtime
    monkeypatch.setattr(cuda, "_module", FakeCudaModule())
    monkeypatch.setattr(cuda, "_tried", True)
    monkeypatch.setattr(runtime, "_C", None)
    monkeypatch.setattr(cuda, "allow_tf32", False)
    yield
    G.cuda_dispatch = None
    dispatch._ARMED = False
    runtime._C = None


@pytest.mark.parametrize("op", ["sinc", "rrelu"])
def test_device_path_equals_cpu(emulated, op):
    fn = fb.sinc if op == "sinc" else (lambda a: F.rrelu(a, 0.1, 0.3))
    x = _x(3, 4, 5)
    g = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    a = fb.tensor(x).requires_grad_(True)
    fn(a).backward(fb.tensor(g))
    d = fb.tensor(x).cuda().requires_grad_(True)
    yd = fn(d)
    yd.backward(fb.tensor(g).cuda())
    assert yd.is_cuda and d.grad.is_cuda
    np.testing.assert_allclose(yd.detach().cpu().numpy(), fn(fb.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d.grad.cpu().numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-6)
    if op == "rrelu":  # training slopes are drawn on the device and used by the backward there
        d2 = fb.tensor(x).cuda().requires_grad_(True)
        y2 = F.rrelu(d2, 0.1, 0.3, training=True)
        y2.sum().backward()
        yn, gn = y2.detach().cpu().numpy(), d2.grad.cpu().numpy()
        np.testing.assert_allclose(gn[x < 0], yn[x < 0] / x[x < 0], rtol=1e-5)


def test_cross_entropy_is_device_neutral(emulated):
    """nll_loss / cross_entropy (class indices, weights, ignore_index, label smoothing) run the same code on both
    devices: the picked log-probability is one op with a device kernel."""
    x = RNG.standard_normal((6, 5, 3)).astype(np.float32)
    t = np.array([[0, 4, -100], [2, 2, 1], [3, 0, 0], [1, 1, 4], [-100, 2, 3], [4, 4, 0]])
    w = RNG.uniform(0.5, 2.0, 5).astype(np.float32)
    for red in ("mean", "sum", "none"):
        for ls in (0.0, 0.2):
            kw = dict(reduction=red, label_smoothing=ls, ignore_index=-100)
            a = fb.tensor(x).requires_grad_(True)
            ref = F.cross_entropy(a, fb.tensor(t), weight=fb.tensor(w), **kw)
            ref.sum().backward()
            d = fb.tensor(x).cuda().requires_grad_(True)
            out = F.cross_entropy(d, fb.tensor(t).cuda(), weight=fb.tensor(w).cuda(), **kw)
            out.sum().backward()
            assert out.is_cuda
            np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(d.grad.cpu().numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-6)
            tt = TF.cross_entropy(torch.tensor(x), torch.tensor(t), weight=torch.tensor(w), **kw)
            np.testing.assert_allclose(ref.detach().numpy(), tt.numpy(), rtol=1e-5, atol=1e-6)
