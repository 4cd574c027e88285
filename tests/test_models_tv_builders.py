"""The torchvision classification builders flowvision adds beyond the timm families (AlexNet, GoogLeNet,
Inception v3, MNASNet, ShuffleNetV2, SqueezeNet, EfficientNetV2, Swin V2, MaxViT, RegNetY-128GF): every builder
torchvision 0.29 has exists with its weights facts, and each model equals torchvision's on the same random
weights (torchvision's state_dict loaded strictly), in eval mode and, for the aux heads, in training mode."""
import warnings

import numpy as np
import pytest

import flowvision.models as M
from flowvision import backend as flow

tvm = pytest.importorskip("torchvision.models")
torch = pytest.importorskip("torch")

from test_models_tv_api import _close, _randomize  # noqa: E402


def _to_flow(sd):
    return {k: flow.from_numpy(v.detach().numpy().copy()) for k, v in sd.items()}


def _pair(name, **kwargs):
    """torchvision's model (randomised) and ours with its state_dict loaded strictly."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # googlenet / inception init_weights notice
        ref = tvm.get_model(name, **kwargs)
    _randomize(ref)
    ours = M.get_model(name, **kwargs)
    ours.load_state_dict(_to_flow(ref.state_dict()), strict=True)
    return ref, ours


def _outputs(model, x, torch_side):
    if torch_side:
        with torch.no_grad():
            out = model(torch.from_numpy(x))
    else:
        with flow.no_grad():
            out = model(flow.from_numpy(x))
    outs = tuple(out) if isinstance(out, tuple) else (out,)
    _outputs.last_type = type(out).__name__
    return [o.numpy() for o in outs]


def check_parity(name, size, batch=2, train=False, **kwargs):
    ref, ours = _pair(name, **kwargs)
    ref.train(train)
    ours.train(train)
    x = np.random.RandomState(0).randn(batch, 3, size, size).astype(np.float32)
    expected, got = _outputs(ref, x, True), _outputs(ours, x, False)
    assert len(expected) == len(got), name
    for i, (e, g) in enumerate(zip(expected, got)):
        _close(e, g, f"{name}[{i}]")
    return expected, got


def test_every_torchvision_classification_builder_with_its_weights_facts():
    ours, ref = set(M.list_models(module=M)), set(tvm.list_models(module=tvm))
    assert ours == ref, sorted(ours ^ ref)
    import flowvision as torchvision
    for name in sorted(ref):
        w_ours, w_ref = M.get_model_weights(name), tvm.get_model_weights(name)
        assert w_ours.__name__ == w_ref.__name__ and w_ours.DEFAULT.name == w_ref.DEFAULT.name, name
        # `import flowvision as torchvision` spells the builders and enums as torchvision does
        assert callable(getattr(torchvision.models, name)), name
        assert getattr(torchvision.models, w_ref.__name__) is w_ours, name
        # vgg16's IMAGENET1K_FEATURES (no classifier, no categories) is the one member not carried
        ref_members = {w.name for w in w_ref if w.meta.get("categories") is not None}
        assert {w.name for w in w_ours} == ref_members, name
        for w in w_ours:
            r = w_ref[w.name]
            assert w.url == r.url, (name, w)
            assert w.meta["num_params"] == r.meta["num_params"], (name, w)
            assert w.meta["min_size"] == tuple(r.meta["min_size"]), (name, w)
            assert w.meta["_metrics"] == r.meta["_metrics"], (name, w)
            assert w.meta["categories"] == r.meta["categories"], (name, w)
            t, rt = w.transforms(), r.transforms()
            assert (t.crop_size, t.resize_size, t.interpolation.value, t.mean, t.std) == (
                rt.crop_size, rt.resize_size, rt.interpolation.value, rt.mean, rt.std), (name, w)


NUM_PARAMS_CASES = ["squeezenet1_1", "shufflenet_v2_x1_0", "mnasnet0_75", "googlenet", "swin_v2_t",
                    pytest.param("inception_v3", marks=pytest.mark.slow),
                    pytest.param("efficientnet_v2_s", marks=pytest.mark.slow),
                    pytest.param("maxvit_t", marks=pytest.mark.slow), pytest.param("alexnet", marks=pytest.mark.slow)]


@pytest.mark.parametrize("name", NUM_PARAMS_CASES)
def test_new_builders_num_params_equal_their_weights(name):
    model = M.get_model(name, aux_logits=True) if name in ("googlenet", "inception_v3") else M.get_model(name)
    n = sum(int(np.prod(p.shape)) for p in model.parameters())
    if name == "googlenet":  # torchvision's count is of the loaded model, whose aux heads are dropped
        n -= sum(int(np.prod(p.shape)) for m in (model.aux1, model.aux2) for p in m.parameters())
    assert n == M.get_model_weights(name).DEFAULT.meta["num_params"], name


CASES = [("alexnet", 64, dict(num_classes=10)), ("squeezenet1_0", 64, {}), ("squeezenet1_1", 64, {}),
         ("shufflenet_v2_x0_5", 64, {}), ("shufflenet_v2_x2_0", 64, dict(num_classes=10)),
         ("mnasnet0_5", 64, {}), ("mnasnet1_3", 64, {}), ("efficientnet_v2_s", 64, {}), ("swin_v2_t", 64, {})]
# GoogLeNet and Inception v3: test_googlenet_eval_train_and_aux_outputs, test_inception_eval_and_train
SLOW_CASES = [("alexnet", 224, {}), ("squeezenet1_0", 224, {}), ("squeezenet1_1", 224, {}),
              ("shufflenet_v2_x1_0", 224, {}), ("shufflenet_v2_x1_5", 224, {}), ("shufflenet_v2_x2_0", 224, {}),
              ("mnasnet0_5", 224, {}), ("mnasnet0_75", 224, {}), ("mnasnet1_0", 224, {}), ("mnasnet1_3", 224, {}),
              ("googlenet", 224, {}), ("inception_v3", 299, {}), ("efficientnet_v2_s", 384, {}),
              ("efficientnet_v2_m", 128, {}), ("efficientnet_v2_l", 128, {}), ("swin_v2_t", 256, {}),
              ("swin_v2_s", 256, {}), ("swin_v2_b", 256, {}), ("maxvit_t", 224, {})]


def _ids(cases):
    return [f"{n}-{s}" + ("-" + "-".join(f"{k}={v}" for k, v in kw.items()) if kw else "") for n, s, kw in cases]


@pytest.mark.parametrize("name,size,kwargs", CASES, ids=_ids(CASES))
def test_builder_parity(name, size, kwargs):
    check_parity(name, size, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("name,size,kwargs", SLOW_CASES, ids=_ids(SLOW_CASES))
def test_builder_parity_native_size(name, size, kwargs):
    check_parity(name, size, batch=1, **kwargs)


@pytest.mark.slow
def test_regnet_y_128gf_state_dict_layout():
    """645M parameters: the layout (names and shapes) is checked; the RegNet code is the parity-tested one."""
    ours = {k: tuple(v.shape) for k, v in M.regnet_y_128gf().state_dict().items()}
    ref = {k: tuple(v.shape) for k, v in tvm.regnet_y_128gf().state_dict().items()}
    assert ours == ref


def test_maxvit_parity_small_config():
    """MaxViT's partitions need every stage divisible by partition_size (224 px for maxvit_t): a small
    MaxVit exercises the same code (MBConv, window and grid attention, relative bias) at 64 px."""
    from torchvision.models.maxvit import MaxVit as RefMaxVit
    cfg = dict(input_size=(64, 64), stem_channels=16, partition_size=2, block_channels=[16, 32, 32, 64],
               block_layers=[1, 2, 1, 1], head_dim=8, stochastic_depth_prob=0.0)
    torch.manual_seed(0)
    ref = RefMaxVit(**cfg).eval()
    _randomize(ref)
    ours = M.MaxVit(**cfg).eval()
    ours.load_state_dict(_to_flow(ref.state_dict()), strict=True)
    x = np.random.RandomState(0).randn(2, 3, 64, 64).astype(np.float32)
    _close(_outputs(ref, x, True)[0], _outputs(ours, x, False)[0], "maxvit small")
    with pytest.raises(ValueError, match="input_size"):
        ours(flow.zeros(1, 3, 96, 96))
    with pytest.raises(ValueError, match="divisible by partition size"):
        M.MaxVit(**dict(cfg, input_size=(60, 60)))


def _compare(ref, ours, x, what):
    expected, got = _outputs(ref, x, True), _outputs(ours, x, False)
    assert len(expected) == len(got), what
    for i, (e, g) in enumerate(zip(expected, got)):
        _close(e, g, f"{what}[{i}]")
    return got


def test_googlenet_eval_train_and_aux_outputs():
    ref, ours = _pair("googlenet", dropout=0.0, dropout_aux=0.0)  # no dropout: training mode is deterministic
    x = np.random.RandomState(0).randn(2, 3, 64, 64).astype(np.float32)
    for transform in (False, True):
        ref.transform_input = ours.transform_input = transform
        _compare(ref.eval(), ours.eval(), x, f"googlenet eval transform_input={transform}")
    got = _compare(ref.train(), ours.train(), x, "googlenet train")  # BN on batch statistics, both aux heads
    assert len(got) == 3 and _outputs.last_type == "GoogLeNetOutputs" and got[2].shape == (2, 1000)
    ref.aux_logits = ours.aux_logits = False
    assert len(_compare(ref, ours, x, "googlenet train without aux")) == 1


def test_inception_eval_and_train():
    ref, ours = _pair("inception_v3", dropout=0.0)
    x = np.random.RandomState(0).randn(2, 3, 75, 75).astype(np.float32)
    for transform in (False, True):
        ref.transform_input = ours.transform_input = transform
        _compare(ref.eval(), ours.eval(), x, f"inception_v3 eval transform_input={transform}")
    # training mode: 94 BNs on batch statistics of small maps (the aux head's last conv is 1x1 for 2 samples)
    # amplify float32 rounding to ~6e-5 relative, so this runs in float64 (agrees to ~1e-12). The aux head
    # pools 5x5/3 over Mixed_6e: it needs the native 299 px.
    ref.double()
    ours.to(flow.float64)
    x = np.random.RandomState(0).randn(2, 3, 299, 299)
    got = _compare(ref.train(), ours.train(), x, "inception_v3 train float64")
    assert len(got) == 2 and _outputs.last_type == "InceptionOutputs"
    for m in (ref, ours):
        m.aux_logits, m.AuxLogits = False, None
    x = np.random.RandomState(0).randn(2, 3, 107, 107)
    assert len(_compare(ref, ours, x, "inception_v3 train without aux")) == 1
    with pytest.raises(ValueError, match="75"):
        ours(flow.zeros(1, 3, 64, 64))


def _serve_local(monkeypatch, weights, ref, tmp_path):
    path = tmp_path / (weights.url.rsplit("/", 1)[-1].split("-")[0] + ".pth")  # no hash prefix: not checked
    torch.save(ref.state_dict(), path)
    monkeypatch.setattr(weights.value, "url", str(path))


def test_googlenet_and_inception_weights_rules(tmp_path, monkeypatch):
    """With weights: transform_input defaults to True, googlenet drops its aux heads unless asked, an explicit
    aux_logits=False is an error (torchvision's rules); the checkpoint loads from a local file."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ref = tvm.googlenet(aux_logits=True, transform_input=True).eval()
    _randomize(ref)
    _serve_local(monkeypatch, M.GoogLeNet_Weights.IMAGENET1K_V1, ref, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = M.googlenet(weights="DEFAULT").eval()
    assert ours.transform_input and ours.aux1 is None and not ours.aux_logits
    assert M.googlenet(weights="DEFAULT", aux_logits=True).aux1 is not None
    x = np.random.RandomState(0).randn(1, 3, 64, 64).astype(np.float32)
    _close(_outputs(ref, x, True)[0], _outputs(ours, x, False)[0], "googlenet weights")
    with pytest.raises(ValueError, match="aux_logits"):
        M.googlenet(weights="DEFAULT", aux_logits=False)
    with pytest.raises(ValueError, match="aux_logits"):
        M.inception_v3(weights="DEFAULT", aux_logits=False)


def test_squeezenet_weights_through_pretrained_true(tmp_path, monkeypatch):
    torch.manual_seed(0)
    ref = tvm.squeezenet1_1().eval()
    _randomize(ref)
    _serve_local(monkeypatch, M.SqueezeNet1_1_Weights.IMAGENET1K_V1, ref, tmp_path)
    import flowvision as torchvision
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = torchvision.models.squeezenet1_1(pretrained=True).eval()
    x = np.random.RandomState(0).randn(1, 3, 64, 64).astype(np.float32)
    _close(_outputs(ref, x, True)[0], _outputs(ours, x, False)[0], "squeezenet1_1 weights")


def test_mnasnet_v1_stem_checkpoint():
    """torchvision's mnasnet0_5 checkpoint has the pre-v2 stem (32/16 channels whatever alpha): it loads into
    mnasnet0_5 (the model switches its stem, recognised by the first conv's shape) and computes the same."""
    from torchvision.models.mnasnet import _BN_MOMENTUM, _stack
    torch.manual_seed(0)
    ref = tvm.mnasnet0_5()
    stem_v1 = list(tvm.mnasnet1_0().layers[:8]) + [_stack(16, 16, 3, 2, 3, 3, _BN_MOMENTUM)]
    for i, layer in enumerate(stem_v1):
        ref.layers[i] = layer
    ref.eval()
    _randomize(ref)
    ours = M.mnasnet0_5().eval()
    assert ours.layers[0].out_channels == 16
    ours.load_state_dict(_to_flow(ref.state_dict()), strict=True)
    assert ours.layers[0].out_channels == 32
    x = np.random.RandomState(0).randn(1, 3, 64, 64).astype(np.float32)
    _close(_outputs(ref, x, True)[0], _outputs(ours, x, False)[0], "mnasnet0_5 v1 stem")


def test_builder_errors():
    with pytest.raises(ValueError, match="num_classes"):
        M.alexnet(weights="DEFAULT", num_classes=10)
    with pytest.raises(ValueError, match="input_size"):
        M.maxvit_t(weights="DEFAULT", input_size=(256, 256))
    with pytest.raises(ValueError, match="Unsupported SqueezeNet"):
        M.SqueezeNet("1_2")
    with pytest.raises(TypeError):
        M.shufflenet_v2_x1_0(M.ShuffleNet_V2_X1_0_Weights.DEFAULT)  # keyword-only like torchvision
    assert M.get_weight("Swin_V2_T_Weights.IMAGENET1K_V1").transforms().crop_size == [256]
    assert M.get_model_weights(M.efficientnet_v2_s) is M.EfficientNet_V2_S_Weights


# --- torchvision checkpoints into the timm-named models -----------------------------------------------------

CONVERT_CASES = [("convnext_tiny", 32), ("vit_b_16-small", 32), ("mobilenet_v3_large", 64), ("mobilenet_v3_small", 64),
                 ("mobilenet_v2", 64), ("efficientnet_b0", 64), ("resnet18", 64)]
SLOW_CONVERT_CASES = [("efficientnet_b5", 64), ("efficientnet_b3", 64), ("swin_t", 224), ("densenet121", 32),
                      ("vgg11_bn", 32), ("regnet_x_400mf", 64), ("regnet_y_800mf", 64), ("regnet_x_16gf", 64),
                      ("convnext_small", 32), ("vit_b_16", 32), ("vit_b_32", 224), ("resnext50_32x4d", 64)]


def check_convert(tv_name, size):
    torch.manual_seed(0)
    if tv_name == "vit_b_16-small":  # the ViT-B/16 layout at 2 layers x 64 dims (cheap for CI)
        from torchvision.models.vision_transformer import VisionTransformer
        tv_name = "vit_b_16"
        ref = VisionTransformer(image_size=size, patch_size=16, num_layers=2, num_heads=2, hidden_dim=64,
                                mlp_dim=256).eval()
        ours = M.create_model("vit_base_patch16_224", img_size=size, embed_dim=64, depth=2, num_heads=2).eval()
    else:
        vit = tv_name.startswith("vit_")
        ref = tvm.get_model(tv_name, **(dict(image_size=size) if vit else {})).eval()
        ours = M.create_model(M.TV_TO_TIMM[tv_name], **(dict(img_size=size) if vit else {})).eval()
    _randomize(ref)
    M.load_torchvision_checkpoint(ours, ref.state_dict(), tv_name)
    x = np.random.RandomState(0).randn(1, 3, size, size).astype(np.float32)
    _close(_outputs(ref, x, True)[0], _outputs(ours, x, False)[0], f"{tv_name} -> {M.TV_TO_TIMM[tv_name]}")


@pytest.mark.parametrize("tv_name,size", CONVERT_CASES, ids=[c[0] for c in CONVERT_CASES])
def test_torchvision_checkpoint_into_timm_named_model(tv_name, size):
    check_convert(tv_name, size)


@pytest.mark.slow
@pytest.mark.parametrize("tv_name,size", SLOW_CONVERT_CASES, ids=[c[0] for c in SLOW_CONVERT_CASES])
def test_torchvision_checkpoint_into_timm_named_model_slow(tv_name, size):
    check_convert(tv_name, size)


def test_tv_to_timm_table_and_create_model_from_torchvision(tmp_path, monkeypatch):
    assert all(M.is_model(t) for t in M.TV_TO_TIMM.values())
    assert set(M.TV_TO_TIMM) <= set(tvm.list_models(module=tvm))
    torch.manual_seed(0)
    ref = tvm.mobilenet_v3_small().eval()
    _randomize(ref)
    _serve_local(monkeypatch, M.MobileNet_V3_Small_Weights.IMAGENET1K_V1, ref, tmp_path)
    ours = M.create_model_from_torchvision("mobilenet_v3_small",
                                           weights="MobileNet_V3_Small_Weights.IMAGENET1K_V1").eval()
    assert type(ours).__name__ == "MobileNetV3" and ours.get_classifier().out_features == 1000
    x = np.random.RandomState(0).randn(1, 3, 64, 64).astype(np.float32)
    _close(_outputs(ref, x, True)[0], _outputs(ours, x, False)[0], "create_model_from_torchvision")
    with pytest.raises(ValueError, match="no timm-named counterpart"):
        M.create_model_from_torchvision("alexnet")
    bad = {k: v for k, v in ref.state_dict().items() if "classifier.3" not in k}
    with pytest.raises(ValueError, match="torchvision tensors"):
        M.convert_torchvision_state_dict(bad, ours, "mobilenet_v3_small")


def test_create_model_checkpoint_path_accepts_a_torchvision_checkpoint(tmp_path):
    """create_model(timm name, checkpoint_path=<torchvision .pth>) converts the torchvision layout; a checkpoint
    of neither layout still fails with the strict-load error."""
    torch.manual_seed(0)
    ref = tvm.mobilenet_v3_small().eval()
    _randomize(ref)
    path = tmp_path / "mobilenet_v3_small-tv.pth"
    torch.save(ref.state_dict(), path)
    ours = M.create_model("mobilenetv3_small_100", checkpoint_path=str(path)).eval()
    x = np.random.RandomState(0).randn(1, 3, 64, 64).astype(np.float32)
    _close(_outputs(ref, x, True)[0], _outputs(ours, x, False)[0], "checkpoint_path torchvision layout")
    torch.save({"foo": torch.zeros(3)}, tmp_path / "neither.pth")
    with pytest.raises(RuntimeError, match="Missing key"):
        M.create_model("mobilenetv3_small_100", checkpoint_path=str(tmp_path / "neither.pth"))
