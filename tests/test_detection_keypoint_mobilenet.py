"""Keypoint R-CNN, Faster R-CNN MobileNetV3-FPN, Mask R-CNN v2 and the ObjectDetection preset vs torchvision 0.29
on the same random weights: eval detections (boxes, labels, scores, keypoints, masks), training loss dicts with
deterministic sampling, one SGD step, bad input. Same method as test_detection_models.py (float64 on both
sides; ResNet-18-FPN stand-ins for the CI-sized ResNet-50 models, full sizes under ``-m slow``)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
tvd = pytest.importorskip("torchvision.models.detection")

import flowvision.backend as flow  # noqa: E402
import flowvision.models.detection as det  # noqa: E402
from flowvision.models.detection import roi_heads as fv_roi_heads  # noqa: E402
from flowvision.models.segmentation._utils import mobilenet_v3_large_backbone  # noqa: E402
from flowvision.ops import FrozenBatchNorm2d, MultiScaleRoIAlign  # noqa: E402
import torchvision.ops as torch_ops  # noqa: E402

from test_detection_models import KW, _calibrate, _images, _load  # noqa: E402


# torch at 2 threads (the CI machine's cores) for the whole module: tests/conftest.py
pytestmark = pytest.mark.usefixtures("torch_two_threads")


# sampling made deterministic in both: batch sizes above the number of candidates keep every one
DETERMINISTIC = dict(rpn_batch_size_per_image=100000, box_batch_size_per_image=100000)


def _eval_both(ours, ref, imgs):
    with torch.no_grad():
        r = ref([torch.from_numpy(i) for i in imgs])
    with flow.no_grad():
        o = ours([flow.from_numpy(i) for i in imgs])
    return o, r


def _check_detections(o, r, box_atol=1e-6, score_atol=1e-9):
    for a, b in zip(o, r):
        assert sorted(a) == sorted(b)
        assert len(b["scores"]) > 0
        np.testing.assert_array_equal(a["labels"].numpy(), b["labels"].numpy())
        np.testing.assert_allclose(a["boxes"].numpy(), b["boxes"].numpy(), atol=box_atol)
        np.testing.assert_allclose(a["scores"].numpy(), b["scores"].numpy(), atol=score_atol)
        if "keypoints" in b:
            assert a["keypoints"].dtype == flow.float32 and tuple(a["keypoints"].shape) == tuple(b["keypoints"].shape)
            np.testing.assert_allclose(a["keypoints"].numpy(), b["keypoints"].numpy(), atol=1e-3)
            np.testing.assert_allclose(a["keypoints_scores"].numpy(), b["keypoints_scores"].numpy(), atol=1e-4)
        if "masks" in b:
            assert tuple(a["masks"].shape) == tuple(b["masks"].shape)
            np.testing.assert_allclose(a["masks"].numpy(), b["masks"].numpy(), atol=1e-7)


def _train_step_both(ours, ref, imgs, targets, lr=0.01):
    """Loss dicts equal, then one SGD step on the summed loss moves every trainable parameter the same way."""
    ref.train()
    ours.train()
    lr_ = ref([torch.from_numpy(i) for i in imgs], [{k: torch.from_numpy(v) for k, v in t.items()} for t in targets])
    lo = ours([flow.from_numpy(i) for i in imgs], [{k: flow.from_numpy(v) for k, v in t.items()} for t in targets])
    assert sorted(lo) == sorted(lr_)
    for k in lr_:
        # rtol 1e-6: torch returns the RPN's BCE(float64 logits, float32 labels) in float32, flowvision in float64
        np.testing.assert_allclose(float(lo[k].detach()), float(lr_[k].detach()), rtol=1e-6, err_msg=k)
    opt_r = torch.optim.SGD([p for p in ref.parameters() if p.requires_grad], lr=lr)
    opt_o = flow.optim.SGD([p for p in ours.parameters() if p.requires_grad], lr=lr)
    sum(lr_.values()).backward()
    sum(lo.values()).backward()
    opt_r.step()
    opt_o.step()
    po = dict(ours.named_parameters())
    for name, p in ref.named_parameters():
        b = p.detach().numpy()
        np.testing.assert_allclose(po[name].detach().numpy(), b, atol=1e-7 * max(1.0, np.abs(b).max()), err_msg=name)
    return lo


def _narrow_fpn_backbones(width=64, returned=(1, 2, 3, 4), p6p7=False, fpn_norm=False):
    """(ours, torchvision's) ResNet-18 + a ``width``-channel FPN: the detectors' code paths at a fraction of the
    256-channel heads' float64 cost (torch has no fast float64 convolution)."""
    from torchvision.models import resnet18
    from torchvision.models.detection.backbone_utils import BackboneWithFPN as TvBackboneWithFPN
    from torchvision.ops.feature_pyramid_network import LastLevelP6P7 as TvP6P7
    from flowvision.models.detection.backbone_utils import _resnet
    from flowvision.ops import LastLevelP6P7
    return_layers = {f"layer{k}": str(v) for v, k in enumerate(returned)}
    in_channels = [64 * 2 ** (k - 1) for k in returned]
    torch.manual_seed(0)
    ref = TvBackboneWithFPN(resnet18(norm_layer=torch.nn.BatchNorm2d), return_layers, in_channels, width,
                            extra_blocks=TvP6P7(512, width) if p6p7 else None,
                            norm_layer=torch.nn.BatchNorm2d if fpn_norm else None)
    ours = det.BackboneWithFPN(_resnet(18, flow.nn.BatchNorm2d), return_layers, in_channels, width,
                               extra_blocks=LastLevelP6P7(512, width) if p6p7 else None,
                               norm_layer=flow.nn.BatchNorm2d if fpn_norm else None)
    return ours, ref


# ------------------------------------------------------------------ heatmaps <-> keypoints
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_heatmaps_to_keypoints_matches_torchvision(dtype, monkeypatch):
    from torchvision.models.detection.roi_heads import heatmaps_to_keypoints as tv_h2k
    rng = np.random.default_rng(0)
    n, k = 9, 5
    x0 = rng.uniform(0, 50, n)
    y0 = rng.uniform(0, 50, n)
    w = np.array([0.3, 1.0, 3.5, 17.2, 56.0, 80.7, 120.0, 9.0, 200.3])  # tiny, exact, up- and downsampled sizes
    h = np.array([2.2, 0.5, 41.0, 13.9, 56.0, 33.3, 7.0, 150.5, 64.0])
    rois = np.stack([x0, y0, x0 + w, y0 + h], 1).astype(dtype)
    maps = rng.standard_normal((n, k, 56, 56)).astype(dtype)
    # (no constant map: which of the upsampled "equal" values is largest depends on the rounding of each
    # 4x4-tap sum, i.e. on the order of the additions, so exact ties are not comparable)
    ref_xy, ref_s = tv_h2k(torch.from_numpy(maps), torch.from_numpy(rois))
    monkeypatch.setattr(fv_roi_heads, "_KEYPOINT_CHUNK_ELEMENTS", 3 * k * 200 * 151)  # several chunks
    xy, s = fv_roi_heads.heatmaps_to_keypoints(flow.from_numpy(maps), flow.from_numpy(rois))
    assert xy.dtype == flow.float32 and tuple(xy.shape) == (n, k, 3) and tuple(s.shape) == (n, k)
    np.testing.assert_allclose(xy.numpy(), ref_xy.numpy(), atol=1e-4)
    np.testing.assert_allclose(s.numpy(), ref_s.numpy(), atol=1e-4 if dtype == np.float32 else 1e-6)
    xy, s = fv_roi_heads.heatmaps_to_keypoints(flow.zeros((0, k, 56, 56)), flow.zeros((0, 4)))
    assert tuple(xy.shape) == (0, k, 3) and tuple(s.shape) == (0, k)


def test_keypoints_to_heatmap_matches_torchvision():
    from torchvision.models.detection.roi_heads import keypoints_to_heatmap as tv_k2h
    rng = np.random.default_rng(1)
    rois = np.array([[5.0, 6, 40, 45], [0, 0, 10, 10], [3, 3, 60, 20]], np.float32)
    kp = np.concatenate([rng.uniform(-5, 65, (3, 6, 2)), rng.integers(0, 3, (3, 6, 1))], -1).astype(np.float32)
    kp[0, 0, :2] = [40, 45]  # on the right/bottom edge: the last cell
    kp[1, 1, :2] = [10, 3]
    heat, valid = fv_roi_heads.keypoints_to_heatmap(kp, rois, 56)
    rh, rv = tv_k2h(torch.from_numpy(kp), torch.from_numpy(rois), 56)
    np.testing.assert_array_equal(heat, rh.numpy())
    np.testing.assert_array_equal(valid, rv.numpy())


# ------------------------------------------------------------------ Keypoint R-CNN
def _small_keypointrcnn(**extra):
    """KeypointRCNN on ResNet-18 + 64-channel FPN with a 64-wide box head and a 2-layer 64-channel keypoint head (the
    defaults, 1024-wide fc6/fc7 and 8x512 convs, cost ~20 s in float64 training)."""
    from torchvision.models.detection.keypoint_rcnn import KeypointRCNNHeads as TvHeads
    from torchvision.models.detection.keypoint_rcnn import KeypointRCNNPredictor as TvPred
    kw = {k: v for k, v in KW.items() if k not in ("weights", "weights_backbone")}
    kw.update(DETERMINISTIC, num_classes=3, box_detections_per_img=12, **extra)
    ob, rb = _narrow_fpn_backbones()
    torch.manual_seed(1)
    num_classes = kw.pop("num_classes")
    ref = _calibrate(tvd.KeypointRCNN(rb, box_head=tvd.faster_rcnn.TwoMLPHead(64 * 49, 64),
                                      box_predictor=tvd.faster_rcnn.FastRCNNPredictor(64, num_classes),
                                      keypoint_head=TvHeads(64, (64, 64)), keypoint_predictor=TvPred(64, 5), **kw))
    ours = det.KeypointRCNN(ob, box_head=det.TwoMLPHead(64 * 49, 64),
                            box_predictor=det.FastRCNNPredictor(64, num_classes),
                            keypoint_head=det.KeypointRCNNHeads(64, (64, 64)),
                            keypoint_predictor=det.KeypointRCNNPredictor(64, 5), **kw)
    ours, ref = _load(ours, ref)
    ref.double()
    ours.to(flow.float64)
    return ours, ref


def _keypoint_targets():
    # visible, invisible (v=0), on the box's right/bottom edge, and outside the box
    kp0 = np.array([[[10, 12, 1], [20, 30, 2], [40, 45, 1], [5, 6, 0], [35, 20, 1]],
                    [[40, 20, 1], [70, 50, 1], [0, 0, 0], [50, 30, 1], [75, 11, 1]]], np.float32)
    kp1 = np.array([[[3, 4, 1], [10, 10, 1], [20, 30, 1], [15, 25, 0], [19, 29, 1]]], np.float32)
    return [{"boxes": np.array([[5.0, 6, 40, 45], [30, 10, 70, 50]]), "labels": np.array([1, 2]), "keypoints": kp0},
            {"boxes": np.array([[2.0, 3, 20, 30]]), "labels": np.array([1]), "keypoints": kp1}]


def test_keypointrcnn_eval_training_and_sgd_step_float64():
    ours, ref = _small_keypointrcnn()
    imgs = _images(np.float64)
    o, r = _eval_both(ours, ref, imgs)
    assert "keypoints" in r[0]
    _check_detections(o, r)
    # the second image has no people: empty keypoint targets take torchvision's background-only path
    targets = [_keypoint_targets()[0], {"boxes": np.zeros((0, 4)), "labels": np.zeros((0,), np.int64),
                                        "keypoints": np.zeros((0, 5, 3), np.float32)}]
    losses = _train_step_both(ours, ref, imgs, targets)
    assert float(losses["loss_keypoint"].detach()) > 0


def test_keypointrcnn_builder_weights_and_bad_inputs():
    ref = tvd.keypointrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_keypoints=7)
    ours = det.keypointrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_keypoints=7)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    assert ours.transform.min_size == ref.transform.min_size == (640, 672, 704, 736, 768, 800)
    for name in ("COCO_LEGACY", "COCO_V1"):
        a, b = det.KeypointRCNN_ResNet50_FPN_Weights[name], tvd.KeypointRCNN_ResNet50_FPN_Weights[name]
        assert a.url == b.url and a.meta["num_params"] == b.meta["num_params"]
        assert a.meta["_metrics"] == b.meta["_metrics"] and a.meta["categories"] == b.meta["categories"]
        assert a.meta["keypoint_names"] == b.meta["keypoint_names"]
    assert det.KeypointRCNN_ResNet50_FPN_Weights.DEFAULT is det.KeypointRCNN_ResNet50_FPN_Weights.COCO_V1
    with pytest.raises(ValueError, match="num_keypoints"):
        det.keypointrcnn_resnet50_fpn(weights="DEFAULT", num_keypoints=5)
    with pytest.raises(ValueError, match="num_keypoints"):
        det.KeypointRCNN(ours.backbone, num_classes=2, keypoint_predictor=det.KeypointRCNNPredictor(512, 3),
                         num_keypoints=3)
    m = det.KeypointRCNN(det.resnet_fpn_backbone(backbone_name="resnet18", weights=None, trainable_layers=5),
                         num_classes=2, min_size=32, max_size=48, keypoint_head=det.KeypointRCNNHeads(256, (8,)),
                         keypoint_predictor=det.KeypointRCNNPredictor(8, 17))
    img = [flow.rand(3, 30, 30)]
    box = {"boxes": flow.tensor([[2.0, 2, 20, 20]]), "labels": flow.tensor([1])}
    with pytest.raises(ValueError, match="keypoints"):
        m(img, [box])
    with pytest.raises(TypeError, match="keypoints"):
        m(img, [{**box, "keypoints": flow.zeros((1, 17, 3), dtype=flow.float64)}])


# ------------------------------------------------------------------ Faster R-CNN MobileNetV3-Large-FPN
MOBILE_KW = dict(KW)


def _mobile_pair(name, box_roi_pool=None, **extra):
    """``box_roi_pool``: (ours, torchvision's) or None."""
    torch.manual_seed(0)
    kw = {**MOBILE_KW, **extra}
    pools = ({"box_roi_pool": box_roi_pool[0]}, {"box_roi_pool": box_roi_pool[1]}) if box_roi_pool else ({}, {})
    ref = _calibrate(getattr(tvd, name)(**kw, **pools[1]))
    return _load(getattr(det, name)(**kw, **pools[0]), ref)


def test_fasterrcnn_mobilenet_v3_large_fpn_eval_training_float64():
    # 2x2 box RoIs keep the default TwoMLPHead 16x smaller (float64 training time); the code path is the same
    pool = (MultiScaleRoIAlign(["0", "1", "2", "3"], 2, 2), torch_ops.MultiScaleRoIAlign(["0", "1", "2", "3"], 2, 2))
    ours, ref = _mobile_pair("fasterrcnn_mobilenet_v3_large_fpn", box_roi_pool=pool, **DETERMINISTIC)
    ref.double()
    ours.to(flow.float64)
    imgs = _images(np.float64)
    o, r = _eval_both(ours, ref, imgs)
    _check_detections(o, r)
    tg = [{"boxes": np.array([[5.0, 6, 40, 45], [30, 10, 70, 50]]), "labels": np.array([1, 3])},
          {"boxes": np.zeros((0, 4)), "labels": np.zeros((0,), np.int64)}]  # an image without objects
    _train_step_both(ours, ref, imgs, tg)


def test_fasterrcnn_mobilenet_v3_large_320_fpn_eval_float32():
    # the builder's own sizes (min 320, max 640) and RPN settings (150 proposals, score threshold 0.05)
    kw = dict(weights=None, weights_backbone=None, num_classes=5, box_score_thresh=0.0, box_detections_per_img=40)
    torch.manual_seed(0)
    ref = _calibrate(tvd.fasterrcnn_mobilenet_v3_large_320_fpn(**kw))
    ours, ref = _load(det.fasterrcnn_mobilenet_v3_large_320_fpn(**kw), ref)
    assert ours.transform.min_size == (320,) and ours.transform.max_size == 640
    assert ours.rpn._pre_nms_top_n == ref.rpn._pre_nms_top_n and ours.rpn.score_thresh == ref.rpn.score_thresh
    o, r = _eval_both(ours, ref, _images(np.float32))
    for a, b in zip(o, r):
        n = min(10, len(b["scores"]))  # the top detections; the tail may reorder on near-ties
        assert n > 0
        np.testing.assert_array_equal(a["labels"].numpy()[:n], b["labels"].numpy()[:n])
        # float32: an untrained detector amplifies 1e-7 feature differences through exp'd box deltas (~1e-2 px
        # here, as for the ResNet models); the 1e-3 px criterion is held in float64 above
        np.testing.assert_allclose(a["boxes"].numpy()[:n], b["boxes"].numpy()[:n], atol=0.05)
        np.testing.assert_allclose(a["scores"].numpy()[:n], b["scores"].numpy()[:n], atol=1e-4)


def test_mobilenet_builders_names_weights_and_freezing():
    for name, wname in [("fasterrcnn_mobilenet_v3_large_fpn", "FasterRCNN_MobileNet_V3_Large_FPN_Weights"),
                        ("fasterrcnn_mobilenet_v3_large_320_fpn", "FasterRCNN_MobileNet_V3_Large_320_FPN_Weights")]:
        a, b = getattr(det, wname).COCO_V1, getattr(tvd, wname).COCO_V1
        assert a.url == b.url and a.meta["num_params"] == b.meta["num_params"]
        assert a.meta["_metrics"] == b.meta["_metrics"] and a.meta["categories"] == b.meta["categories"]
    from torchvision.models.detection.backbone_utils import mobilenet_backbone as tv_mb
    import torchvision.ops.misc as tvmisc
    for fpn, trainable in [(True, 2), (False, 6), (True, 0)]:
        r = tv_mb(backbone_name="mobilenet_v3_large", weights=None, fpn=fpn, trainable_layers=trainable)
        o = det.mobilenet_backbone(backbone_name="mobilenet_v3_large", weights=None, fpn=fpn,
                                   trainable_layers=trainable)
        assert [(k, tuple(v.shape)) for k, v in o.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in r.state_dict().items()]
        assert [k for k, p in o.named_parameters() if p.requires_grad] == \
            [k for k, p in r.named_parameters() if p.requires_grad]
        assert o.out_channels == r.out_channels == 256
        assert sum(isinstance(m, FrozenBatchNorm2d) for m in o.modules()) == \
            sum(isinstance(m, tvmisc.FrozenBatchNorm2d) for m in r.modules()) > 0
    with pytest.raises(ValueError, match="Trainable layers"):
        det.mobilenet_backbone(backbone_name="mobilenet_v3_large", weights=None, fpn=True, trainable_layers=7)
    with pytest.raises(ValueError, match="returned layer"):
        det.backbone_utils._mobilenet_extractor(mobilenet_v3_large_backbone(), True, 3, returned_layers=[6])
    with pytest.raises(ValueError, match="num_classes"):
        det.fasterrcnn_mobilenet_v3_large_fpn(weights="DEFAULT", num_classes=3)


# ------------------------------------------------------------------ Mask R-CNN v2
def _small_maskrcnn_v2():
    """Mask R-CNN with the v2 pieces (BatchNorm FPN, two-conv RPN head, conv-fc box head, BatchNorm mask head) on a
    ResNet-18 + 64-channel FPN stand-in: the code of maskrcnn_resnet50_fpn_v2 at a CI cost."""
    from torchvision.models.detection.faster_rcnn import FastRCNNConvFCHead as TvBoxHead
    from torchvision.models.detection.mask_rcnn import MaskRCNNHeads as TvMaskHeads
    from torchvision.models.detection.rpn import RPNHead as TvRPNHead
    kw = {k: v for k, v in KW.items() if k not in ("weights", "weights_backbone", "num_classes")}
    kw.update(DETERMINISTIC, box_detections_per_img=12)
    ob, rb = _narrow_fpn_backbones(fpn_norm=True)
    torch.manual_seed(1)
    bn = torch.nn.BatchNorm2d
    ref = _calibrate(tvd.MaskRCNN(rb, rpn_head=TvRPNHead(64, 3, conv_depth=2),
                                  box_head=TvBoxHead((64, 7, 7), [32, 32], [64], norm_layer=bn),
                                  box_predictor=tvd.faster_rcnn.FastRCNNPredictor(64, 5),
                                  mask_head=TvMaskHeads(64, [32, 32], 1, norm_layer=bn),
                                  mask_predictor=tvd.mask_rcnn.MaskRCNNPredictor(32, 32, 5), **kw))
    bn = flow.nn.BatchNorm2d
    ours = det.MaskRCNN(ob, rpn_head=det.RPNHead(64, 3, conv_depth=2),
                        box_head=det.FastRCNNConvFCHead((64, 7, 7), [32, 32], [64], norm_layer=bn),
                        box_predictor=det.FastRCNNPredictor(64, 5),
                        mask_head=det.MaskRCNNHeads(64, [32, 32], 1, norm_layer=bn),
                        mask_predictor=det.MaskRCNNPredictor(32, 32, 5), **kw)
    return _load(ours, ref)


def test_maskrcnn_v2_heads_eval_training_float64():
    ours, ref = _small_maskrcnn_v2()
    ref.double()
    ours.to(flow.float64)
    imgs = _images(np.float64)
    o, r = _eval_both(ours, ref, imgs)
    assert "masks" in r[0]
    _check_detections(o, r)
    rng = np.random.default_rng(3)
    m0 = np.zeros((2, 60, 75), np.uint8)
    m0[0, 8:40, 6:38] = 1
    m0[1, 12:48, 31:69] = rng.random((36, 38)) > 0.3
    tg = [{"boxes": np.array([[5.0, 6, 40, 45], [30, 10, 70, 50]]), "labels": np.array([1, 3]), "masks": m0},
          {"boxes": np.array([[2.0, 3, 20, 30]]), "labels": np.array([4]),
           "masks": (rng.random((1, 50, 44)) > 0.5).astype(np.uint8)}]
    assert "loss_mask" in _train_step_both(ours, ref, imgs, tg)


def test_maskrcnn_v2_builder_and_weights():
    ref = tvd.maskrcnn_resnet50_fpn_v2(weights=None, weights_backbone=None, num_classes=4)
    ours = det.maskrcnn_resnet50_fpn_v2(weights=None, weights_backbone=None, num_classes=4)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in ref.parameters())
    a, b = det.MaskRCNN_ResNet50_FPN_V2_Weights.COCO_V1, tvd.MaskRCNN_ResNet50_FPN_V2_Weights.COCO_V1
    assert a.url == b.url and a.meta["num_params"] == b.meta["num_params"] and a.meta["_metrics"] == b.meta["_metrics"]
    with pytest.raises(ValueError, match="num_classes"):
        det.maskrcnn_resnet50_fpn_v2(weights="DEFAULT", num_classes=3)


# ------------------------------------------------------------------ RetinaNet v2
def test_retinanet_v2_heads_eval_training_float64():
    """retinanet_resnet50_fpn_v2's pieces (P6 from C5, GroupNorm(32) heads, GIoU box loss) on ResNet-18 + a
    64-channel FPN."""
    from functools import partial
    kw = {"min_size": 64, "max_size": 96, "score_thresh": 0.0, "detections_per_img": 40, "topk_candidates": 200}
    ob, rb = _narrow_fpn_backbones(returned=(2, 3, 4), p6p7=True)
    torch.manual_seed(1)
    rh = tvd.retinanet.RetinaNetHead(64, 9, 5, norm_layer=partial(torch.nn.GroupNorm, 32))
    rh.regression_head._loss_type = "giou"
    ref = _calibrate(tvd.RetinaNet(rb, 5, head=rh, **kw))
    oh = det.RetinaNetHead(64, 9, 5, norm_layer=partial(flow.nn.GroupNorm, 32))
    oh.regression_head._loss_type = "giou"
    ours, ref = _load(det.RetinaNet(ob, 5, head=oh, **kw), ref)
    ref.double()
    ours.to(flow.float64)
    imgs = _images(np.float64)
    o, r = _eval_both(ours, ref, imgs)
    _check_detections(o, r)
    tg = [{"boxes": np.array([[5.0, 6, 40, 45], [30, 10, 70, 50]]), "labels": np.array([1, 3])},
          {"boxes": np.array([[2.0, 3, 20, 30]]), "labels": np.array([4])}]
    _train_step_both(ours, ref, imgs, tg)


def test_retinanet_v2_builder_and_weights():
    ref = tvd.retinanet_resnet50_fpn_v2(weights=None, weights_backbone=None, num_classes=4)
    ours = det.retinanet_resnet50_fpn_v2(weights=None, weights_backbone=None, num_classes=4)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    assert ours.head.regression_head._loss_type == "giou"
    a, b = det.RetinaNet_ResNet50_FPN_V2_Weights.COCO_V1, tvd.RetinaNet_ResNet50_FPN_V2_Weights.COCO_V1
    assert a.url == b.url and a.meta["num_params"] == b.meta["num_params"] and a.meta["_metrics"] == b.meta["_metrics"]


# ------------------------------------------------------------------ the ObjectDetection preset
def _detection_weight_enums():
    """Every detection model ``*_Weights`` enum exported here that torchvision's detection package also has."""
    names = [n for n in det.__all__ if n.endswith("_Weights") and hasattr(tvd, n)]
    assert len(names) >= 11  # the R-CNN family, RetinaNet, FCOS, Keypoint R-CNN (+ SSD/SSDLite when present)
    return names


def test_object_detection_preset_on_every_detection_enum():
    from PIL import Image
    rng = np.random.default_rng(0)
    u8 = rng.integers(0, 256, (3, 7, 5), dtype=np.uint8)
    pil = Image.fromarray(u8.transpose(1, 2, 0))
    for name in _detection_weight_enums():
        for member in getattr(det, name):
            t, tt = member.transforms(), getattr(tvd, name)[member.name].transforms()
            assert isinstance(t, det.ObjectDetection) and repr(t) == repr(tt) == "ObjectDetection()"
    t, tt = det.ObjectDetection(), tvd.FasterRCNN_ResNet50_FPN_Weights.DEFAULT.transforms()
    for ours_in, ref_in in [(flow.from_numpy(u8), torch.from_numpy(u8)), (pil, pil),
                            (flow.from_numpy(u8[None] / 255.0), torch.from_numpy(u8[None] / 255.0))]:
        a, b = t(ours_in), tt(ref_in)
        assert a.dtype == flow.float32 and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-7)


# ------------------------------------------------------------------ full sizes (pytest -m slow)
@pytest.mark.slow
@pytest.mark.parametrize("name", ["keypointrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn_v2",
                                  "fasterrcnn_mobilenet_v3_large_fpn", "retinanet_resnet50_fpn_v2"])
def test_full_size_builders_eval_float64(name):
    """The builders' own sizes (min 800 / max 1333) and heads, float64 (in float32 an untrained detector's top
    scores are near-tied and its boxes move by ~0.2 px, so order and boxes are not comparable there)."""
    thresh = {"score_thresh": 0.0, "detections_per_img": 10} if name.startswith("retinanet") else \
        {"box_score_thresh": 0.0, "box_detections_per_img": 10}
    kw = dict(weights=None, weights_backbone=None, **thresh)
    torch.manual_seed(0)
    ref = _calibrate(getattr(tvd, name)(**kw))
    ours, ref = _load(getattr(det, name)(**kw), ref)
    ref.double()
    ours.to(flow.float64)
    rng = np.random.default_rng(0)
    imgs = [rng.random((3, 480, 640))]
    o, r = _eval_both(ours, ref, imgs)

    def canonical(d):
        # random weights give exactly tied scores (e.g. boxes clipped to the whole image width) whose order is
        # arbitrary in both libraries: order by (score to 1e-9, box) before comparing
        sc = np.round(d["scores"].numpy().astype(np.float64), 9)
        b = np.round(d["boxes"].numpy().astype(np.float64), 3)
        order = np.lexsort((b[:, 3], b[:, 2], b[:, 1], b[:, 0], -sc))
        return {k: (v.numpy() if hasattr(v, "numpy") else np.asarray(v))[order] for k, v in d.items()}

    o = [{k: flow.from_numpy(np.ascontiguousarray(v)) for k, v in canonical(d).items()} for d in o]
    r = [{k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in canonical(d).items()} for d in r]
    _check_detections(o, r, box_atol=1e-3, score_atol=1e-4)
