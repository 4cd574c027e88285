"""flowvision.layers against timm.layers (same parameter names, same outputs)."""
import numpy as np
import pytest

from flowvision import backend as flow
import flowvision.layers as L

torch = pytest.importorskip("torch")
tl = pytest.importorskip("timm.layers")


def _load(ours, ref):
    ours.load_state_dict({k: flow.from_numpy(v.detach().numpy().copy()) for k, v in ref.state_dict().items()},
                         strict=True)


def _run(ours, ref, x):
    ours.eval(), ref.eval()
    with torch.no_grad():
        r = ref(torch.from_numpy(x)).numpy()
    with flow.no_grad():
        o = ours(flow.from_numpy(x)).numpy()
    np.testing.assert_allclose(o, r, rtol=1e-5, atol=1e-5)


def test_mlp():
    ref = tl.Mlp(16, 32, 8)
    ours = L.Mlp(16, 32, 8)
    _load(ours, ref)
    _run(ours, ref, np.random.RandomState(0).randn(2, 5, 16).astype(np.float32))


def test_patch_embed():
    ref = tl.PatchEmbed(32, 8, 3, 24)
    ours = L.PatchEmbed(32, 8, 3, 24)
    _load(ours, ref)
    _run(ours, ref, np.random.RandomState(0).randn(2, 3, 32, 32).astype(np.float32))
    assert ours.grid_size == (4, 4) and ours.num_patches == 16
    with pytest.raises(ValueError):
        ours(flow.randn(1, 3, 16, 16))


@pytest.mark.parametrize("k,s,size", [(3, 2, 9), (3, 2, 10), (5, 2, 11), (3, 1, 7), (5, 1, 8)])
def test_tf_same_padding(k, s, size):
    ref = tl.create_conv2d(3, 4, k, stride=s, padding="same")
    ours = L.create_conv2d(3, 4, k, stride=s, padding="same")
    assert type(ours).__name__ == type(ref).__name__
    _load(ours, ref)
    _run(ours, ref, np.random.RandomState(0).randn(1, 3, size, size).astype(np.float32))


def test_se_module():
    ref = tl.SEModule(32)
    ours = L.SEModule(32)
    _load(ours, ref)
    _run(ours, ref, np.random.RandomState(0).randn(2, 32, 4, 4).astype(np.float32))


def test_batchnorm_act():
    ref = tl.BatchNormAct2d(8, act_layer=torch.nn.ReLU6)
    ours = L.BatchNormAct2d(8, act_layer="relu6")
    with torch.no_grad():
        ref.running_mean.uniform_(-1, 1)
        ref.running_var.uniform_(0.5, 2)
    _load(ours, ref)
    _run(ours, ref, np.random.RandomState(0).randn(2, 8, 3, 3).astype(np.float32) * 3)


@pytest.mark.parametrize("in_chans", [1, 2, 4, 7])
def test_adapt_input_conv(in_chans):
    from timm.models._manipulate import adapt_input_conv
    w = np.random.RandomState(0).randn(8, 3, 3, 3).astype(np.float32)
    ref = adapt_input_conv(in_chans, torch.from_numpy(w)).numpy()
    np.testing.assert_allclose(L.adapt_input_conv(in_chans, w), ref, rtol=1e-6)


def test_make_divisible_and_pool():
    for v in (3, 8, 12.5, 30, 37, 100, 1280 * 1.1):
        assert L.make_divisible(v) == tl.make_divisible(v)
    for pt in ("avg", "max", "avgmax", "catavgmax"):
        ref = tl.SelectAdaptivePool2d(pool_type=pt, flatten=True)
        ours = L.SelectAdaptivePool2d(pool_type=pt, flatten=True)
        _run(ours, ref, np.random.RandomState(0).randn(2, 4, 3, 5).astype(np.float32))


def test_drop_path():
    dp = L.DropPath(0.5)
    x = flow.ones(64, 4)
    dp.eval()
    assert (dp(x).numpy() == 1).all()
    dp.train()
    y = dp(x).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and (y[:, 0:1] == y).all()


def test_trunc_normal_bounds_and_std():
    t = flow.empty(20000)
    L.trunc_normal_(t, std=1.0, a=-2.0, b=2.0)
    a = t.numpy()
    assert a.min() >= -2 and a.max() <= 2 and abs(a.std() - 0.8796) < 0.02


def test_get_act_layer():
    from flowvision.backend import nn
    assert L.get_act_layer("swish") is nn.SiLU and L.get_act_layer(None) is None
    with pytest.raises(ValueError, match="unknown activation"):
        L.get_act_layer("nope")


def test_layer_norm_2d():
    ref = tl.LayerNorm2d(12)
    ours = L.LayerNorm2d(12)
    with torch.no_grad():
        ref.weight.uniform_(0.5, 1.5)
        ref.bias.normal_()
    _load(ours, ref)
    _run(ours, ref, np.random.RandomState(0).randn(2, 12, 5, 7).astype(np.float32))


def test_gated_mlp_with_spatial_gate():
    from functools import partial
    from timm.models.mlp_mixer import SpatialGatingUnit as RefSGU
    from flowvision.models.mlp_mixer import SpatialGatingUnit
    ref = tl.GatedMlp(16, 32, gate_layer=partial(RefSGU, seq_len=6))
    ours = L.GatedMlp(16, 32, gate_layer=partial(SpatialGatingUnit, seq_len=6))
    assert list(ours.state_dict()) == list(ref.state_dict())
    _load(ours, ref)
    _run(ours, ref, np.random.RandomState(0).randn(2, 6, 16).astype(np.float32))


@pytest.mark.parametrize("pool", ["avg", "max"])
def test_classifier_heads(pool):
    x = np.random.RandomState(0).randn(2, 8, 3, 3).astype(np.float32)
    ref, ours = tl.ClassifierHead(8, 5, pool_type=pool), L.ClassifierHead(8, 5, pool_type=pool)
    _load(ours, ref)
    _run(ours, ref, x)
    ref, ours = tl.NormMlpClassifierHead(8, 5, pool_type=pool), L.NormMlpClassifierHead(8, 5, pool_type=pool)
    _load(ours, ref)
    _run(ours, ref, x)
    ref, ours = (tl.NormMlpClassifierHead(8, 5, hidden_size=6, pool_type=pool),
                 L.NormMlpClassifierHead(8, 5, hidden_size=6, pool_type=pool, act_layer=flow.nn.Tanh))
    _load(ours, ref)
    _run(ours, ref, x)
    ours.reset(3)
    with flow.no_grad():
        assert tuple(ours(flow.from_numpy(x)).shape) == (2, 3)
