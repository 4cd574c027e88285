"""Faster R-CNN vs torchvision 0.29 on the same random weights: eval detections and training losses/gradients.

float64 on both sides (the float32 outputs of an untrained detector amplify 1e-6 convolution differences through
box regression: ~1e-2 px); the float32 path is checked with a looser bound."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
tvd = pytest.importorskip("torchvision.models.detection")

import flowvision.backend as flow  # noqa: E402
import flowvision.models.detection as det  # noqa: E402


# torch at 2 threads (the CI machine's cores) for the whole module: tests/conftest.py
pytestmark = pytest.mark.usefixtures("torch_two_threads")


KW = dict(weights=None, weights_backbone=None, num_classes=5, min_size=64, max_size=96, box_score_thresh=0.0,
          rpn_pre_nms_top_n_test=5000, rpn_post_nms_top_n_test=150, rpn_pre_nms_top_n_train=5000,
          rpn_post_nms_top_n_train=150, box_detections_per_img=40)


def _calibrate(ref):
    """Random BN affines; running statistics from one calibration batch so activations stay O(1)."""
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for m in ref.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.momentum = 1.0
        ref.backbone.train()
        ref.backbone(torch.rand(2, 3, 64, 96, generator=g) * 4 - 2)
        for m in ref.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.momentum = 0.1
    return ref.eval()


def _load(ours, ref):
    sd = {k: v.detach().numpy() for k, v in ref.state_dict().items()}
    assert list(ours.state_dict()) == list(sd)
    ours.load_state_dict(sd, strict=True)
    return ours.eval(), ref


def _pair(**extra):
    """The torchvision builder (ResNet-50-FPN) on both sides."""
    torch.manual_seed(0)
    kw = {**KW, **extra}
    ref = _calibrate(tvd.fasterrcnn_resnet50_fpn(**kw))
    return _load(det.fasterrcnn_resnet50_fpn(**kw), ref)


def _small_pair(**extra):
    """FasterRCNN on a ResNet-18-FPN backbone (same code paths, ~5x cheaper) for the float64 checks."""
    from torchvision.models.detection.backbone_utils import resnet_fpn_backbone as tv_rfb
    kw = {k: v for k, v in {**KW, **extra}.items() if k not in ("weights", "weights_backbone")}
    torch.manual_seed(0)
    ref = tvd.FasterRCNN(tv_rfb(backbone_name="resnet18", weights=None, norm_layer=torch.nn.BatchNorm2d,
                                trainable_layers=5), **kw)
    ref = _calibrate(ref)
    ours = det.FasterRCNN(det.resnet_fpn_backbone(backbone_name="resnet18", weights=None,
                                                  norm_layer=flow.nn.BatchNorm2d, trainable_layers=5), **kw)
    return _load(ours, ref)


def _images(dtype):
    rng = np.random.default_rng(0)
    return [rng.random((3, 60, 75)).astype(dtype), rng.random((3, 50, 44)).astype(dtype)]


def test_fasterrcnn_eval_parity_float64():
    ours, ref = _small_pair()
    ref.double()
    ours.to(flow.float64)
    imgs = _images(np.float64)
    with torch.no_grad():
        r = ref([torch.from_numpy(i) for i in imgs])
    with flow.no_grad():
        o = ours([flow.from_numpy(i) for i in imgs])
    for a, b in zip(o, r):
        assert sorted(a) == sorted(b) == ["boxes", "labels", "scores"]
        assert len(b["scores"]) > 0
        np.testing.assert_array_equal(a["labels"].numpy(), b["labels"].numpy())
        np.testing.assert_allclose(a["boxes"].numpy(), b["boxes"].numpy(), atol=1e-6)
        np.testing.assert_allclose(a["scores"].numpy(), b["scores"].numpy(), atol=1e-9)


def test_fasterrcnn_eval_float32_close():
    ours, ref = _pair()
    imgs = _images(np.float32)
    with torch.no_grad():
        r = ref([torch.from_numpy(i) for i in imgs])
    with flow.no_grad():
        o = ours([flow.from_numpy(i) for i in imgs])
    for a, b in zip(o, r):
        assert a["boxes"].dtype == flow.float32 and a["labels"].dtype == flow.int64
        n = min(10, len(b["scores"]))  # the top detections; the tail may reorder on near-ties
        np.testing.assert_array_equal(a["labels"].numpy()[:n], b["labels"].numpy()[:n])
        np.testing.assert_allclose(a["boxes"].numpy()[:n], b["boxes"].numpy()[:n], atol=0.1)
        np.testing.assert_allclose(a["scores"].numpy()[:n], b["scores"].numpy()[:n], atol=1e-4)


def test_fasterrcnn_training_losses_and_grads_float64():
    # sampling made deterministic in both: batch sizes above the number of candidates keep every one
    ours, ref = _small_pair(rpn_batch_size_per_image=100000, box_batch_size_per_image=100000)
    ref.double()
    ours.to(flow.float64)
    ref.train()
    ours.train()
    imgs = _images(np.float64)
    tg = [{"boxes": np.array([[5.0, 6, 40, 45], [30, 10, 70, 50]]), "labels": np.array([1, 3])},
          {"boxes": np.array([[2.0, 3, 20, 30]]), "labels": np.array([4])}]
    lr = ref([torch.from_numpy(i) for i in imgs], [{k: torch.from_numpy(v) for k, v in t.items()} for t in tg])
    lo = ours([flow.from_numpy(i) for i in imgs], [{k: flow.from_numpy(v) for k, v in t.items()} for t in tg])
    # an image without objects (empty target) takes torchvision's background-only path
    empty = [tg[0], {"boxes": np.zeros((0, 4)), "labels": np.zeros((0,), np.int64)}]
    le_r = ref([torch.from_numpy(i) for i in imgs], [{k: torch.from_numpy(v) for k, v in t.items()} for t in empty])
    le_o = ours([flow.from_numpy(i) for i in imgs], [{k: flow.from_numpy(v) for k, v in t.items()} for t in empty])
    for k in le_r:
        np.testing.assert_allclose(float(le_o[k].detach()), float(le_r[k].detach()), rtol=1e-6, err_msg=k)
    assert sorted(lo) == sorted(lr)
    for k in lr:
        # rtol 1e-6: torch returns binary_cross_entropy_with_logits(float64 logits, float32 labels) in float32
        # (the RPN's labels are float32), flowvision in float64
        np.testing.assert_allclose(float(lo[k].detach()), float(lr[k].detach()), rtol=1e-6, err_msg=k)
    sum(lr.values()).backward()
    sum(lo.values()).backward()
    pr, po = dict(ref.named_parameters()), dict(ours.named_parameters())
    for name in ["roi_heads.box_predictor.cls_score.weight", "roi_heads.box_predictor.bbox_pred.weight",
                 "roi_heads.box_head.fc6.weight", "rpn.head.cls_logits.weight", "rpn.head.bbox_pred.bias",
                 "backbone.fpn.layer_blocks.0.0.weight", "backbone.body.layer4.1.conv2.weight",
                 "backbone.body.conv1.weight"]:
        g1, g2 = po[name].grad.numpy(), pr[name].grad.numpy()
        np.testing.assert_allclose(g1, g2, atol=1e-7 * max(1.0, np.abs(g2).max()), err_msg=name)


def test_fasterrcnn_bad_inputs():
    m = det.fasterrcnn_resnet50_fpn(weights_backbone=None, num_classes=3, min_size=32, max_size=48)
    with pytest.raises(ValueError, match="targets"):
        m([flow.zeros((3, 20, 20))])
    with pytest.raises(ValueError, match="positive height"):
        m([flow.zeros((3, 20, 20))], [{"boxes": flow.tensor([[5.0, 5, 3, 9]]), "labels": flow.tensor([1])}])
    with pytest.raises(ValueError):
        m([flow.zeros((3, 20, 20))], [])
    m.eval()
    with pytest.raises(TypeError, match="floating"):
        m([flow.zeros((3, 20, 20), dtype=flow.uint8)])
    with pytest.raises(ValueError, match="num_classes"):
        det.fasterrcnn_resnet50_fpn(weights="DEFAULT", num_classes=3)
    W = det.FasterRCNN_ResNet50_FPN_Weights
    import torchvision.models.detection as tv
    ref = tv.FasterRCNN_ResNet50_FPN_Weights.COCO_V1
    assert W.COCO_V1.url == ref.url and W.COCO_V1.meta["categories"] == ref.meta["categories"]
    assert W.COCO_V1.meta["num_params"] == ref.meta["num_params"]


# ------------------------------------------------------------------ RetinaNet
def _small_retinanet(**kw):
    from torchvision.models import resnet18
    from torchvision.models.detection.backbone_utils import _resnet_fpn_extractor as tv_ext
    from torchvision.ops.feature_pyramid_network import LastLevelP6P7 as TvP6P7
    from flowvision.models.detection.backbone_utils import _resnet, _resnet_fpn_extractor
    from flowvision.ops import LastLevelP6P7
    kw = {"min_size": 64, "max_size": 96, "score_thresh": 0.0, "detections_per_img": 40, "topk_candidates": 200,
          **kw}
    torch.manual_seed(0)
    ref = tvd.RetinaNet(tv_ext(resnet18(norm_layer=torch.nn.BatchNorm2d), 5, returned_layers=[2, 3, 4],
                               extra_blocks=TvP6P7(256, 256)), 5, **kw)
    ref = _calibrate(ref)
    ours = det.RetinaNet(_resnet_fpn_extractor(_resnet(18, flow.nn.BatchNorm2d), 5, returned_layers=[2, 3, 4],
                                               extra_blocks=LastLevelP6P7(256, 256)), 5, **kw)
    return _load(ours, ref)


def test_retinanet_eval_and_training_parity_float64():
    ours, ref = _small_retinanet()
    ref.double()
    ours.to(flow.float64)
    imgs = _images(np.float64)
    with torch.no_grad():
        r = ref([torch.from_numpy(i) for i in imgs])
    with flow.no_grad():
        o = ours([flow.from_numpy(i) for i in imgs])
    for a, b in zip(o, r):
        assert sorted(a) == sorted(b) and len(b["scores"]) > 0
        np.testing.assert_array_equal(a["labels"].numpy(), b["labels"].numpy())
        np.testing.assert_allclose(a["boxes"].numpy(), b["boxes"].numpy(), atol=1e-6)
        np.testing.assert_allclose(a["scores"].numpy(), b["scores"].numpy(), atol=1e-9)
    ref.train()
    ours.train()
    tg = [{"boxes": np.array([[5.0, 6, 40, 45], [30, 10, 70, 50]]), "labels": np.array([1, 3])},
          {"boxes": np.zeros((0, 4)), "labels": np.zeros((0,), np.int64)}]  # an image without objects
    lr = ref([torch.from_numpy(i) for i in imgs], [{k: torch.from_numpy(v) for k, v in t.items()} for t in tg])
    lo = ours([flow.from_numpy(i) for i in imgs], [{k: flow.from_numpy(v) for k, v in t.items()} for t in tg])
    assert sorted(lo) == sorted(lr) == ["bbox_regression", "classification"]
    for k in lr:
        # rtol 1e-6: torch returns binary_cross_entropy_with_logits(float64 logits, float32 labels) in float32
        # (the RPN's labels are float32), flowvision in float64
        np.testing.assert_allclose(float(lo[k].detach()), float(lr[k].detach()), rtol=1e-6, err_msg=k)
    sum(lr.values()).backward()
    sum(lo.values()).backward()
    pr, po = dict(ref.named_parameters()), dict(ours.named_parameters())
    for name in ["head.classification_head.cls_logits.weight", "head.regression_head.bbox_reg.weight",
                 "head.classification_head.conv.0.0.weight", "backbone.fpn.extra_blocks.p6.weight",
                 "backbone.body.layer2.0.conv1.weight"]:
        g1, g2 = po[name].grad.numpy(), pr[name].grad.numpy()
        np.testing.assert_allclose(g1, g2, atol=1e-7 * max(1.0, np.abs(g2).max()), err_msg=name)


def test_retinanet_builder_names_and_weights():
    ref = tvd.retinanet_resnet50_fpn(weights=None, weights_backbone=None, num_classes=7)
    ours = det.retinanet_resnet50_fpn(weights=None, weights_backbone=None, num_classes=7)
    assert list(ours.state_dict()) == list(ref.state_dict())
    assert [tuple(v.shape) for v in ours.state_dict().values()] == [tuple(v.shape) for v in ref.state_dict().values()]
    W, R = det.RetinaNet_ResNet50_FPN_Weights.COCO_V1, tvd.RetinaNet_ResNet50_FPN_Weights.COCO_V1
    assert W.url == R.url and W.meta["num_params"] == R.meta["num_params"]
    assert W.meta["_metrics"] == R.meta["_metrics"]


# ------------------------------------------------------------------ Mask R-CNN
def test_maskrcnn_eval_and_training_parity_float64():
    from torchvision.models.detection.backbone_utils import resnet_fpn_backbone as tv_rfb
    kw = {k: v for k, v in KW.items() if k not in ("weights", "weights_backbone")}
    kw.update(rpn_batch_size_per_image=100000, box_batch_size_per_image=100000, box_detections_per_img=12)
    torch.manual_seed(0)
    ref = _calibrate(tvd.MaskRCNN(tv_rfb(backbone_name="resnet18", weights=None, norm_layer=torch.nn.BatchNorm2d,
                                         trainable_layers=5), **kw))
    ours = det.MaskRCNN(det.resnet_fpn_backbone(backbone_name="resnet18", weights=None,
                                                norm_layer=flow.nn.BatchNorm2d, trainable_layers=5), **kw)
    ours, ref = _load(ours, ref)
    ref.double()
    ours.to(flow.float64)
    imgs = _images(np.float64)
    with torch.no_grad():
        r = ref([torch.from_numpy(i) for i in imgs])
    with flow.no_grad():
        o = ours([flow.from_numpy(i) for i in imgs])
    for a, b, img in zip(o, r, imgs):
        assert sorted(a) == sorted(b) == ["boxes", "labels", "masks", "scores"] and len(b["scores"]) > 0
        assert tuple(a["masks"].shape) == tuple(b["masks"].shape) == (len(b["scores"]), 1) + img.shape[1:]
        np.testing.assert_array_equal(a["labels"].numpy(), b["labels"].numpy())
        np.testing.assert_allclose(a["boxes"].numpy(), b["boxes"].numpy(), atol=1e-6)
        np.testing.assert_allclose(a["masks"].numpy(), b["masks"].numpy(), atol=1e-7)
    ref.train()
    ours.train()
    rng = np.random.default_rng(3)
    m0 = np.zeros((2, 60, 75), np.uint8)
    m0[0, 8:40, 6:38] = 1
    m0[1, 12:48, 31:69] = rng.random((36, 38)) > 0.3
    tg = [{"boxes": np.array([[5.0, 6, 40, 45], [30, 10, 70, 50]]), "labels": np.array([1, 3]), "masks": m0},
          {"boxes": np.array([[2.0, 3, 20, 30]]), "labels": np.array([4]),
           "masks": (rng.random((1, 50, 44)) > 0.5).astype(np.uint8)}]
    lr = ref([torch.from_numpy(i) for i in imgs], [{k: torch.from_numpy(v) for k, v in t.items()} for t in tg])
    lo = ours([flow.from_numpy(i) for i in imgs], [{k: flow.from_numpy(v) for k, v in t.items()} for t in tg])
    assert sorted(lo) == sorted(lr) and "loss_mask" in lo
    for k in lr:
        # rtol 1e-6: torch returns binary_cross_entropy_with_logits(float64 logits, float32 labels) in float32
        # (the RPN's labels are float32), flowvision in float64
        np.testing.assert_allclose(float(lo[k].detach()), float(lr[k].detach()), rtol=1e-6, err_msg=k)
    sum(lr.values()).backward()
    sum(lo.values()).backward()
    pr, po = dict(ref.named_parameters()), dict(ours.named_parameters())
    for name in ["roi_heads.mask_predictor.mask_fcn_logits.weight", "roi_heads.mask_predictor.conv5_mask.weight",
                 "roi_heads.mask_head.0.0.weight", "backbone.fpn.inner_blocks.0.0.weight"]:
        g1, g2 = po[name].grad.numpy(), pr[name].grad.numpy()
        np.testing.assert_allclose(g1, g2, atol=1e-7 * max(1.0, np.abs(g2).max()), err_msg=name)
    W, R = det.MaskRCNN_ResNet50_FPN_Weights.COCO_V1, tvd.MaskRCNN_ResNet50_FPN_Weights.COCO_V1
    assert W.url == R.url and W.meta["num_params"] == R.meta["num_params"] and W.meta["_metrics"] == R.meta["_metrics"]


# ------------------------------------------------------------------ FCOS
def test_fcos_eval_and_training_parity_float64():
    from torchvision.models import resnet18
    from torchvision.models.detection.backbone_utils import _resnet_fpn_extractor as tv_ext
    from torchvision.ops.feature_pyramid_network import LastLevelP6P7 as TvP6P7
    from flowvision.models.detection.backbone_utils import _resnet, _resnet_fpn_extractor
    from flowvision.ops import LastLevelP6P7
    kw = {"min_size": 64, "max_size": 96, "score_thresh": 0.05, "detections_per_img": 40, "topk_candidates": 200}
    torch.manual_seed(0)
    ref = _calibrate(tvd.FCOS(tv_ext(resnet18(norm_layer=torch.nn.BatchNorm2d), 5, returned_layers=[2, 3, 4],
                                     extra_blocks=TvP6P7(256, 256)), 5, **kw))
    ours = det.FCOS(_resnet_fpn_extractor(_resnet(18, flow.nn.BatchNorm2d), 5, returned_layers=[2, 3, 4],
                                          extra_blocks=LastLevelP6P7(256, 256)), 5, **kw)
    ours, ref = _load(ours, ref)
    ref.double()
    ours.to(flow.float64)
    imgs = _images(np.float64)
    with torch.no_grad():
        r = ref([torch.from_numpy(i) for i in imgs])
    with flow.no_grad():
        o = ours([flow.from_numpy(i) for i in imgs])
    for a, b in zip(o, r):
        assert sorted(a) == sorted(b) and len(b["scores"]) > 0
        np.testing.assert_array_equal(a["labels"].numpy(), b["labels"].numpy())
        np.testing.assert_allclose(a["boxes"].numpy(), b["boxes"].numpy(), atol=1e-6)
        np.testing.assert_allclose(a["scores"].numpy(), b["scores"].numpy(), atol=1e-9)
    ref.train()
    ours.train()
    tg = [{"boxes": np.array([[5.0, 6, 40, 45], [30, 10, 70, 50]]), "labels": np.array([1, 3])},
          {"boxes": np.array([[2.0, 3, 20, 30]]), "labels": np.array([4])}]
    lr = ref([torch.from_numpy(i) for i in imgs], [{k: torch.from_numpy(v) for k, v in t.items()} for t in tg])
    lo = ours([flow.from_numpy(i) for i in imgs], [{k: flow.from_numpy(v) for k, v in t.items()} for t in tg])
    assert sorted(lo) == sorted(lr) == ["bbox_ctrness", "bbox_regression", "classification"]
    for k in lr:
        np.testing.assert_allclose(float(lo[k].detach()), float(lr[k].detach()), rtol=1e-6, err_msg=k)
    sum(lr.values()).backward()
    sum(lo.values()).backward()
    pr, po = dict(ref.named_parameters()), dict(ours.named_parameters())
    for name in ["head.classification_head.cls_logits.weight", "head.regression_head.bbox_reg.weight",
                 "head.regression_head.bbox_ctrness.weight", "head.regression_head.conv.1.weight",
                 "backbone.body.layer3.0.conv1.weight"]:
        g1, g2 = po[name].grad.numpy(), pr[name].grad.numpy()
        np.testing.assert_allclose(g1, g2, atol=1e-7 * max(1.0, np.abs(g2).max()), err_msg=name)
    W, R = det.FCOS_ResNet50_FPN_Weights.COCO_V1, tvd.FCOS_ResNet50_FPN_Weights.COCO_V1
    assert W.url == R.url and W.meta["num_params"] == R.meta["num_params"] and W.meta["_metrics"] == R.meta["_metrics"]
    a = det.fcos_resnet50_fpn(weights_backbone=None, num_classes=3)
    b = tvd.fcos_resnet50_fpn(weights_backbone=None, num_classes=3)
    assert list(a.state_dict()) == list(b.state_dict())


def test_fasterrcnn_v2_builder_and_conv_fc_head():
    from torchvision.models.detection.faster_rcnn import FastRCNNConvFCHead as TvHead
    ref = tvd.fasterrcnn_resnet50_fpn_v2(weights=None, weights_backbone=None, num_classes=4)
    ours = det.fasterrcnn_resnet50_fpn_v2(weights=None, weights_backbone=None, num_classes=4)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    W, R = det.FasterRCNN_ResNet50_FPN_V2_Weights.COCO_V1, tvd.FasterRCNN_ResNet50_FPN_V2_Weights.COCO_V1
    assert W.url == R.url and W.meta["num_params"] == R.meta["num_params"] and W.meta["_metrics"] == R.meta["_metrics"]
    torch.manual_seed(0)
    th = TvHead((8, 7, 7), [16, 16], [32], norm_layer=torch.nn.BatchNorm2d).eval()
    oh = det.FastRCNNConvFCHead((8, 7, 7), [16, 16], [32], norm_layer=flow.nn.BatchNorm2d).eval()
    _sd = {k: v.detach().numpy() for k, v in th.state_dict().items()}
    oh.load_state_dict(_sd, strict=True)
    x = np.random.default_rng(0).standard_normal((5, 8, 7, 7)).astype(np.float32)
    with torch.no_grad():
        np.testing.assert_allclose(oh(flow.from_numpy(x)).detach().numpy(), th(torch.from_numpy(x)).numpy(),
                                   atol=1e-5)


def test_fasterrcnn_with_a_compiled_backbone_equals_torchvision():
    """``model.backbone = flowvision.compile(model.backbone)``: the backbone + FPN run from plans (one per
    transformed batch shape), the data-dependent stages eagerly, and the detections stay torchvision's."""
    import flowvision
    ours, ref = _pair()
    # rtol 1e-3: an untrained ResNet-50 with small BN variances amplifies float32 rounding to ~5e-5 of the largest
    # FPN output on compile's random validation input, above the default 1e-4 criterion
    ours.backbone = flowvision.compile(ours.backbone, rtol=1e-3)
    assert "backbone._orig_mod.fpn.layer_blocks.0.0.weight" in ours.state_dict()
    assert ours.backbone.out_channels == ref.backbone.out_channels  # read through to the wrapped backbone
    imgs = _images(np.float32)
    with torch.no_grad():
        r = ref([torch.from_numpy(i) for i in imgs])
    with flow.no_grad():
        o = ours([flow.from_numpy(i) for i in imgs])
    assert [p is not None for p in ours.backbone.plans.values()] == [True], ours.backbone.fallback_reason
    for a, b in zip(o, r):
        n = min(10, len(b["scores"]))
        assert n > 0
        np.testing.assert_array_equal(a["labels"].numpy()[:n], b["labels"].numpy()[:n])
        np.testing.assert_allclose(a["boxes"].numpy()[:n], b["boxes"].numpy()[:n], atol=0.1)
        np.testing.assert_allclose(a["scores"].numpy()[:n], b["scores"].numpy()[:n], atol=1e-4)
