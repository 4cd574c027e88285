"""The model registry, pretrained cfgs and the model contract (no timm needed except where marked)."""
import numpy as np
import pytest

import flowvision.models as M
from flowvision import backend as flow


def test_list_models_fnmatch_and_sorting():
    names = M.list_models("resnet*")
    assert "resnet50" in names and "resnet50d" in names and "resnet101" in names
    assert names.index("resnet18") < names.index("resnet101")  # natural sort
    assert M.list_models(["resnet18", "vit_tiny*"]) == ["resnet18", "vit_tiny_patch16_224", "vit_tiny_patch16_384"]
    assert "resnet50d" not in M.list_models("resnet50*", exclude_filters="*d")
    assert set(M.list_models(module="efficientnet")) >= {"tf_efficientnet_lite0", "efficientnet_b7"}


def test_list_pretrained_tags():
    tags = M.list_pretrained("resnet50*")
    assert "resnet50.a1_in1k" in tags and "resnet50.tv_in1k" in tags
    assert all("." in t for t in tags)
    assert M.list_models("tf_efficientnet_lite0", pretrained=True) == ["tf_efficientnet_lite0.in1k"]


def test_is_model_entrypoint_aliases():
    assert M.is_model("resnet50") and M.is_model("resnet50.a1_in1k")
    assert M.is_model("vit_base")
    assert M.model_entrypoint("swin_tiny") is M.model_entrypoint("swin_tiny_patch4_window7_224")
    assert M.model_entrypoint("vit_base") is M.model_entrypoint("vit_base_patch16_224")
    assert not M.is_model("resnet5000")
    m = M.create_model("vit_tiny", num_classes=3)
    assert m.pretrained_cfg["architecture"] == "vit_tiny_patch16_224"


def test_unknown_model_suggests_close_names():
    with pytest.raises(RuntimeError, match=r"Unknown model \(resnet5O\).*resnet50"):
        M.create_model("resnet5O")
    with pytest.raises(RuntimeError, match="Invalid pretrained tag"):
        M.create_model("resnet50.nope_in1k")
    with pytest.raises(ValueError):
        M.create_model("hf-hub:timm/resnet50")


def test_default_tag_and_cfg_fields():
    cfg = M.get_pretrained_cfg("resnet50")
    assert (cfg.architecture, cfg.tag) == ("resnet50", "a1_in1k")
    assert cfg.hf_hub_id == "timm/resnet50.a1_in1k"
    cfg = M.get_pretrained_cfg("tf_efficientnet_lite0")
    assert cfg.mean == (0.5, 0.5, 0.5) and cfg.first_conv == "conv_stem" and cfg.classifier == "classifier"
    assert cfg.in_manifest and cfg.has_weights
    assert M.get_pretrained_cfg_value("vit_base_patch16_384", "input_size") == (3, 384, 384)


def test_create_model_kwargs_and_none_dropped():
    m = M.create_model("resnet18", num_classes=7, in_chans=1, drop_rate=None, global_pool=None)
    assert m.num_classes == 7 and m.conv1.in_channels == 1
    assert m.pretrained_cfg["tag"] == "a1_in1k"
    m = M.create_model("resnet18.tv_in1k")
    assert m.pretrained_cfg["tag"] == "tv_in1k" and m.default_cfg["interpolation"] == "bilinear"
    m = M.create_model("resnet18", pretrained_cfg_overlay=dict(crop_pct=1.0))
    assert m.pretrained_cfg["crop_pct"] == 1.0


@pytest.mark.parametrize("name,size", [("resnet18", 32), ("tf_efficientnet_lite0", 32), ("vit_tiny_patch16_224", 224),
                                       ("swin_tiny_patch4_window7_224", 224), ("convnext_atto", 32),
                                       ("mobilenetv3_small_050", 32), ("densenet121", 32), ("regnetx_002", 32),
                                       ("mixer_s32_224", 224), ("mobilenetv2_050", 32)])
def test_contract(name, size):
    m = M.create_model(name).eval()
    x = flow.randn(1, 3, size, size)
    with flow.no_grad():
        feats = m.forward_features(x)
        pre = m.forward_head(feats, pre_logits=True)
        logits = m.forward_head(feats)
    hidden = m.head_hidden_size  # == num_features except where the head has its own layer (MobileNetV3, VGG)
    assert tuple(pre.shape) == (1, hidden) and tuple(logits.shape) == (1, 1000)
    assert m.get_classifier() is not None
    m.reset_classifier(5)
    with flow.no_grad():
        assert tuple(m(x).shape) == (1, 5)
    m.reset_classifier(0)
    with flow.no_grad():
        assert tuple(m(x).shape) == (1, hidden)
    assert isinstance(m.no_weight_decay(), set)
    m.set_grad_checkpointing(True)
    assert m.feature_info and all({"num_chs", "reduction", "module"} <= set(f) for f in m.feature_info)


def test_bad_inputs_raise_clear_errors():
    m = M.create_model("resnet18").eval()
    with pytest.raises(ValueError, match="channels"):
        m(flow.randn(1, 1, 32, 32))
    v = M.create_model("vit_tiny_patch16_224").eval()
    with pytest.raises(ValueError, match="does not match"):
        v(flow.randn(1, 3, 64, 64))
    with pytest.raises(ValueError):
        M.create_model("resnet18", in_chans=0)
    with pytest.raises(ValueError, match="global_pool"):
        M.create_model("resnet18", global_pool="median")
    with pytest.raises(TypeError, match="resnet18 does not accept img_size"):
        M.create_model("resnet18", img_size=128)
    with pytest.raises(ValueError, match="at least 32x32"):
        M.create_model("vgg11", mlp_ratio=1 / 64)(flow.randn(1, 3, 16, 16))
    with pytest.raises(ValueError, match="channels|expected"):
        M.create_model("convnext_atto")(flow.randn(1, 1, 32, 32))
    with pytest.raises(ValueError, match="does not match"):
        M.create_model("mixer_s32_224")(flow.randn(1, 3, 64, 64))


def test_cfgs_match_timm():
    timm = pytest.importorskip("timm")
    from timm.models import get_pretrained_cfg
    fields = ("input_size", "crop_pct", "interpolation", "mean", "std", "first_conv", "classifier", "num_classes",
              "test_input_size", "test_crop_pct", "fixed_input_size", "pool_size", "license")
    paper_only = set(M.list_models(module=["van", "iresnet", "pvt", "uniformer", "cswin", "crossformer", "regionvit", "fan",
                                  "rexnet_lite", "convnext_isotropic"]))  # not in timm (from papers)
    for name in M.list_models():
        assert timm.is_model(name) or name in paper_only, f"{name} has no timm counterpart"
    for full in M.list_models(include_tags=True):
        if "." not in full or full.split(".")[0] in paper_only:
            continue
        ref = get_pretrained_cfg(full)
        assert ref is not None, f"timm has no pretrained cfg {full}"
        ours = M.get_pretrained_cfg(full)
        for f in fields:
            a, b = getattr(ours, f), getattr(ref, f)
            a = tuple(a) if isinstance(a, (list, tuple)) else a
            b = tuple(b) if isinstance(b, (list, tuple)) else b
            assert a == b, f"{full}.{f}: {a!r} != timm {b!r}"


def test_pretrained_head_drop_and_in_chans_adapt():
    base = M.create_model("tf_efficientnet_lite0", pretrained=True)
    m = M.create_model("tf_efficientnet_lite0", pretrained=True, num_classes=10, in_chans=1)
    assert tuple(m.classifier.weight.shape) == (10, 1280)
    w3 = base.conv_stem.weight.detach().numpy()
    np.testing.assert_allclose(m.conv_stem.weight.detach().numpy(), w3.sum(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(m.conv_head.weight.detach().numpy(), base.conv_head.weight.detach().numpy())
    m5 = M.create_model("tf_efficientnet_lite0", pretrained=True, in_chans=5)
    w5 = m5.conv_stem.weight.detach().numpy()
    np.testing.assert_allclose(w5[:, :3], w3 * 3 / 5, rtol=1e-6)
    np.testing.assert_allclose(w5[:, 3:], w3[:, :2] * 3 / 5, rtol=1e-6)


def test_pretrained_without_weights_raises():
    with pytest.raises(RuntimeError, match="no pretrained weights"):
        M.create_model("efficientnet_b7", pretrained=True)


def test_checkpoint_path(tmp_path):
    from flowvision.hub import save_safetensors
    m = M.create_model("resnet18", num_classes=4)
    sd = {k: v.numpy() for k, v in m.state_dict().items()}
    save_safetensors(sd, str(tmp_path / "w.safetensors"))
    m2 = M.create_model("resnet18", num_classes=4, checkpoint_path=str(tmp_path / "w.safetensors"))
    np.testing.assert_array_equal(m2.fc.weight.detach().numpy(), m.fc.weight.detach().numpy())
    with pytest.raises(FileNotFoundError):
        M.create_model("resnet18", checkpoint_path=str(tmp_path / "missing.pth"))


def test_features_only_out_indices_validation():
    m = M.create_model("resnet18", features_only=True, out_indices=(1, -1))
    assert m.feature_info.channels() == [64, 512] and m.feature_info.reduction() == [4, 32]
    with pytest.raises(ValueError, match="out of range"):
        M.create_model("resnet18", features_only=True, out_indices=(5,))
    with pytest.raises(ValueError, match="duplicates"):
        M.create_model("resnet18", features_only=True, out_indices=(1, 1))
    with pytest.raises(ValueError, match="features_only"):
        M.create_model("resnet18", out_indices=(1,))
    v = M.create_model("vit_tiny_patch16_224", features_only=True)  # timm's default: the last 3 blocks
    assert v.feature_info.module_name() == ["blocks.9", "blocks.10", "blocks.11"]
    assert v.feature_info.reduction() == [16, 16, 16] and len(v.model.blocks) == 12
    v = M.create_model("vit_tiny_patch16_224", features_only=True, out_indices=(2, 4))
    assert len(v.model.blocks) == 5 and isinstance(v.model.head, flow.nn.Identity)  # pruned as timm
    with pytest.raises(ValueError, match="out of range"):
        M.create_model("vit_tiny_patch16_224", features_only=True, out_indices=(12,))
