"""FCOS (torchvision's FCOS class, heads, center-sampling matcher, losses, builder and parameter names)."""
import math
from functools import partial

import numpy as np

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.ops import (LastLevelP6P7, clip_boxes_to_image,
                            generalized_box_iou_loss, sigmoid_focal_loss)

from ..segmentation._weights import ObjectDetection, ResNet50_Weights, Weights, WeightsEnum
from . import _utils as det_utils
from .anchor_utils import AnchorGenerator
from .backbone_utils import _build_detector
from .faster_rcnn import COCO_CATEGORIES
from .generalized_rcnn import _single_stage_inputs
from .transform import GeneralizedRCNNTransform

__all__ = ["FCOS", "FCOSHead", "FCOS_ResNet50_FPN_Weights", "fcos_resnet50_fpn"]


def _flatten_levels(x, per_anchor):
    N, _, H, W = x.shape
    return x.view(N, -1, per_anchor, H, W).permute(0, 3, 4, 1, 2).reshape(N, -1, per_anchor)


def _conv_tower(in_channels, num_convs, norm_layer):
    layers = []
    for _ in range(num_convs):
        layers += [nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=1, padding=1), norm_layer(in_channels),
                   nn.ReLU()]
    tower = nn.Sequential(*layers)
    for layer in tower.children():
        if isinstance(layer, nn.Conv2d):
            nn.init.normal_(layer.weight, std=0.01)
            nn.init.constant_(layer.bias, 0)
    return tower


class FCOSClassificationHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes, num_convs=4, prior_probability=0.01, norm_layer=None):
        super().__init__()
        self.num_classes = num_classes
        self.num_anchors = num_anchors
        self.conv = _conv_tower(in_channels, num_convs, norm_layer or partial(nn.GroupNorm, 32))
        self.cls_logits = nn.Conv2d(in_channels, num_anchors * num_classes, kernel_size=3, stride=1, padding=1)
        nn.init.normal_(self.cls_logits.weight, std=0.01)
        nn.init.constant_(self.cls_logits.bias, -math.log((1 - prior_probability) / prior_probability))

    def forward(self, x):
        return flow.cat([_flatten_levels(self.cls_logits(self.conv(f)), self.num_classes) for f in x], dim=1)


class FCOSRegressionHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_convs=4, norm_layer=None):
        super().__init__()
        self.conv = _conv_tower(in_channels, num_convs, norm_layer or partial(nn.GroupNorm, 32))
        self.bbox_reg = nn.Conv2d(in_channels, num_anchors * 4, kernel_size=3, stride=1, padding=1)
        self.bbox_ctrness = nn.Conv2d(in_channels, num_anchors * 1, kernel_size=3, stride=1, padding=1)
        for layer in [self.bbox_reg, self.bbox_ctrness]:
            nn.init.normal_(layer.weight, std=0.01)
            nn.init.zeros_(layer.bias)

    def forward(self, x):
        regs, ctrs = [], []
        for f in x:
            t = self.conv(f)
            regs.append(_flatten_levels(F.relu(self.bbox_reg(t)), 4))
            ctrs.append(_flatten_levels(self.bbox_ctrness(t), 1))
        return flow.cat(regs, dim=1), flow.cat(ctrs, dim=1)


class FCOSHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes, num_convs=4):
        super().__init__()
        self.box_coder = det_utils.BoxLinearCoder(normalize_by_size=True)
        self.classification_head = FCOSClassificationHead(in_channels, num_anchors, num_classes, num_convs)
        self.regression_head = FCOSRegressionHead(in_channels, num_anchors, num_convs)

    def compute_loss(self, targets, head_outputs, anchors, matched_idxs):
        cls_logits = head_outputs["cls_logits"]          # [N, HWA, C]
        bbox_regression = head_outputs["bbox_regression"]  # [N, HWA, 4]
        bbox_ctrness = head_outputs["bbox_ctrness"]        # [N, HWA, 1]
        cls_t, box_t = [], []
        for t, mi in zip(targets, matched_idxs):
            if len(t["labels"]) == 0:
                c = np.zeros((len(mi),), np.int64)
                b = np.zeros((len(mi), 4), t["boxes"].detach().numpy().dtype)
            else:
                c = t["labels"].numpy()[np.maximum(mi, 0)].astype(np.int64)
                b = t["boxes"].detach().numpy()[np.maximum(mi, 0)]
            c[mi < 0] = -1
            cls_t.append(c)
            box_t.append(b)
        gt_cls, gt_boxes = np.stack(cls_t), np.stack(box_t)
        anchors = flow.stack(list(anchors))
        fg = gt_cls >= 0
        num_fg = int(fg.sum())
        onehot = np.zeros(tuple(cls_logits.shape), cls_logits.detach().numpy().dtype)
        ni, ai = np.nonzero(fg)
        onehot[ni, ai, gt_cls[fg]] = 1.0
        loss_cls = sigmoid_focal_loss(cls_logits, flow.from_numpy(onehot), reduction="sum")
        gt_boxes_t = flow.from_numpy(gt_boxes).to(bbox_regression.dtype)
        pred_boxes = self.box_coder.decode(bbox_regression, anchors)
        flat_fg = flow.from_numpy(np.nonzero(fg.reshape(-1))[0])
        loss_bbox_reg = generalized_box_iou_loss(pred_boxes.reshape(-1, 4)[flat_fg], gt_boxes_t.reshape(-1, 4)[flat_fg],
                                                 reduction="sum")
        reg_t = self.box_coder.encode(anchors, gt_boxes_t).detach().numpy()
        if len(reg_t) == 0:
            ctr_t = np.zeros(reg_t.shape[:-1], reg_t.dtype)
        else:
            lr, tb = reg_t[:, :, [0, 2]], reg_t[:, :, [1, 3]]
            with np.errstate(invalid="ignore", divide="ignore"):
                ctr_t = np.sqrt((lr.min(-1) / lr.max(-1)) * (tb.min(-1) / tb.max(-1)))
        pred_ctr = bbox_ctrness.squeeze(dim=2).reshape(-1)[flat_fg]
        loss_ctr = F.binary_cross_entropy_with_logits(
            pred_ctr, flow.from_numpy(np.ascontiguousarray(ctr_t.reshape(-1)[fg.reshape(-1)])), reduction="sum")
        d = max(1, num_fg)
        return {"classification": loss_cls / d, "bbox_regression": loss_bbox_reg / d, "bbox_ctrness": loss_ctr / d}

    def forward(self, x):
        cls_logits = self.classification_head(x)
        bbox_regression, bbox_ctrness = self.regression_head(x)
        return {"cls_logits": cls_logits, "bbox_regression": bbox_regression, "bbox_ctrness": bbox_ctrness}


class FCOS(nn.Module):
    def __init__(self, backbone, num_classes, min_size=800, max_size=1333, image_mean=None, image_std=None,
                 anchor_generator=None, head=None, center_sampling_radius=1.5, score_thresh=0.2, nms_thresh=0.6,
                 detections_per_img=100, topk_candidates=1000, **kwargs):
        super().__init__()
        if not hasattr(backbone, "out_channels"):
            raise ValueError("backbone should contain an attribute out_channels specifying the number of output "
                             "channels (assumed to be the same for all the levels)")
        self.backbone = backbone
        if not isinstance(anchor_generator, (AnchorGenerator, type(None))):
            raise TypeError(f"anchor_generator should be of type AnchorGenerator or None, instead  got "
                            f"{type(anchor_generator)}")
        if anchor_generator is None:
            anchor_sizes = ((8,), (16,), (32,), (64,), (128,))
            anchor_generator = AnchorGenerator(anchor_sizes, ((1.0,),) * len(anchor_sizes))
        self.anchor_generator = anchor_generator
        if self.anchor_generator.num_anchors_per_location()[0] != 1:
            raise ValueError(f"anchor_generator.num_anchors_per_location()[0] should be 1 instead of "
                             f"{anchor_generator.num_anchors_per_location()[0]}")
        if head is None:
            head = FCOSHead(backbone.out_channels, anchor_generator.num_anchors_per_location()[0], num_classes)
        self.head = head
        self.box_coder = det_utils.BoxLinearCoder(normalize_by_size=True)
        if image_mean is None:
            image_mean = [0.485, 0.456, 0.406]
        if image_std is None:
            image_std = [0.229, 0.224, 0.225]
        self.transform = GeneralizedRCNNTransform(min_size, max_size, image_mean, image_std, **kwargs)
        self.center_sampling_radius = center_sampling_radius
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.topk_candidates = topk_candidates

    def compute_loss(self, targets, head_outputs, anchors, num_anchors_per_level):
        matched_idxs = []
        for anchors_i, t in zip(anchors, targets):
            a = anchors_i.detach().numpy()
            if t["boxes"].numel() == 0:
                matched_idxs.append(np.full((a.shape[0],), -1, np.int64))
                continue
            gt = t["boxes"].detach().numpy()
            gt_c = (gt[:, :2] + gt[:, 2:]) / 2
            a_c = (a[:, :2] + a[:, 2:]) / 2
            a_s = a[:, 2] - a[:, 0]
            match = np.abs(a_c[:, None, :] - gt_c[None, :, :]).max(axis=2) < self.center_sampling_radius * a_s[:, None]
            x, y = a_c[:, 0:1], a_c[:, 1:2]
            dist = np.stack([x - gt[None, :, 0], y - gt[None, :, 1], gt[None, :, 2] - x, gt[None, :, 3] - y], axis=2)
            match &= dist.min(axis=2) > 0
            lower = a_s * 4
            lower[: num_anchors_per_level[0]] = 0
            upper = a_s * 8
            upper[-num_anchors_per_level[-1]:] = np.inf
            dmax = dist.max(axis=2)
            match &= (dmax > lower[:, None]) & (dmax < upper[:, None])
            areas = (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1])
            score = match.astype(np.float32) * (1e8 - areas[None, :])
            idx = score.argmax(axis=1).astype(np.int64)
            idx[score[np.arange(score.shape[0]), idx] < 1e-5] = -1
            matched_idxs.append(idx)
        return self.head.compute_loss(targets, head_outputs, anchors, matched_idxs)

    def postprocess_detections(self, head_outputs, anchors, image_shapes):
        detections = []
        for index, image_shape in enumerate(image_shapes):
            image_boxes, image_scores, image_labels = [], [], []
            for br, cl, bc, an in zip(head_outputs["bbox_regression"], head_outputs["cls_logits"],
                                      head_outputs["bbox_ctrness"], anchors[index]):
                br, logits, ctr = br[index], cl[index], bc[index]
                num_classes = logits.shape[-1]
                scores = flow.sqrt(flow.sigmoid(logits) * flow.sigmoid(ctr)).flatten().numpy()
                idxs = np.nonzero(scores > self.score_thresh)[0]
                scores = scores[idxs]
                order = np.argsort(-scores, kind="stable")[: min(self.topk_candidates, idxs.size)]
                scores, idxs = scores[order], idxs[order]
                a_t = flow.from_numpy(idxs // num_classes)
                boxes = clip_boxes_to_image(self.box_coder.decode(br[a_t], an[a_t]), image_shape)
                image_boxes.append(boxes.numpy())
                image_scores.append(scores)
                image_labels.append((idxs % num_classes).astype(np.int64))
            detections.append(det_utils.nms_detections(
                np.concatenate(image_boxes), np.concatenate(image_scores), np.concatenate(image_labels),
                self.nms_thresh, self.detections_per_img))
        return detections

    def forward(self, images, targets=None):
        original_image_sizes, images, targets, features, head_outputs, anchors = _single_stage_inputs(
            self, images, targets)
        num_anchors_per_level = [x.shape[2] * x.shape[3] for x in features]
        if self.training:
            return self.compute_loss(targets, head_outputs, anchors, num_anchors_per_level)
        with flow.no_grad():
            split_head_outputs = {k: list(v.detach().split(num_anchors_per_level, dim=1))
                                  for k, v in head_outputs.items()}
            split_anchors = [list(a.split(num_anchors_per_level)) for a in anchors]
            detections = self.postprocess_detections(split_head_outputs, split_anchors, images.image_sizes)
        return self.transform.postprocess(detections, images.image_sizes, original_image_sizes)


class FCOS_ResNet50_FPN_Weights(WeightsEnum):
    COCO_V1 = Weights(url="https://download.pytorch.org/models/fcos_resnet50_fpn_coco-99b0c9b7.pth", transforms=ObjectDetection,
                      meta={"categories": COCO_CATEGORIES, "min_size": (1, 1), "num_params": 32269600,
                            "_metrics": {"COCO-val2017": {"box_map": 39.2}}})
    DEFAULT = COCO_V1


def fcos_resnet50_fpn(*, weights=None, progress=True, num_classes=None,
                      weights_backbone=ResNet50_Weights.IMAGENET1K_V1, trainable_backbone_layers=None, **kwargs):
    """FCOS ResNet-50-FPN (torchvision's builder)."""
    return _build_detector(FCOS_ResNet50_FPN_Weights, weights, weights_backbone, num_classes,
                           trainable_backbone_layers, progress, lambda backbone, n: FCOS(backbone, n, **kwargs),
                           fpn_kwargs=dict(returned_layers=[2, 3, 4], extra_blocks=LastLevelP6P7(256, 256)))
