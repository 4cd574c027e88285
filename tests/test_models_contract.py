"""The model contract, registry-wide: every family's models answer the same API the same way.

CI runs one small case per structural flavour of every registered family (and fails when a family module
has none); ``pytest -m slow`` runs the full contract on every registered model at its native input size.
"""
import gc
import math

import numpy as np
import pytest

import flowvision.models as M
from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.models.vgg import VGG

# (name, input size, kwargs): tiny variants, small inputs
CONTRACT_CASES = [
    ("resnet10t", 32, {}), ("seresnet18", 32, {}), ("ecaresnet26t", 32, {}),
    ("densenet121", 32, {}), ("densenetblur121d", 32, {}),
    ("efficientnet_b0", 32, {}), ("tf_efficientnet_lite0", 33, {}), ("mobilenetv2_050", 32, {}),
    ("mobilenetv3_small_050", 32, {}), ("mobilenetv3_rw", 32, {}),
    ("vgg11", 32, dict(mlp_ratio=1 / 64)),
    ("convnext_atto", 32, {}), ("convnext_atto", 32, dict(conv_mlp=False)),
    ("regnetx_002", 32, {}), ("regnety_002", 32, {}),
    ("vit_tiny_patch16_224", 32, dict(img_size=32)), ("vit_small_patch32_224", 64, dict(img_size=64,
                                                                                         global_pool="avg")),
    ("deit_tiny_distilled_patch16_224", 32, dict(img_size=32)), ("deit3_small_patch16_224", 32, dict(img_size=32)),
    ("swin_tiny_patch4_window7_224", 64, dict(img_size=64)),
    ("mixer_s32_224", 64, dict(img_size=64)), ("resmlp_12_224", 32, dict(img_size=32)),
    ("gmlp_ti16_224", 32, dict(img_size=32)),
    # families matching the original flowvision zoo
    ("res2net50_48w_2s", 32, {}),
    ("resnest14d", 32, {}), ("legacy_seresnet18", 32, {}), ("ghostnet_050", 32, {}),
    ("rexnet_100", 32, {}), ("dla46_c", 32, {}), ("cait_xxs24_224", 32, dict(img_size=32)),
    ("poolformer_s12", 32, {}), ("caformer_s18", 32, {}), ("convmixer_768_32", 14, {}),
    ("pvt_v2_b0", 64, {}), ("levit_128s", 32, dict(img_size=32)), ("levit_conv_128s", 32, dict(img_size=32)),
    ("hrnet_w18_small", 32, {}), ("mobilevit_xxs", 32, {}), ("gernet_s", 32, {}),
    ("van_b0", 32, {}), ("iresnet50", 32, dict(img_size=32)),
    ("pvt_tiny", 32, dict(img_size=32)),
    ("uniformer_small", 32, dict(depth=(1, 1, 1, 1))), ("uniformer_small_plus", 32, dict(depth=(1, 1, 1, 1))),
    ("cswin_tiny_224", 64, dict(img_size=64, depth=(1, 1, 1, 1), split_size=(1, 2, 2, 2))),
    ("crossformer_tiny_patch4_group7_224", 64, dict(img_size=64, depths=(1, 2, 1, 1), group_size=(2, 2, 2, 2))),
    ("regionvit_tiny_224", 32, dict(depth=(1, 1, 1, 1), window=2)),
    ("regionvit_medium_224", 32, dict(depth=(1, 2, 1, 1), window=2, peg=True)),
    ("fan_tiny_12_p16_224", 32, dict(depth=2)), ("fan_tiny_8_p4_hybrid", 32, dict(depth=2, backbone_depths=(1, 1))),
    ("rexnet_lite_1_0", 32, {}), ("convnext_iso_small_224", 32, dict(depth=2)),
    ("mobilevitv2_050", 64, {}),
]


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else t.numpy()


def check_contract(name, size, **kwargs):
    # a 1000-class head even where the default weights are headless (timm: vit_small_patch8_224.dino has 0)
    kwargs.setdefault("num_classes", 1000)
    m = M.create_model(name, **kwargs).eval()
    x = flow.from_numpy(np.random.RandomState(0).randn(2, 3, size, size).astype(np.float32))

    # forward == forward_head(forward_features); pre_logits width == head_hidden_size
    with flow.no_grad():
        feats = m.forward_features(x)
        pre = m.forward_head(feats, pre_logits=True)
        logits = m.forward_head(feats)
        full = m(x)
    assert m.num_classes == 1000 and tuple(logits.shape) == (2, 1000)
    np.testing.assert_allclose(_np(full), _np(logits), rtol=1e-6, atol=1e-6)
    assert tuple(pre.shape) == (2, m.head_hidden_size)
    assert isinstance(m.num_features, int) and m.num_features > 0

    # set_grad_checkpointing is accepted and changes nothing numerically (recomputation only acts in training);
    # VGG refuses it, as timm's
    if isinstance(m, VGG):
        with pytest.raises(AssertionError, match="gradient checkpointing not supported"):
            m.set_grad_checkpointing(True)
    else:
        m.set_grad_checkpointing(True)
    with flow.no_grad():
        np.testing.assert_array_equal(_np(m(x)), _np(full))
    m.set_grad_checkpointing(False)

    # no_weight_decay names real parameters
    params = {n for n, _ in m.named_parameters()}
    nwd = m.no_weight_decay()
    assert isinstance(nwd, set)
    for n in nwd:
        assert n in params or any(p.startswith(n + ".") for p in params) or n == "dist_token", \
            f"{name}: no_weight_decay names {n!r}, which is not a parameter"

    # pretrained cfg as data
    cfg = m.pretrained_cfg
    assert cfg["architecture"] == name.split(".")[0] and len(cfg["input_size"]) == 3
    assert len(cfg["mean"]) == len(cfg["std"]) == 3 and cfg["interpolation"] and cfg["crop_pct"] > 0

    # feature_info names real modules, reductions never shrink
    modules = dict(m.named_modules())
    assert m.feature_info, f"{name} has no feature_info"
    for f in m.feature_info:
        assert {"num_chs", "reduction", "module"} <= set(f)
        assert f["module"] in modules, f"{name}: feature_info module {f['module']!r} does not exist"
    reductions = [f["reduction"] for f in m.feature_info]
    assert reductions == sorted(reductions)

    # classifier: get / reset to n classes / reset to none (pre-logits out)
    clf = m.get_classifier()
    clfs = clf if isinstance(clf, tuple) else (clf,)
    assert all(isinstance(c, nn.Module) for c in clfs)
    assert all(getattr(c, "out_features", 1000) == 1000 for c in clfs)
    m.reset_classifier(7)
    with flow.no_grad():
        assert tuple(m(x).shape) == (2, 7) and m.num_classes == 7
    m.reset_classifier(0)
    with flow.no_grad():
        assert tuple(m(x).shape) == (2, m.head_hidden_size)

    # a wrong channel count is a clear error
    with pytest.raises(ValueError, match="channel|expect"):
        m(flow.randn(1, 1, size, size))

    # features_only: maps with feature_info's channels at feature_info's reductions. The classifier goes first:
    # the largest models (vit_gigantic, 7.5 GB of weights plus their packed copies) do not fit twice.
    nhwc = getattr(m, "output_fmt", "NCHW") == "NHWC"
    del m, modules, clf, clfs
    gc.collect()
    fm = M.create_model(name, features_only=True, **kwargs).eval()
    with flow.no_grad():
        outs = fm(x)
    assert len(outs) == len(fm.feature_info.channels()) > 0
    for out, chs, red in zip(outs, fm.feature_info.channels(), fm.feature_info.reduction()):
        c, h = (out.shape[-1], out.shape[1]) if nhwc else (out.shape[1], out.shape[2])
        assert c == chs, f"{name}: feature map has {c} channels, feature_info says {chs}"
        assert h in (size // red, math.ceil(size / red)), f"{name}: {h} rows at reduction {red} of {size}"
    assert fm.pretrained_cfg["architecture"] == name.split(".")[0]


@pytest.mark.parametrize("name,size,kwargs", CONTRACT_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONTRACT_CASES)])
def test_contract(name, size, kwargs):
    check_contract(name, size, **kwargs)


def test_every_family_has_a_contract_case():
    covered = {m for name, _, _ in CONTRACT_CASES for m in M.list_modules() if name in M.list_models(module=m)}
    assert covered == set(M.list_modules()), f"families without a contract case: {set(M.list_modules()) - covered}"


def _native(name):
    cfg = M.get_pretrained_cfg(name)
    return cfg.input_size[-1] if cfg else 224


@pytest.mark.slow
@pytest.mark.parametrize("name", M.list_models())
def test_contract_native_size(name):
    check_contract(name, _native(name))
