"""Finite differences in float64 (flowvision.backend.autograd.gradcheck) for the backward of every op that runs
on a compiled ``_C`` kernel: conv, pools, norms, softmax, interpolate, unfold/fold, gelu/silu.

Shapes are tiny (the numerical Jacobian perturbs one element at a time). Max-pool inputs are distinct and
well separated so that the +-eps perturbation never changes which element wins.
"""
import numpy as np
import pytest

import flowvision.backend as flow
from flowvision.backend.autograd import gradcheck

F = flow.nn.functional


def rand(*shape, seed=0, grad=True, kind="normal"):
    rng = np.random.default_rng(seed + 17 * len(shape) + sum(shape))
    if kind == "distinct":  # well separated values: argmax is stable under +-eps
        n = int(np.prod(shape))
        a = (rng.permutation(n) - n / 2) * 0.1 + rng.uniform(-0.01, 0.01, n)
        a = a.reshape(shape)
    elif kind == "pos":
        a = rng.uniform(0.5, 2.0, shape)
    else:
        a = rng.standard_normal(shape)
    return flow.tensor(a, dtype=flow.float64, requires_grad=grad)


def check(fn, *inputs, **kw):
    assert gradcheck(fn, inputs, **kw)


def test_gradcheck_detects_a_wrong_backward():
    class Wrong(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # should be 2 * g * x

    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(Wrong.apply, (rand(3),))
    assert gradcheck(Wrong.apply, (rand(3),), raise_exception=False) is False


# ------------------------------------------------------------------ convolution
@pytest.mark.parametrize("kw", [
    dict(), dict(stride=2), dict(padding=1), dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1)),
    dict(groups=2), dict(groups=2, stride=2, dilation=2, padding=2), dict(padding="same"), dict(padding="same", dilation=2),
], ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "plain")
def test_conv2d(kw):
    g = kw.get("groups", 1)
    x = rand(2, 2 * g, 5, 6)
    w = rand(2 * g, 2, 3, 2, seed=1)
    b = rand(2 * g, seed=2)
    check(lambda x, w, b: F.conv2d(x, w, b, **kw), x, w, b)


def test_conv2d_depthwise_and_conv1d():
    check(lambda x, w: F.conv2d(x, w, padding=1, groups=3), rand(1, 3, 4, 4), rand(6, 1, 3, 3, seed=1))
    check(lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2), rand(2, 2, 7), rand(3, 2, 3, seed=1),
          rand(3, seed=2))


@pytest.mark.parametrize("kw", [
    dict(), dict(stride=2), dict(stride=2, padding=1, output_padding=1), dict(dilation=2, padding=(1, 0)),
    dict(groups=2, stride=(1, 2)), dict(dilation=3, output_padding=2, padding=1),
], ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "plain")
def test_conv_transpose2d(kw):
    g = kw.get("groups", 1)
    check(lambda x, w, b: F.conv_transpose2d(x, w, b, **kw), rand(2, 2 * g, 3, 4), rand(2 * g, 2, 3, 2, seed=1),
          rand(2 * g, seed=2))


# ------------------------------------------------------------------ pooling
@pytest.mark.parametrize("kw", [
    dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=(3, 2), ceil_mode=True),
    dict(kernel_size=2, stride=1, dilation=2),
], ids=str)
def test_max_pool2d(kw):
    check(lambda x: F.max_pool2d(x, **kw), rand(2, 2, 6, 5, kind="distinct"))


def test_max_pool1d():
    check(lambda x: F.max_pool1d(x, 3, 2, 1), rand(2, 3, 7, kind="distinct"))


@pytest.mark.parametrize("kw", [
    dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(3, 2), ceil_mode=True, padding=1, count_include_pad=False), dict(kernel_size=2, divisor_override=3),
], ids=str)
def test_avg_pool2d(kw):
    check(lambda x: F.avg_pool2d(x, **kw), rand(2, 2, 6, 5))


def test_avg_pool1d():
    check(lambda x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True), rand(2, 3, 8))


@pytest.mark.parametrize("out", [1, (3, 2), (4, 5), (None, 2)], ids=str)
def test_adaptive_pools(out):
    check(lambda x: F.adaptive_avg_pool2d(x, out), rand(2, 2, 5, 7))
    check(lambda x: F.adaptive_max_pool2d(x, out), rand(2, 2, 5, 7, kind="distinct"))


# ------------------------------------------------------------------ normalisation
def test_batch_norm_train():
    check(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), rand(3, 2, 2, 3), rand(2, seed=1),
          rand(2, seed=2))
    check(lambda x: F.batch_norm(x, None, None, training=True), rand(4, 3))


def test_batch_norm_eval():
    rm, rv = rand(3, grad=False), rand(3, grad=False, kind="pos")
    check(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=False), rand(2, 3, 4), rand(3, seed=1), rand(3, seed=2))


@pytest.mark.parametrize("nshape", [1, 2])
def test_layer_norm(nshape):
    x = rand(2, 3, 4)
    shp = tuple(x.shape[-nshape:])
    check(lambda x, w, b: F.layer_norm(x, shp, w, b), x, rand(*shp, seed=1), rand(*shp, seed=2))
    check(lambda x: F.layer_norm(x, shp, eps=1e-3), x)


def test_group_and_instance_norm():
    check(lambda x, w, b: F.group_norm(x, 2, w, b), rand(2, 4, 3, 2), rand(4, seed=1), rand(4, seed=2))
    check(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), rand(2, 3, 4), rand(3, seed=1), rand(3, seed=2))


# ------------------------------------------------------------------ softmax / activations
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_log_softmax(dim):
    x = rand(3, 4, 2)
    check(lambda x: F.softmax(x, dim), x)
    check(lambda x: F.log_softmax(x, dim), x)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    check(lambda x: F.gelu(x, approximate=approximate), rand(3, 5) * 2)


def test_silu():
    check(F.silu, rand(4, 5) * 3)


# ------------------------------------------------------------------ interpolate
@pytest.mark.parametrize("kw", [
    dict(mode="nearest", size=(5, 7)), dict(mode="nearest", scale_factor=0.5),
    dict(mode="nearest-exact", size=(5, 3)),
    dict(mode="bilinear", size=(5, 7)), dict(mode="bilinear", size=(5, 7), align_corners=True),
    dict(mode="bilinear", scale_factor=0.6), dict(mode="bilinear", size=(2, 3), antialias=True),
    dict(mode="bicubic", size=(5, 7)), dict(mode="bicubic", size=(3, 2), align_corners=True),
    dict(mode="bicubic", size=(2, 3), antialias=True),
], ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_interpolate(kw):
    check(lambda x: F.interpolate(x, **kw), rand(1, 2, 4, 5))


# ------------------------------------------------------------------ unfold / fold
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2, padding=1),
                                dict(kernel_size=2, dilation=2)], ids=str)
def test_unfold_fold(kw):
    x = rand(2, 2, 5, 6)
    check(lambda x: F.unfold(x, **kw), x)
    cols = F.unfold(x.detach(), **kw)
    check(lambda c: F.fold(c, (5, 6), **kw), rand(*cols.shape, seed=3))
