"""RetinaNet (torchvision's RetinaNet class, heads, defaults, builder and parameter names)."""
import math
from functools import partial

import numpy as np

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.ops import (Conv2dNormActivation, LastLevelP6P7, box_iou,
                            clip_boxes_to_image, complete_box_iou_loss, distance_box_iou_loss,
                            generalized_box_iou_loss, sigmoid_focal_loss)

from ..segmentation._weights import ObjectDetection, ResNet50_Weights, Weights, WeightsEnum
from . import _utils as det_utils
from .anchor_utils import AnchorGenerator
from .._factory import register_task_builder
from .backbone_utils import _build_detector, _build_unweighted_detector
from .faster_rcnn import COCO_CATEGORIES
from .generalized_rcnn import _single_stage_inputs
from .transform import GeneralizedRCNNTransform

__all__ = ["RetinaNet", "RetinaNetHead", "RetinaNetClassificationHead", "RetinaNetRegressionHead",
           "RetinaNet_ResNet50_FPN_Weights", "retinanet_resnet50_fpn", "RetinaNet_ResNet50_FPN_V2_Weights",
           "retinanet_resnet50_fpn_v2", "retinanet_resnet101_fpn", "retinanet_resnext50_32x4d_fpn"]


def _sum(x):
    res = x[0]
    for i in x[1:]:
        res = res + i
    return res


def _v1_to_v2_weights(state_dict, prefix):
    for i in range(4):
        for t in ["weight", "bias"]:
            old = f"{prefix}conv.{2 * i}.{t}"
            if old in state_dict:
                state_dict[f"{prefix}conv.{i}.0.{t}"] = state_dict.pop(old)


def _box_loss(kind, box_coder, anchors, matched_gt, bbox_regression, cnf=None):
    if kind not in ("l1", "smooth_l1", "ciou", "diou", "giou"):
        raise ValueError(f"Unsupported loss: {kind}")
    if kind == "l1":
        return F.l1_loss(bbox_regression, box_coder.encode_single(matched_gt, anchors), reduction="sum")
    if kind == "smooth_l1":
        beta = cnf["beta"] if cnf is not None and "beta" in cnf else 1.0
        return F.smooth_l1_loss(bbox_regression, box_coder.encode_single(matched_gt, anchors), reduction="sum",
                                beta=beta)
    boxes = box_coder.decode_single(bbox_regression, anchors)
    eps = cnf["eps"] if cnf is not None and "eps" in cnf else 1e-7
    fn = {"ciou": complete_box_iou_loss, "diou": distance_box_iou_loss, "giou": generalized_box_iou_loss}[kind]
    return fn(boxes, matched_gt, reduction="sum", eps=eps)


def _default_anchorgen():
    anchor_sizes = tuple((x, int(x * 2 ** (1.0 / 3)), int(x * 2 ** (2.0 / 3))) for x in [32, 64, 128, 256, 512])
    return AnchorGenerator(anchor_sizes, ((0.5, 1.0, 2.0),) * len(anchor_sizes))


class _V2Loader(nn.Module):
    _version = 2

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            _v1_to_v2_weights(state_dict, prefix)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


def _flatten_levels(x, per_anchor):
    N, _, H, W = x.shape
    return x.view(N, -1, per_anchor, H, W).permute(0, 3, 4, 1, 2).reshape(N, -1, per_anchor)


class RetinaNetClassificationHead(_V2Loader):
    def __init__(self, in_channels, num_anchors, num_classes, prior_probability=0.01, norm_layer=None):
        super().__init__()
        self.conv = nn.Sequential(*[Conv2dNormActivation(in_channels, in_channels, norm_layer=norm_layer)
                                    for _ in range(4)])
        for layer in self.conv.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.normal_(layer.weight, std=0.01)
                if layer.bias is not None:
                    nn.init.constant_(layer.bias, 0)
        self.cls_logits = nn.Conv2d(in_channels, num_anchors * num_classes, kernel_size=3, stride=1, padding=1)
        nn.init.normal_(self.cls_logits.weight, std=0.01)
        nn.init.constant_(self.cls_logits.bias, -math.log((1 - prior_probability) / prior_probability))
        self.num_classes = num_classes
        self.num_anchors = num_anchors
        self.BETWEEN_THRESHOLDS = det_utils.Matcher.BETWEEN_THRESHOLDS

    def compute_loss(self, targets, head_outputs, matched_idxs):
        losses = []
        cls_logits = head_outputs["cls_logits"]
        for i, (t, mi) in enumerate(zip(targets, matched_idxs)):
            logits = cls_logits[i]
            fg = mi >= 0
            num_fg = int(fg.sum())
            target = np.zeros(tuple(logits.shape), dtype=logits.detach().numpy().dtype)
            if num_fg:
                target[np.nonzero(fg)[0], t["labels"].numpy()[mi[fg]]] = 1.0
            valid = flow.from_numpy(np.nonzero(mi != self.BETWEEN_THRESHOLDS)[0])
            losses.append(sigmoid_focal_loss(logits[valid], flow.from_numpy(target)[valid], reduction="sum")
                          / max(1, num_fg))
        return _sum(losses) / len(targets)

    def forward(self, x):
        return flow.cat([_flatten_levels(self.cls_logits(self.conv(f)), self.num_classes) for f in x], dim=1)


class RetinaNetRegressionHead(_V2Loader):
    def __init__(self, in_channels, num_anchors, norm_layer=None):
        super().__init__()
        self.conv = nn.Sequential(*[Conv2dNormActivation(in_channels, in_channels, norm_layer=norm_layer)
                                    for _ in range(4)])
        self.bbox_reg = nn.Conv2d(in_channels, num_anchors * 4, kernel_size=3, stride=1, padding=1)
        nn.init.normal_(self.bbox_reg.weight, std=0.01)
        nn.init.zeros_(self.bbox_reg.bias)
        for layer in self.conv.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.normal_(layer.weight, std=0.01)
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)
        self.box_coder = det_utils.BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
        self._loss_type = "l1"

    def compute_loss(self, targets, head_outputs, anchors, matched_idxs):
        losses = []
        bbox_regression = head_outputs["bbox_regression"]
        for i, (t, anchors_i, mi) in enumerate(zip(targets, anchors, matched_idxs)):
            fg = np.nonzero(mi >= 0)[0]
            fg_t = flow.from_numpy(fg)
            matched_gt = t["boxes"][flow.from_numpy(mi[fg])]
            losses.append(_box_loss(self._loss_type, self.box_coder, anchors_i[fg_t], matched_gt,
                                    bbox_regression[i][fg_t]) / max(1, fg.size))
        return _sum(losses) / max(1, len(targets))

    def forward(self, x):
        return flow.cat([_flatten_levels(self.bbox_reg(self.conv(f)), 4) for f in x], dim=1)


class RetinaNetHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes, norm_layer=None):
        super().__init__()
        self.classification_head = RetinaNetClassificationHead(in_channels, num_anchors, num_classes,
                                                               norm_layer=norm_layer)
        self.regression_head = RetinaNetRegressionHead(in_channels, num_anchors, norm_layer=norm_layer)

    def compute_loss(self, targets, head_outputs, anchors, matched_idxs):
        return {"classification": self.classification_head.compute_loss(targets, head_outputs, matched_idxs),
                "bbox_regression": self.regression_head.compute_loss(targets, head_outputs, anchors, matched_idxs)}

    def forward(self, x):
        return {"cls_logits": self.classification_head(x), "bbox_regression": self.regression_head(x)}


class RetinaNet(nn.Module):
    def __init__(self, backbone, num_classes, min_size=800, max_size=1333, image_mean=None, image_std=None,
                 anchor_generator=None, head=None, proposal_matcher=None, score_thresh=0.05, nms_thresh=0.5,
                 detections_per_img=300, fg_iou_thresh=0.5, bg_iou_thresh=0.4, topk_candidates=1000, **kwargs):
        super().__init__()
        if not hasattr(backbone, "out_channels"):
            raise ValueError("backbone should contain an attribute out_channels specifying the number of output "
                             "channels (assumed to be the same for all the levels)")
        self.backbone = backbone
        if not isinstance(anchor_generator, (AnchorGenerator, type(None))):
            raise TypeError(f"anchor_generator should be of type AnchorGenerator or None instead of "
                            f"{type(anchor_generator)}")
        if anchor_generator is None:
            anchor_generator = _default_anchorgen()
        self.anchor_generator = anchor_generator
        if head is None:
            head = RetinaNetHead(backbone.out_channels, anchor_generator.num_anchors_per_location()[0], num_classes)
        self.head = head
        if proposal_matcher is None:
            proposal_matcher = det_utils.Matcher(fg_iou_thresh, bg_iou_thresh, allow_low_quality_matches=True)
        self.proposal_matcher = proposal_matcher
        self.box_coder = det_utils.BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
        if image_mean is None:
            image_mean = [0.485, 0.456, 0.406]
        if image_std is None:
            image_std = [0.229, 0.224, 0.225]
        self.transform = GeneralizedRCNNTransform(min_size, max_size, image_mean, image_std, **kwargs)
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.topk_candidates = topk_candidates

    def compute_loss(self, targets, head_outputs, anchors):
        matched_idxs = []
        for anchors_i, t in zip(anchors, targets):
            if t["boxes"].numel() == 0:
                matched_idxs.append(np.full((anchors_i.shape[0],), -1, np.int64))
                continue
            matched_idxs.append(self.proposal_matcher(box_iou(t["boxes"].detach(), anchors_i)).numpy())
        return self.head.compute_loss(targets, head_outputs, anchors, matched_idxs)

    def postprocess_detections(self, head_outputs, anchors, image_shapes):
        class_logits = head_outputs["cls_logits"]
        box_regression = head_outputs["bbox_regression"]
        detections = []
        for index, image_shape in enumerate(image_shapes):
            image_boxes, image_scores, image_labels = [], [], []
            for br, cl, an in zip(box_regression, class_logits, anchors[index]):
                br, logits = br[index], cl[index]
                num_classes = logits.shape[-1]
                scores = flow.sigmoid(logits).flatten().numpy()
                topk_idxs = np.nonzero(scores > self.score_thresh)[0]
                scores = scores[topk_idxs]
                k = min(self.topk_candidates, topk_idxs.size)
                order = np.argsort(-scores, kind="stable")[:k]
                scores, topk_idxs = scores[order], topk_idxs[order]
                anchor_idxs = topk_idxs // num_classes
                labels = topk_idxs % num_classes
                a_t = flow.from_numpy(anchor_idxs)
                boxes = self.box_coder.decode_single(br[a_t], an[a_t])
                boxes = clip_boxes_to_image(boxes, image_shape)
                image_boxes.append(boxes.numpy())
                image_scores.append(scores)
                image_labels.append(labels)
            detections.append(det_utils.nms_detections(
                np.concatenate(image_boxes), np.concatenate(image_scores), np.concatenate(image_labels),
                self.nms_thresh, self.detections_per_img))
        return detections

    def forward(self, images, targets=None):
        original_image_sizes, images, targets, features, head_outputs, anchors = _single_stage_inputs(
            self, images, targets)
        if self.training:
            return self.compute_loss(targets, head_outputs, anchors)
        num_anchors_per_level = [x.shape[2] * x.shape[3] for x in features]
        A = head_outputs["cls_logits"].shape[1] // sum(num_anchors_per_level)
        num_anchors_per_level = [hw * A for hw in num_anchors_per_level]
        with flow.no_grad():
            split_head_outputs = {k: list(v.detach().split(num_anchors_per_level, dim=1))
                                  for k, v in head_outputs.items()}
            split_anchors = [list(a.split(num_anchors_per_level)) for a in anchors]
            detections = self.postprocess_detections(split_head_outputs, split_anchors, images.image_sizes)
        return self.transform.postprocess(detections, images.image_sizes, original_image_sizes)


class RetinaNet_ResNet50_FPN_Weights(WeightsEnum):
    COCO_V1 = Weights(url="https://download.pytorch.org/models/retinanet_resnet50_fpn_coco-eeacb38b.pth",
                      transforms=ObjectDetection,
                      meta={"categories": COCO_CATEGORIES, "min_size": (1, 1), "num_params": 34014999,
                            "_metrics": {"COCO-val2017": {"box_map": 36.4}}})
    DEFAULT = COCO_V1


def retinanet_resnet50_fpn(*, weights=None, progress=True, num_classes=None,
                           weights_backbone=ResNet50_Weights.IMAGENET1K_V1, trainable_backbone_layers=None,
                           **kwargs):
    """RetinaNet ResNet-50-FPN (torchvision's builder)."""
    return _build_detector(RetinaNet_ResNet50_FPN_Weights, weights, weights_backbone, num_classes,
                           trainable_backbone_layers, progress, lambda backbone, n: RetinaNet(backbone, n, **kwargs),
                           fpn_kwargs=dict(returned_layers=[2, 3, 4], extra_blocks=LastLevelP6P7(256, 256)),
                           eps_zero=True)


class RetinaNet_ResNet50_FPN_V2_Weights(WeightsEnum):
    COCO_V1 = Weights(url="https://download.pytorch.org/models/retinanet_resnet50_fpn_v2_coco-5905b1c5.pth",
                      transforms=ObjectDetection,
                      meta={"categories": COCO_CATEGORIES, "min_size": (1, 1), "num_params": 38198935,
                            "_metrics": {"COCO-val2017": {"box_map": 41.5}}})
    DEFAULT = COCO_V1


def retinanet_resnet50_fpn_v2(*, weights=None, progress=True, num_classes=None, weights_backbone=None,
                              trainable_backbone_layers=None, **kwargs):
    """RetinaNet v2 (torchvision's builder: P6 from C5, GroupNorm(32) heads, GIoU box loss, BatchNorm backbone)."""
    def make(backbone, n):
        anchor_generator = _default_anchorgen()
        head = RetinaNetHead(backbone.out_channels, anchor_generator.num_anchors_per_location()[0], n,
                             norm_layer=partial(nn.GroupNorm, 32))
        head.regression_head._loss_type = "giou"
        return RetinaNet(backbone, n, anchor_generator=anchor_generator, head=head, **kwargs)
    return _build_detector(RetinaNet_ResNet50_FPN_V2_Weights, weights, weights_backbone, num_classes,
                           trainable_backbone_layers, progress, make, v2=True,
                           fpn_kwargs=dict(returned_layers=[2, 3, 4], extra_blocks=LastLevelP6P7(2048, 256),
                                           norm_layer=None))  # torchvision's v2 RetinaNet: a plain FPN


def _unweighted_retinanet(weights, weights_backbone, num_classes, trainable_backbone_layers, kwargs, **trunk):
    return _build_unweighted_detector(lambda backbone, n: RetinaNet(backbone, n, **kwargs), weights, weights_backbone,
                                      num_classes, trainable_backbone_layers,
                                      fpn_kwargs=dict(returned_layers=[2, 3, 4], extra_blocks=LastLevelP6P7(256, 256)),
                                      **trunk)


@register_task_builder
def retinanet_resnet101_fpn(*, weights=None, progress=True, num_classes=None, weights_backbone=None,
                            trainable_backbone_layers=None, **kwargs):
    """RetinaNet ResNet-101-FPN (the original flowvision's name; torchvision's v1 RetinaNet layout, P3-P7). No
    weights exist: ``weights`` and ``weights_backbone`` must be None."""
    return _unweighted_retinanet(weights, weights_backbone, num_classes, trainable_backbone_layers, kwargs, depth=101)


@register_task_builder
def retinanet_resnext50_32x4d_fpn(*, weights=None, progress=True, num_classes=None, weights_backbone=None,
                                  trainable_backbone_layers=None, **kwargs):
    """RetinaNet ResNeXt-50 (32x4d) FPN (the original flowvision's name). No weights exist: ``weights`` and
    ``weights_backbone`` must be None."""
    return _unweighted_retinanet(weights, weights_backbone, num_classes, trainable_backbone_layers, kwargs, depth=50,
                                 cardinality=32, base_width=4)
