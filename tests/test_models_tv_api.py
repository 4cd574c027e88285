"""torchvision-style API: builders with ``weights=``, ``*_Weights`` enums, get_model/get_weight/list_models,
and parity with torchvision's models on the same random weights (torchvision's parameter names, strict load)."""
import warnings

import numpy as np
import pytest

import flowvision.models as M
from flowvision import backend as flow

RTOL = 1e-4


def test_weights_enum_resolution():
    w = M.ResNet50_Weights
    assert w.DEFAULT is w.IMAGENET1K_V2
    assert w.verify("IMAGENET1K_V1") is w.IMAGENET1K_V1
    assert w.verify("ResNet50_Weights.IMAGENET1K_V2") is w.IMAGENET1K_V2
    assert w.verify("DEFAULT") is w.IMAGENET1K_V2 and w.verify(None) is None
    with pytest.raises(ValueError):
        w.verify("IMAGENET1K_V9")
    with pytest.raises(TypeError):
        w.verify(M.ResNet18_Weights.IMAGENET1K_V1)
    assert w.IMAGENET1K_V2.url == "https://download.pytorch.org/models/resnet50-11ad3fa6.pth"
    meta = w.IMAGENET1K_V2.meta
    assert len(meta["categories"]) == 1000 and meta["categories"][0].startswith("tench")
    assert meta["num_params"] == 25557032 and meta["min_size"] == (1, 1)
    assert repr(w.DEFAULT) == "ResNet50_Weights.IMAGENET1K_V2"


def test_registry_functions():
    assert M.get_weight("ResNet50_Weights.IMAGENET1K_V2") is M.ResNet50_Weights.IMAGENET1K_V2
    assert M.get_model_weights("vit_b_16") is M.ViT_B_16_Weights
    assert M.get_model_weights(M.mobilenet_v3_large) is M.MobileNet_V3_Large_Weights
    assert M.get_model_weights(M.resnet50) is M.ResNet50_Weights  # the shared timm/torchvision name
    assert M.list_models(module=M, include="vit_*") == ["vit_b_16", "vit_b_32", "vit_h_14", "vit_l_16", "vit_l_32"]
    assert "resnet50" in M.list_models(include="res*", exclude="*101*")
    assert "resnet101" not in M.list_models(include="res*", exclude="*101*")
    assert "resnet50d" in M.list_models("resnet50*")  # timm-style filters unchanged
    assert "vit_b_16" not in M.list_models()
    with pytest.raises(ValueError, match="Unknown model"):
        M.get_model("vit_b_61")
    with pytest.raises(ValueError):
        M.get_weight("ResNet50_Weights")


def test_weights_data_equal_torchvision():
    tvm = pytest.importorskip("torchvision.models")
    names = M.list_models(module=M)
    assert len(names) == 80  # torchvision 0.29's classification builders
    for name in names:
        ours, ref = M.get_model_weights(name), tvm.get_model_weights(name)
        assert ours.__name__ == ref.__name__ and ours.DEFAULT.name == ref.DEFAULT.name, name
        for w in ours:
            r = ref[w.name]
            assert w.url == r.url, (name, w)
            assert w.meta["num_params"] == r.meta["num_params"] and w.meta["min_size"] == tuple(r.meta["min_size"])
            t, rt = w.transforms(), r.transforms()
            assert (t.crop_size, t.resize_size, t.interpolation.value) == (rt.crop_size, rt.resize_size,
                                                                           rt.interpolation.value), (name, w)
    with pytest.raises(ValueError, match="image_size"):
        M.vit_b_16(weights="IMAGENET1K_SWAG_E2E_V1", image_size=224)


def test_task_subpackage_builders_in_the_registry():
    seg = pytest.importorskip("flowvision.models.segmentation")
    assert M.get_model_builder("fcn_resnet50") is seg.fcn_resnet50
    assert M.get_model_weights("fcn_resnet50").__name__ == "FCN_ResNet50_Weights"
    assert "fcn_resnet50" in M.list_models(module=seg)
    assert M.get_weight("FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1").url.endswith(".pth")
    det = pytest.importorskip("flowvision.models.detection")
    assert "fasterrcnn_resnet50_fpn" in M.list_models(module=det)
    assert not [n for n in M.list_models(module=det) if "backbone" in n]


def test_transforms_preset():
    t = M.ResNet50_Weights.IMAGENET1K_V2.transforms()
    assert t.crop_size == [224] and t.resize_size == [232]
    img = flow.from_numpy(np.random.RandomState(0).randint(0, 256, (3, 300, 260), dtype=np.uint8))
    out = t(img)
    assert tuple(out.shape) == (3, 224, 224) and out.dtype == flow.float32
    tv = pytest.importorskip("torchvision")
    import torch
    ref = tv.models.ResNet50_Weights.IMAGENET1K_V2.transforms()(torch.from_numpy(img.numpy()))
    assert np.abs(ref.numpy() - out.numpy()).max() < 2e-2  # antialiased resize: rounding-level differences


def test_builder_forms_and_errors():
    m = M.resnet50(weights=None, num_classes=10)
    assert type(m).__name__ == "ResNet" and m.fc.out_features == 10  # torchvision's structure
    # one rule for names: flowvision.models.<name> / get_model are torchvision's, create_model timm's
    assert type(M.efficientnet_b0(weights=None)).__name__ == "EfficientNetTV"  # torchvision's structure
    assert type(M.efficientnet_b0(progress=False)).__name__ == "EfficientNetTV"
    assert type(M.efficientnet_b0()).__name__ == "EfficientNetTV"
    assert type(M.create_model("efficientnet_b0")).__name__ == "EfficientNet"
    assert type(M.get_model("efficientnet_b0")).__name__ == "EfficientNetTV"
    with pytest.raises(TypeError):
        M.create_model("efficientnet_b0", progress=False)  # no keyword sniffing: timm's entrypoint
    with pytest.raises(ValueError, match="num_classes"):
        M.mobilenet_v3_small(weights="DEFAULT", num_classes=10)
    with pytest.raises(TypeError):
        M.vit_b_16(M.ViT_B_16_Weights.DEFAULT)  # keyword-only like torchvision


@pytest.mark.slow
def test_vgg_dispatch():
    assert type(M.vgg11(weights=None)).__name__ == "VGGTV"
    assert type(M.vgg11()).__name__ == "VGGTV"
    assert type(M.create_model("vgg11", mlp_ratio=1 / 64)).__name__ == "VGG"


def _save_torch(model, path):
    import torch
    torch.save(model.state_dict(), path)


def test_weights_load_through_cache_and_pretrained_true(tmp_path, monkeypatch):
    tv = pytest.importorskip("torchvision")
    import torch
    torch.manual_seed(0)
    ref = tv.models.mobilenet_v3_small().eval()
    _randomize(ref)
    path = tmp_path / "mnv3_small.pth"
    _save_torch(ref, path)
    w = M.MobileNet_V3_Small_Weights.IMAGENET1K_V1
    monkeypatch.setattr(w.value, "url", str(path))
    x = np.random.RandomState(0).randn(1, 3, 64, 64).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for model in (M.mobilenet_v3_small(weights="DEFAULT"), M.mobilenet_v3_small(pretrained=True),
                      M.get_model("mobilenet_v3_small", weights=w)):
            with flow.no_grad():
                _close(expected, model.eval()(flow.from_numpy(x)).numpy(), "mobilenet_v3_small")


def test_import_flowvision_as_torchvision(tmp_path, monkeypatch):
    tvm = pytest.importorskip("torchvision.models")
    import torch
    torch.manual_seed(0)
    ref = tvm.resnet18().eval()
    _randomize(ref)
    path = tmp_path / "r18.pth"
    _save_torch(ref, path)
    import flowvision as torchvision
    monkeypatch.setattr(torchvision.models.ResNet18_Weights.IMAGENET1K_V1.value, "url", str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = torchvision.models.resnet18(weights="DEFAULT").eval()
    x = np.random.RandomState(0).randn(1, 3, 64, 64).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with flow.no_grad():
        _close(expected, model(flow.from_numpy(x)).numpy(), "resnet18")


# --- parity with torchvision on the same random weights ----------------------------------------------------

def _randomize(model, seed=0):
    import torch
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
            elif leaf == "weight" and t.ndim == 1:
                t.copy_(0.5 + 0.5 * torch.rand(t.shape, generator=g))
            elif leaf == "bias" and t.ndim == 1:
                t.copy_(0.05 * torch.randn(t.shape, generator=g))
            elif leaf == "relative_position_bias_table":
                t.copy_(0.5 * torch.randn(t.shape, generator=g))
            elif leaf == "layer_scale":
                t.copy_(0.5 + 0.5 * torch.rand(t.shape, generator=g))
            elif leaf in ("class_token", "pos_embedding") or (leaf == "weight" and "heads" in name):
                t.copy_(0.02 * torch.randn(t.shape, generator=g))


def _close(ref, out, what):
    scale = max(float(np.abs(ref).max()), 1e-6)
    err = float(np.abs(ref - out).max())
    assert ref.shape == out.shape, f"{what}: shape {out.shape} != {ref.shape}"
    assert err <= RTOL * scale, f"{what}: max abs diff {err:.3g} > {RTOL} x {scale:.3g}"


def check_tv_parity(name, size, **kwargs):
    tvm = pytest.importorskip("torchvision.models")
    import torch
    torch.set_num_threads(2)
    torch.manual_seed(0)
    ref = tvm.get_model(name, **kwargs).eval()
    _randomize(ref)
    ours = M.get_model(name, **kwargs).eval()
    ours.load_state_dict({k: flow.from_numpy(v.numpy().copy()) for k, v in ref.state_dict().items()}, strict=True)
    x = np.random.RandomState(0).randn(2, 3, size, size).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with flow.no_grad():
        _close(expected, ours(flow.from_numpy(x)).numpy(), name)


TV_CASES = [("resnet18", 64, {}), ("resnext50_32x4d", 64, {}), ("mobilenet_v3_large", 64, {}),
            ("mobilenet_v3_small", 64, dict(num_classes=10)), ("mobilenet_v2", 64, {}),
            ("vit_b_16", 32, dict(image_size=32)), ("convnext_tiny", 32, {}), ("efficientnet_b0", 64, {}),
            ("swin_t", 64, {}),  # 64 px: windows clipped at stages 3-4, padded shifted windows at stage 2
            ("regnet_y_400mf", 64, {})]
SLOW_TV_CASES = [("densenet121", 32, {}), ("vgg11", 32, {}), ("vgg16_bn", 32, {}), ("wide_resnet50_2", 64, {}),
                 ("vit_b_32", 224, {}),
                 ("resnet50", 224, {}), ("mobilenet_v3_large", 224, {}),
                 ("efficientnet_b5", 64, {}), ("efficientnet_b1", 64, {}), ("convnext_small", 64, {}),
                 ("swin_t", 224, {}), ("swin_s", 96, {}),
                 ("regnet_x_400mf", 64, {}), ("regnet_y_1_6gf", 64, {})]


@pytest.mark.parametrize("name,size,kwargs", TV_CASES, ids=[c[0] for c in TV_CASES])
def test_tv_parity(name, size, kwargs):
    check_tv_parity(name, size, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("name,size,kwargs", SLOW_TV_CASES, ids=[c[0] for c in SLOW_TV_CASES])
def test_tv_parity_slow(name, size, kwargs):
    check_tv_parity(name, size, **kwargs)


@pytest.mark.parametrize("tv_name,timm_name,size", [
    ("regnet_y_400mf", "regnety_004", 64), pytest.param("vgg11", "vgg11", 32, marks=pytest.mark.slow),
    pytest.param("densenet121", "densenet121", 32, marks=pytest.mark.slow)])
def test_torchvision_checkpoint_into_timm_named_model(tv_name, timm_name, size):
    """The families' checkpoint filters convert torchvision keys to timm's (the pretrained-loading path)."""
    tvm = pytest.importorskip("torchvision.models")
    import importlib

    import torch
    torch.manual_seed(0)
    ref = tvm.get_model(tv_name).eval()
    _randomize(ref)
    ours = M.create_model(timm_name).eval()
    family = importlib.import_module(type(ours).__module__)
    sd = family.checkpoint_filter_fn({k: v.numpy().copy() for k, v in ref.state_dict().items()}, ours)
    ours.load_state_dict({k: flow.from_numpy(np.ascontiguousarray(v)) for k, v in sd.items()}, strict=True)
    x = np.random.RandomState(0).randn(1, 3, size, size).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with flow.no_grad():
        _close(expected, ours(flow.from_numpy(x)).numpy(), f"{tv_name} -> {timm_name}")
