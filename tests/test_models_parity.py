"""Parity with timm: the same (randomised) weights loaded with no remap, the same input, eval mode.

Checks logits, forward_features and forward_head(pre_logits=True) within 1e-4 x max|reference|.
CI runs a representative set at small input sizes; ``pytest -m slow`` sweeps every registered model
at its native input size.
"""
import os
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
timm = pytest.importorskip("timm")

import flowvision.models as M  # noqa: E402
from flowvision import backend as flow  # noqa: E402

RTOL = 1e-4


# torch at 2 threads (the CI machine's cores) for the whole module: tests/conftest.py
pytestmark = pytest.mark.usefixtures("torch_two_threads")


def _randomize(model, seed=0):
    """Non-trivial BN statistics / affine params (timm zero-inits the last BN of residual blocks)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.state_dict().items():
            if not t.is_floating_point():
                continue
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "running_var":
                t.copy_(0.5 + torch.rand(t.shape, generator=g))
            elif leaf == "running_mean":
                t.copy_(0.1 * torch.randn(t.shape, generator=g))
            elif leaf in ("weight", "gamma", "ls1", "ls2", "alpha") and t.numel() == t.shape[-1]:
                t.copy_(0.5 + 0.5 * torch.rand(t.shape, generator=g))
            elif leaf in ("bias", "beta") and t.numel() == t.shape[-1]:
                t.copy_(0.05 * torch.randn(t.shape, generator=g))
            elif leaf in ("cls_token", "dist_token", "pos_embed"):
                t.copy_(0.02 * torch.randn(t.shape, generator=g))


def _pair(name, **kwargs):
    torch.manual_seed(0)
    ref = timm.create_model(name, pretrained=False, **kwargs).eval()
    _randomize(ref)
    ours = M.create_model(name, pretrained=False, **kwargs).eval()
    sd = {k: flow.from_numpy(v.detach().cpu().numpy().copy()) for k, v in ref.state_dict().items()}
    ours.load_state_dict(sd, strict=True)  # same names, same shapes, nothing left over
    return ref, ours


def _close(ref, out, what):
    ref = np.asarray(ref)
    out = np.asarray(out)
    assert ref.shape == out.shape, f"{what}: shape {out.shape} != timm {ref.shape}"
    scale = max(float(np.abs(ref).max()), 1e-6)
    err = float(np.abs(ref - out).max())
    assert err <= RTOL * scale, f"{what}: max abs diff {err:.3g} > {RTOL} x {scale:.3g}"


# above this many parameters timm's copy and ours do not both fit the machine's memory (1.8 B parameters: 7.4 GB
# each, plus activations): timm's results and weights go to disk and timm's model is freed before ours is built
_LEAN_ABOVE_PARAMS = 1_000_000_000


def check_parity_lean(name, size, workdir, batch=1, **kwargs):
    """``check_parity`` with one model in memory at a time. The float64 fallback is not used (it would need a third
    copy); the plain tolerance applies."""
    import gc
    torch.manual_seed(0)
    ref = timm.create_model(name, pretrained=False, **kwargs).eval()
    _randomize(ref)
    x = np.random.RandomState(0).randn(batch, 3, size, size).astype(np.float32)
    with torch.no_grad():
        t_feat = ref.forward_features(torch.from_numpy(x))
        expected = {"forward_features": t_feat.numpy(), "forward_head(pre_logits=True)":
                    ref.forward_head(t_feat, pre_logits=True).numpy(), "logits": ref.forward_head(t_feat).numpy()}
    num_features, num_classes = ref.num_features, ref.num_classes
    keys = list(ref.state_dict().keys())
    for i, (k, v) in enumerate(ref.state_dict().items()):
        np.save(os.path.join(workdir, f"{i}.npy"), v.detach().numpy())  # one file per tensor: streamed, not buffered
    del ref, t_feat
    gc.collect()
    ours = M.create_model(name, pretrained=False, **kwargs).eval()
    target = ours.state_dict()
    assert sorted(target) == sorted(keys), "parameter names differ from timm's"
    with flow.no_grad():
        for i, k in enumerate(keys):
            value = np.load(os.path.join(workdir, f"{i}.npy"), mmap_mode="r")
            assert tuple(target[k].shape) == value.shape, f"{k}: shape {tuple(target[k].shape)} != timm {value.shape}"
            target[k].copy_(flow.from_numpy(np.ascontiguousarray(value)))
            os.remove(os.path.join(workdir, f"{i}.npy"))
    with flow.no_grad():
        f_feat = ours.forward_features(flow.from_numpy(x))
        got = {"forward_features": f_feat.numpy(), "forward_head(pre_logits=True)":
               ours.forward_head(f_feat, pre_logits=True).numpy(), "logits": ours.forward_head(f_feat).numpy()}
    for what, ref_out in expected.items():
        _close(ref_out, got[what], f"{name} {what}")
    assert ours.num_features == num_features
    assert ours.num_classes == num_classes


def check_parity(name, size, batch=2, **kwargs):
    ref, ours = _pair(name, **kwargs)
    x = np.random.RandomState(0).randn(batch, 3, size, size).astype(np.float32)
    with torch.no_grad():
        tx = torch.from_numpy(x)
        t_feat = ref.forward_features(tx)
        t_pre = ref.forward_head(t_feat, pre_logits=True)
        t_logits = ref.forward_head(t_feat)
    with flow.no_grad():
        fx = flow.from_numpy(x)
        f_feat = ours.forward_features(fx)
        f_pre = ours.forward_head(f_feat, pre_logits=True)
        f_logits = ours(fx)
    outs = [(t_feat, f_feat, "forward_features"), (t_pre, f_pre, "forward_head(pre_logits=True)"),
            (t_logits, f_logits, "logits")]
    try:
        for t, f, what in outs:
            _close(t.numpy(), f.numpy(), f"{name} {what}")
    except AssertionError:
        _close_to_float64(ref, x, outs, name)
    assert ours.num_features == ref.num_features
    assert ours.num_classes == ref.num_classes


def _close_to_float64(ref, x, outs, name):
    """Fallback for ill-conditioned cases (200+ residual blocks with randomised BN statistics at native size:
    timm's own float32 result is then ~5e-3 x max away from its float64 one). Ours must be no further from
    timm's float64 result than timm's float32 result is (x1.5), or within the usual tolerance of it."""
    import copy
    ref64 = copy.deepcopy(ref).double()
    with torch.no_grad():
        t_feat = ref64.forward_features(torch.from_numpy(x).double())
        exact = [t_feat, ref64.forward_head(t_feat, pre_logits=True), ref64.forward_head(t_feat)]
    for (t32, f, what), t64 in zip(outs, exact):
        t32, f, t64 = t32.numpy().astype(np.float64), f.numpy().astype(np.float64), t64.numpy()
        timm_err = float(np.abs(t32 - t64).max())
        our_err = float(np.abs(f - t64).max())
        bound = max(RTOL * float(np.abs(t64).max()), 1.5 * timm_err)
        assert our_err <= bound, (f"{name} {what}: max abs diff to timm's float64 result {our_err:.3g} > {bound:.3g} "
                                  f"(timm float32's own diff: {timm_err:.3g})")


# (name, input size, kwargs): small inputs where the architecture allows
CI_CASES = [
    ("resnet18", 64, {}),
    ("resnet50", 64, {}),
    ("resnet26d", 64, {}),
    ("seresnext50_32x4d", 64, {}),
    ("resnet34", 64, {}),
    ("resnet50", 64, dict(num_classes=10, global_pool="max")),
    ("efficientnet_b0", 64, {}),
    ("tf_efficientnet_lite0", 65, {}),  # odd size: asymmetric TF 'same' padding
    ("tf_efficientnet_b1", 66, {}),
    ("efficientnet_lite2", 64, {}),
    ("vit_tiny_patch16_224", 224, {}),
    ("vit_small_patch32_224", 96, dict(img_size=96, global_pool="avg")),
    ("deit_tiny_distilled_patch16_224", 224, {}),
    ("vit_tiny_patch16_224", 64, dict(img_size=64, num_classes=0)),
    ("swin_tiny_patch4_window7_224", 64, dict(img_size=64)),  # clipped windows, padded shifted stage
    ("swin_base_patch4_window12_384", 96, dict(img_size=96, num_classes=5)),
    ("convnext_atto", 64, {}),  # conv_mlp (NCHW) blocks
    ("convnext_atto", 32, dict(conv_mlp=False, num_classes=7)),  # channels-last LayerNorm blocks (as tiny..xlarge)
    ("vgg11_bn", 32, dict(mlp_ratio=1 / 32)),  # narrow fc6/fc7 convs keep CI fast; input pooled up to 7x7
    ("densenet121", 32, {}),
    ("mobilenetv3_large_100", 64, {}),
    ("mobilenetv3_small_050", 64, {}),
    ("mobilenetv2_110d", 32, {}),  # depth-scaled, fixed stem/head
    ("deit3_small_patch16_224", 64, dict(img_size=64)),  # layer scale, pos-embed without the cls token
    ("mixer_s32_224", 64, dict(img_size=64)),
    ("resmlp_12_224", 64, dict(img_size=64)),
    ("gmlp_ti16_224", 64, dict(img_size=64)),
    ("regnety_008_tv", 64, {}),  # SE, torchvision channel rounding
    ("resnet10t", 64, {}),  # tiered deep stem, BasicBlock
    ("seresnet18", 64, {}),  # SE in BasicBlocks
    ("ecaresnet26t", 64, {}),  # ECA attention, tiered stem, avg-pool downsample
    ("densenetblur121d", 32, {}),  # deep stem + BlurPool2d stem downsample
    ("mobilenetv3_rw", 64, {}),  # no-skip first block, SE with the block's act, bias-free head conv
    ("mobilenetv3_large_150d", 32, {}),  # depth multiplier 1.2
]


@pytest.mark.parametrize("name,size,kwargs", CI_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CI_CASES)])
def test_parity(name, size, kwargs):
    check_parity(name, size, **kwargs)


def _native(name):
    return M.get_pretrained_cfg(name).input_size[-1] if M.get_pretrained_cfg(name) else 224


# families timm does not have (built from their papers) are checked in test_models_paper_families.py
_PAPER_ONLY = set(M.list_models(module=["van", "iresnet", "pvt", "uniformer", "cswin", "crossformer", "regionvit", "fan",
                                  "rexnet_lite", "convnext_isotropic"]))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(M.list_models()) - _PAPER_ONLY))
def test_parity_native_size(name, tmp_path):
    if _param_count(name) > _LEAN_ABOVE_PARAMS:
        check_parity_lean(name, _native(name), str(tmp_path))
    else:
        check_parity(name, _native(name), batch=1)


def _param_count(name):
    """timm's parameter count for ``name``, from a model built on torch's meta device (no memory)."""
    with torch.device("meta"):
        model = timm.create_model(name, pretrained=False)
    return sum(p.numel() for p in model.parameters())


FEATURE_CASES = [("resnet26d", (0, 1, 2, 3, 4)), ("tf_efficientnet_lite0", (1, 3, 4)), ("resnet18", (-1,)),
                 ("mobilenetv3_small_050", (0, 1, 4)), ("convnext_atto", (0, 3)), ("densenet121", (0, 2, 4)),
                 ("vgg11", (1, 5), dict(mlp_ratio=1 / 64)), ("densenetblur121d", (0, 1)),
                 ("ecaresnet26t", (1, 2)), ("convnext_atto", None), ("vgg11", None, dict(mlp_ratio=1 / 64)),
                 ("mobilenetv3_small_050", None)]  # None: the family's default levels equal timm's


@pytest.mark.parametrize("name,out_indices,kwargs", [c if len(c) == 3 else (*c, {}) for c in FEATURE_CASES])
def test_features_only_parity(name, out_indices, kwargs):
    check_features_only(name, out_indices, 65, **kwargs)


# token models: timm's FeatureGetterNet (ViT/DeiT/Mixer, pruned, NCHW maps; None = timm's default, last 3
# blocks) and FeatureListNet over Swin's NHWC stages (None = all 4)
TOKEN_FEATURE_CASES = [
    ("vit_tiny_patch16_224", None, 64),
    ("deit_tiny_distilled_patch16_224", (1, 3), 64), ("deit3_small_patch16_224", 2, 64),
    ("mixer_s32_224", None, 64), ("resmlp_12_224", (0, 5), 64), ("gmlp_ti16_224", (2,), 64),
    ("swin_tiny_patch4_window7_224", None, 64),
]


@pytest.mark.parametrize("name,out_indices,size", TOKEN_FEATURE_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in TOKEN_FEATURE_CASES])
def test_token_features_only_parity(name, out_indices, size):
    check_features_only(name, out_indices, size, img_size=size)


def check_features_only(name, out_indices, size, **kwargs):
    torch.manual_seed(0)
    if out_indices is not None:
        kwargs["out_indices"] = out_indices
    ref = timm.create_model(name, features_only=True, **kwargs).eval()
    _randomize(ref)
    ours = M.create_model(name, features_only=True, **kwargs).eval()
    # timm flattens top-level Sequentials for some families (stem_0, stages_1): back to the model's own names
    unflat = {re.sub(r"^(features|stem|stages|layers)_(\w+?)\.", r"\1.\2.", k): v for k, v in ref.state_dict().items()}
    ours.load_state_dict({k: flow.from_numpy(v.numpy().copy()) for k, v in unflat.items()}, strict=True)
    assert ours.feature_info.channels() == ref.feature_info.channels()
    assert ours.feature_info.reduction() == ref.feature_info.reduction()
    assert ours.feature_info.module_name() == ref.feature_info.module_name()
    x = np.random.RandomState(1).randn(1, 3, size, size).astype(np.float32)
    with torch.no_grad():
        t_out = ref(torch.from_numpy(x))
    with flow.no_grad():
        f_out = ours(flow.from_numpy(x))
    assert len(t_out) == len(f_out) == len(ref.feature_info.channels())
    for i, (t, f) in enumerate(zip(t_out, f_out)):
        _close(t.numpy(), f.numpy(), f"{name} features[{i}]")


INTERMEDIATE_CASES = [
    ("vit_tiny_patch16_224", dict(indices=(1, -1), norm=True, output_fmt="NLC", return_prefix_tokens=True)),
    ("deit_tiny_distilled_patch16_224", dict(indices=2, return_prefix_tokens=True)),
    ("deit3_small_patch16_224", dict(indices=None, stop_early=True, norm=True)),
    ("mixer_s32_224", dict(indices=(-2,), norm=True, output_fmt="NLC")),
    ("swin_tiny_patch4_window7_224", dict(indices=(1, 3), norm=True)),
    ("swin_tiny_patch4_window7_224", dict(indices=2, stop_early=True)),
]


@pytest.mark.parametrize("name,kwargs", INTERMEDIATE_CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                                 enumerate(INTERMEDIATE_CASES)])
def test_forward_intermediates_parity(name, kwargs):
    """forward_intermediates (final output and every intermediate, prefix tokens included) equals timm's."""
    ref, ours = _pair(name, img_size=64)
    x = np.random.RandomState(2).randn(2, 3, 64, 64).astype(np.float32)
    with torch.no_grad():
        t_final, t_inter = ref.forward_intermediates(torch.from_numpy(x), **kwargs)
    with flow.no_grad():
        f_final, f_inter = ours.forward_intermediates(flow.from_numpy(x), **kwargs)
        f_only = ours.forward_intermediates(flow.from_numpy(x), intermediates_only=True, **kwargs)
    _close(t_final.numpy(), f_final.numpy(), f"{name} final")
    assert len(t_inter) == len(f_inter) == len(f_only)
    for i, (t, f, g) in enumerate(zip(t_inter, f_inter, f_only)):
        t, f, g = (t, f, g) if isinstance(t, tuple) else ((t,), (f,), (g,))
        for j, (a, b, c) in enumerate(zip(t, f, g)):
            _close(a.numpy(), b.numpy(), f"{name} intermediate {i}.{j}")
            np.testing.assert_array_equal(b.numpy(), c.numpy())


def test_forward_intermediates_bad_indices():
    m = M.create_model("vit_tiny_patch16_224", img_size=32, patch_size=16).eval()
    x = flow.randn(1, 3, 32, 32)
    with pytest.raises(ValueError, match="out of range"):
        m.forward_intermediates(x, indices=(12,))
    with pytest.raises(ValueError, match="last-n"):
        m.forward_intermediates(x, indices=13)
    with pytest.raises(ValueError, match="output_fmt"):
        m.forward_intermediates(x, output_fmt="NHWC")
    with pytest.raises(ValueError, match="out of range"):
        M.create_model("mixer_s32_224", features_only=True, out_indices=(8,))
    with pytest.raises(ValueError, match="out of range"):
        M.create_model("swin_tiny_patch4_window7_224", features_only=True, out_indices=(4,))
