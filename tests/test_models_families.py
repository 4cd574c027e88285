"""Parity with timm for the families added to match the original flowvision zoo (Res2Net, legacy SENet,
ResNeSt, GhostNet, ReXNet, DLA, CaiT, PoolFormer, ConvMixer, PVT-v2, LeViT, ...).

Same random weights (timm's state_dict loaded unchanged, strict), same input, eval mode: logits,
forward_features and pre-logits within 1e-4 x max|timm|. CI runs the smallest variant of each family at a
small input; ``pytest -m slow`` runs every registered name of these families at its native size.
"""
import pytest

torch = pytest.importorskip("torch")
timm = pytest.importorskip("timm")

import flowvision.models as M  # noqa: E402
from test_models_parity import check_features_only, check_parity  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_two_threads")

# (name, input size, kwargs): the smallest variant of each family, small inputs
CI_CASES = [
    ("res2net50_48w_2s", 32, {}),
    ("res2next50", 32, dict(num_classes=10)),
    ("resnest14d", 32, {}),
    ("resnest50d_4s2x40d", 32, {}),  # radix 4, cardinality 2, pooling before the split-attention conv
    ("resnest50d_1s4x24d", 32, {}),  # radix 1: sigmoid gate
    ("legacy_seresnet18", 32, {}),
    ("legacy_seresnext26_32x4d", 32, {}),
]
FAMILIES = ["res2net", "resnest", "senet"]


@pytest.mark.parametrize("name,size,kwargs", CI_CASES, ids=[f"{c[0]}-{c[1]}" for c in CI_CASES])
def test_family_parity(name, size, kwargs):
    check_parity(name, size, **kwargs)


FEATURE_CASES = [("res2net50_48w_2s", None, 32), ("resnest14d", None, 32), ("legacy_seresnet18", None, 32)]


@pytest.mark.parametrize("name,out_indices,size", FEATURE_CASES, ids=[c[0] for c in FEATURE_CASES])
def test_family_features_only(name, out_indices, size):
    check_features_only(name, out_indices, size)


def _native(name):
    cfg = M.get_pretrained_cfg(name)
    return cfg.input_size[-1] if cfg else 224


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for f in FAMILIES for n in M.list_models(module=f)])
def test_family_parity_native_size(name):
    check_parity(name, _native(name), batch=1)
