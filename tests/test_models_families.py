"""Parity with timm for the families added to match the original flowvision zoo (Res2Net, legacy SENet,
ResNeSt, GhostNet, ReXNet, DLA, CaiT, PoolFormer, ConvMixer, PVT-v2, LeViT, ...).

Same random weights (timm's state_dict loaded unchanged, strict), same input, eval mode: logits,
forward_features and pre-logits within 1e-4 x max|timm|. CI runs the smallest variant of each family at a
small input; ``pytest -m slow`` runs every registered name of these families at its native size.
"""
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
timm = pytest.importorskip("timm")

import flowvision.models as M  # noqa: E402
from flowvision import backend as flow  # noqa: E402
from test_models_parity import _close, _randomize, check_parity  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_two_threads")

# (name, input size, kwargs): the smallest variant of each family, small inputs
CI_CASES = [
    ("res2net50_48w_2s", 32, {}),
    ("res2next50", 32, dict(num_classes=10, layers=(1, 1, 1, 1))),  # one block per stage keeps CI fast
    ("resnest14d", 32, {}),
    ("resnest50d_4s2x40d", 32, dict(layers=(1, 1, 1, 1))),  # radix 4, cardinality 2, pool before the conv
    ("resnest50d_1s4x24d", 32, dict(layers=(1, 1, 1, 1))),  # radix 1: sigmoid gate
    ("legacy_seresnet18", 32, {}),
    ("legacy_seresnext26_32x4d", 32, {}),
    ("ghostnet_050", 32, {}),
    ("ghostnetv2_100", 64, {}),  # DFC attention pools the input by 2: 64 keeps the last stage 1x1
    ("rexnet_100", 32, {}),
    ("rexnetr_100", 32, dict(num_classes=10)),  # channels rounded to 8
    ("dla46_c", 32, {}),
    ("dla34", 32, dict(num_classes=10)),  # basic blocks, 1x1-conv classifier
    ("dla60_res2next", 32, {}),  # Res2Net blocks inside the trees
    ("cait_xxs24_224", 64, dict(img_size=64, depth=4)),  # 4 of 24 self-attention blocks keep CI fast
    ("cait_xxs24_224", 32, dict(img_size=32, depth=2, global_pool="avg", num_classes=7)),
    ("poolformer_s12", 32, {}),
    ("poolformerv2_s12", 32, dict(num_classes=10)),
    ("convformer_s18", 32, {}),  # separable-conv mixer, StarReLU, MLP head
    ("caformer_s18", 64, {}),  # attention stages on (B, N, C) tokens
    ("convmixer_768_32", 14, {}),  # timm fixes the width: a 2x2-patch input keeps it fast
    ("pvt_v2_b0", 64, {}),
    ("pvt_v2_b2_li", 64, dict(num_classes=10)),  # linear attention: 7x7 pooled keys/values
    ("levit_128s", 64, dict(img_size=64)),  # distilled heads averaged
    ("levit_conv_128s", 64, dict(img_size=64, num_classes=10)),  # NCHW maps, 1x1 ConvNorms
    ("levit_512_s8", 32, dict(img_size=32)),  # stride-8 stem, SiLU, single head
    ("hrnet_w18_small", 32, {}),
    ("hrnet_w18_small_v2", 32, dict(num_classes=10)),  # multi-module stages
    ("mobilevit_xxs", 64, {}),
    ("mobilevit_xs", 32, dict(num_classes=10)),  # 1x1 last map: resampled to the 2x2 patch grid and back
    ("gernet_s", 32, {}),
    ("gernet_m", 32, dict(num_classes=10)),
]
FAMILIES = ["res2net", "resnest", "senet", "ghostnet", "rexnet", "dla", "cait", "metaformer", "convmixer", "pvt_v2",
            "levit", "hrnet", "mobilevit", "byobnet"]


@pytest.mark.parametrize("name,size,kwargs", CI_CASES, ids=[f"{c[0]}-{c[1]}" for c in CI_CASES])
def test_family_parity(name, size, kwargs):
    check_parity(name, size, **kwargs)


FEATURE_CASES = [("res2net50_48w_2s", None, 32), ("resnest14d", None, 32), ("legacy_seresnet18", None, 32),
                 ("ghostnet_050", None, 32),
                 ("rexnet_100", None, 32),
                 ("dla46_c", None, 32),
                 ("cait_xxs24_224", None, 64, dict(img_size=64, depth=4)),
                 ("poolformer_s12", (1, 3), 32),
                 ("pvt_v2_b0", None, 64),
                 ("levit_128s", None, 64, dict(img_size=64)), ("levit_conv_128s", (1, 2), 64, dict(img_size=64)),
                 ("hrnet_w18_small", None, 32), ("hrnet_w18_small", (1, 4), 32, dict(feature_location="")),
                 ("mobilevit_xxs", None, 64), ("gernet_s", None, 32)]


@pytest.mark.parametrize("name,out_indices,size,kwargs", [c if len(c) == 4 else (*c, {}) for c in FEATURE_CASES],
                         ids=[c[0] for c in FEATURE_CASES])
def test_family_features_only(name, out_indices, size, kwargs):
    check_features_only(name, out_indices, size, **kwargs)


def check_features_only(name, out_indices, size, **kwargs):
    """features_only maps equal timm's; timm flattens some top-level Sequentials (blocks_0): keys mapped back."""
    torch.manual_seed(0)
    if out_indices is not None:
        kwargs["out_indices"] = out_indices
    ref = timm.create_model(name, features_only=True, **kwargs).eval()
    _randomize(ref)
    ours = M.create_model(name, features_only=True, **kwargs).eval()
    ours_keys = set(ours.state_dict())
    sd = {}
    for k, v in ref.state_dict().items():
        if k not in ours_keys:
            k = re.sub(r"^([a-z]+)_", r"\1.", k)
        sd[k] = flow.from_numpy(v.numpy().copy())
    ours.load_state_dict(sd, strict=True)
    assert ours.feature_info.channels() == ref.feature_info.channels()
    assert ours.feature_info.reduction() == ref.feature_info.reduction()
    x = np.random.RandomState(1).randn(1, 3, size, size).astype(np.float32)
    with torch.no_grad():
        t_out = ref(torch.from_numpy(x))
    with flow.no_grad():
        f_out = ours(flow.from_numpy(x))
    assert len(t_out) == len(f_out) == len(ref.feature_info.channels())
    for i, (t, f) in enumerate(zip(t_out, f_out)):
        _close(t.numpy(), f.numpy(), f"{name} features[{i}]")


# (name, model kwargs, forward_intermediates kwargs)
INTERMEDIATE_CASES = [("dla46_c", {}, dict(indices=(1, 3))), ("dla46_c", {}, dict(indices=2, stop_early=True)),
                      ("cait_xxs24_224", dict(img_size=32, depth=6), dict(indices=(0, 5), norm=True)),
                      ("cait_xxs24_224", dict(img_size=32, depth=4), dict(indices=2, output_fmt="NLC")),
                      ("caformer_s18", {}, dict(indices=(0, 2)))]


@pytest.mark.parametrize("name,model_kwargs,kwargs", INTERMEDIATE_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(INTERMEDIATE_CASES)])
def test_family_forward_intermediates(name, model_kwargs, kwargs):
    """forward_intermediates: the final output and every intermediate equal timm's."""
    torch.manual_seed(0)
    ref = timm.create_model(name, **model_kwargs).eval()
    _randomize(ref)
    ours = M.create_model(name, **model_kwargs).eval()
    ours.load_state_dict({k: flow.from_numpy(v.numpy().copy()) for k, v in ref.state_dict().items()})
    x = np.random.RandomState(2).randn(1, 3, 32, 32).astype(np.float32)
    with torch.no_grad():
        t_final, t_inter = ref.forward_intermediates(torch.from_numpy(x), **kwargs)
    with flow.no_grad():
        f_final, f_inter = ours.forward_intermediates(flow.from_numpy(x), **kwargs)
    _close(t_final.numpy(), f_final.numpy(), f"{name} final")
    assert len(t_inter) == len(f_inter)
    for i, (t, f) in enumerate(zip(t_inter, f_inter)):
        _close(t.numpy(), f.numpy(), f"{name} intermediate[{i}]")


def _native(name):
    cfg = M.get_pretrained_cfg(name)
    return cfg.input_size[-1] if cfg else 224


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for f in FAMILIES for n in M.list_models(module=f)])
def test_family_parity_native_size(name):
    check_parity(name, _native(name), batch=1)


# the original flowvision's registered names -> (timm architecture, pretrained tag or None for the default)
ORIGINAL_NAMES = {
    "senet154": ("legacy_senet154", None), "se_resnext50_32x4d": ("legacy_seresnext50_32x4d", None),
    "resnest50": ("resnest50d", None), "resnest269": ("resnest269e", None),
    "res2net50_26w_4s": ("res2net50_26w_4s", None), "ghostnet": ("ghostnet_100", None),
    "rexnetv1_1_0": ("rexnet_100", None), "rexnetv1_3_0": ("rexnet_300", None), "dla102x2": ("dla102x2", None),
    "cait_S24_224": ("cait_s24_224", None), "cait_M48_448": ("cait_m48_448", None),
    "poolformer_m48": ("poolformer_m48", None), "levit_128s": ("levit_128s", None),
    "mobilevit_xx_small": ("mobilevit_xxs", None), "mobilevit_small": ("mobilevit_s", None),
    "genet_small": ("gernet_s", None), "genet_large": ("gernet_l", None),
    "convmixer_768_32_relu": ("convmixer_768_32", None), "convmixer_1024_20": ("convmixer_1024_20_ks9_p14", None),
    "vit_base_patch16_224_sam": ("vit_base_patch16_224", "sam_in1k"),
    "vit_base_patch8_224_in21k": ("vit_base_patch8_224", "augreg_in21k"),
    "vit_base_patch16_224_miil": ("vit_base_patch16_224_miil", None),
    "deit_base_patch16_LS_384_in21k": ("deit3_base_patch16_384", "fb_in22k_ft_in1k"),
    "swin_base_patch4_window7_224_in22k_to_1k": ("swin_base_patch4_window7_224", "ms_in22k_ft_in1k"),
    "convnext_xlarge_384_22k_to_1k": ("convnext_xlarge", "fb_in22k_ft_in1k_384"),
    "convnext_tiny_224": ("convnext_tiny", "fb_in1k"),
    "mlp_mixer_b16_224_miil_in21k": ("mixer_b16_224", "miil_in21k"),
    "resmlp_12_224_dino": ("resmlp_12_224", "fb_dino"),
    "resmlp_big_24_distilled_224": ("resmlp_big_24_224", "fb_distilled_in1k"),
}


@pytest.mark.parametrize("orig", sorted(ORIGINAL_NAMES))
def test_original_name_resolves_to_timm_model(orig):
    """The original flowvision name resolves to timm's architecture and weights tag (cfg equal to timm's)."""
    from timm.models import get_pretrained_cfg
    arch, tag = ORIGINAL_NAMES[orig]
    assert M.is_model(orig)
    if orig != arch:
        assert not M.list_models(orig), "an alias, not a second registered name"
    cfg = M.get_pretrained_cfg(orig)
    assert cfg.architecture == arch and (tag is None or cfg.tag == tag)
    ref = get_pretrained_cfg(f"{arch}.{cfg.tag}")
    assert (cfg.num_classes, tuple(cfg.input_size), cfg.hf_hub_id) == (ref.num_classes, tuple(ref.input_size),
                                                                      ref.hf_hub_id)


def test_vit_miil_parity():
    """vit_base_patch16_224_miil: ViT-B/16 without qkv bias (2 blocks keep CI fast)."""
    check_parity("vit_base_patch16_224_miil", 32, img_size=32, depth=2)


@pytest.mark.parametrize("orig,tv_name", [("mnasnet0_5", "mnasnet0_5"), ("shufflenet_v2_x0_5", "shufflenet_v2_x0_5"),
                                          ("regnet_x_400mf", "regnet_x_400mf"),
                                          ("lraspp_mobilenet_v3_large_coco", "lraspp_mobilenet_v3_large")])
def test_original_torchvision_only_names(orig, tv_name):
    """Names timm does not have build torchvision's architecture through create_model (state_dict keys and
    shapes equal torchvision's), and timm-only options are refused by name."""
    import torchvision
    ours = M.create_model(orig, num_classes=10)
    builder = getattr(torchvision.models, tv_name, None) or getattr(torchvision.models.segmentation, tv_name)
    extra = {"weights_backbone": None} if "lraspp" in tv_name else {}
    ref = builder(weights=None, num_classes=10, **extra)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in ref.state_dict().items()}
    with pytest.raises(TypeError, match="torchvision architecture"):
        M.create_model(orig, drop_path_rate=0.1)
