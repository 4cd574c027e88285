"""accuracy, AverageMeter, ModelEma, clipping vs timm.utils."""
import numpy as np
import pytest

import flowvision.data as fd

torch = pytest.importorskip("torch")
tu = pytest.importorskip("timm.utils")


def test_accuracy_and_meter():
    r = np.random.default_rng(0)
    out = r.standard_normal((20, 7)).astype(np.float32)
    tgt = r.integers(0, 7, 20)
    ours = fd.accuracy(out, tgt, topk=(1, 3, 10))
    ref = tu.accuracy(torch.from_numpy(out), torch.from_numpy(tgt), topk=(1, 3, 10))
    assert ours == pytest.approx([float(x) for x in ref])
    t = fd.accuracy(torch.from_numpy(out), torch.from_numpy(tgt), topk=(1,))
    assert isinstance(t[0], torch.Tensor)
    a, b = fd.AverageMeter(), tu.AverageMeter()
    for v, n in [(1.0, 2), (3.0, 5), (0.5, 1)]:
        a.update(v, n)
        b.update(v, n)
    assert (a.val, a.avg, a.sum, a.count) == (b.val, b.avg, b.sum, b.count)


def _models():
    fb = pytest.importorskip("flowvision.backend")
    import flowvision.backend.nn as fnn
    r = np.random.default_rng(1)
    w, bias = r.standard_normal((3, 4)).astype(np.float32), r.standard_normal(3).astype(np.float32)
    fm = fnn.Linear(4, 3)
    fm.weight._data[...] = w
    fm.bias._data[...] = bias
    tm = torch.nn.Linear(4, 3)
    with torch.no_grad():
        tm.weight.copy_(torch.from_numpy(w))
        tm.bias.copy_(torch.from_numpy(bias))
    return fm, tm, r


@pytest.mark.parametrize("v3", [False, True])
def test_model_ema(v3):
    fm, tm, r = _models()
    if v3:
        fe = fd.ModelEmaV3(fm, decay=0.9, use_warmup=True)
        te = tu.ModelEmaV3(tm, decay=0.9, use_warmup=True)
    else:
        fe, te = fd.ModelEmaV2(fm, decay=0.9), tu.ModelEmaV2(tm, decay=0.9)
    for step in range(1, 6):
        d = r.standard_normal((3, 4)).astype(np.float32)
        fm.weight._data[...] += d
        with torch.no_grad():
            tm.weight.add_(torch.from_numpy(d))
        if v3:
            fe.update(fm, step=step)
            te.update(tm, step=step)
        else:
            fe.update(fm)
            te.update(tm)
        np.testing.assert_allclose(fe.module.weight.detach().numpy(), te.module.weight.detach().numpy(), rtol=1e-6)


def test_clip_grad_agc_and_modes():
    fm, tm, r = _models()
    g = r.standard_normal((3, 4)).astype(np.float32) * 10
    import flowvision.backend as fb
    fm.weight.grad = fb.from_numpy(g.copy())
    tm.weight.grad = torch.from_numpy(g.copy())
    fd.dispatch_clip_grad([fm.weight], 0.05, mode="agc")
    tu.dispatch_clip_grad([tm.weight], 0.05, mode="agc")
    np.testing.assert_allclose(fm.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-5)
    with pytest.raises(ValueError, match="clip mode"):
        fd.dispatch_clip_grad([fm.weight], 1.0, mode="bogus")


@pytest.mark.parametrize("mode,value", [("norm", 0.5), ("value", 0.3)])
def test_clip_grad_norm_and_value(mode, value):
    fm, tm, r = _models()
    import flowvision.backend as fb
    g = r.standard_normal((3, 4)).astype(np.float32) * 3
    fm.weight.grad = fb.from_numpy(g.copy())
    tm.weight.grad = torch.from_numpy(g.copy())
    fd.dispatch_clip_grad([fm.weight], value, mode=mode)
    tu.dispatch_clip_grad([tm.weight], value, mode=mode)
    np.testing.assert_allclose(fm.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-5)
