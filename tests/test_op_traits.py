"""Ops declare their capture traits, compile reads them (no class checks); the C++ enums are read from _C; eager and
compile share one convolution algorithm selector."""
import threading

import numpy as np
import pytest

from flowvision import backend as flow
from flowvision.backend import _C, nn
from flowvision.backend.autograd.graph import Function
from flowvision.backend.nn import functional as F
from flowvision.backend._ops import kernel_select, traits


class _Relu6Twin(Function):
    """An op the capture code has never heard of: it only declares that it is elementwise and a relu6."""

    elementwise = True
    activation = staticmethod(traits.clamp)

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.bounds = (lo, hi)
        return np.clip(x, lo, hi)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        lo, hi = ctx.bounds
        return g * ((x > lo) & (x < hi)), None, None


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = _Relu6Twin.apply(self.conv(x), 0.0, 6.0)
        return self.fc(_Relu6Twin.apply(y.mean((2, 3)), -0.5, 0.5))


def test_new_op_declaring_an_activation_is_fused_without_capture_changes():
    flow.manual_seed(0)
    model = _Block().eval()
    rs = np.random.RandomState(0)
    x = flow.from_numpy(rs.randn(2, 3, 8, 8).astype(np.float32) * 4)
    x2 = flow.from_numpy(rs.randn(2, 3, 8, 8).astype(np.float32) * 4)
    cm = flow.compile(model, x)
    text = cm.explain(x)
    assert "conv+relu6" in text and "PYTHON" not in text, text
    with flow.no_grad():
        ref = model(x2).numpy()
    np.testing.assert_allclose(cm(x2).numpy(), ref, rtol=1e-5, atol=1e-5)
    # the same op with a traceable autograd path: gradient of clip against numpy's
    xr = flow.from_numpy(np.array([-1.0, 0.5, 7.0], np.float32)).requires_grad_(True)
    _Relu6Twin.apply(xr, 0.0, 6.0).sum().backward()
    np.testing.assert_array_equal(xr.grad.numpy(), [0.0, 1.0, 0.0])


def test_builtin_ops_declare_the_traits_capture_relies_on():
    from flowvision.backend._ops import elementwise as E, linalg as L, shape as S
    assert traits.role(F.Conv2d) == "conv2d" and traits.role(L.Matmul) == "matmul"
    assert traits.role(F.BatchNormEval) == "batch_norm_eval" and traits.role(S.Permute) == "permute"
    assert traits.role(E.Add) == "add" and traits.role(E.Mul) == "mul" and traits.role(E.Sub) is None
    assert traits.activation(F._Relu, (), {}) == ("relu", 0.0, 0.0)
    assert traits.activation(F._Hardtanh, (0.0, 6.0), {}) == ("relu6", 0.0, 0.0)
    assert traits.activation(F._Hardtanh, (-1.0, 2.0), {}) == ("clamp", -1.0, 2.0)
    assert traits.activation(F._Gelu, ("tanh",), {}) == ("gelu_tanh", 0.0, 0.0)
    assert traits.activation(E.sigmoid.Function, (), {}) == ("sigmoid", 0.0, 0.0)
    assert traits.activation(F._Softplus, (1.0, 20.0), {}) is None
    assert traits.is_elementwise(F._LeakyRelu) and not traits.is_elementwise(F.Conv2d)


def test_cpp_enums_are_what_the_string_apis_accept():
    x = np.linspace(-4, 4, 37, dtype=np.float32)
    for name, code in _C.Pointwise.__members__.items():
        y = _C.pointwise(x, name, -1.0, 2.0)
        assert y.shape == x.shape, name
        assert int(code) in range(len(_C.Pointwise.__members__))
    assert {int(v) for v in _C.UnaryStep.__members__.values()}.isdisjoint(
        int(v) for v in _C.Pointwise.__members__.values())
    a = np.ones((3, 4), np.float32)
    pk = _C.pack_b(np.ones((4, 5), np.float32), False)
    for name in _C.Epilogue.__members__:
        assert _C.gemm_packed(a, pk, None, name, None, -1.0, 1.0).shape == (3, 5), name
    with pytest.raises(ValueError, match="unknown epilogue"):
        _C.gemm_packed(a, pk, None, "logsigmoid", None, 0.0, 0.0)
    assert set(_C.PoolKind.__members__) == {"max", "avg", "adaptive_avg"}
    assert [int(_C.BinaryOp.add), int(_C.BinaryOp.mul)] == [0, 1]


@pytest.mark.parametrize("xs,ws,pad,groups,eager,plan", [
    ((1, 64, 56, 56), (64, 64, 1, 1), (0, 0), 1, "gemm_1x1", "nhwc_direct"),
    ((1, 64, 56, 56), (64, 64, 3, 3), (1, 1), 1, "nhwc_direct", "winograd"),
    ((1, 8, 56, 56), (8, 8, 3, 3), (1, 1), 1, "nhwc_direct", "nhwc_direct"),  # too few channels for Winograd
    ((1, 96, 112, 112), (96, 1, 3, 3), (1, 1), 96, "im2col", "nhwc_direct"),  # depthwise on a large map
    ((1, 24, 14, 14), (36, 4, 3, 3), (1, 1), 6, "im2col", "nhwc_direct"),  # 6 channels per group
])
def test_one_conv_selector_for_eager_and_compile(xs, ws, pad, groups, eager, plan):
    assert kernel_select.conv_algorithm(xs, ws, pad, groups, np.float32) == eager
    assert kernel_select.conv_algorithm(xs, ws, pad, groups, np.float32, nhwc_activations=True) == plan
    assert kernel_select.conv_algorithm(xs, ws, pad, groups, np.float64, nhwc_activations=True) in ("gemm_1x1", "im2col")
    with kernel_select.direct_plans():  # compile's fallback when a Winograd plan fails validation
        assert kernel_select.conv_algorithm(xs, ws, pad, groups, np.float32, nhwc_activations=True) == "nhwc_direct"
    x = flow.zeros(*xs)
    w = flow.zeros(*ws)
    if eager != "gemm_1x1":  # the 1x1 GEMM is chosen before the direct kernel is considered
        assert F._direct_conv_ok(x, w, groups) == (eager == "nhwc_direct")


def test_reference_kernels_is_per_thread():
    """compile's reference run switches eager to the unpacked kernels for its own thread only (was a global)."""
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen["other"] = kernel_select.packed_allowed()
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with kernel_select.reference_kernels():
        seen["mine"] = kernel_select.packed_allowed()
        inside.set()
        done.wait()
    t.join()
    assert seen == {"mine": False, "other": True} and kernel_select.packed_allowed()
    # eager under reference_kernels takes the recorded (unpacked) conv and equals the packed path
    rs = np.random.RandomState(0)
    x = flow.from_numpy(rs.randn(1, 8, 6, 6).astype(np.float32))
    w = flow.from_numpy(rs.randn(8, 8, 1, 1).astype(np.float32))
    packed = F.conv2d(x, w).numpy()
    with kernel_select.reference_kernels():
        ref = F.conv2d(x, w).numpy()
    np.testing.assert_allclose(packed, ref, rtol=1e-5, atol=1e-5)
