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


def _gmacs(model, size=224):
    total = [0]

    def hook(mod, inp, out):
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1]
            total[0] += out.numel() * (mod.in_channels // mod.groups) * k
        else:
            total[0] += out.numel() // out.shape[-1] * mod.in_features * mod.out_features

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
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
