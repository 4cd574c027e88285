"""Mixup / CutMix / FastCollateMixup parity with timm 1.0.

Randomness: flowvision draws through a RandomSource; ``TimmRandom`` draws from the global
``np.random`` state with timm's exact calls and order.  Seeding ``np.random`` identically before
each library's call therefore forces the same lambda(s), CutMix box(es) and switch decisions, and
the batches and targets must be equal (bit for bit: same float32 expressions).
"""
import numpy as np
import pytest

from flowvision.data import Mixup, FastCollateMixup, TimmRandom

torch = pytest.importorskip("torch")
timm_mixup = pytest.importorskip("timm.data.mixup")

CONFIGS = [
    dict(mixup_alpha=1.0, cutmix_alpha=0.0),
    dict(mixup_alpha=0.0, cutmix_alpha=1.0),
    dict(mixup_alpha=0.8, cutmix_alpha=1.0, switch_prob=0.5),
    dict(mixup_alpha=0.8, cutmix_alpha=1.0, cutmix_minmax=(0.2, 0.8)),
    dict(mixup_alpha=0.8, cutmix_alpha=1.0, prob=0.6, correct_lam=False, label_smoothing=0.0),
    dict(mixup_alpha=0.2, cutmix_alpha=0.5, switch_prob=0.8, label_smoothing=0.2),
]


def _batch(b=8, seed=0, shape=(3, 17, 22)):
    r = np.random.default_rng(seed)
    x = r.standard_normal((b, *shape)).astype(np.float32)
    y = r.integers(0, 10, b)
    return x, y


@pytest.mark.parametrize("mode", ["batch", "pair", "elem"])
@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
def test_mixup_matches_timm(mode, cfg):
    kw = dict(CONFIGS[cfg], mode=mode, num_classes=10)
    for seed in range(4):
        x, y = _batch(seed=seed)
        xt = torch.from_numpy(x.copy())
        np.random.seed(seed)
        xt_out, tt = timm_mixup.Mixup(**kw)(xt, torch.from_numpy(y))
        np.random.seed(seed)
        xm = x.copy()
        xo, tm = Mixup(**kw, rng=TimmRandom())(xm, y)
        assert xo is xm  # in place, same object back
        np.testing.assert_array_equal(xm, xt_out.numpy())
        np.testing.assert_array_equal(tm, tt.numpy())
        assert tm.dtype == np.float32


def test_mixup_forced_lambda_and_box():
    """Force lambda / CutMix decision in both libraries by patching the param draw."""
    x, y = _batch()
    for lam, cut in [(0.3, False), (0.7, True)]:
        np.random.seed(3)
        tm = timm_mixup.Mixup(mixup_alpha=1.0, cutmix_alpha=1.0, num_classes=10)
        tm._params_per_batch = lambda: (lam, cut)
        xt, tt = tm(torch.from_numpy(x.copy()), torch.from_numpy(y))
        np.random.seed(3)
        fm = Mixup(mixup_alpha=1.0, cutmix_alpha=1.0, num_classes=10, rng=TimmRandom())
        fm._params_per_batch = lambda: (lam, cut)
        xm = x.copy()
        _, t = fm(xm, y)
        np.testing.assert_array_equal(xm, xt.numpy())
        np.testing.assert_array_equal(t, tt.numpy())


def test_multi_label():
    x, y = _batch()
    yd = (np.random.default_rng(1).random((8, 10)) > 0.7).astype(np.float32)
    np.random.seed(0)
    _, tt = timm_mixup.Mixup(num_classes=10, multi_label=True)(torch.from_numpy(x.copy()), torch.from_numpy(yd))
    np.random.seed(0)
    _, t = Mixup(num_classes=10, multi_label=True, rng=TimmRandom())(x.copy(), yd)
    np.testing.assert_array_equal(t, tt.numpy())


@pytest.mark.parametrize("mode", ["batch", "pair", "elem", "half"])
@pytest.mark.parametrize("cfg", [0, 1, 2, 3])
def test_fast_collate_matches_timm(mode, cfg):
    kw = dict(CONFIGS[cfg], mode=mode, num_classes=10)
    r = np.random.default_rng(cfg)
    samples = [(r.integers(0, 256, (3, 15, 13), dtype=np.uint8), int(r.integers(0, 10))) for _ in range(8)]
    for seed in range(3):
        np.random.seed(seed)
        ot, tt = timm_mixup.FastCollateMixup(**kw)([(s.copy(), t) for s, t in samples])
        np.random.seed(seed)
        om, tm = FastCollateMixup(**kw, rng=TimmRandom())([(s.copy(), t) for s, t in samples])
        np.testing.assert_array_equal(om, ot.numpy())
        np.testing.assert_array_equal(tm, tt.numpy())
        assert om.dtype == np.uint8


@pytest.mark.parametrize("mode", ["batch", "pair", "elem"])
def test_odd_batch_pairs_middle_with_itself(mode):
    x, y = _batch(b=7)
    x0 = x.copy()
    m = Mixup(mixup_alpha=1.0, cutmix_alpha=1.0, mode=mode, num_classes=10, label_smoothing=0.0, seed=0)
    for _ in range(5):
        xm = x0.copy()
        _, t = m(xm, y)
        # middle sample: pixels (up to float rounding of x*l + x*(1-l)) and target are its own
        np.testing.assert_allclose(xm[3], x0[3], rtol=1e-5, atol=1e-6)
        assert t[3, y[3]] == pytest.approx(1.0, abs=1e-6)
        np.testing.assert_allclose(t.sum(1), 1.0, rtol=1e-5)
    om, tm = FastCollateMixup(mode="half" if mode == "elem" else mode, num_classes=10, seed=0)(
        [((x0[i] * 10 + 128).clip(0, 255).astype(np.uint8), int(y[i])) for i in range(7)])
    assert om.shape[0] == (3 if mode == "elem" else 7)


def test_torch_and_backend_inputs_in_place_same_type():
    x, y = _batch()
    xt = torch.from_numpy(x.copy())
    yt = torch.from_numpy(y)
    xo, t = Mixup(num_classes=10, seed=0)(xt, yt)
    assert xo is xt and isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.shape == (8, 10)
    assert not np.array_equal(xt.numpy(), x)  # modified in place
    fb = pytest.importorskip("flowvision.backend")
    if not hasattr(fb, "from_numpy"):
        pytest.skip("backend not ready")
    xb = fb.from_numpy(x.copy())
    xo, t = Mixup(num_classes=10, seed=0)(xb, fb.from_numpy(y))
    assert xo is xb and fb.is_tensor(t) and tuple(t.shape) == (8, 10)
    np.testing.assert_array_equal(xb.numpy(), xt.numpy())  # same seed, same result


def test_seed_reproducible():
    x, y = _batch()
    a, b = x.copy(), x.copy()
    Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, mode="elem", num_classes=10, seed=5)(a, y)
    Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, mode="elem", num_classes=10, seed=5)(b, y)
    np.testing.assert_array_equal(a, b)


def test_threads_same_result():
    x, y = _batch(b=9)
    a, b = x.copy(), x.copy()
    Mixup(num_classes=10, seed=1)(a, y)
    Mixup(num_classes=10, seed=1, num_threads=3)(b, y)
    np.testing.assert_array_equal(a, b)


def test_bad_inputs():
    x, y = _batch()
    m = Mixup(num_classes=10)
    with pytest.raises(TypeError, match="float"):
        m((x * 100).astype(np.uint8), y)
    with pytest.raises(ValueError, match=r"\(B, C, H, W\)"):
        m(x[0], y)
    with pytest.raises(ValueError, match="targets"):
        m(x, y[:5])
    with pytest.raises(ValueError, match="out of range"):
        m(x, y + 10)
    with pytest.raises(TypeError, match="integer"):
        m(x, y.astype(np.float32))
    with pytest.raises(ValueError, match="mode"):
        Mixup(mode="bogus")
    with pytest.raises(ValueError, match="alpha"):
        Mixup(mixup_alpha=0.0, cutmix_alpha=0.0)
    ro = x.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        m(ro, y)
    with pytest.raises(TypeError, match="uint8"):
        FastCollateMixup(num_classes=10)([(x[0], 1), (x[1], 2)])


@pytest.mark.parametrize("mode", ["pair", "elem"])
def test_mixup_forced_per_element_lambdas(mode):
    """Force per-element lambdas / CutMix switches in both libraries; boxes from the seeded stream."""
    x, y = _batch()
    n = 4 if mode == "pair" else 8
    lam = np.array([0.3, 1.0, 0.8, 0.55, 0.9, 0.2, 1.0, 0.65][:n], np.float32)
    cut = np.array([True, False, False, True, True, False, True, False][:n])
    np.random.seed(11)
    tm = timm_mixup.Mixup(mixup_alpha=1.0, cutmix_alpha=1.0, mode=mode, num_classes=10)
    tm._params_per_elem = lambda b: (lam.copy(), cut.copy())
    xt, tt = tm(torch.from_numpy(x.copy()), torch.from_numpy(y))
    np.random.seed(11)
    fm = Mixup(mixup_alpha=1.0, cutmix_alpha=1.0, mode=mode, num_classes=10, rng=TimmRandom())
    fm._params_per_elem = lambda b: (lam.copy(), cut.copy())
    xm = x.copy()
    _, t = fm(xm, y)
    np.testing.assert_array_equal(xm, xt.numpy())
    np.testing.assert_array_equal(t, tt.numpy())
