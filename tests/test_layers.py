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


def _randomize_norms(ref):
    """Non-trivial BN/LN stats and affines (several of these layers zero-init them, which would hide bugs)."""
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, t in ref.state_dict().items():
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "running_var":
                t.copy_(0.5 + torch.rand(t.shape, generator=g))
            elif t.is_floating_point():
                t.copy_(0.3 * torch.randn(t.shape, generator=g) + (0.8 if leaf == "weight" and t.ndim == 1 else 0))


ATTN_CASES = [
    ("eca", 64, {}), ("eca", 256, {}), ("ecam", 64, {}), ("ceca", 128, {}), ("cbam", 32, {}), ("lcbam", 32, {}),
    ("gc", 32, {}), ("gca", 32, {}), ("gc", 32, dict(use_attn=False)), ("nl", 32, {}), ("se", 32, {}),
    ("cbam", 48, dict(rd_ratio=1 / 4, spatial_kernel_size=5)),
]


@pytest.mark.parametrize("name,channels,kwargs", ATTN_CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(ATTN_CASES)])
def test_create_attn_parity(name, channels, kwargs):
    ref = tl.create_attn(name, channels, **kwargs)
    ours = L.create_attn(name, channels, **kwargs)
    assert type(ours).__name__ == type(ref).__name__
    assert list(ours.state_dict()) == list(ref.state_dict())
    _randomize_norms(ref)
    _load(ours, ref)
    _run(ours, ref, np.random.RandomState(0).randn(2, channels, 5, 7).astype(np.float32))


def test_create_attn_names_and_errors():
    assert L.create_attn(None, 8) is None and L.create_attn("", 8) is None and L.create_attn(False, 8) is None
    assert isinstance(L.create_attn(True, 8), L.SEModule)
    assert L.EcaModule(64).conv.kernel_size == tl.EcaModule(64).conv.kernel_size == (3,)
    assert L.EcaModule(1024).conv.kernel_size == tl.EcaModule(1024).conv.kernel_size == (5,)
    with pytest.raises(ValueError, match="unknown attention layer 'bam'"):
        L.create_attn("bam", 8)
    with pytest.raises(ValueError, match="odd"):
        L.EcaModule(kernel_size=4)


def test_drop_block_eval_identity_and_determinism():
    x = flow.from_numpy(np.random.RandomState(0).randn(2, 4, 16, 16).astype(np.float32))
    db = L.DropBlock2d(0.2, block_size=5)
    db.eval()
    assert (db(x).numpy() == x.numpy()).all()
    db.train()
    flow.manual_seed(3)
    a = db(x).numpy()
    flow.manual_seed(3)
    b = db(x).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, x.numpy())
    with pytest.raises(ValueError, match="B, C, H, W"):
        L.drop_block_2d(flow.ones(4, 16, 16))


@pytest.mark.parametrize("block_size,size,couple", [(5, 16, True), (4, 15, True), (3, 12, False), (7, 6, True)])
def test_drop_block_statistics_match_timm(block_size, size, couple):
    """Same dropped fraction as timm's drop_block_2d (mean over 120 calls), whole blocks dropped,
    kept values rescaled by numel / kept exactly as timm does."""
    from timm.layers import drop_block_2d as ref_drop_block
    n, shape, p = 120, (4, 3, size, size), 0.15
    torch.manual_seed(0)
    flow.manual_seed(0)
    ref_frac, our_frac = [], []
    for _ in range(n):
        r = ref_drop_block(torch.ones(shape), p, block_size, couple_channels=couple).numpy()
        o = L.drop_block_2d(flow.ones(*shape), p, block_size, couple_channels=couple).numpy()
        ref_frac.append((r == 0).mean())
        our_frac.append((o == 0).mean())
        kept = o[o != 0]
        if kept.size:  # every kept value carries the same rescale: numel / number kept
            np.testing.assert_allclose(kept, o.size / kept.size, rtol=1e-5)
        if couple:
            assert (o == o[:, :1]).all()
    ref_m, our_m = float(np.mean(ref_frac)), float(np.mean(our_frac))
    se = max(float(np.std(ref_frac)), float(np.std(our_frac))) / np.sqrt(n)
    assert abs(ref_m - our_m) < 5 * se + 1e-3, (ref_m, our_m, se)
    # a dropped pixel belongs to a fully dropped kh x kw window (blocks, not salt-and-pepper)
    k = min(block_size, size)
    o = L.drop_block_2d(flow.ones(*shape), 0.3, block_size, couple_channels=couple, scale_by_keep=False).numpy()
    # morphological opening with a k x k square (outside the map counts as dropped: edge blocks are clipped)
    dropped = np.pad(o == 0, ((0, 0), (0, 0), (k - 1, k - 1), (k - 1, k - 1)), constant_values=True)
    win = np.lib.stride_tricks.sliding_window_view(dropped, (k, k), axis=(2, 3)).all(axis=(-1, -2))
    covered = np.zeros_like(dropped)
    for i in range(k):  # k*k shifted ORs (test helper, not library code)
        for j in range(k):
            covered[:, :, i:i + win.shape[2], j:j + win.shape[3]] |= win
    inner = (slice(None), slice(None), slice(k - 1, k - 1 + o.shape[2]), slice(k - 1, k - 1 + o.shape[3]))
    assert (covered[inner] == dropped[inner]).all() and (o == 0).any()


def test_drop_block_with_noise():
    flow.manual_seed(1)
    x = flow.ones(2, 2, 12, 12)
    y = L.drop_block_2d(x, 0.3, 3, with_noise=True).numpy()
    changed = y != 1
    assert changed.any() and not np.isin(y[changed], [0.0]).all()


@pytest.mark.parametrize("channels,filt_size,size", [(6, 3, 9), (4, 5, 10), (None, 3, 8), (3, 4, 7)])
def test_blur_pool(channels, filt_size, size):
    ref = tl.BlurPool2d(channels, filt_size=filt_size)
    ours = L.BlurPool2d(channels, filt_size=filt_size)
    assert list(ours.state_dict()) == list(ref.state_dict()) == []  # the filter is a non-persistent buffer
    _run(ours, ref, np.random.RandomState(0).randn(2, channels or 5, size, size).astype(np.float32))


def test_resnet_drop_block_schedule_matches_timm():
    """drop_block_rate puts timm's DropBlock2d (5x5 x0.25 in stage 3, 3x3 in stage 4) at the same paths."""
    import timm
    import flowvision.models as M
    ref = timm.create_model("resnet18", drop_block_rate=0.1)
    ours = M.create_model("resnet18", drop_block_rate=0.1)
    ref_db = {n: (m.block_size, m.gamma_scale) for n, m in ref.named_modules() if type(m).__name__ == "DropBlock2d"}
    our_db = {n: (m.block_size, m.gamma_scale) for n, m in ours.named_modules() if isinstance(m, L.DropBlock2d)}
    assert our_db == ref_db and len(our_db) == 4
