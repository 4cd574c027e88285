"""Families the original flowvision had and timm does not (built from their papers): parameter counts and
FLOPs at the paper's input size equal the paper's table, output shapes and feature_info as in the paper.

FLOPs are counted as multiply-accumulates of every convolution and linear layer (forward hooks on one
224x224 image), the convention of the papers' tables, which round to 0.1 G.
"""
import numpy as np
import pytest

import flowvision.models as M
from flowvision import backend as flow
from flowvision.backend import nn


def _params_m(model):
    return sum(p.numel() for p in model.parameters()) / 1e6


def _gmacs(model, size=224, attention=False):
    """GMACs of convs and linears (+ the two attention products of PVT's spatial-reduction attention when
    ``attention``: PVT's table counts them)."""
    from flowvision.models.pvt_v2 import Attention
    total = [0]

    def attn_hook(mod, inp, out):
        x, (h, w) = inp
        n_kv = h * w if mod.sr is None else (h // mod.sr.stride[0]) * (w // mod.sr.stride[1])
        total[0] += 2 * x.shape[1] * n_kv * x.shape[2]

    def hook(mod, inp, out):
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1]
            total[0] += out.numel() * (mod.in_channels // mod.groups) * k
        else:
            total[0] += out.numel() // out.shape[-1] * mod.in_features * mod.out_features

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    if attention:
        handles += [m.register_forward_hook(attn_hook) for m in model.modules() if isinstance(m, Attention)]
    with flow.no_grad():
        model(flow.randn(1, 3, size, size))
    for h in handles:
        h.remove()
    return total[0] / 1e9


# Guo et al., "Visual Attention Network", Table 2 (ImageNet-1K classification): Params (M), FLOPs (G)
VAN_TABLE = {"van_b0": (4.1, 0.9), "van_b1": (13.9, 2.5), "van_b2": (26.6, 5.0), "van_b3": (44.8, 9.0)}


@pytest.mark.parametrize("name", ["van_b0", "van_b1"])
def test_van_params_flops_match_paper(name):
    params, gflops = VAN_TABLE[name]
    model = M.create_model(name).eval()
    assert round(_params_m(model), 1) == params
    assert abs(_gmacs(model) - gflops) <= 0.05 + 1e-9, f"{name}: {_gmacs(model):.3f} GMACs vs the paper's {gflops}"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["van_b2", "van_b3"])
def test_van_params_flops_match_paper_large(name):
    params, gflops = VAN_TABLE[name]
    model = M.create_model(name).eval()
    assert round(_params_m(model), 1) == params
    assert abs(_gmacs(model) - gflops) <= 0.1, f"{name}: {_gmacs(model):.3f} GMACs vs the paper's {gflops}"


def test_van_shapes_feature_info_and_original_names():
    """Stage outputs at strides 4/8/16/32 with the paper's widths; the original names are B0-B3."""
    model = M.create_model("van_tiny").eval()
    assert model.pretrained_cfg["architecture"] == "van_b0"
    assert [f["num_chs"] for f in model.feature_info] == [32, 64, 160, 256]
    assert [f["reduction"] for f in model.feature_info] == [4, 8, 16, 32]
    x = flow.from_numpy(np.random.RandomState(0).randn(2, 3, 64, 64).astype(np.float32))
    with flow.no_grad():
        final, inter = model.forward_intermediates(x)
        logits = model(x)
    assert [tuple(t.shape) for t in inter] == [(2, 32, 16, 16), (2, 64, 8, 8), (2, 160, 4, 4), (2, 256, 2, 2)]
    np.testing.assert_allclose(final.numpy(), inter[-1].numpy())
    assert tuple(logits.shape) == (2, 1000)
    feats = M.create_model("van_b0", features_only=True, out_indices=(1, 3)).eval()
    with flow.no_grad():
        outs = feats(x)
    assert [tuple(t.shape) for t in outs] == [(2, 64, 8, 8), (2, 256, 2, 2)]
    for alias, arch in (("van_small", "van_b1"), ("van_base", "van_b2"), ("van_large", "van_b3")):
        assert M.get_pretrained_cfg(alias).architecture == arch


def test_van_lka_is_a_gate():
    """LKA multiplies its input by the attention map: a zero input gives a zero output, and the 7x7 dilated
    depthwise conv keeps the map size (padding 9 = 3 * (7 - 1) / 2)."""
    from flowvision.models.van import LKA
    lka = LKA(8).eval()
    z = flow.zeros(1, 8, 10, 10)
    with flow.no_grad():
        assert float(lka(z).abs().max()) == 0.0
        assert tuple(lka(flow.randn(1, 8, 10, 10)).shape) == (1, 8, 10, 10)


# InsightFace arcface_torch model zoo (the backbones of Deng et al., "ArcFace", CVPR 2019), 112x112 input:
# r50 43.6 M params / 6.3 GFLOPs, r100 65.2 M / 12.1 GFLOPs
IRESNET_TABLE = {"iresnet50": (43.6, 6.3), "iresnet101": (65.2, 12.1)}


@pytest.mark.parametrize("name", ["iresnet50"])
def test_iresnet_params_flops_match_table(name):
    params, gflops = IRESNET_TABLE[name]
    model = M.create_model(name).eval()
    assert round(_params_m(model), 1) == params
    assert round(_gmacs(model, 112), 1) == gflops


@pytest.mark.slow
def test_iresnet101_params_flops_match_table():
    params, gflops = IRESNET_TABLE["iresnet101"]
    model = M.create_model("iresnet101").eval()
    assert model.pretrained_cfg["architecture"] == "iresnet100"
    assert round(_params_m(model), 1) == params and round(_gmacs(model, 112), 1) == gflops


def test_iresnet_embedding_and_features():
    """A 512-d embedding for 112x112 faces; stage maps at strides 1..16; a wrong input size is refused."""
    model = M.create_model("iresnet50").eval()
    x = flow.randn(2, 3, 112, 112)
    with flow.no_grad():
        emb = model(x)
        feats = model.forward_features(x)
    assert tuple(emb.shape) == (2, 512) and tuple(feats.shape) == (2, 512, 7, 7)
    assert [f["reduction"] for f in model.feature_info] == [1, 2, 4, 8, 16]
    fm = M.create_model("iresnet50", features_only=True, out_indices=(2, 4)).eval()
    with flow.no_grad():
        assert [tuple(t.shape) for t in fm(x)] == [(2, 128, 28, 28), (2, 512, 7, 7)]
    with pytest.raises(ValueError, match="input size"):
        model(flow.randn(1, 3, 224, 224))


def _torch_style_net(torch):
    """The same network written with torch layers (Johnson et al., Table 1 of the supplementary, as in the
    PyTorch examples): the reference for values and parameter names."""
    tnn = torch.nn

    class Conv(tnn.Module):
        def __init__(self, i, o, k, s, up=None):
            super().__init__()
            self.up = up
            self.reflection_pad = tnn.ReflectionPad2d(k // 2)
            self.conv2d = tnn.Conv2d(i, o, k, s)

        def forward(self, x):
            if self.up:
                x = tnn.functional.interpolate(x, scale_factor=self.up, mode="nearest")
            return self.conv2d(self.reflection_pad(x))

    class Res(tnn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1, self.in1 = Conv(c, c, 3, 1), tnn.InstanceNorm2d(c, affine=True)
            self.conv2, self.in2 = Conv(c, c, 3, 1), tnn.InstanceNorm2d(c, affine=True)

        def forward(self, x):
            return self.in2(self.conv2(torch.relu(self.in1(self.conv1(x))))) + x

    class Net(tnn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.in1 = Conv(3, 32, 9, 1), tnn.InstanceNorm2d(32, affine=True)
            self.conv2, self.in2 = Conv(32, 64, 3, 2), tnn.InstanceNorm2d(64, affine=True)
            self.conv3, self.in3 = Conv(64, 128, 3, 2), tnn.InstanceNorm2d(128, affine=True)
            self.res = tnn.ModuleList([Res(128) for _ in range(5)])
            self.deconv1, self.in4 = Conv(128, 64, 3, 1, 2), tnn.InstanceNorm2d(64, affine=True)
            self.deconv2, self.in5 = Conv(64, 32, 3, 1, 2), tnn.InstanceNorm2d(32, affine=True)
            self.deconv3 = Conv(32, 3, 9, 1)

        def forward(self, x):
            y = torch.relu(self.in1(self.conv1(x)))
            y = torch.relu(self.in3(self.conv3(torch.relu(self.in2(self.conv2(y))))))
            for r in self.res:
                y = r(y)
            y = torch.relu(self.in5(self.deconv2(torch.relu(self.in4(self.deconv1(y))))))
            return torch.clamp(self.deconv3(y), 0, 255)
    return Net()


def test_fast_neural_style_equals_torch_reference():
    """Same weights (names mapped res.N -> resN+1), same image: equal stylised output; 1.68 M parameters."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    ref = _torch_style_net(torch).eval()
    with torch.no_grad():
        for name, p in ref.named_parameters():
            if name.endswith("weight") and p.ndim == 1:
                p.copy_(0.5 + torch.rand(p.shape))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape))
    ours = M.create_model("fast_neural_style").eval()
    sd = {}
    for k, v in ref.state_dict().items():
        if k.startswith("res."):
            i, rest = k[4:].split(".", 1)
            k = f"res{int(i) + 1}.{rest}"
        sd[k] = flow.from_numpy(v.numpy().copy())
    ours.load_state_dict(sd, strict=True)
    assert round(_params_m(ours), 2) == 1.68
    x = np.random.RandomState(0).rand(1, 3, 48, 40).astype(np.float32) * 255
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with flow.no_grad():
        got = ours(flow.from_numpy(x)).numpy()
    assert got.shape == (1, 3, 48, 40)
    assert np.abs(got - expected).max() <= 1e-4 * max(np.abs(expected).max(), 1.0)
    for style in ("sketch", "candy", "mosaic", "rain_princess", "udnie"):
        assert isinstance(M.fast_neural_style(style_model=style), M.FastNeuralStyle)
    with pytest.raises(ValueError, match="style_model"):
        M.fast_neural_style(style_model="picasso")
    with pytest.raises(RuntimeError, match="no pretrained weights"):
        M.create_model("fast_neural_style", pretrained=True)


# Wang et al., "Pyramid Vision Transformer", Table 2 (ImageNet classification): Params (M), GFLOPs at 224
PVT_TABLE = {"pvt_tiny": (13.2, 1.9), "pvt_small": (24.5, 3.8), "pvt_medium": (44.2, 6.7), "pvt_large": (61.4, 9.8)}


@pytest.mark.parametrize("name", ["pvt_tiny", pytest.param("pvt_small", marks=pytest.mark.slow),
                                  pytest.param("pvt_medium", marks=pytest.mark.slow),
                                  pytest.param("pvt_large", marks=pytest.mark.slow)])
def test_pvt_params_flops_match_paper(name):
    params, gflops = PVT_TABLE[name]
    model = M.create_model(name).eval()
    assert round(_params_m(model), 1) == params
    assert round(_gmacs(model, attention=True), 1) == gflops


def test_pvt_shapes_and_features():
    """Stage maps at strides 4..32 with the paper's widths; the class token joins only the last stage."""
    model = M.create_model("pvt_tiny", img_size=64).eval()
    x = flow.randn(2, 3, 64, 64)
    with flow.no_grad():
        tokens, maps = model.forward_intermediates(x)
        logits = model(x)
    assert tuple(tokens.shape) == (2, 1 + 2 * 2, 512) and tuple(logits.shape) == (2, 1000)
    assert [tuple(t.shape) for t in maps] == [(2, 64, 16, 16), (2, 128, 8, 8), (2, 320, 4, 4), (2, 512, 2, 2)]
    fm = M.create_model("pvt_tiny", img_size=64, features_only=True, out_indices=(1, 3)).eval()
    fm.model.load_state_dict(model.state_dict())
    with flow.no_grad():
        outs = fm(x)
    assert [tuple(t.shape) for t in outs] == [(2, 128, 8, 8), (2, 512, 2, 2)]
    np.testing.assert_allclose(outs[1].numpy(), maps[3].numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="input size"):
        model(flow.randn(1, 3, 96, 96))
