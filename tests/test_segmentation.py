"""Segmentation models vs torchvision 0.29 on the same random weights (eval mode, small inputs)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
tvseg = pytest.importorskip("torchvision.models.segmentation")

import flowvision.backend as flow  # noqa: E402
import flowvision.models.segmentation as seg  # noqa: E402


# torch at 2 threads (the CI machine's cores) for the whole module: tests/conftest.py
pytestmark = pytest.mark.usefixtures("torch_two_threads")


def _randomize_bn(model, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.5)
                m.weight.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(n, generator=g) * 0.1)


def _pair(name, **kw):
    torch.manual_seed(0)
    ref = getattr(tvseg, name)(weights=None, weights_backbone=None, **kw).eval()
    _randomize_bn(ref)
    ours = getattr(seg, name)(weights=None, weights_backbone=None, **kw).eval()
    sd = {k: v.detach().numpy() for k, v in ref.state_dict().items()}
    assert list(ours.state_dict()) == list(sd)
    ours.load_state_dict(sd, strict=True)
    return ours, ref


CASES = [("fcn_resnet50", dict(aux_loss=True), (1, 3, 64, 64)),
         ("deeplabv3_resnet50", dict(aux_loss=True), (1, 3, 61, 75)),
         ("deeplabv3_resnet50", dict(num_classes=5), (2, 3, 48, 40)),
         ("fcn_resnet101", dict(), (1, 3, 40, 40)),
         ("deeplabv3_resnet101", dict(aux_loss=True, num_classes=3), (1, 3, 40, 48)),
         ("deeplabv3_mobilenet_v3_large", dict(aux_loss=True), (2, 3, 61, 75)),
         ("deeplabv3_mobilenet_v3_large", dict(num_classes=4), (1, 3, 33, 40)),
         ("lraspp_mobilenet_v3_large", dict(), (2, 3, 64, 50)),
         ("lraspp_mobilenet_v3_large", dict(num_classes=3), (1, 3, 37, 29))]


@pytest.mark.parametrize("name,kw,shape", CASES)
def test_segmentation_parity(name, kw, shape):
    ours, ref = _pair(name, **kw)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        r = ref(torch.from_numpy(x))
    with flow.no_grad():
        o = ours(flow.from_numpy(x))
    assert list(o) == list(r)
    for k in r:
        a, b = o[k].numpy(), r[k].numpy()
        assert a.shape == b.shape == (shape[0], kw.get("num_classes", 21)) + shape[2:]
        np.testing.assert_allclose(a, b, atol=1e-4 * np.abs(b).max(), rtol=0)



@pytest.mark.parametrize("name,kw,shape", [CASES[0], CASES[-2]])
def test_captured_segmentation_equals_torchvision(name, kw, shape):
    # the models return a dict ({"out", "aux"}): the captured plan runs them and hands back the same keys
    ours, ref = _pair(name, **kw)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        r = ref(torch.from_numpy(x))
    cm = flow.compile(ours, flow.from_numpy(x))
    assert cm.fallback_reason is None
    assert cm.plans[(shape, flow.from_numpy(x)._dtype)] is not None
    o = cm(flow.from_numpy(x))
    assert type(o) is type(r) and list(o) == list(r)
    for k in r:
        b = r[k].numpy()
        np.testing.assert_allclose(o[k].numpy(), b, atol=1e-4 * np.abs(b).max(), rtol=0)

def test_captured_dilated_backbone_runs_winograd_and_equals_torchvision():
    """FCN's dilated ResNet stages (dilation 2 and 4) take the dilated Winograd convs in a plan; the output stays
    torchvision's."""
    from flowvision.backend import _C
    ours, ref = _pair("fcn_resnet50")
    shape = (1, 3, 128, 128)  # stages 3 and 4 at 16 x 16: every dilation phase has whole tiles
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    suits = []  # (dilation, winograd_plan_suits) of every float32 conv the eager forward runs

    def record(mod, args):
        suits.append((mod.dilation, _C.winograd_plan_suits(list(args[0].shape), list(mod.weight.shape),
                                                           list(mod.stride), list(mod.padding), list(mod.dilation),
                                                           mod.groups)))
    hooks = [m.register_forward_pre_hook(record) for m in ours.modules() if isinstance(m, flow.nn.Conv2d)]
    with flow.no_grad():
        ours(flow.from_numpy(x))
    for h in hooks:
        h.remove()
    dilated = [ok for d, ok in suits if tuple(d) != (1, 1)]
    assert len(dilated) == 8 and all(dilated)
    cm = flow.compile(ours, flow.from_numpy(x))
    assert cm.fallback_reason is None
    assert cm.plans[(shape, flow.from_numpy(x)._dtype)].winograd_convs == sum(ok for _, ok in suits)
    with torch.no_grad():
        b = ref(torch.from_numpy(x))["out"].numpy()
    np.testing.assert_allclose(cm(flow.from_numpy(x))["out"].numpy(), b, atol=1e-4 * np.abs(b).max(), rtol=0)


def test_dilated_backbone_matches_torchvision():
    import torchvision
    ours = seg._utils.dilated_resnet(50, [False, True, True])
    ref = torchvision.models.resnet50(replace_stride_with_dilation=[False, True, True])
    mine = {n: (a.stride, a.padding, a.dilation) for n, a in ours.named_modules() if isinstance(a, flow.nn.Conv2d)}
    theirs = {n: (b.stride, b.padding, b.dilation) for n, b in ref.named_modules() if isinstance(b, torch.nn.Conv2d)}
    assert mine == theirs


def test_builder_arguments_and_weights_api():
    W = seg.FCN_ResNet50_Weights
    assert W.DEFAULT is W.COCO_WITH_VOC_LABELS_V1
    assert W.verify("COCO_WITH_VOC_LABELS_V1") is W.COCO_WITH_VOC_LABELS_V1
    assert W.verify("FCN_ResNet50_Weights.DEFAULT") is W.COCO_WITH_VOC_LABELS_V1
    assert W.verify(tvseg.FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1) is W.COCO_WITH_VOC_LABELS_V1
    for n in ["FCN_ResNet50_Weights", "FCN_ResNet101_Weights", "DeepLabV3_ResNet50_Weights",
              "DeepLabV3_ResNet101_Weights", "DeepLabV3_MobileNet_V3_Large_Weights",
              "LRASPP_MobileNet_V3_Large_Weights"]:
        a, b = getattr(seg, n).COCO_WITH_VOC_LABELS_V1, getattr(tvseg, n).COCO_WITH_VOC_LABELS_V1
        assert a.url == b.url and a.meta["categories"] == b.meta["categories"]
        assert a.meta["num_params"] == b.meta["num_params"] and a.meta["_metrics"] == b.meta["_metrics"]
    with pytest.raises(ValueError):
        W.verify("NOPE")
    with pytest.raises(ValueError):  # weights fix num_classes = 21
        seg.fcn_resnet50(weights="DEFAULT", num_classes=3)
    with pytest.raises(TypeError):
        seg.deeplabv3_resnet50(weights_backbone=None, foo=1)
    m = seg.fcn_resnet50(weights_backbone=None, num_classes=4)
    assert m.aux_classifier is None and m.classifier[4].out_channels == 4
    assert not any(k.startswith("backbone.fc") for k in m.state_dict())
    with pytest.raises(ValueError):
        m(flow.zeros((3, 32, 32)))


@pytest.mark.parametrize("name", ["lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large"])
def test_mobilenet_segmentation_training_step(name):
    """Train mode (batch statistics), cross-entropy on ``out`` (+0.5 ``aux``), backward and one SGD step: the loss
    and the updated weights equal torchvision's. Dropout is switched off on both sides (its masks are random)."""
    kw = dict(num_classes=4, aux_loss=True) if name.startswith("deeplab") else dict(num_classes=4)
    ours, ref = _pair(name, **kw)
    ours.train()
    ref.train()
    for m in ref.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    for m in ours.modules():
        if isinstance(m, flow.nn.Dropout):
            m.p = 0.0
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 48, 40)).astype(np.float32)
    y = rng.integers(0, 4, (2, 48, 40))
    r = ref(torch.from_numpy(x))
    o = ours(flow.from_numpy(x))
    lr = sum(w * torch.nn.functional.cross_entropy(r[k], torch.from_numpy(y)) for k, w in (("out", 1.0), ("aux", 0.5))
             if k in r)
    lo = sum(w * flow.nn.functional.cross_entropy(o[k], flow.from_numpy(y)) for k, w in (("out", 1.0), ("aux", 0.5))
             if k in o)
    np.testing.assert_allclose(float(lo.detach()), float(lr.detach()), rtol=1e-5)
    opt_r = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt_o = flow.optim.SGD(ours.parameters(), lr=0.1)
    lr.backward()
    lo.backward()
    opt_r.step()
    opt_o.step()
    po = dict(ours.named_parameters())
    for k, v in ref.named_parameters():
        b = v.detach().numpy()
        np.testing.assert_allclose(po[k].detach().numpy(), b, atol=1e-4 * max(1.0, np.abs(b).max()), err_msg=k)
    so = ours.state_dict()
    for k, v in ref.state_dict().items():  # running statistics updated in train mode
        if "running" in k:
            np.testing.assert_allclose(so[k].numpy(), v.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)


def test_lraspp_rejects_aux_loss_and_bad_input():
    with pytest.raises(NotImplementedError):
        seg.lraspp_mobilenet_v3_large(weights_backbone=None, aux_loss=True)
    m = seg.lraspp_mobilenet_v3_large(weights_backbone=None).eval()
    with pytest.raises(ValueError):
        m(flow.zeros((3, 32, 32)))
    with pytest.raises(TypeError):
        m(flow.zeros((1, 3, 32, 32), dtype=flow.uint8))
    with pytest.raises(ValueError):  # weights fix num_classes = 21
        seg.deeplabv3_mobilenet_v3_large(weights="DEFAULT", num_classes=3)
    with pytest.raises(ValueError):  # weights fix aux_loss = True
        seg.deeplabv3_mobilenet_v3_large(weights="DEFAULT", aux_loss=False)
    assert seg.LRASPP_MobileNet_V3_Large_Weights.DEFAULT.transforms().resize_size == [520]
