"""Property-based tests (hypothesis) of ``flowvision.data``'s Mixup/CutMix, label mixing and RandomErasing,
and torchvision-v2-style MixUp/CutMix, against timm/torchvision on the same inputs.

Mixing draws random numbers, so the outputs are compared where they are determined (``mixup_target`` for a given
lam, mode ``elem``/``pair``/``batch`` shapes, targets summing to 1) and the error contract is checked everywhere:
flowvision answers like the reference or raises a ValueError/TypeError with a message.
"""
import os
import warnings

import numpy as np
import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

torch = pytest.importorskip("torch")
timm_mixup = pytest.importorskip("timm.data.mixup")
timm_erasing = pytest.importorskip("timm.data.random_erasing")
import torchvision.transforms.v2 as TV2  # noqa: E402

import flowvision.transforms.v2 as T2  # noqa: E402
from flowvision import backend as flow  # noqa: E402
from flowvision.data import Mixup, RandomErasing  # noqa: E402
from flowvision.data import mixup as fv_mixup  # noqa: E402

EXAMPLES = int(os.environ.get("FLOWVISION_PROPERTY_EXAMPLES", "6"))
SETTINGS = settings(max_examples=EXAMPLES * 4, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
CLEAR = (ValueError, TypeError)


def _call(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(), None
        except Exception as e:  # noqa: BLE001 - classified by the property
            return None, e


def _clear(err, where):
    assert isinstance(err, CLEAR) and str(err), f"{where}: {type(err).__name__}: {err}"


@SETTINGS
@given(n=st.integers(0, 5), classes=st.integers(-1, 6), lam=st.floats(0, 1), smoothing=st.floats(-0.1, 1.1),
       label_shift=st.integers(-1, 2))
def test_mixup_target_matches_timm(n, classes, lam, smoothing, label_shift):
    labels = np.arange(n, dtype=np.int64) % max(classes, 1) + (label_shift if label_shift == 2 else 0) * classes
    if label_shift == -1:
        labels = labels - 1
    ref, ref_err = _call(lambda: timm_mixup.mixup_target(torch.from_numpy(labels), classes, lam, smoothing).numpy())
    out, err = _call(lambda: np.asarray(fv_mixup.mixup_target(flow.from_numpy(labels), classes, lam, smoothing)))
    where = f"mixup_target(n={n}, classes={classes}, lam={lam}, smoothing={smoothing}, labels={labels.tolist()})"
    if err is not None:
        _clear(err, where)
        return
    assert ref_err is None, f"{where}: timm raises {ref_err!r}, flowvision returns {out.shape}"
    assert out.shape == ref.shape, where
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6, err_msg=where)


@SETTINGS
@given(b=st.integers(0, 5), hw=st.sampled_from([(1, 1), (8, 8), (3, 17), (0, 4)]), mode=st.sampled_from(["batch", "pair", "elem"]),
       mix=st.floats(0, 2), cut=st.floats(0, 2), prob=st.floats(0, 1), classes=st.integers(0, 6),
       minmax=st.one_of(st.none(), st.tuples(st.floats(0, 1), st.floats(0, 1))))
def test_mixup_cutmix_shapes_and_errors(b, hw, mode, mix, cut, prob, classes, minmax):
    x = np.random.default_rng(b).random((b, 3) + hw, dtype=np.float32)
    t = np.arange(b, dtype=np.int64) % max(classes, 1)
    kw = dict(mixup_alpha=mix, cutmix_alpha=cut, cutmix_minmax=list(minmax) if minmax else None, prob=prob,
              mode=mode, num_classes=classes, label_smoothing=0.1)
    where = f"Mixup({kw}) on {x.shape}"

    def ref():
        m = timm_mixup.Mixup(**kw)
        xt = torch.from_numpy(x.copy())
        return tuple(v.numpy() for v in m(xt, torch.from_numpy(t))) + (None,)

    def ours():
        m = Mixup(**kw)
        xo, to = m(flow.from_numpy(x.copy()), flow.from_numpy(t))
        return np.asarray(xo.numpy()), np.asarray(to.numpy())

    r, r_err = _call(ref)
    o, o_err = _call(ours)
    if o_err is not None:
        _clear(o_err, where)
        return
    assert r_err is None or not isinstance(r_err, CLEAR), f"{where}: timm raises {r_err!r}, flowvision returns"
    xo, to = o
    assert xo.shape == x.shape and to.shape == (b, classes), f"{where}: {xo.shape} {to.shape}"
    assert np.isfinite(xo).all() and np.isfinite(to).all(), f"{where}: non-finite output"
    np.testing.assert_allclose(to.sum(1), np.ones(b), rtol=1e-4, err_msg=where)
    if r_err is None:
        assert r[0].shape == xo.shape and r[1].shape == to.shape, where


@SETTINGS
@given(c=st.sampled_from([1, 3, 4]), hw=st.sampled_from([(1, 1), (8, 8), (2, 40), (0, 5)]), p=st.floats(0, 1),
       area=st.tuples(st.floats(0, 1), st.floats(0, 1)), mode=st.sampled_from(["const", "rand", "pixel"]),
       count=st.integers(0, 3), batched=st.booleans())
def test_random_erasing(c, hw, p, area, mode, count, batched):
    shape = ((2,) if batched else ()) + (c,) + hw
    x = np.random.default_rng(c).standard_normal(shape).astype(np.float32)
    kw = dict(probability=p, min_area=min(area), max_area=max(area), mode=mode, min_count=count, max_count=count)
    where = f"RandomErasing({kw}) on {x.shape}"
    r, r_err = _call(lambda: timm_erasing.RandomErasing(**kw)(torch.from_numpy(x.copy())).numpy())
    o, o_err = _call(lambda: np.asarray(RandomErasing(**kw)(flow.from_numpy(x.copy())).numpy()))
    if o_err is not None:
        _clear(o_err, where)
        return
    assert r_err is None or not isinstance(r_err, CLEAR), f"{where}: timm raises {r_err!r}, flowvision returns"
    assert o.shape == x.shape and o.dtype == x.dtype and np.isfinite(o).all(), where
    if r_err is None:
        assert r.shape == o.shape, where


@pytest.mark.parametrize("name", ["MixUp", "CutMix"])
@SETTINGS
@given(b=st.integers(0, 4), hw=st.sampled_from([(1, 1), (6, 6), (2, 30)]), alpha=st.sampled_from([-0.5, 0, 0.2, 1, 3]),
       classes=st.integers(-1, 6), label_dtype=st.sampled_from(["int64", "float32"]))
def test_v2_mixup_cutmix(name, b, hw, alpha, classes, label_dtype):
    x = np.random.default_rng(b).random((b, 3) + hw, dtype=np.float32)
    y = (np.arange(b) % max(classes, 1)).astype(label_dtype)
    where = f"{name}(alpha={alpha}, num_classes={classes}) on {x.shape} labels {y.dtype}"
    r, r_err = _call(lambda: [v.numpy() for v in getattr(TV2, name)(alpha=alpha, num_classes=classes)(
        torch.from_numpy(x.copy()), torch.from_numpy(y))])
    o, o_err = _call(lambda: [np.asarray(v.numpy()) for v in getattr(T2, name)(alpha=alpha, num_classes=classes)(
        flow.from_numpy(x.copy()), flow.from_numpy(y))])
    if o_err is not None:
        _clear(o_err, where)
        return
    assert r_err is None or not isinstance(r_err, CLEAR), f"{where}: torchvision raises {r_err!r}, flowvision returns"
    assert o[0].shape == x.shape and np.isfinite(o[0]).all(), where
    if r_err is None:
        assert [v.shape for v in o] == [v.shape for v in r], where
        np.testing.assert_allclose(o[1].sum(-1), np.ones(b), rtol=1e-4, err_msg=where)
