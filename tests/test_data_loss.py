"""Losses equal timm's values and gradients."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
tl = pytest.importorskip("timm.loss")
fb = pytest.importorskip("flowvision.backend")
from flowvision.data import loss as fl  # noqa: E402


def _pair(x):
    a = fb.tensor(x, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    return a, b


def _check(ours, ref, xa, xt, rtol=1e-5):
    np.testing.assert_allclose(float(ours.item()), float(ref.item()), rtol=rtol, atol=1e-6)
    ours.backward()
    ref.backward()
    np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-6)


R = np.random.default_rng(0)
X = R.standard_normal((6, 10)).astype(np.float32) * 3
Y = R.integers(0, 10, 6)


@pytest.mark.parametrize("s", [0.0, 0.1, 0.3])
def test_label_smoothing_ce(s):
    xa, xt = _pair(X)
    _check(fl.LabelSmoothingCrossEntropy(s)(xa, fb.from_numpy(Y)), tl.LabelSmoothingCrossEntropy(s)(xt, torch.from_numpy(Y)), xa, xt)


def test_soft_target_ce_with_mixup_targets():
    from flowvision.data import mixup_target
    t = mixup_target(Y, 10, 0.7, 0.1)
    xa, xt = _pair(X)
    _check(fl.SoftTargetCrossEntropy()(xa, fb.from_numpy(t)), tl.SoftTargetCrossEntropy()(xt, torch.from_numpy(t)), xa, xt)
    xa2 = fb.tensor(X, requires_grad=True)
    assert abs(float(fl.SoftTargetCrossEntropy()(xa2, t).item()) - float(tl.SoftTargetCrossEntropy()(torch.from_numpy(X), torch.from_numpy(t)))) < 1e-5


@pytest.mark.parametrize("smoothing", [0.1, 0.0])
def test_jsd(smoothing):
    x = R.standard_normal((9, 7)).astype(np.float32)
    y = R.integers(0, 7, 3)
    xa, xt = _pair(x)
    _check(fl.JsdCrossEntropy(3, 12, smoothing)(xa, fb.from_numpy(y)),
           tl.JsdCrossEntropy(3, 12, smoothing)(xt, torch.from_numpy(y)), xa, xt, rtol=1e-4)


@pytest.mark.parametrize("kw", [dict(), dict(smoothing=0.0, target_threshold=0.2), dict(sum_classes=True),
                                dict(pos_weight=2.0), dict(reduction="sum")])
def test_bce(kw):
    xa, xt = _pair(X)
    _check(fl.BinaryCrossEntropy(**kw)(xa, fb.from_numpy(Y)), tl.BinaryCrossEntropy(**kw)(xt, torch.from_numpy(Y)), xa, xt)
    dense = (R.random((6, 10)) > 0.6).astype(np.float32)
    xa, xt = _pair(X)
    _check(fl.BinaryCrossEntropy(smooth_dense=True, **kw)(xa, fb.from_numpy(dense)),
           tl.BinaryCrossEntropy(smooth_dense=True, **kw)(xt, torch.from_numpy(dense)), xa, xt)
